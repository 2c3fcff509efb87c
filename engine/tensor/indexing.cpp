// Indexing tensor ops: gather, take, scatter, one_hot, topk, sort, triu and tril.
//
// The tensor graph has no indirect load, so every lookup is a one-hot compare of the indices
// against an arange, and a select-and-sum over the axis. Sorting ranks each element by counting
// the elements that go before it (an n x n compare), then places it by its rank the same way.
#include <algorithm>
#include <limits>

#include "engine/tensor/tensor_internal.hpp"

namespace beamlab {

double detail::lowest_value(DType t) {
  if (t.is_float()) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(t.int_min());
}

double detail::highest_value(DType t) {
  if (t.is_float()) return std::numeric_limits<double>::infinity();
  return static_cast<double>(t.int_max());
}

Tensor detail::wrap_index(const Tensor& index, int64_t n) {
  Tensor i = index.dtype().itemsize() < 4 ? index.cast(Scalar::Int32) : index;
  if (i.dtype().is_unsigned()) return i;
  return (i < 0).where(i + static_cast<double>(n), i);
}

namespace {

using detail::Pads;

// Positions 0..n-1 of dtype `dt` as shape `shape` (which holds n elements).
Tensor positions(const Dim& n, DType dt, const Shape& shape) {
  return Tensor::arange(n).cast(dt).reshape(shape);
}

} // namespace

Tensor Tensor::gather(int64_t axis, const Tensor& index) const {
  int64_t a = resolve_axis(axis, "gather");
  user_assert(index.ndim() == ndim() && index.dtype().is_int())
      << "gather: index must be an integer tensor of rank " << ndim() << ", not "
      << index.dtype().str() << " " << shape_str(index.shape());
  Pads bounds;
  for (int64_t i = 0; i < ndim(); ++i) {
    int64_t want = i == a ? shape_[static_cast<size_t>(i)] : index.shape()[static_cast<size_t>(i)];
    user_assert(want <= shape_[static_cast<size_t>(i)])
        << "gather: index shape " << shape_str(index.shape()) << " is larger than "
        << shape_str(shape_) << " on axis " << i;
    bounds.emplace_back(0, want);
  }
  int64_t n = shape_[static_cast<size_t>(a)];
  Tensor x = shrink(bounds).transpose(a, -1).unsqueeze(-2);                 // (..., 1, n)
  Tensor idx = detail::wrap_index(index, n).transpose(a, -1).unsqueeze(-1); // (..., m, 1)
  Tensor onehot = idx.eq(positions(n, idx.dtype(), {n}));                   // (..., m, n)
  return onehot.where(x, Tensor(0.0, dtype())).sum({-1}).cast(dtype()).transpose(a, -1);
}

Tensor Tensor::take(const Tensor& index, int64_t axis) const {
  int64_t a = resolve_axis(axis, "take");
  user_assert(index.dtype().is_int()) << "take: index must be an integer tensor, not "
                                      << index.dtype().str() << " " << shape_str(index.shape());
  int64_t n = shape_[static_cast<size_t>(a)], m = index.numel();
  Tensor idx = detail::wrap_index(index, n).reshape({m, 1});
  Tensor onehot = idx.eq(positions(n, idx.dtype(), {1, n})); // (m, n)
  // this as (pre, post, 1, n) -> picked (pre, post, m) -> (pre, m, post)
  std::vector<int64_t> to_end;
  for (int64_t i = 0; i < ndim(); ++i)
    if (i != a) to_end.push_back(i);
  to_end.push_back(a);
  Tensor x = permute(to_end).unsqueeze(-2);
  Tensor picked = onehot.where(x, Tensor(0.0, dtype())).sum({-1}).cast(dtype());
  int64_t post = ndim() - a - 1;
  std::vector<int64_t> back;
  for (int64_t i = 0; i < a; ++i) back.push_back(i);
  back.push_back(a + post);
  for (int64_t i = 0; i < post; ++i) back.push_back(a + i);
  Shape out(shape_.begin(), shape_.begin() + a);
  out.insert(out.end(), index.shape().begin(), index.shape().end());
  out.insert(out.end(), shape_.begin() + a + 1, shape_.end());
  return picked.permute(back).reshape(out);
}

namespace {

// x where `keep(col - row)` holds over the last two dims, zeros elsewhere.
Tensor triangle(const Tensor& x, const char* op, int64_t k, bool upper) {
  user_assert(x.ndim() >= 2) << op << ": needs at least 2 dims, not " << shape_str(x.shape());
  Dim rows = x.shape()[x.shape().size() - 2], cols = x.shape().back();
  k = std::clamp<int64_t>(k, -rows.max() - 1, cols.max() + 1); // beyond: all or nothing kept
  Tensor row = positions(rows, Scalar::Int32, {rows, 1}) + static_cast<double>(k);
  Tensor col = positions(cols, Scalar::Int32, {1, cols});
  Tensor keep = upper ? col.ge(row) : col.le(row);
  return keep.where(x, Tensor(0.0, x.dtype()));
}

} // namespace

Tensor Tensor::triu(int64_t k) const { return triangle(*this, "triu", k, true); }
Tensor Tensor::tril(int64_t k) const { return triangle(*this, "tril", k, false); }

Tensor Tensor::one_hot(int64_t num_classes) const {
  user_assert(dtype().is_int()) << "one_hot: indices must be integers, not " << dtype().str() << " "
                                << shape_str(shape_) << " (cast them first)";
  user_assert(num_classes >= 1) << "one_hot: num_classes must be at least 1, not " << num_classes;
  Tensor idx = detail::wrap_index(*this, num_classes).unsqueeze(-1);
  return idx.eq(positions(num_classes, idx.dtype(), {num_classes})).cast(Scalar::Int32);
}

namespace {

// Whether element j goes before element i of the last axis, as (..., n, n) [i][j]: it sorts
// strictly first, or ties and has the lower index. NaN sorts above everything (as torch).
Tensor goes_before(const Tensor& x, bool descending) {
  int64_t n = x.shape().back();
  Tensor xi = x.unsqueeze(-1), xj = x.unsqueeze(-2);
  Tensor first = descending ? xj.gt(xi) : xj.lt(xi), tie = xj.eq(xi);
  if (x.dtype().is_float()) {
    Tensor nan_i = xi.ne(xi), nan_j = xj.ne(xj);
    first = first | (descending ? nan_j & !nan_i : nan_i & !nan_j);
    tie = tie | (nan_i & nan_j);
  }
  Tensor lower = positions(n, Scalar::Int32, {1, n}).lt(positions(n, Scalar::Int32, {n, 1}));
  return first | (tie & lower);
}

// The first k of x's last axis in sorted order: values and int64 indices, (..., k) each.
std::pair<Tensor, Tensor> sorted_last(const Tensor& x, int64_t k, bool descending) {
  int64_t n = x.shape().back();
  Tensor rank = goes_before(x, descending).sum({-1});                       // (..., n)
  Tensor slot = rank.unsqueeze(-2).eq(positions(k, Scalar::Int32, {k, 1})); // (..., k, n)
  Tensor values = slot.where(x.unsqueeze(-2), Tensor(0.0, x.dtype())).sum({-1});
  Tensor indices = slot.where(positions(n, Scalar::Int32, {1, n}), Tensor(0.0, Scalar::Int32));
  return {values.cast(x.dtype()), indices.sum({-1}).cast(Scalar::Int64)};
}

// x (..., n) with the updates upd (..., n, m) combined in where hit (..., n, m) is true.
Tensor scatter_combine(const Tensor& x, const Tensor& hit, const Tensor& upd, int64_t m,
                       const std::string& reduce) {
  DType dt = x.dtype();
  auto updates = [&](double otherwise) { return hit.where(upd, Tensor(otherwise, dt)); };
  if (reduce == "add") return (x + updates(0).sum({-1})).cast(dt);
  if (reduce == "mul") return (x * updates(1).prod({-1})).cast(dt);
  Tensor any = hit.any({-1});
  if (reduce == "max") return any.where(x.maximum(updates(detail::lowest_value(dt)).max({-1})), x);
  if (reduce == "min") return any.where(x.minimum(updates(detail::highest_value(dt)).min({-1})), x);
  // "none": of several updates to one element the last wins, as ONNX's reference applies
  // them in order.
  Tensor order = positions(m, Scalar::Int32, {1, m}) + 1.0;
  Tensor last = hit.where(order, Tensor(0.0, Scalar::Int32)).max({-1}, true);
  Tensor value = (hit & order.eq(last)).where(upd, Tensor(0.0, dt)).sum({-1}).cast(dt);
  return any.where(value, x);
}

} // namespace

std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t axis, bool largest) const {
  int64_t a = resolve_axis(axis, "topk"), n = shape_[static_cast<size_t>(a)];
  user_assert(k >= 1 && k <= n) << "topk: k = " << k << " is not in [1, " << n << "] (axis " << axis
                                << " of shape " << shape_str(shape_) << ")";
  auto [values, indices] = sorted_last(transpose(a, -1), k, largest);
  return {values.transpose(a, -1), indices.transpose(a, -1)};
}

std::pair<Tensor, Tensor> Tensor::sort(int64_t axis, bool descending) const {
  int64_t a = resolve_axis(axis, "sort");
  auto [values, indices] =
      sorted_last(transpose(a, -1), shape_[static_cast<size_t>(a)], descending);
  return {values.transpose(a, -1), indices.transpose(a, -1)};
}

Tensor Tensor::scatter(int64_t axis, const Tensor& index, const Tensor& src,
                       const std::string& reduce) const {
  int64_t a = resolve_axis(axis, "scatter");
  static const char* const kReduce[] = {"none", "add", "mul", "max", "min"};
  user_assert(std::find(std::begin(kReduce), std::end(kReduce), reduce) != std::end(kReduce))
      << "scatter: reduce must be none, add, mul, max or min, not '" << reduce << "'";
  user_assert(index.ndim() == ndim() && index.dtype().is_int())
      << "scatter: index must be an integer tensor of rank " << ndim() << ", not "
      << index.dtype().str() << " " << shape_str(index.shape());
  user_assert(src.shape() == index.shape())
      << "scatter: src " << shape_str(src.shape()) << " and index " << shape_str(index.shape())
      << " must have the same shape";
  for (int64_t i = 0; i < ndim(); ++i)
    user_assert(i == a || index.shape()[static_cast<size_t>(i)] <= shape_[static_cast<size_t>(i)])
        << "scatter: index shape " << shape_str(index.shape()) << " is larger than "
        << shape_str(shape_) << " on axis " << i;
  int64_t n = shape_[static_cast<size_t>(a)], m = index.shape()[static_cast<size_t>(a)];
  // hit[..., t, p]: update p (along the axis) lands on element t; rows past index's extent
  // on the other axes get none.
  Tensor x = transpose(a, -1);                                              // (..., n)
  Tensor idx = detail::wrap_index(index, n).transpose(a, -1).unsqueeze(-2); // (..., 1, m)
  Tensor upd = src.cast(dtype()).transpose(a, -1).unsqueeze(-2);            // (..., 1, m)
  Pads grow;
  for (size_t i = 0; i + 1 < x.shape().size(); ++i)
    grow.emplace_back(0, x.shape()[i] - idx.shape()[i]);
  grow.insert(grow.end(), {{0, 0}, {0, 0}});
  Tensor hit = idx.eq(positions(n, idx.dtype(), {n, 1})).pad(grow); // (..., n, m)
  upd = upd.pad(grow);
  return scatter_combine(x, hit, upd, m, reduce).transpose(a, -1);
}

} // namespace beamlab

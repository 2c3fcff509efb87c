// ONNX ops that move, select or create data: shapes and constants, reshapes, slices, concat
// and split, gathers, padding, tiling, one-hot, triangles, cumulative sums, einsum. Static
// operands (a Reshape's shape, a Slice's starts) are read back to the host.
#include <algorithm>
#include <numeric>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {

Tensor int64_tensor(const std::vector<int64_t>& values) {
  return Tensor(std::span<const int64_t>(values), {static_cast<int64_t>(values.size())},
                Scalar::Int64);
}

Tensor strided_slice(const Tensor& x, int64_t axis, int64_t start, int64_t count, int64_t step) {
  user_assert(count >= 1) << "the slice of axis " << axis << " of " << shape_str(x.shape())
                          << " is empty; beamlab does not compute on empty tensors";
  if (count == 1) return x.slice(axis, start, start + 1); // any step: the one element
  int64_t d = x.shape()[static_cast<size_t>(axis)];
  Tensor y = x;
  int64_t s = step;
  if (step < 0) { // flip, then slice forward
    y = y.flip({axis});
    start = d - 1 - start;
    s = -step;
  }
  int64_t span = (count - 1) * s + 1;
  y = y.slice(axis, start, start + span);
  if (s == 1) return y;
  // Pad to count * s, view as (count, s), keep column 0.
  std::vector<std::pair<int64_t, int64_t>> pads(static_cast<size_t>(y.ndim()), {0, 0});
  pads[static_cast<size_t>(axis)] = {0, count * s - span};
  Shape split = y.shape();
  split[static_cast<size_t>(axis)] = count;
  split.insert(split.begin() + axis + 1, s);
  y = y.pad(pads).reshape(split).slice(axis + 1, 0, 1);
  return y.squeeze(axis + 1);
}

namespace {

Value constant(const Node& n) {
  if (n.has_attr("value")) return n.attr_value("value");
  if (n.has_attr("value_float")) return Tensor(n.attr_float("value_float", 0), Scalar::Float32);
  if (n.has_attr("value_int"))
    return Tensor(static_cast<double>(n.attr_int("value_int", 0)), Scalar::Int64);
  if (n.has_attr("value_floats")) {
    std::vector<double> v = n.attr_floats("value_floats");
    return Tensor(std::span<const double>(v), {static_cast<int64_t>(v.size())});
  }
  if (n.has_attr("value_ints")) return int64_tensor(n.attr_ints("value_ints"));
  user_error << "only tensor, float and int values are supported (not strings or sparse)";
  return Tensor(0.0);
}

Tensor reshape(const Node& n) {
  const Tensor& x = n.in(0);
  Shape shape = n.value(1) && n.value(1)->ints
                    ? Shape(n.host_dims(1))
                    : Shape(n.ints_from(1, "shape").value_or(std::vector<int64_t>{}));
  bool allow_zero = n.attr_int("allowzero", 0) != 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 0 || allow_zero) continue;
    user_assert(i < x.shape().size())
        << "shape " << shape_str(shape) << " copies dim " << i << " of " << shape_str(x.shape())
        << ", which has no such dim";
    shape[i] = x.shape()[i];
  }
  return x.reshape(shape);
}

// A slice with a symbolic bound or dim (x[:, :seq], x[:, 0:1] of (1, seq, 768)): step 1, and
// bounds inside the dim at every value of the variables.
Tensor symbolic_slice(const Tensor& x, int64_t a, Dim start, Dim end, int64_t step) {
  Dim d = x.shape()[static_cast<size_t>(a)];
  user_assert(step == 1) << "a step of " << step << " along axis " << a << " of "
                         << shape_str(x.shape()) << ", where a symbolic slice takes step 1 only";
  auto bound = [&](const Dim& v) { // negative: from the end; past either end: that end
    if (v.is_const() && v.value() >= d.max()) return d;
    if (v.is_const() && v.value() <= -d.max()) return Dim(0);
    user_assert(!v.is_const() || v.value() >= 0 || d.is_const())
        << "a slice bound of " << v << " counts from the end of axis " << a << " of "
        << shape_str(x.shape()) << ", whose length " << d << " is symbolic; beamlab slices a "
        << "symbolic axis from its start";
    return v.is_const() && v.value() < 0 ? d + v : v;
  };
  start = bound(start);
  end = bound(end);
  user_assert(start.is_const() && (end == d || end.max() <= d.min()))
      << "the slice [" << start << ", " << end << ") of axis " << a << " of "
      << shape_str(x.shape()) << " may pass the dim's end; narrow the variables' ranges";
  user_assert(start.value() < end.min())
      << "the slice [" << start << ", " << end << ") of axis " << a << " of "
      << shape_str(x.shape()) << " is empty at some values; narrow the variables' ranges";
  std::vector<std::pair<Dim, Dim>> bounds;
  for (const Dim& e : x.shape()) bounds.emplace_back(0, e);
  bounds[static_cast<size_t>(a)] = {start, end};
  return x.shrink(bounds);
}

// An empty result (a count of 0 on some axis) is a Value of that shape: shape arithmetic in
// exported graphs slices empty ranges of shapes.
Value slice(const Node& n) {
  Tensor x = n.in(0);
  bool inputs = n.opset() >= 10;
  std::vector<Dim> starts, ends;
  if (inputs) {
    starts = n.host_dims(1);
    ends = n.host_dims(2);
  } else {
    for (int64_t v : n.attr_ints("starts")) starts.emplace_back(v);
    for (int64_t v : n.attr_ints("ends")) ends.emplace_back(v);
  }
  std::vector<int64_t> axes = n.ints_from(3, "axes").value_or(std::vector<int64_t>{});
  std::vector<int64_t> steps = inputs && n.has(4) ? n.host_ints(4) : std::vector<int64_t>{};
  user_assert(starts.size() == ends.size())
      << "starts and ends have different lengths (" << starts.size() << ", " << ends.size() << ")";
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  user_assert(axes.size() == starts.size() && (steps.empty() || steps.size() == axes.size()))
      << "axes, starts and steps have different lengths (" << axes.size() << ", " << starts.size()
      << ", " << steps.size() << ")";
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = Node::axis(axes[i], x.ndim(), "axis");
    int64_t step = i < steps.size() ? steps[i] : 1;
    user_assert(step != 0) << "a step of 0 on axis " << a;
    if (!starts[i].is_const() || !ends[i].is_const() ||
        !x.shape()[static_cast<size_t>(a)].is_const()) {
      x = symbolic_slice(x, a, starts[i], ends[i], step);
      continue;
    }
    int64_t d = dim(x, a);
    Node::SliceRange r = Node::slice_range(starts[i].value(), ends[i].value(), step, d);
    if (r.first == 0 && r.count == d && step == 1) continue;
    if (r.count == 0) {
      Shape shape = x.shape();
      shape[static_cast<size_t>(a)] = 0;
      return Value::empty(shape, x.dtype());
    }
    x = strided_slice(x, a, r.first, r.count, step);
  }
  return x;
}

std::vector<Value> split(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t a = Node::axis(n.attr_int("axis", 0), x.ndim(), "axis"), d = dim(x, a);
  std::vector<int64_t> sizes = n.ints_from(1, "split").value_or(std::vector<int64_t>{});
  if (sizes.empty()) {
    auto parts = static_cast<int64_t>(n.num_outputs());
    if (n.has_attr("num_outputs")) parts = n.attr_int("num_outputs");
    int64_t each = (d + parts - 1) / parts;
    for (int64_t at = 0; at < d; at += each) sizes.push_back(std::min(each, d - at));
  }
  std::vector<Value> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(x.slice(a, at, at + s));
    at += s;
  }
  user_assert(at == d) << "split sizes " << shape_str(sizes) << " do not add up to dim " << a
                       << " (" << d << ")";
  return out;
}

Tensor unsqueeze(const Node& n) {
  Tensor x = n.in(0);
  std::vector<int64_t> axes = n.ints_from(1, "axes").value_or(std::vector<int64_t>{});
  int64_t rank = x.ndim() + static_cast<int64_t>(axes.size());
  for (int64_t& a : axes) a = Node::axis(a, rank, "axis");
  std::sort(axes.begin(), axes.end());
  for (int64_t a : axes) x = x.unsqueeze(a);
  return x;
}

Tensor squeeze(const Node& n) {
  Tensor x = n.in(0);
  std::optional<std::vector<int64_t>> axes = n.ints_from(1, "axes");
  if (!axes || axes->empty()) return x.squeeze();
  std::vector<int64_t> as = *axes;
  for (int64_t& a : as) a = Node::axis(a, x.ndim(), "axis");
  std::sort(as.rbegin(), as.rend());
  for (int64_t a : as) x = x.squeeze(a);
  return x;
}

// Edge and reflect padding of one axis by `b` before and `e` after.
Tensor pad_axis(const Tensor& x, int64_t a, int64_t b, int64_t e, const std::string& mode) {
  int64_t d = dim(x, a);
  std::vector<Tensor> parts;
  if (mode == "edge") {
    auto edge = [&](int64_t at, int64_t count) {
      Shape s = x.shape();
      s[static_cast<size_t>(a)] = count;
      return x.slice(a, at, at + 1).expand(s);
    };
    if (b > 0) parts.push_back(edge(0, b));
    parts.push_back(x);
    if (e > 0) parts.push_back(edge(d - 1, e));
  } else if (mode == "wrap") { // the dim repeated around itself, as numpy's wrap
    int64_t before = (b + d - 1) / d, after = (e + d - 1) / d;
    std::vector<Tensor> copies(static_cast<size_t>(before + 1 + after), x);
    int64_t start = before * d - b;
    return Tensor::cat(copies, a).slice(a, start, start + b + d + e);
  } else {
    user_assert(b < d && e < d) << "reflect padding of " << std::max(b, e)
                                << " needs a dim larger than " << d;
    if (b > 0) parts.push_back(x.slice(a, 1, b + 1).flip({a}));
    parts.push_back(x);
    if (e > 0) parts.push_back(x.slice(a, d - e - 1, d - 1).flip({a}));
  }
  return parts.size() == 1 ? x : Tensor::cat(parts, a);
}

Tensor pad(const Node& n) {
  Tensor x = n.in(0);
  int64_t r = x.ndim();
  std::vector<int64_t> pads = n.opset() >= 11 ? n.host_ints(1) : n.attr_ints("pads");
  std::vector<int64_t> axes = n.opset() >= 18 && n.has(3) ? n.host_ints(3) : std::vector<int64_t>{};
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  user_assert(pads.size() == 2 * axes.size())
      << "pads has " << pads.size() << " values; it needs 2 per axis (" << 2 * axes.size() << ")";
  std::string mode = n.attr_string("mode", "constant");
  user_assert(mode == "constant" || mode == "edge" || mode == "reflect" ||
              (mode == "wrap" && n.opset() >= 19))
      << "mode '" << mode << "' is not one of constant, edge, reflect"
      << (n.opset() >= 19 ? ", wrap" : " (wrap from opset 19)");
  double value =
      n.opset() >= 11 ? (n.has(2) ? n.host_floats(2)[0] : 0.0) : n.attr_float("value", 0.0);
  std::vector<std::pair<int64_t, int64_t>> amounts(static_cast<size_t>(r), {0, 0});
  size_t k = axes.size();
  for (size_t i = 0; i < k; ++i) {
    int64_t a = Node::axis(axes[i], r, "axis");
    int64_t b = pads[i], e = pads[i + k];
    if (b < 0) x = x.slice(a, -b, dim(x, a)), b = 0; // negative pads crop
    if (e < 0) x = x.slice(a, 0, dim(x, a) + e), e = 0;
    amounts[static_cast<size_t>(a)] = {b, e};
  }
  if (mode == "constant") return x.pad(amounts, value);
  for (int64_t a = 0; a < r; ++a) {
    auto [b, e] = amounts[static_cast<size_t>(a)];
    if (b || e) x = pad_axis(x, a, b, e, mode);
  }
  return x;
}

// ReverseSequence: along time_axis, each batch element's first sequence_lens[b] steps reversed,
// the rest kept: a gather along the time axis by host-computed positions.
Tensor reverse_sequence(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t t_axis = Node::axis(n.attr_int("time_axis", 0), x.ndim(), "time_axis");
  int64_t b_axis = Node::axis(n.attr_int("batch_axis", 1), x.ndim(), "batch_axis");
  user_assert(t_axis != b_axis) << "time_axis and batch_axis are both " << t_axis;
  std::vector<int64_t> lens = n.host_ints(1);
  int64_t steps = dim(x, t_axis), batch = dim(x, b_axis);
  user_assert(static_cast<int64_t>(lens.size()) == batch)
      << "sequence_lens has " << lens.size() << " values for a batch of " << batch;
  std::vector<int64_t> from; // (time, batch) or (batch, time) in the axes' order
  for (int64_t i = 0; i < (t_axis < b_axis ? steps : batch); ++i)
    for (int64_t j = 0; j < (t_axis < b_axis ? batch : steps); ++j) {
      int64_t t = t_axis < b_axis ? i : j, b = t_axis < b_axis ? j : i;
      int64_t len = lens[static_cast<size_t>(b)];
      user_assert(len >= 0 && len <= steps)
          << "sequence length " << len << " is outside [0, " << steps << "]";
      from.push_back(t < len ? len - 1 - t : t);
    }
  Shape shape(static_cast<size_t>(x.ndim()), 1);
  shape[static_cast<size_t>(t_axis)] = steps;
  shape[static_cast<size_t>(b_axis)] = batch;
  Tensor index = Tensor(std::span<const int64_t>(from), shape, Scalar::Int64).expand(x.shape());
  return x.gather(t_axis, index);
}

// CenterCropPad (18): each listed axis cropped or zero-padded to its target size, centred
// (an odd difference leaves the extra element at the end).
Tensor center_crop_pad(const Node& n) {
  Tensor x = n.in(0);
  std::vector<int64_t> shape = n.host_ints(1);
  std::vector<int64_t> axes = n.attr_ints("axes");
  if (axes.empty())
    for (int64_t i = 0; i < x.ndim(); ++i) axes.push_back(i);
  user_assert(shape.size() == axes.size())
      << "shape has " << shape.size() << " values for " << axes.size() << " axes";
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = Node::axis(axes[i], x.ndim(), "axis"), have = dim(x, a), want = shape[i];
    user_assert(want >= 1) << "target size " << want << " of axis " << a << " is below 1";
    if (want < have) {
      int64_t start = (have - want) / 2;
      x = x.slice(a, start, start + want);
    } else if (want > have) {
      std::vector<std::pair<int64_t, int64_t>> pads(static_cast<size_t>(x.ndim()), {0, 0});
      pads[static_cast<size_t>(a)] = {(want - have) / 2, want - have - (want - have) / 2};
      x = x.pad(pads);
    }
  }
  return x;
}

Tensor depth_to_space(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t b = n.attr_int("blocksize");
  user_assert(x.ndim() == 4) << "needs (N, C, H, W), not " << shape_str(x.shape());
  int64_t N = dim(x, 0), C = dim(x, 1), H = dim(x, 2), W = dim(x, 3);
  user_assert(C % (b * b) == 0) << "channels " << C << " are not a multiple of blocksize^2";
  int64_t c = C / (b * b);
  if (n.attr_string("mode", "DCR") == "CRD")
    return x.reshape({N, c, b, b, H, W}).permute({0, 1, 4, 2, 5, 3}).reshape({N, c, H * b, W * b});
  return x.reshape({N, b, b, c, H, W}).permute({0, 3, 4, 1, 5, 2}).reshape({N, c, H * b, W * b});
}

Tensor space_to_depth(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t b = n.attr_int("blocksize");
  user_assert(x.ndim() == 4) << "needs (N, C, H, W), not " << shape_str(x.shape());
  int64_t N = dim(x, 0), C = dim(x, 1), H = dim(x, 2), W = dim(x, 3);
  user_assert(H % b == 0 && W % b == 0) << "H and W must be multiples of blocksize " << b;
  return x.reshape({N, C, H / b, b, W / b, b})
      .permute({0, 3, 5, 1, 2, 4})
      .reshape({N, C * b * b, H / b, W / b});
}

Tensor one_hot(const Node& n) {
  Tensor idx = n.in(0);
  int64_t depth = static_cast<int64_t>(n.host_floats(1)[0]);
  const Tensor& values = n.in(2);
  int64_t rank = idx.ndim() + 1;
  int64_t a = Node::axis(n.attr_int("axis", -1), rank, "axis");
  Tensor i = idx.cast(Scalar::Int64);
  i = (i < 0).where(i + static_cast<double>(depth), i);
  Shape along(static_cast<size_t>(rank), 1);
  along[static_cast<size_t>(a)] = depth;
  Tensor hit = i.unsqueeze(a).eq(
      Tensor::arange(0, static_cast<double>(depth), 1, Scalar::Int64).reshape(along));
  return hit.where(values.slice(0, 1, 2).reshape({}), values.slice(0, 0, 1).reshape({}));
}

Tensor cumsum(const Node& n) {
  Tensor x = n.in(0);
  int64_t a = Node::axis(n.host_ints(1)[0], x.ndim(), "axis");
  bool exclusive = n.attr_int("exclusive", 0) != 0, reverse = n.attr_int("reverse", 0) != 0;
  if (reverse) x = x.flip({a});
  Tensor c = x.cumsum(a).cast(x.dtype());
  if (exclusive) {
    std::vector<std::pair<int64_t, int64_t>> pads(static_cast<size_t>(x.ndim()), {0, 0});
    pads[static_cast<size_t>(a)] = {1, 0};
    c = c.pad(pads).slice(a, 0, dim(x, a));
  }
  return reverse ? c.flip({a}) : c;
}

// A Range to a symbolic limit (position ids: arange(seq)) runs from 0 by a whole step that
// divides it: the positions up to the limit's largest value, sliced to the first limit / step.
Tensor range(const Node& n) {
  double start = n.host_floats(0)[0], delta = n.host_floats(2)[0];
  DType dtype = n.in(0).dtype();
  const Value* given = n.value(1);
  bool symbolic =
      given && given->ints && given->ints->size() == 1 && !given->ints->front().is_const();
  if (!symbolic) return Tensor::arange(start, n.host_floats(1)[0], delta, dtype);
  const Dim& limit = given->ints->front();
  auto step = static_cast<int64_t>(delta);
  user_assert(start == 0 && step > 0 && static_cast<double>(step) == delta && divides(step, limit))
      << "a Range to the symbolic limit " << limit << " from " << start << " by " << delta
      << ": beamlab runs one from 0 by a whole step that divides the limit; give the model's "
         "dims numbers with --input";
  Dim count = limit / step;
  Tensor all = Tensor::arange(0, static_cast<double>(count.max() * step), delta, dtype);
  return all.shrink({{Dim(0), count}});
}

Tensor eye_like(const Node& n) {
  const Tensor& x = n.in(0);
  user_assert(x.ndim() == 2) << "needs a 2-D input, not " << shape_str(x.shape());
  DType dt =
      n.has_attr("dtype") ? dtype_of(static_cast<int>(n.attr_int("dtype", 1)), "dtype") : x.dtype();
  int64_t k = n.attr_int("k", 0);
  Tensor r = Tensor::arange(dim(x, 0)).reshape({dim(x, 0), 1}).cast(Scalar::Int64);
  Tensor c = Tensor::arange(dim(x, 1)).reshape({1, dim(x, 1)}).cast(Scalar::Int64);
  return (c - r).eq(Tensor(static_cast<double>(k), Scalar::Int64)).cast(dt);
}

// Linear indices into the first k dims of `data` (after b batch dims) from an index tensor's
// last axis of k; negative indices count from the end. Shape: indices.shape[:-1].
Tensor linear_index(const Tensor& data, const Tensor& indices, int64_t b) {
  int64_t k = indices.shape().back();
  user_assert(b + k <= data.ndim()) << "indices address " << k << " dims after " << b
                                    << " batch dims of " << shape_str(data.shape());
  Shape dims(data.shape().begin() + b, data.shape().begin() + b + k);
  std::vector<int64_t> strides(static_cast<size_t>(k), 1);
  for (int64_t j = k - 2; j >= 0; --j)
    strides[static_cast<size_t>(j)] =
        strides[static_cast<size_t>(j + 1)] * dims[static_cast<size_t>(j + 1)];
  Tensor idx = indices.cast(Scalar::Int64);
  idx = (idx < 0).where(idx + int64_tensor(dims), idx);
  Tensor lin = (idx * int64_tensor(strides)).sum({-1});
  if (b == 0) return lin;
  // Batch dims: each index row also steps over the batches before it.
  int64_t per_batch = shape_numel(dims), batches = 1;
  for (int64_t i = 0; i < b; ++i) batches *= dim(data, i);
  Shape bshape(indices.shape().begin(), indices.shape().begin() + b);
  Shape along = bshape;
  along.resize(static_cast<size_t>(lin.ndim()), 1);
  Tensor batch = Tensor::arange(0, static_cast<double>(batches), 1, Scalar::Int64).reshape(along);
  return lin + batch * static_cast<double>(per_batch);
}

// data viewed as (batches * prod(k dims), rest...)
Tensor rows_of(const Tensor& data, int64_t b, int64_t k) {
  Shape rows = {-1};
  rows.insert(rows.end(), data.shape().begin() + b + k, data.shape().end());
  return data.reshape(rows);
}

Tensor gather_nd(const Node& n) {
  const Tensor &data = n.in(0), &indices = n.in(1);
  int64_t b = n.attr_int("batch_dims", 0), k = indices.shape().back();
  return rows_of(data, b, k).take(linear_index(data, indices, b), 0);
}

Tensor scatter_nd(const Node& n) {
  const Tensor &data = n.in(0), &indices = n.in(1), &updates = n.in(2);
  int64_t k = indices.shape().back();
  Tensor rows = rows_of(data, 0, k);
  int64_t width = rows.numel() / rows.shape()[0];
  Tensor lin = linear_index(data, indices, 0).reshape({-1, 1});
  Tensor src = updates.reshape({lin.shape()[0], width});
  Tensor out =
      rows.reshape({rows.shape()[0], width})
          .scatter(0, lin.expand({lin.shape()[0], width}), src, n.attr_string("reduction", "none"));
  return out.reshape(data.shape());
}

Value compress(const Node& n) {
  Tensor x = n.in(0);
  std::vector<int64_t> cond = n.host_ints(1);
  int64_t a = 0;
  if (n.has_attr("axis"))
    a = Node::axis(n.attr_int("axis", 0), x.ndim(), "axis");
  else
    x = x.flatten();
  std::vector<int64_t> keep;
  for (size_t i = 0; i < cond.size() && static_cast<int64_t>(i) < dim(x, a); ++i)
    if (cond[i]) keep.push_back(static_cast<int64_t>(i));
  if (keep.empty()) {
    Shape s = x.shape();
    s[static_cast<size_t>(a)] = 0;
    return Value::empty(s, x.dtype());
  }
  return x.take(int64_tensor(keep), a);
}

void add_shapes(ConverterTable& t) {
  t["Constant"] = [](const Node& n) { return std::vector<Value>{constant(n)}; };
  t["Shape"] = [](const Node& n) {
    const Value* v = n.value(0);
    user_assert(v) << "input 0 is missing";
    auto r = static_cast<int64_t>(v->shape.size());
    int64_t s = n.attr_int("start", 0), e = n.attr_int("end", r);
    s = std::clamp(s < 0 ? s + r : s, int64_t{0}, r);
    e = std::clamp(e < 0 ? e + r : e, s, r);
    std::vector<Dim> dims(v->shape.begin() + s, v->shape.begin() + e);
    return std::vector<Value>{Value::known(dims, {e - s}, Scalar::Int64)};
  };
  t["Size"] = [](const Node& n) {
    return std::vector<Value>{Value::known({shape_numel(n.value(0)->shape)}, {}, Scalar::Int64)};
  };
  t["ConstantOfShape"] = [](const Node& n) {
    Tensor v = n.has_attr("value") ? n.attr_tensor("value") : Tensor(0.0, Scalar::Float32);
    return one(v.reshape({}).expand(Shape(n.host_dims(0))).contiguous());
  };
  t["Range"] = [](const Node& n) { return one(range(n)); };
  t["EyeLike"] = [](const Node& n) { return one(eye_like(n)); };
  t["OneHot"] = [](const Node& n) { return one(one_hot(n)); };
}

void add_reshapes(ConverterTable& t) {
  t["Reshape"] = [](const Node& n) { return one(reshape(n)); };
  t["Flatten"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    int64_t a = n.attr_int("axis", 1);
    a = Node::axis(a < 0 ? a + x.ndim() : a, x.ndim() + 1, "axis");
    int64_t outer = 1;
    for (int64_t i = 0; i < a; ++i) outer *= dim(x, i);
    return one(x.reshape({outer, x.numel() / outer}));
  };
  t["Transpose"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (perm.empty())
      for (int64_t i = x.ndim() - 1; i >= 0; --i) perm.push_back(i);
    return one(x.permute(perm));
  };
  t["Squeeze"] = [](const Node& n) { return one(squeeze(n)); };
  t["Unsqueeze"] = [](const Node& n) { return one(unsqueeze(n)); };
  t["Expand"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    Shape s = broadcast_shapes(x.shape(), Shape(n.host_dims(1)), "Expand");
    return one(x.expand(s));
  };
  t["Tile"] = [](const Node& n) { return one(n.in(0).repeat(n.host_ints(1))); };
  t["DepthToSpace"] = [](const Node& n) { return one(depth_to_space(n)); };
  t["SpaceToDepth"] = [](const Node& n) { return one(space_to_depth(n)); };
}

void add_selections(ConverterTable& t) {
  t["Slice"] = [](const Node& n) { return std::vector<Value>{slice(n)}; };
  t["Split"] = split;
  t["Concat"] = [](const Node& n) {
    std::vector<Tensor> xs = n.all_inputs();
    user_assert(!xs.empty()) << "needs at least one non-empty input";
    int64_t a = Node::axis(n.attr_int("axis"), xs[0].ndim(), "axis");
    return one(xs.size() == 1 ? xs[0] : Tensor::cat(xs, a));
  };
  t["Pad"] = [](const Node& n) { return one(pad(n)); };
  t["CenterCropPad"] = [](const Node& n) { return one(center_crop_pad(n)); };
  t["ReverseSequence"] = [](const Node& n) { return one(reverse_sequence(n)); };
  t["Gather"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    return one(x.take(n.in(1), Node::axis(n.attr_int("axis", 0), x.ndim(), "axis")));
  };
  t["GatherElements"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    return one(x.gather(Node::axis(n.attr_int("axis", 0), x.ndim(), "axis"), n.in(1)));
  };
  t["Trilu"] = [](const Node& n) {
    int64_t k = n.has(1) ? n.host_ints(1)[0] : 0;
    const Tensor& x = n.in(0);
    return one(n.attr_int("upper", 1) ? x.triu(k) : x.tril(k));
  };
  t["CumSum"] = [](const Node& n) { return one(cumsum(n)); };
  t["Einsum"] = [](const Node& n) {
    std::string eq = n.attr_string("equation", "");
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    return one(Tensor::einsum(eq, n.all_inputs()));
  };
  t["GatherND"] = [](const Node& n) { return one(gather_nd(n)); };
  t["ScatterND"] = [](const Node& n) { return one(scatter_nd(n)); };
  t["Compress"] = [](const Node& n) { return std::vector<Value>{compress(n)}; };
}

} // namespace

void add_movement_ops(ConverterTable& table) {
  add_shapes(table);
  add_reshapes(table);
  add_selections(table);
}

} // namespace beamlab::onnx

// Plain-loop reference tensor ops; see reference.hpp.
#include "tests/tensor/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace beamlab::testing {
namespace {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string str(const Shape& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ")";
  return os.str();
}

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

// The multi-index of element `flat` of `shape`.
std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

// The flat position of `idx` in `shape`.
int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + idx[i];
  return flat;
}

int64_t resolve(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) fail("axis " + std::to_string(axis) + " out of range");
  return a;
}

Shape broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())].value();
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())].value();
    if (da != db && da != 1 && db != 1) fail("shapes " + str(a) + " and " + str(b) + " differ");
    out[i] = std::max(da, db);
  }
  return out;
}

// The element of `a` that the broadcast index `idx` (of a shape of rank >= a's) reads.
double broadcast_read(const NdArray& a, const std::vector<int64_t>& idx) {
  size_t extra = idx.size() - a.shape.size();
  int64_t flat = 0;
  for (size_t i = 0; i < a.shape.size(); ++i)
    flat = flat * a.shape[i] + (a.shape[i] == 1 ? 0 : idx[i + extra]);
  return a.values[static_cast<size_t>(flat)];
}

} // namespace

NdArray::NdArray(Shape s, std::vector<double> v) : shape(std::move(s)), values(std::move(v)) {
  if (numel_of(shape) != static_cast<int64_t>(values.size()))
    fail(std::to_string(values.size()) + " values for shape " + str(shape));
}

NdArray NdArray::full(const Shape& shape, double value) {
  return NdArray(shape, std::vector<double>(static_cast<size_t>(numel_of(shape)), value));
}

std::string index_str(const Shape& shape, int64_t flat) { return str(unravel(flat, shape)); }

// ---------------------------------------------------------------- elementwise

NdArray map(const NdArray& a, const std::function<double(double)>& f) {
  NdArray out = a;
  for (double& v : out.values) v = f(v);
  return out;
}

NdArray zip(const NdArray& a, const NdArray& b, const std::function<double(double, double)>& f) {
  NdArray out = NdArray::full(broadcast(a.shape, b.shape), 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, out.shape);
    out.values[static_cast<size_t>(e)] = f(broadcast_read(a, idx), broadcast_read(b, idx));
  }
  return out;
}

NdArray add(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x + y; });
}
NdArray sub(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x - y; });
}
NdArray mul(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x * y; });
}
NdArray maximum(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return std::max(x, y); });
}
NdArray lt(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x < y ? 1.0 : 0.0; });
}
NdArray gt(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x > y ? 1.0 : 0.0; });
}
NdArray le(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x <= y ? 1.0 : 0.0; });
}
NdArray ge(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x >= y ? 1.0 : 0.0; });
}
NdArray eq(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x == y ? 1.0 : 0.0; });
}
NdArray ne(const NdArray& a, const NdArray& b) {
  return zip(a, b, [](double x, double y) { return x != y ? 1.0 : 0.0; });
}

NdArray neg(const NdArray& a) {
  return map(a, [](double x) { return -x; });
}
NdArray abs(const NdArray& a) {
  return map(a, [](double x) { return std::fabs(x); });
}
NdArray exp(const NdArray& a) {
  return map(a, [](double x) { return std::exp(x); });
}
NdArray log_abs1(const NdArray& a) {
  return map(a, [](double x) { return std::log(std::fabs(x) + 1); });
}
NdArray sqrt_abs(const NdArray& a) {
  return map(a, [](double x) { return std::sqrt(std::fabs(x)); });
}
NdArray relu(const NdArray& a) {
  return map(a, [](double x) { return std::max(x, 0.0); });
}
NdArray sigmoid(const NdArray& a) {
  return map(a, [](double x) { return 1 / (1 + std::exp(-x)); });
}
NdArray tanh(const NdArray& a) {
  return map(a, [](double x) { return std::tanh(x); });
}

// ---------------------------------------------------------------- reductions

NdArray reduce(const NdArray& a, ReduceOp op, std::vector<int64_t> axes, bool keepdim) {
  std::vector<bool> reduced(a.shape.size(), axes.empty());
  for (int64_t ax : axes) reduced[static_cast<size_t>(resolve(ax, a.rank()))] = true;
  Shape kept = a.shape;
  for (size_t i = 0; i < kept.size(); ++i)
    if (reduced[i]) kept[i] = 1;
  double init = op == ReduceOp::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  NdArray out = NdArray::full(kept, init);
  for (int64_t e = 0; e < a.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, a.shape);
    for (size_t i = 0; i < idx.size(); ++i)
      if (reduced[i]) idx[i] = 0;
    double& acc = out.values[static_cast<size_t>(ravel(idx, kept))];
    double v = a.values[static_cast<size_t>(e)];
    acc = op == ReduceOp::Max ? std::max(acc, v) : acc + v;
  }
  if (op == ReduceOp::Mean) {
    double n = static_cast<double>(a.numel()) / static_cast<double>(out.numel());
    for (double& v : out.values) v /= n;
  }
  if (keepdim) return out;
  Shape squeezed;
  for (size_t i = 0; i < kept.size(); ++i)
    if (!reduced[i]) squeezed.push_back(kept[i]);
  return reshape(out, squeezed);
}

NdArray sum(const NdArray& a, std::vector<int64_t> axes, bool keepdim) {
  return reduce(a, ReduceOp::Sum, std::move(axes), keepdim);
}
NdArray max(const NdArray& a, std::vector<int64_t> axes, bool keepdim) {
  return reduce(a, ReduceOp::Max, std::move(axes), keepdim);
}
NdArray mean(const NdArray& a, std::vector<int64_t> axes, bool keepdim) {
  return reduce(a, ReduceOp::Mean, std::move(axes), keepdim);
}

// ---------------------------------------------------------------- movement

NdArray reshape(const NdArray& a, const Shape& shape) {
  if (numel_of(shape) != a.numel()) fail("cannot reshape " + str(a.shape) + " to " + str(shape));
  return NdArray(shape, a.values);
}

NdArray permute(const NdArray& a, std::vector<int64_t> order) {
  if (static_cast<int64_t>(order.size()) != a.rank()) fail("permute: wrong number of axes");
  Shape shape;
  for (int64_t& o : order) {
    o = resolve(o, a.rank());
    shape.push_back(a.shape[static_cast<size_t>(o)]);
  }
  NdArray out = NdArray::full(shape, 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, shape), src(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) src[static_cast<size_t>(order[i])] = idx[i];
    out.values[static_cast<size_t>(e)] = a.values[static_cast<size_t>(ravel(src, a.shape))];
  }
  return out;
}

NdArray expand(const NdArray& a, const Shape& shape) {
  if (shape.size() < a.shape.size()) fail("expand to fewer dims");
  size_t extra = shape.size() - a.shape.size();
  for (size_t i = 0; i < a.shape.size(); ++i)
    if (a.shape[i] != 1 && a.shape[i] != shape[i + extra])
      fail("cannot expand " + str(a.shape) + " to " + str(shape));
  NdArray out = NdArray::full(shape, 0);
  for (int64_t e = 0; e < out.numel(); ++e)
    out.values[static_cast<size_t>(e)] = broadcast_read(a, unravel(e, shape));
  return out;
}

NdArray pad(const NdArray& a, const std::vector<std::pair<int64_t, int64_t>>& pads, double value) {
  if (static_cast<int64_t>(pads.size()) != a.rank()) fail("pad: wrong number of axes");
  Shape shape = a.shape;
  for (size_t i = 0; i < shape.size(); ++i) shape[i] += pads[i].first + pads[i].second;
  NdArray out = NdArray::full(shape, value);
  for (int64_t e = 0; e < a.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, a.shape);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] += pads[i].first;
    out.values[static_cast<size_t>(ravel(idx, shape))] = a.values[static_cast<size_t>(e)];
  }
  return out;
}

NdArray shrink(const NdArray& a, const std::vector<std::pair<int64_t, int64_t>>& bounds) {
  if (static_cast<int64_t>(bounds.size()) != a.rank()) fail("shrink: wrong number of axes");
  Shape shape;
  for (size_t i = 0; i < bounds.size(); ++i) {
    auto [b, e] = bounds[i];
    if (b < 0 || b >= e || e > a.shape[i]) fail("shrink: bad bounds for " + str(a.shape));
    shape.push_back(e - b);
  }
  NdArray out = NdArray::full(shape, 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, shape);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] += bounds[i].first;
    out.values[static_cast<size_t>(e)] = a.values[static_cast<size_t>(ravel(idx, a.shape))];
  }
  return out;
}

NdArray flip(const NdArray& a, std::vector<int64_t> axes) {
  std::vector<bool> flipped(a.shape.size());
  for (int64_t ax : axes) flipped[static_cast<size_t>(resolve(ax, a.rank()))] = true;
  NdArray out = a;
  for (int64_t e = 0; e < a.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, a.shape);
    for (size_t i = 0; i < idx.size(); ++i)
      if (flipped[i]) idx[i] = a.shape[i] - 1 - idx[i];
    out.values[static_cast<size_t>(e)] = a.values[static_cast<size_t>(ravel(idx, a.shape))];
  }
  return out;
}

// ---------------------------------------------------------------- matmul

NdArray matmul(const NdArray& a, const NdArray& b) {
  if (a.rank() == 0 || b.rank() == 0) fail("matmul of a scalar");
  NdArray x = a.rank() == 1 ? reshape(a, {1, a.shape[0]}) : a;
  NdArray y = b.rank() == 1 ? reshape(b, {b.shape[0], 1}) : b;
  int64_t n = x.shape[x.shape.size() - 2], k = x.shape.back();
  int64_t k2 = y.shape[y.shape.size() - 2], m = y.shape.back();
  if (k != k2) fail("matmul: inner dims " + str(a.shape) + " @ " + str(b.shape));
  Shape xb(x.shape.begin(), x.shape.end() - 2), yb(y.shape.begin(), y.shape.end() - 2);
  Shape batch = broadcast(xb, yb);
  // Each operand's batch part broadcast to `batch`, then the products per batch element.
  Shape xs = batch, ys = batch;
  xs.insert(xs.end(), {n, k});
  ys.insert(ys.end(), {k, m});
  NdArray xe = expand(x, xs), ye = expand(y, ys);
  Shape shape = batch;
  shape.insert(shape.end(), {n, m});
  NdArray out = NdArray::full(shape, 0);
  int64_t batches = numel_of(batch);
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < k; ++l)
          acc += xe.values[static_cast<size_t>((bi * n + i) * k + l)] *
                 ye.values[static_cast<size_t>((bi * k + l) * m + j)];
        out.values[static_cast<size_t>((bi * n + i) * m + j)] = acc;
      }
  Shape final_shape = batch;
  if (a.rank() != 1) final_shape.push_back(n);
  if (b.rank() != 1) final_shape.push_back(m);
  return reshape(out, final_shape);
}

// ---------------------------------------------------------------- windows

namespace {

// The element of `a` at `idx`.
double at(const NdArray& a, const std::vector<int64_t>& idx) {
  return a.values[static_cast<size_t>(ravel(idx, a.shape))];
}

// Output size of one pooled or convolved dim.
int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t d, std::pair<int64_t, int64_t> p,
                   bool ceil_mode) {
  int64_t room = in + p.first + p.second - d * (k - 1) - 1;
  if (room < 0) fail("window does not fit");
  int64_t o = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p.first) --o; // the last window may not start in the end pad
  return o;
}

} // namespace

NdArray conv(const NdArray& x, const NdArray& w, const NdArray* bias, int64_t groups,
             const WindowSpec& win) {
  size_t nd = x.shape.size() - 2;
  int64_t cout = w.shape[0], cg = w.shape[1];
  if (cg * groups != x.shape[1] || cout % groups != 0) fail("conv: channels do not match");
  Shape out = {x.shape[0], cout}, ks(w.shape.begin() + 2, w.shape.end());
  for (size_t i = 0; i < nd; ++i)
    out.push_back(
        window_out(x.shape[i + 2], ks[i], win.stride[i], win.dilation[i], win.pads[i], false));
  NdArray r = NdArray::full(out, 0);
  for (int64_t e = 0; e < r.numel(); ++e) {
    std::vector<int64_t> o = unravel(e, out);
    int64_t co = o[1], g = co / (cout / groups);
    double acc = bias ? bias->values[static_cast<size_t>(co)] : 0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t kk = 0; kk < numel_of(ks); ++kk) {
        std::vector<int64_t> kidx = unravel(kk, ks), xi = {o[0], g * cg + ci}, wi = {co, ci};
        bool inside = true;
        for (size_t i = 0; i < nd; ++i) {
          int64_t p = o[i + 2] * win.stride[i] - win.pads[i].first + kidx[i] * win.dilation[i];
          inside &= p >= 0 && p < x.shape[i + 2];
          xi.push_back(p);
          wi.push_back(kidx[i]);
        }
        if (inside) acc += at(x, xi) * at(w, wi);
      }
    r.values[static_cast<size_t>(e)] = acc;
  }
  return r;
}

NdArray conv_transpose(const NdArray& x, const NdArray& w, const NdArray* bias, int64_t groups,
                       const WindowSpec& win, const std::vector<int64_t>& output_padding) {
  size_t nd = x.shape.size() - 2;
  int64_t cin = x.shape[1], cog = w.shape[1], cig = cin / groups;
  if (w.shape[0] != cin || cin % groups != 0) fail("conv_transpose: channels do not match");
  Shape out = {x.shape[0], cog * groups}, ks(w.shape.begin() + 2, w.shape.end());
  for (size_t i = 0; i < nd; ++i)
    out.push_back((x.shape[i + 2] - 1) * win.stride[i] - win.pads[i].first - win.pads[i].second +
                  win.dilation[i] * (ks[i] - 1) + output_padding[i] + 1);
  NdArray r = NdArray::full(out, 0);
  for (int64_t e = 0; e < r.numel(); ++e)
    r.values[static_cast<size_t>(e)] =
        bias ? bias->values[static_cast<size_t>(unravel(e, out)[1])] : 0;
  for (int64_t e = 0; e < x.numel(); ++e) {
    std::vector<int64_t> i = unravel(e, x.shape);
    int64_t g = i[1] / cig;
    for (int64_t col = 0; col < cog; ++col)
      for (int64_t kk = 0; kk < numel_of(ks); ++kk) {
        std::vector<int64_t> kidx = unravel(kk, ks), t = {i[0], g * cog + col}, wi = {i[1], col};
        bool inside = true;
        for (size_t d = 0; d < nd; ++d) {
          int64_t p = i[d + 2] * win.stride[d] - win.pads[d].first + kidx[d] * win.dilation[d];
          inside &= p >= 0 && p < out[d + 2];
          t.push_back(p);
          wi.push_back(kidx[d]);
        }
        if (inside)
          r.values[static_cast<size_t>(ravel(t, out))] +=
              x.values[static_cast<size_t>(e)] * at(w, wi);
      }
  }
  return r;
}

NdArray pool(const NdArray& x, PoolOp op, const WindowSpec& win, double p) {
  size_t nd = win.kernel.size(), lead = x.shape.size() - nd;
  Shape out(x.shape.begin(), x.shape.begin() + static_cast<long>(lead));
  for (size_t i = 0; i < nd; ++i)
    out.push_back(window_out(x.shape[lead + i], win.kernel[i], win.stride[i], win.dilation[i],
                             win.pads[i], win.ceil_mode));
  NdArray r = NdArray::full(out, 0);
  for (int64_t e = 0; e < r.numel(); ++e) {
    std::vector<int64_t> o = unravel(e, out);
    double acc = op == PoolOp::Max ? -std::numeric_limits<double>::infinity() : 0, count = 0;
    for (int64_t kk = 0; kk < numel_of(win.kernel); ++kk) {
      std::vector<int64_t> kidx = unravel(kk, win.kernel),
                           xi(o.begin(), o.begin() + static_cast<long>(lead));
      bool in_input = true, in_pads = true;
      for (size_t i = 0; i < nd; ++i) {
        int64_t n = x.shape[lead + i];
        int64_t q = o[lead + i] * win.stride[i] - win.pads[i].first + kidx[i] * win.dilation[i];
        in_input &= q >= 0 && q < n;
        in_pads &= q >= -win.pads[i].first && q < n + win.pads[i].second;
        xi.push_back(q);
      }
      count += op == PoolOp::AvgIncludePad ? in_pads : in_input;
      if (!in_input) continue;
      double v = at(x, xi);
      acc = op == PoolOp::Max  ? std::max(acc, v)
            : op == PoolOp::Lp ? acc + std::pow(std::fabs(v), p)
                               : acc + v;
    }
    if (op == PoolOp::Avg || op == PoolOp::AvgIncludePad) acc /= count;
    if (op == PoolOp::Lp) acc = std::pow(acc, 1 / p);
    r.values[static_cast<size_t>(e)] = acc;
  }
  return r;
}

// ---------------------------------------------------------------- indexing

NdArray triangle(const NdArray& a, int64_t k, bool upper) {
  NdArray r = a;
  for (int64_t e = 0; e < a.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, a.shape);
    int64_t diff = idx[idx.size() - 1] - idx[idx.size() - 2];
    if (upper ? diff < k : diff > k) r.values[static_cast<size_t>(e)] = 0;
  }
  return r;
}

NdArray one_hot(const NdArray& a, int64_t n) {
  Shape shape = a.shape;
  shape.push_back(n);
  NdArray r = NdArray::full(shape, 0);
  for (int64_t e = 0; e < a.numel(); ++e) {
    auto i = static_cast<int64_t>(a.values[static_cast<size_t>(e)]);
    if (i < 0) i += n;
    if (i >= 0 && i < n) r.values[static_cast<size_t>(e * n + i)] = 1;
  }
  return r;
}

std::pair<NdArray, NdArray> topk(const NdArray& a, int64_t k, int64_t axis, bool descending) {
  int64_t ax = resolve(axis, a.rank()), n = a.shape[static_cast<size_t>(ax)];
  Shape shape = a.shape;
  shape[static_cast<size_t>(ax)] = k;
  NdArray values = NdArray::full(shape, 0), indices = NdArray::full(shape, 0);
  // NaN is above every number.
  auto before = [descending](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return descending ? !std::isnan(y) : !std::isnan(x);
    return descending ? x > y : x < y;
  };
  for (int64_t e = 0; e < values.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, shape);
    if (idx[static_cast<size_t>(ax)] != 0) continue; // one row per position off the axis
    std::vector<double> row;
    for (int64_t j = 0; j < n; ++j) {
      idx[static_cast<size_t>(ax)] = j;
      row.push_back(at(a, idx));
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { // stable: ties by index
      double vx = row[static_cast<size_t>(x)], vy = row[static_cast<size_t>(y)];
      return before(vx, vy) || (!before(vy, vx) && x < y);
    });
    for (int64_t j = 0; j < k; ++j) {
      idx[static_cast<size_t>(ax)] = j;
      int64_t flat = ravel(idx, shape);
      values.values[static_cast<size_t>(flat)] =
          row[static_cast<size_t>(order[static_cast<size_t>(j)])];
      indices.values[static_cast<size_t>(flat)] =
          static_cast<double>(order[static_cast<size_t>(j)]);
    }
  }
  return {values, indices};
}

NdArray scatter(const NdArray& a, int64_t axis, const NdArray& index, const NdArray& src,
                const std::string& reduce) {
  int64_t ax = resolve(axis, a.rank()), n = a.shape[static_cast<size_t>(ax)];
  NdArray r = a;
  for (int64_t e = 0; e < index.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, index.shape);
    auto i = static_cast<int64_t>(index.values[static_cast<size_t>(e)]);
    if (i < 0) i += n;
    if (i < 0 || i >= n) continue;
    idx[static_cast<size_t>(ax)] = i;
    double& out = r.values[static_cast<size_t>(ravel(idx, a.shape))];
    double v = src.values[static_cast<size_t>(e)];
    if (reduce == "none")
      out = v;
    else if (reduce == "add")
      out += v;
    else if (reduce == "mul")
      out *= v;
    else if (reduce == "max")
      out = std::max(out, v);
    else if (reduce == "min")
      out = std::min(out, v);
    else
      fail("scatter: bad reduce " + reduce);
  }
  return r;
}

NdArray gather(const NdArray& a, int64_t axis, const NdArray& index) {
  int64_t ax = resolve(axis, a.rank()), n = a.shape[static_cast<size_t>(ax)];
  NdArray r = NdArray::full(index.shape, 0);
  for (int64_t e = 0; e < index.numel(); ++e) {
    std::vector<int64_t> idx = unravel(e, index.shape);
    auto i = static_cast<int64_t>(index.values[static_cast<size_t>(e)]);
    if (i < 0) i += n;
    idx[static_cast<size_t>(ax)] = i;
    r.values[static_cast<size_t>(e)] = at(a, idx);
  }
  return r;
}

NdArray take(const NdArray& a, const NdArray& index, int64_t axis) {
  auto ax = static_cast<size_t>(resolve(axis, a.rank()));
  int64_t n = a.shape[ax];
  Shape shape(a.shape.begin(), a.shape.begin() + static_cast<long>(ax));
  shape.insert(shape.end(), index.shape.begin(), index.shape.end());
  shape.insert(shape.end(), a.shape.begin() + static_cast<long>(ax) + 1, a.shape.end());
  NdArray r = NdArray::full(shape, 0);
  for (int64_t e = 0; e < r.numel(); ++e) {
    std::vector<int64_t> o = unravel(e, shape);
    std::vector<int64_t> ii(o.begin() + static_cast<long>(ax),
                            o.begin() + static_cast<long>(ax + index.shape.size()));
    auto i = static_cast<int64_t>(index.values[static_cast<size_t>(ravel(ii, index.shape))]);
    if (i < 0) i += n;
    std::vector<int64_t> src(o.begin(), o.begin() + static_cast<long>(ax));
    src.push_back(i);
    src.insert(src.end(), o.begin() + static_cast<long>(ax + index.shape.size()), o.end());
    r.values[static_cast<size_t>(e)] = at(a, src);
  }
  return r;
}

} // namespace beamlab::testing

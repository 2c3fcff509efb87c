// Windowed tensor ops: N-d convolution and transposed convolution, max / average / Lp pooling,
// and their 2-D forms (conv2d, max_pool2d, avg_pool2d) as thin wrappers.
//
// All are movement ops and reductions. The input is padded, `sliding_windows` views its last k
// dims as (o1..ok, k1..kk) windows (no data is copied: a reshape when windows are disjoint, the
// repeat-and-reshape view when they overlap), and a reduction over the window dims finishes
// the op. A transposed convolution is a convolution of the zero-interleaved input.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "engine/runtime/buffer.hpp"
#include "engine/support/knobs.hpp"
#include "engine/tensor/tensor_internal.hpp"

namespace beamlab {
namespace {

using detail::Pads;

// Pads for every dim of a tensor of `rank` dims: none, then `spatial` for the last dims.
Pads full_pads(size_t rank, const Pads& spatial) {
  Pads p(rank - spatial.size(), {0, 0});
  p.insert(p.end(), spatial.begin(), spatial.end());
  return p;
}

// The last n axes, as negative axes.
std::vector<int64_t> last_axes(size_t n) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < n; ++i) axes.push_back(-1 - static_cast<int64_t>(i));
  return axes;
}

// The geometry of windows over a tensor's last dims, and the per-dim shapes of their views.
struct WindowView {
  using Dims = std::vector<int64_t>;
  Shape prefix;          ///< the dims before the windowed ones
  Dims in, out, k, s, d; ///< per windowed dim
  Dims ones, zeros;

  // prefix, then each part's i-th value for each windowed dim i: {&out, &s} -> (.., o0, s0, o1, s1)
  Shape dims(std::initializer_list<const Dims*> parts) const {
    Shape r = prefix;
    for (size_t i = 0; i < in.size(); ++i)
      for (const Dims* part : parts) r.push_back((*part)[i]);
    return r;
  }
  // For shrink: the prefix whole, then [0, part[i]) per part of each windowed dim.
  Pads ranges(std::initializer_list<const Dims*> parts) const {
    Pads r;
    for (int64_t n : prefix) r.emplace_back(0, n);
    for (size_t i = 0; i < in.size(); ++i)
      for (const Dims* part : parts) r.emplace_back(0, (*part)[i]);
    return r;
  }
  // For pad: nothing on the prefix, then part[i] at the end per part of each windowed dim.
  Pads end_pads(std::initializer_list<const Dims*> parts) const {
    Pads r(prefix.size(), {0, 0});
    for (size_t i = 0; i < in.size(); ++i)
      for (const Dims* part : parts) r.emplace_back(0, (*part)[i]);
    return r;
  }
  // f(i) for each windowed dim.
  template <class F>
  Dims each(F f) const {
    Dims r;
    for (size_t i = 0; i < in.size(); ++i) r.push_back(f(i));
    return r;
  }
};

// Windows that don't overlap: cut or pad each dim to o*s, view it as (o, s), keep k of each
// s: (..., o0, k0, o1, k1, ...).
Tensor disjoint_windows(const Tensor& x, const WindowView& v) {
  auto os = v.each([&](size_t i) { return v.out[i] * v.s[i]; });
  auto grow = v.each([&](size_t i) { return std::max<int64_t>(0, os[i] - v.in[i]); });
  return x.pad(v.end_pads({&grow}))
      .shrink(v.ranges({&os}))
      .reshape(v.dims({&v.out, &v.s}))
      .shrink(v.ranges({&v.out, &v.k}));
}

// Overlapping windows: repeat each dim e times and view the repeats as k rows of i+d, so row
// r starts r*d elements further in; keep o*s columns, then every s-th: (..., k0, o0, k1, o1, ...).
Tensor overlapping_windows(const Tensor& x, const WindowView& v) {
  auto e = v.each([&](size_t i) { return (v.k[i] * (v.in[i] + v.d[i]) + v.in[i] - 1) / v.in[i]; });
  auto repeated = v.each([&](size_t i) { return e[i] * v.in[i]; });
  auto row = v.each([&](size_t i) { return v.in[i] + v.d[i]; });
  auto rows = v.each([&](size_t i) { return v.k[i] * row[i]; });
  auto os = v.each([&](size_t i) { return v.out[i] * v.s[i]; });
  auto grow = v.each([&](size_t i) { return std::max<int64_t>(0, os[i] - row[i]); });
  return x.reshape(v.dims({&v.ones, &v.in}))
      .expand(v.dims({&e, &v.in}))
      .reshape(v.dims({&repeated}))
      .shrink(v.ranges({&rows}))
      .reshape(v.dims({&v.k, &row}))
      .pad(v.end_pads({&v.zeros, &grow}))
      .shrink(v.ranges({&v.k, &os}))
      .reshape(v.dims({&v.k, &v.out, &v.s}))
      .shrink(v.ranges({&v.k, &v.out, &v.ones}))
      .reshape(v.dims({&v.k, &v.out}));
}

// Sliding windows over the last kernel.size() dims: (..., o1..ok, k1..kk), window o of dim i
// reading elements o*stride + j*dilation (j < kernel). Every window must fit.
Tensor sliding_windows(const Tensor& t, const std::vector<int64_t>& k,
                       const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  const size_t nd = k.size();
  const Shape& shape = t.shape();
  internal_assert(nd <= shape.size() && s.size() == nd && d.size() == nd)
      << "sliding_windows: " << nd << " kernel dims for " << shape_str(shape);
  auto split = shape.end() - static_cast<long>(nd);
  WindowView v{.prefix = Shape(shape.begin(), split),
               .in = WindowView::Dims(split, shape.end()),
               .out = {},
               .k = k,
               .s = s,
               .d = d,
               .ones = WindowView::Dims(nd, 1),
               .zeros = WindowView::Dims(nd, 0)};
  bool disjoint = true;
  for (size_t i = 0; i < nd; ++i) {
    internal_assert(v.in[i] >= d[i] * (k[i] - 1) + 1)
        << "sliding_windows: a window of " << k[i] << " does not fit " << shape_str(shape);
    v.out.push_back((v.in[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1);
    disjoint &= k[i] <= s[i] && d[i] == 1;
  }
  Tensor x = disjoint ? disjoint_windows(t, v) : overlapping_windows(t, v);
  // Each dim is now a pair, (o, k) without overlap or (k, o) with it: -> (..., o..., k...).
  int64_t o_at = disjoint ? 0 : 1;
  auto p = static_cast<int64_t>(v.prefix.size()), n = static_cast<int64_t>(nd);
  std::vector<int64_t> order(static_cast<size_t>(p));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = 0; i < n; ++i) order.push_back(p + 2 * i + o_at);
  for (int64_t i = 0; i < n; ++i) order.push_back(p + 2 * i + 1 - o_at);
  return x.permute(order);
}

// A window op's settings resolved for each of its spatial dims (the last kernel.size()).
struct Window {
  std::vector<int64_t> kernel, stride, dilation, in, out;
  Pads pads;                 ///< the caller's
  std::vector<int64_t> trim; ///< added to the end padding to make `out` windows (ceil_mode)
};

// `values` for nd dims: empty -> `fill` everywhere, one value -> everywhere, else one per dim.
template <class T>
std::vector<T> per_dim(const char* op, const char* what, const std::vector<T>& values, size_t nd,
                       T fill) {
  user_assert(values.size() <= 1 || values.size() == nd)
      << op << ": " << what << " has " << values.size() << " values for " << nd
      << " spatial dims (give none, one for all dims, or one per dim)";
  if (values.empty()) return std::vector<T>(nd, fill);
  if (values.size() == 1) return std::vector<T>(nd, values[0]);
  return values;
}

// The arguments per spatial dim, checked; `out` is left to size.
Window window_args(const char* op, const Shape& shape, const std::vector<int64_t>& kernel,
                   const WindowArgs& args, bool pooling) {
  const size_t nd = kernel.size();
  user_assert(pooling || (!args.ceil_mode && !args.count_include_pad))
      << op << ": ceil_mode and count_include_pad apply to pooling only; leave them unset";
  Window w{.kernel = kernel,
           .stride = per_dim<int64_t>(op, "stride", args.stride, nd, 1),
           .dilation = per_dim<int64_t>(op, "dilation", args.dilation, nd, 1),
           .in = std::vector<int64_t>(shape.end() - static_cast<long>(nd), shape.end()),
           .out = std::vector<int64_t>(nd),
           .pads = per_dim<std::pair<int64_t, int64_t>>(op, "padding", args.padding, nd, {0, 0}),
           .trim = std::vector<int64_t>(nd)};
  for (size_t i = 0; i < nd; ++i) {
    int64_t k = w.kernel[i], s = w.stride[i], d = w.dilation[i];
    auto [pb, pe] = w.pads[i];
    user_assert(k >= 1) << op << ": kernel " << shape_str(kernel)
                        << " has a size below 1; every window dim needs at least 1 element";
    user_assert(s >= 1) << op << ": stride must be at least 1, not " << s << " (spatial dim " << i
                        << ")";
    user_assert(d >= 1) << op << ": dilation must be at least 1, not " << d << " (spatial dim " << i
                        << ")";
    user_assert(pb >= 0 && pe >= 0) << op << ": padding (" << pb << ", " << pe << ") of dim " << i
                                    << " is negative (shrink the input to cut it)";
  }
  return w;
}

// Checks the arguments and sizes each window dim. ceil_mode rounds the window count up, then
// (torch's rule) drops a last window that would start in the end padding; windows past the
// padded input are padded out.
Window resolve_window(const char* op, const Shape& shape, const std::vector<int64_t>& kernel,
                      const WindowArgs& args, bool pooling) {
  Window w = window_args(op, shape, kernel, args, pooling);
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t k = w.kernel[i], s = w.stride[i], d = w.dilation[i];
    auto [pb, pe] = w.pads[i];
    int64_t padded = w.in[i] + pb + pe, span = d * (k - 1) + 1;
    user_assert(padded >= span) << op << ": a window of " << k << " (dilation " << d << ") spans "
                                << span << " elements but dim " << shape.size() - kernel.size() + i
                                << " of " << shape_str(shape) << " has " << padded
                                << " with padding; pad more or use a smaller kernel";
    int64_t o = (args.ceil_mode ? (padded - span + s - 1) / s : (padded - span) / s) + 1;
    if (args.ceil_mode && (o - 1) * s >= w.in[i] + pb) --o; // starts in the end padding
    w.out[i] = o;
    // pad out a window past the end; cut a window the rule dropped
    int64_t trim = (o - 1) * s + span - padded;
    if (trim > 0 || (padded - span) / s + 1 > o) w.trim[i] = trim;
  }
  return w;
}

// The window for pooling the last kernel.size() dims of `x`.
Window resolve_pool(const char* op, const Tensor& x, const std::vector<int64_t>& kernel,
                    const WindowArgs& args) {
  user_assert(!kernel.empty()) << op << ": the kernel is empty; give one size per pooled dim";
  user_assert(static_cast<int64_t>(kernel.size()) <= x.ndim())
      << op << ": a kernel of " << kernel.size() << " dims pools the last " << kernel.size()
      << " dims, but " << shape_str(x.shape()) << " has " << x.ndim()
      << " (give one kernel size per pooled dim)";
  return resolve_window(op, x.shape(), kernel, args, true);
}

// x grown by pads of `value` that may be negative (a negative pad cuts).
Tensor pad_or_cut(const Tensor& x, const Pads& pads, double value = 0) {
  Pads grow, cut;
  for (size_t i = 0; i < pads.size(); ++i) {
    auto [b, e] = pads[i];
    int64_t grown = x.shape()[i] + std::max<int64_t>(0, b) + std::max<int64_t>(0, e);
    grow.emplace_back(std::max<int64_t>(0, b), std::max<int64_t>(0, e));
    cut.emplace_back(std::max<int64_t>(0, -b), grown - std::max<int64_t>(0, -e));
  }
  return x.pad(grow, value).shrink(cut);
}

// `x` padded by w's pads (with `value`), as windows: (..., o..., k...).
Tensor windows(const Tensor& x, const Window& w, double value = 0) {
  Pads pads = w.pads;
  for (size_t i = 0; i < pads.size(); ++i) pads[i].second += w.trim[i];
  return sliding_windows(pad_or_cut(x, full_pads(x.shape().size(), pads), value), w.kernel,
                         w.stride, w.dilation);
}

// How many elements each window averages over, row-major over the output's spatial dims:
// those inside the input, or with count_include_pad those inside the caller's padding too.
// Windows are boxes, so the count is a product of per-dim counts.
std::vector<double> window_counts(const Window& w, const WindowArgs& args) {
  std::vector<double> counts = {1};
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    auto [pb, pe] = w.pads[i];
    int64_t lo = args.count_include_pad ? 0 : pb;
    int64_t hi = args.count_include_pad ? pb + w.in[i] + pe : pb + w.in[i];
    std::vector<double> next;
    for (double c : counts)
      for (int64_t o = 0; o < w.out[i]; ++o) {
        int64_t n = 0;
        for (int64_t j = 0; j < w.kernel[i]; ++j) {
          int64_t at = o * w.stride[i] + j * w.dilation[i];
          n += at >= lo && at < hi;
        }
        next.push_back(c * static_cast<double>(n));
      }
    counts = std::move(next);
  }
  return counts;
}

// Whether the caller pads any windowed dim.
bool has_padding(const Window& w) {
  return std::any_of(w.pads.begin(), w.pads.end(),
                     [](const auto& p) { return p.first != 0 || p.second != 0; });
}

// A convolution's padded input as its own stage: one cheap copy, after which every tap of every
// lane reads a plain address, with no bounds gate in the inner loop and no masked or gathered
// loads (ResNet-18's 7x7 layers 4x, MobileNetV2's depthwise layers 2x). Its rows get `slack`
// zero columns more (row_slack), which the windows then leave out. A max pooling's is padded
// with the lowest value (`value`) instead.
Tensor padded_input(const Tensor& x, const Window& w, int64_t slack, double value = 0) {
  Pads all = w.pads;
  for (size_t i = 0; i < all.size(); ++i) all[i].second += w.trim[i];
  all.back().second += slack;
  return pad_or_cut(x, full_pads(x.shape().size(), all), value).contiguous();
}

// Columns added to a grouped (depthwise) convolution's padded input rows so that each row is a
// whole number of 16-float vectors: the copy then vectorizes with no remainder (MobileNetV2's
// 114-wide rows were copied one float at a time: a fifth of its time). A dense convolution's
// copy is small beside it, and ResNet-18 ran no faster with the slack.
int64_t row_slack(const Shape& xs, const Window& w) {
  constexpr int64_t kLanes = 16; // float32 lanes of an AVX-512 register (two of AVX2's)
  int64_t width = xs.back() + w.pads.back().first + w.pads.back().second + w.trim.back();
  if (width <= kLanes || width % kLanes == 0) return 0;
  return (width + kLanes - 1) / kLanes * kLanes - width;
}

// `w` over an input padded_input() has padded already, `slack` columns wider.
Window unpadded(Window w, int64_t slack) {
  for (size_t i = 0; i < w.pads.size(); ++i) w.pads[i] = {0, 0};
  std::fill(w.trim.begin(), w.trim.end(), 0);
  w.trim.back() = -slack;
  return w;
}

// --- Winograd F(m x m, 3x3) ----------------------------------------------------------------
//
// A 3x3 stride-1 convolution computed on m x m output tiles (Lavin and Gray, 2016): each tile's
// a x a input patch d (a = m + 2) and each 3x3 filter g are taken to an a x a transform domain,
// V = Bt d B and U = G g Gt, multiplied there elementwise and summed over input channels,
// M = sum_c U V, and the tile is At M A. The sum over channels is a*a independent GEMMs (one per
// transform-domain element, M[e] = U[e] V[e]): a*a / (9 m*m) the multiplications of the direct
// convolution, 16/36 for F(2x2, 3x3) and 36/144 for F(4x4, 3x3), whose transforms also write
// and read 2.25 floats per output instead of 4. The input and output transforms are products
// with the constant matrices below, one side at a time, as sums of constants selected per point
// (constant_product); the filter transform is a product with a matrix in memory. It reads only
// the weight: a model's weights are constants, so it runs once, when its plan first runs
// (realize.hpp's prepared kernels).
struct WinogradTile {
  int64_t m;       // outputs per tile side; the patch is m + 2 wide
  const float* bt; // (m+2) x (m+2): patch -> transform domain
  const float* g;  // (m+2) x 3: filter -> transform domain
  const float* at; // m x (m+2): transform domain -> outputs
  int64_t a() const { return m + 2; }
};

// F(2x2, 3x3) at the points 0, 1, -1 and infinity.
constexpr float kF2Bt[] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
constexpr float kF2G[] = {1, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f, -0.5f, 0.5f, 0, 0, 1};
constexpr float kF2At[] = {1, 1, 1, 0, 0, 1, -1, -1};
// F(4x4, 3x3) at the points 0, 1, -1, 2, -2 and infinity.
constexpr float kF4Bt[] = {4, 0,  -5, 0, 1, 0, 0, -4, -4, 1,  1, 0, 0, 4, -4, -1, 1, 0,
                           0, -2, -1, 2, 1, 0, 0, 2,  -1, -2, 1, 0, 0, 4, 0,  -5, 0, 1};
constexpr float kF4G[] = {1.0f / 4,  0,          0,         -1.0f / 6, -1.0f / 6, -1.0f / 6,
                          -1.0f / 6, 1.0f / 6,   -1.0f / 6, 1.0f / 24, 1.0f / 12, 1.0f / 6,
                          1.0f / 24, -1.0f / 12, 1.0f / 6,  0,         0,         1};
constexpr float kF4At[] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0,
                           0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};
constexpr WinogradTile kF2{2, kF2Bt, kF2G, kF2At}, kF4{4, kF4Bt, kF4G, kF4At};

// The two-sided product T x Tt of an r x c matrix t (row-major) over flattened 2-D indices, as
// a constant of shape (r*r, c*c): entry (i*r + j, k*c + l) = t[i][k] * t[j][l].
Tensor two_sided(const float* t, int64_t r, int64_t c) {
  const int64_t rows = r * r, cols = c * c;
  auto storage = std::make_shared<Buffer>(static_cast<size_t>(rows * cols) * sizeof(float));
  float* out = storage->as<float>().data();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t l = 0; l < c; ++l) {
          int64_t row = i * r + j, col = k * c + l;
          out[row * cols + col] = t[i * c + k] * t[j * c + l];
        }
  storage->mark_constant();
  return Tensor::from_storage(std::move(storage), {rows, cols}, Scalar::Float32);
}

// The product of the r x c matrix t (row-major) with a c-long vector of tensors of one shape:
// sum over k of t's column k times parts[k], the column a tensor of constants shaped
// `column_shape` (r at the output axis' place, 1 elsewhere). Each column is constants padded
// into place, no buffer, and each term is selected only where its constant is nonzero (the
// other lanes add -0.0): a kernel with the output axis in lanes multiplies by immediates, and
// the zeros and ones fold away (Bt d B of F(4x4, 3x3), one side then the other: 2 x 6 x 22 =
// 264 multiply-adds a tile where the dense product took 36 x 36 = 1296).
Tensor constant_product(const float* t, int64_t r, int64_t c, std::span<const Tensor> parts,
                        const Shape& column_shape) {
  std::optional<Tensor> sum;
  for (int64_t k = 0; k < c; ++k) {
    std::optional<Tensor> column, nonzero;
    for (int64_t i = 0; i < r; ++i) {
      float value = t[i * c + k];
      if (value == 0) continue;
      Tensor at = Tensor::full({1}, value).pad({{i, r - i - 1}});
      Tensor on = Tensor::full({1}, 1, Scalar::Bool).pad({{i, r - i - 1}});
      column = column ? *column + at : at;
      nonzero = nonzero ? nonzero->logical_or(on) : on;
    }
    if (!column) continue;
    Tensor term = nonzero->reshape(column_shape)
                      .where(column->reshape(column_shape) * parts[static_cast<size_t>(k)],
                             Tensor::full({1}, -0.0));
    sum = sum ? *sum + term : term;
  }
  return *sum;
}

// The Winograd tile conv_nd computes this convolution with, if any: a dense 2-D float32 3x3
// convolution of stride and dilation 1, with enough channels that its GEMMs outweigh the
// transforms (64 in and out), and enough tiles that each transformed weight is reused from
// registers (32: ResNet-18's 7x7 layers have 16 and ran 1.4x slower, streaming the weights). A
// weight that is no constant is transformed on every run, 16 floats written per filter against
// 20 multiplications per filter and 2x2 tile saved: then at least 256 tiles (a 32x32 map). The
// tiles are 4x4 where both output sides are multiples of 4 and as many 4x4 tiles are enough
// (ResNet-18's 56 and 28-wide layers), else 2x2. BEAMLAB_WINOGRAD=0 turns it off; =1 takes
// every such convolution with the tile chosen as above, =2 or =4 with that tile.
std::optional<WinogradTile> winograd_tile(const Tensor& x, const Tensor& weight, int64_t groups,
                                          const Window& w) {
  if (x.ndim() != 4 || groups != 1 || x.dtype() != Scalar::Float32 ||
      weight.dtype() != Scalar::Float32)
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i)
    if (w.kernel[i] != 3 || w.stride[i] != 1 || w.dilation[i] != 1 || w.trim[i] != 0)
      return std::nullopt;
  auto tiles = [&](int64_t m) {
    return x.shape()[0] * ((w.out[0] + m - 1) / m) * ((w.out[1] + m - 1) / m);
  };
  const int64_t enough = weight.reads_only_constants() ? 32 : 256;
  WinogradTile tile = w.out[0] % 4 == 0 && w.out[1] % 4 == 0 && tiles(4) >= enough ? kF4 : kF2;
  int64_t knob = knob_int("BEAMLAB_WINOGRAD", -1);
  user_assert(knob >= -1 && knob <= 4 && knob != 3)
      << "BEAMLAB_WINOGRAD=" << knob
      << ": use 0 (off), 1 (on, the tile chosen), 2 or 4 (on, 2x2 or 4x4 tiles), or unset";
  if (knob == 0) return std::nullopt;
  if (knob == 2 || knob == 4) return knob == 2 ? kF2 : kF4;
  if (knob == 1) return tile;
  if (x.shape()[1] < 64 || weight.shape()[0] < 64 || tiles(2) < enough) return std::nullopt;
  return tile;
}

// The convolution of x (N, C, H, W) with weight (Cout, C, 3, 3), padded by w.pads, by Winograd
// F(m x m, 3x3); no bias.
Tensor winograd_conv2d(const Tensor& x, const Tensor& weight, const Window& w,
                       const WinogradTile& tile) {
  const Shape& xs = x.shape();
  const int64_t n = xs[0], c = xs[1], cout = weight.shape()[0], m = tile.m, a = tile.a();
  int64_t ho = w.out[0], wo = w.out[1], th = (ho + m - 1) / m, tw = (wo + m - 1) / m;
  int64_t tiles = th * tw, points = a * a;
  // The input padded to whole tiles (the last row and column of tiles may overhang the output)
  // as a buffer of its own (padded_input's reasons), viewed as overlapping a x a patches m
  // apart: (N, C, th, tw, a, a).
  Pads pads = {{0, 0},
               {0, 0},
               {w.pads[0].first, m * th + 2 - xs[2] - w.pads[0].first},
               {w.pads[1].first, m * tw + 2 - xs[3] - w.pads[1].first}};
  Tensor patches = sliding_windows(x.pad(pads).contiguous(), {a, a}, {m, m}, {1, 1});
  // V (a*a, N, C, th, tw): each patch in the transform domain, Bt d then (Bt d) B, the tiles of
  // a row contiguous.
  auto patch = [&](int64_t i, int64_t j) {
    return patches
        .shrink(std::vector<std::pair<int64_t, int64_t>>{
            {0, n}, {0, c}, {0, th}, {0, tw}, {i, i + 1}, {j, j + 1}})
        .reshape({1, 1, n, c, th, tw})
        .expand({1, a, n, c, th, tw}); // before the arithmetic: an expanded result is realized
  };
  std::vector<Tensor> rows; // Bt d: (a, a, N, C, th, tw) per column of d, the same along axis 1
  for (int64_t j = 0; j < a; ++j) {
    std::vector<Tensor> column;
    for (int64_t i = 0; i < a; ++i) column.push_back(patch(i, j));
    rows.push_back(constant_product(tile.bt, a, a, column, {a, 1, 1, 1, 1, 1}));
  }
  // A kernel of its own (not recomputed for each output channel), with the points' two axes.
  Tensor v = constant_product(tile.bt, a, a, rows, {1, a, 1, 1, 1, 1})
                 .contiguous()
                 .reshape({points, n, c, tiles});
  // U (a*a, C, Cout), output channels innermost: each filter in the transform domain.
  Tensor u = (weight.permute({1, 0, 2, 3}).reshape({1, c, cout, 3, 3}) *
              two_sided(tile.g, a, 3).reshape({points, 1, 1, 3, 3}))
                 .sum({-2, -1});
  // M (a*a, N, Cout, tiles): the GEMMs, summing over input channels.
  Tensor mm = u.permute({0, 2, 1}).reshape({points, 1, cout, c}).matmul(v);
  // Back from the transform domain, At M then (At M) A, constants selected by the output's row
  // and column in its tile: (N, Cout, th, m, tw, m) -> (N, Cout, Ho, Wo).
  auto point = [&](int64_t i, int64_t j) {
    return mm
        .shrink(std::vector<std::pair<int64_t, int64_t>>{
            {i * a + j, i * a + j + 1}, {0, n}, {0, cout}, {0, tiles}})
        .reshape({n, cout, th, 1, tw, 1})
        .expand({n, cout, th, m, tw, m});
  };
  std::vector<Tensor> columns; // At M: (N, Cout, th, m, tw, m) per column of M, the same along q
  for (int64_t j = 0; j < a; ++j) {
    std::vector<Tensor> column;
    for (int64_t i = 0; i < a; ++i) column.push_back(point(i, j));
    columns.push_back(constant_product(tile.at, m, a, column, {1, 1, 1, m, 1, 1}));
  }
  Tensor y = constant_product(tile.at, m, a, columns, {1, 1, 1, 1, 1, m});
  return y.reshape({n, cout, m * th, m * tw}).shrink({{0, n}, {0, cout}, {0, ho}, {0, wo}});
}

// Convolution of x (N, C, d1..dk) with weight (Cout, C/groups, k1..kk); `op` names it in errors.
Tensor conv_nd(const char* op, const Tensor& x, const Tensor& weight,
               const std::optional<Tensor>& bias, int64_t groups, const WindowArgs& args) {
  const Shape &xs = x.shape(), &ws = weight.shape();
  user_assert(x.ndim() >= 3 && weight.ndim() == x.ndim())
      << op << ": input must be (N, C, d1..dk) and weight (Cout, C/groups, k1..kk) of the same "
      << "rank, not " << shape_str(xs) << " and " << shape_str(ws);
  int64_t n = xs[0], cin = xs[1], cout = ws[0], cg = ws[1];
  user_assert(groups >= 1 && cin == cg * groups && cout % groups == 0)
      << op << ": input " << shape_str(xs) << " and weight " << shape_str(ws)
      << " do not match with groups=" << groups
      << " (need C = weight C * groups, Cout % groups = 0)";
  user_assert(!bias || bias->shape() == Shape{cout})
      << op << ": bias has shape " << shape_str(bias->shape()) << ", not (" << cout << ",)";
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  Window w = resolve_window(op, xs, kernel, args, false);
  const auto nd = static_cast<int64_t>(kernel.size());
  int64_t rcout = cout / groups;
  // windows (N, G, Cg, 1, o.., k..) -> (N, G, rcout, o.., Cg, k..) times the weight as
  // (1, G, rcout, 1.., Cg, k..), summed over (Cg, k..)
  Shape grouped = {n, groups, cg, 1}, spread = {n, groups, cg, rcout}, wshape = {1, groups, rcout};
  std::vector<int64_t> order = {0, 1, 3}, summed = {3 + nd};
  for (int64_t i = 0; i < nd; ++i) {
    grouped.push_back(w.out[static_cast<size_t>(i)]);
    order.push_back(4 + i);
    wshape.push_back(1);
  }
  order.push_back(2);
  wshape.push_back(cg);
  grouped.insert(grouped.end(), kernel.begin(), kernel.end());
  wshape.insert(wshape.end(), kernel.begin(), kernel.end());
  spread.insert(spread.end(), grouped.begin() + 4, grouped.end());
  for (int64_t i = 0; i < nd; ++i) {
    order.push_back(4 + nd + i);
    summed.push_back(4 + nd + i);
  }
  DType dt = detail::product_dtype(x.dtype(), weight.dtype());
  if (std::optional<WinogradTile> tile = winograd_tile(x, weight, groups, w)) {
    Tensor out = winograd_conv2d(x, weight, w, *tile);
    return bias ? out + bias->reshape({1, cout, 1, 1}) : out;
  }
  bool stage = has_padding(w);
  int64_t slack = stage && groups > 1 ? row_slack(xs, w) : 0;
  Tensor win = (stage ? windows(padded_input(x, w, slack), unpadded(w, slack)) : windows(x, w))
                   .cast(dt)
                   .reshape(grouped)
                   .expand(spread)
                   .permute(order);
  Shape out_shape = {n, cout};
  out_shape.insert(out_shape.end(), w.out.begin(), w.out.end());
  Tensor out = (win * weight.cast(dt).reshape(wshape)).sum(summed).reshape(out_shape);
  Shape per_channel(out_shape.size(), 1);
  per_channel[1] = cout;
  return bias ? out + bias->reshape(per_channel) : out;
}

// x (N, C, d1..dk) with s-1 zeros after each element of spatial dim i but the last.
Tensor interleave_zeros(const Tensor& x, const std::vector<int64_t>& s) {
  const Shape& xs = x.shape();
  if (std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; })) return x;
  Shape pairs = {xs[0], xs[1]}, merged = {xs[0], xs[1]};
  Pads pads = {{0, 0}, {0, 0}}, cut = {{0, xs[0]}, {0, xs[1]}};
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t in = xs[i + 2];
    pairs.insert(pairs.end(), {in, 1});
    pads.insert(pads.end(), {{0, 0}, {0, s[i] - 1}});
    merged.push_back(in * s[i]);
    cut.emplace_back(0, (in - 1) * s[i] + 1);
  }
  return x.reshape(pairs).pad(pads).reshape(merged).shrink(cut);
}

} // namespace

Tensor Tensor::conv(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups,
                    const WindowArgs& args) const {
  return conv_nd("conv", *this, weight, bias, groups, args);
}

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t stride,
                      int64_t padding, int64_t dilation, int64_t groups) const {
  user_assert(ndim() == 4 && weight.ndim() == 4)
      << "conv2d: input must be (N, C, H, W) and weight (Cout, C/groups, kh, kw), not "
      << shape_str(shape_) << " and " << shape_str(weight.shape());
  WindowArgs args{.stride = {stride}, .dilation = {dilation}, .padding = {{padding, padding}}};
  return conv_nd("conv2d", *this, weight, bias, groups, args);
}

// --- Channel blocks -----------------------------------------------------------------------
//
// A depthwise or pointwise convolution in the plain layout puts output columns in vector lanes:
// a stride-2 window then reads every other column (a masked load and a shuffle per vector),
// and a 1x1 convolution broadcasts one weight per output channel and row of 14 or 7 columns
// (vectors a quarter empty). In channel blocks the lanes are 16 channels of one position:
// whole-vector loads whatever the stride, whole vectors of weights, and the positions free to
// form the register tile. ONNX Runtime runs MobileNet-style networks in this layout for the
// same reasons (its NCHWc transformer). The channels past C are zeros so that a convolution's
// padded input channels, whose weights are zero too, add nothing.

namespace {
constexpr int64_t kChannelBlock = 16; // float32 lanes of an AVX-512 register

int64_t channel_blocks(int64_t channels) { return (channels + kChannelBlock - 1) / kChannelBlock; }

// (Cout, ...) -> padded with zeros to whole blocks of output channels.
Tensor pad_rows(const Tensor& t, int64_t rows) {
  Pads p(t.shape().size(), {0, 0});
  p[0].second = rows - t.shape()[0];
  return t.pad(p);
}

// A depthwise convolution of channel blocks xb (N, Cb, H, W, 16) of the (N, C, H, W) input
// `logical`, weight (C, 1, kh, kw): (N, Cb, Ho, Wo, 16).
Tensor depthwise_blocks(const Tensor& xb, const Tensor& weight, const Shape& logical,
                        const WindowArgs& args) {
  const Shape& ws = weight.shape();
  int64_t c = ws[0], cb = xb.shape()[1], kh = ws[2], kw = ws[3], lanes = kChannelBlock;
  Window w = resolve_window("conv_blocked", logical, {kh, kw}, args, false);
  // Weights (Cb, kh, kw, 16): a tap's sixteen channels one vector, laid out once.
  Tensor wb = pad_rows(weight.reshape({c, kh, kw}), cb * lanes)
                  .reshape({cb, lanes, kh, kw})
                  .permute({0, 2, 3, 1})
                  .contiguous();
  // The padded input staged as padded_input does, windows over (H, W) with the lanes last.
  Pads pads = {{0, 0}, {0, 0}, w.pads[0], w.pads[1], {0, 0}};
  for (size_t i = 0; i < 2; ++i) pads[i + 2].second += w.trim[i];
  Tensor x = has_padding(w) ? pad_or_cut(xb, pads).contiguous() : xb;
  Tensor win = sliding_windows(x.permute({0, 1, 4, 2, 3}), w.kernel, w.stride, w.dilation)
                   .permute({0, 1, 3, 4, 2, 5, 6}); // (N, Cb, Ho, Wo, 16, kh, kw)
  return (win * wb.permute({0, 3, 1, 2}).reshape({1, cb, 1, 1, lanes, kh, kw})).sum({-2, -1});
}

// A 1x1 stride-1 convolution of channel blocks xb (N, Cb, H, W, 16), weight (Cout, C, 1, 1):
// (N, Cob, H, W, 16), summing over the input blocks and their lanes.
Tensor pointwise_blocks(const Tensor& xb, const Tensor& weight, int64_t cb, int64_t cob) {
  const Shape &xs = xb.shape(), &ws = weight.shape();
  int64_t lanes = kChannelBlock, hw = xs[2] * xs[3];
  // Weights (Cob, Cb, 16 in, 16 out): one input channel's sixteen outputs one vector.
  Tensor wb =
      pad_rows(pad_rows(weight.reshape({ws[0], ws[1]}), cob * lanes).permute({1, 0}), cb * lanes)
          .reshape({cb, lanes, cob, lanes})
          .permute({2, 0, 1, 3})
          .contiguous();
  return (xb.reshape({xs[0], 1, cb, hw, lanes, 1}) * wb.reshape({1, cob, cb, 1, lanes, lanes}))
      .sum({2, 4})
      .reshape({xs[0], cob, xs[2], xs[3], lanes});
}
} // namespace

Tensor Tensor::to_channel_blocks() const {
  user_assert(ndim() >= 3) << "to_channel_blocks: input must be (N, C, d1..dk), not "
                           << shape_str(shape_);
  int64_t cb = channel_blocks(shape_[1]);
  Pads p(shape_.size(), {0, 0});
  p[1].second = cb * kChannelBlock - shape_[1];
  Shape split = {shape_[0], cb, kChannelBlock};
  split.insert(split.end(), shape_.begin() + 2, shape_.end());
  std::vector<int64_t> order = {0, 1};
  for (int64_t i = 3; i < static_cast<int64_t>(split.size()); ++i) order.push_back(i);
  order.push_back(2);
  return pad(p).reshape(split).permute(order);
}

Tensor Tensor::from_channel_blocks(int64_t channels) const {
  user_assert(ndim() >= 4 && shape_.back() == kChannelBlock &&
              shape_[1] == channel_blocks(channels))
      << "from_channel_blocks: input must be (N, " << channel_blocks(channels) << ", d1..dk, "
      << kChannelBlock << ") for " << channels << " channels, not " << shape_str(shape_);
  std::vector<int64_t> order = {0, 1, ndim() - 1};
  for (int64_t i = 2; i < ndim() - 1; ++i) order.push_back(i);
  Shape merged = {shape_[0], shape_[1] * kChannelBlock};
  merged.insert(merged.end(), shape_.begin() + 2, shape_.end() - 1);
  Pads cut;
  for (int64_t d : merged) cut.emplace_back(0, d);
  cut[1].second = channels;
  return permute(order).reshape(merged).shrink(cut);
}

namespace {
// Whether conv_blocked can compute this convolution of an (N, C, H, W) input.
bool blockable(const Shape& x, const Tensor& weight, int64_t groups, const WindowArgs& args) {
  const Shape& ws = weight.shape();
  if (x.size() != 4 || ws.size() != 4 || weight.dtype() != Scalar::Float32) return false;
  bool depthwise = groups > 1 && groups == x[1] && ws[0] == x[1] && ws[1] == 1;
  auto ones = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 1; });
  };
  bool pointwise = groups == 1 && ws[1] == x[1] && ws[2] == 1 && ws[3] == 1 && ones(args.stride) &&
                   ones(args.dilation) &&
                   std::all_of(args.padding.begin(), args.padding.end(),
                               [](const auto& p) { return p.first == 0 && p.second == 0; });
  return depthwise || pointwise;
}
} // namespace

bool Tensor::channel_blocks_enabled() { return knob_int("BEAMLAB_BLOCKED_CONV", 1) != 0; }

bool Tensor::conv_blocked_supported(const Shape& x, const Tensor& weight, int64_t groups,
                                    const WindowArgs& args) {
  return channel_blocks_enabled() && blockable(x, weight, groups, args);
}

Tensor Tensor::conv_blocked(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups,
                            const WindowArgs& args) const {
  const Shape& ws = weight.shape();
  int64_t c = ws.size() == 4 ? groups * ws[1].value() : 0, cout = ws.empty() ? 0 : ws[0].value();
  int64_t cb = channel_blocks(c), cob = channel_blocks(cout);
  Shape logical = {ndim() == 5 ? shape_[0] : Dim(0), c, ndim() == 5 ? shape_[2] : Dim(0),
                   ndim() == 5 ? shape_[3] : Dim(0)};
  user_assert(ndim() == 5 && shape_[1] == cb && shape_[4] == kChannelBlock &&
              dtype() == Scalar::Float32 && blockable(logical, weight, groups, args))
      << "conv_blocked: input " << shape_str(shape_) << " must be float32 channel blocks (N, " << cb
      << ", H, W, " << kChannelBlock << ") for weight " << shape_str(ws)
      << " with groups=" << groups
      << ", a depthwise or unpadded stride-1 1x1 convolution (conv computes the others)";
  user_assert(!bias || bias->shape() == Shape{cout})
      << "conv_blocked: bias has shape " << shape_str(bias->shape()) << ", not (" << cout << ",)";
  Tensor out = groups > 1 ? depthwise_blocks(*this, weight, logical, args)
                          : pointwise_blocks(*this, weight, cb, cob);
  if (!bias) return out;
  return out + pad_rows(*bias, cob * kChannelBlock).reshape({1, cob, 1, 1, kChannelBlock});
}

// The convolution whose gradient this is: a convolution of the zero-interleaved input, padded
// by d*(k-1) minus the caller's padding, with the weight flipped and its channel dims swapped
// per group (as tinygrad's conv_transpose2d).
Tensor Tensor::conv_transpose(const Tensor& weight, const std::optional<Tensor>& bias,
                              int64_t groups, const WindowArgs& args,
                              std::vector<int64_t> output_padding) const {
  const Shape& ws = weight.shape();
  user_assert(ndim() >= 3 && weight.ndim() == ndim())
      << "conv_transpose: input must be (N, C, d1..dk) and weight (C, Cout/groups, k1..kk) of "
      << "the same rank, not " << shape_str(shape_) << " and " << shape_str(ws);
  int64_t cin = shape_[1], cog = ws[1];
  user_assert(groups >= 1 && cin == ws[0] && cin % groups == 0)
      << "conv_transpose: input " << shape_str(shape_) << " and weight " << shape_str(ws)
      << " do not match with groups=" << groups << " (need C = weight dim 0, C % groups = 0)";
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  const size_t nd = kernel.size();
  Window w = window_args("conv_transpose", shape_, kernel, args, false);
  std::vector<int64_t> extra =
      per_dim<int64_t>("conv_transpose", "output_padding", output_padding, nd, 0);
  Pads pads = {{0, 0}, {0, 0}};
  for (size_t i = 0; i < nd; ++i) {
    int64_t span = w.dilation[i] * (kernel[i] - 1);
    int64_t size = (w.in[i] - 1) * w.stride[i] + span + 1 - w.pads[i].first - w.pads[i].second;
    user_assert(extra[i] >= 0) << "conv_transpose: output_padding " << extra[i]
                               << " is negative; it adds elements at the end of a dim";
    user_assert(size + extra[i] >= 1)
        << "conv_transpose: the output of spatial dim " << i << " would have " << size + extra[i]
        << " elements; padding (" << w.pads[i].first << ", " << w.pads[i].second
        << ") cuts more than the input gives";
    pads.emplace_back(span - w.pads[i].first, span - w.pads[i].second + extra[i]);
  }
  Shape grouped = {groups, cin / groups, cog}, flat = {groups * cog, cin / groups};
  grouped.insert(grouped.end(), kernel.begin(), kernel.end());
  flat.insert(flat.end(), kernel.begin(), kernel.end());
  std::vector<int64_t> spatial(nd);
  std::iota(spatial.begin(), spatial.end(), 3);
  Tensor flipped = weight.reshape(grouped).transpose(1, 2).flip(spatial).reshape(flat);
  Tensor x = pad_or_cut(interleave_zeros(*this, w.stride), pads);
  return conv_nd("conv_transpose", x, flipped, bias, groups, {.dilation = w.dilation});
}

Tensor Tensor::max_pool(std::vector<int64_t> kernel, const WindowArgs& args) const {
  user_assert(!args.count_include_pad)
      << "max_pool: count_include_pad applies to avg_pool only; leave it unset";
  Window w = resolve_pool("max_pool", *this, kernel, args);
  double lowest = detail::lowest_value(dtype());
  Tensor win = has_padding(w) ? windows(padded_input(*this, w, 0, lowest), unpadded(w, 0))
                              : windows(*this, w, lowest);
  return win.max(last_axes(kernel.size()));
}

Tensor Tensor::max_pool_argmax(std::vector<int64_t> kernel, const WindowArgs& args) const {
  Window w = resolve_pool("max_pool_argmax", *this, kernel, args);
  std::vector<int64_t> taps_axes = last_axes(kernel.size());
  Tensor win = windows(*this, w, detail::lowest_value(dtype()));
  // Only taps inside the input count: a window whose values all equal the padding's (the
  // lowest value) must not point into the padding.
  Tensor inside = windows(full(shape_, 1, Scalar::Bool), w, 0);
  Tensor hit = inside.logical_and(win.eq(win.max(taps_axes, true))).cast(Scalar::Int32);
  int64_t taps = 1;
  for (int64_t k : kernel) taps *= k;
  Shape flat(hit.shape().begin(), hit.shape().end() - static_cast<long>(kernel.size()));
  flat.push_back(taps);
  return hit.reshape(flat).argmax(-1);
}

Tensor Tensor::avg_pool(std::vector<int64_t> kernel, const WindowArgs& args) const {
  Window w = resolve_pool("avg_pool", *this, kernel, args);
  Tensor x = windows(*this, w);
  std::vector<int64_t> axes = last_axes(kernel.size());
  std::vector<double> counts = window_counts(w, args);
  double full = 1;
  for (int64_t k : kernel) full *= static_cast<double>(k);
  if (std::all_of(counts.begin(), counts.end(), [&](double c) { return c == full; }))
    return x.mean(axes);
  DType dt = dtype().is_float() ? dtype() : DType(Scalar::Float32);
  return x.sum(axes).div(Tensor(std::span<const double>(counts), w.out, dt));
}

Tensor Tensor::lp_pool(std::vector<int64_t> kernel, double p, const WindowArgs& args) const {
  user_assert(p > 0 && std::isfinite(p)) << "lp_pool: p must be positive and finite, not " << p;
  user_assert(!args.count_include_pad)
      << "lp_pool: count_include_pad applies to avg_pool only; leave it unset";
  Window w = resolve_pool("lp_pool", *this, kernel, args);
  Tensor x = cast(dtype().is_float() ? dtype() : DType(Scalar::Float32)).abs();
  Tensor sum = windows(p == 1 ? x : x.pow(p), w).sum(last_axes(kernel.size()));
  return p == 1 ? sum : sum.pow(1 / p);
}

Tensor Tensor::max_pool2d(int64_t kernel, std::optional<int64_t> stride, int64_t padding,
                          int64_t dilation) const {
  user_assert(ndim() >= 2) << "max_pool2d: needs at least 2 dims, not " << shape_str(shape_);
  return max_pool({kernel, kernel}, {.stride = {stride.value_or(kernel)},
                                     .dilation = {dilation},
                                     .padding = {{padding, padding}}});
}

Tensor Tensor::avg_pool2d(int64_t kernel, std::optional<int64_t> stride, int64_t padding) const {
  user_assert(ndim() >= 2) << "avg_pool2d: needs at least 2 dims, not " << shape_str(shape_);
  return avg_pool({kernel, kernel}, {.stride = {stride.value_or(kernel)},
                                     .padding = {{padding, padding}},
                                     .count_include_pad = true});
}

} // namespace beamlab

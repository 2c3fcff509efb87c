// Resize and Upsample. Each resized axis is one matrix product with an (in x out) matrix of
// interpolation weights computed on the host, so every mode (nearest with its rounding rules,
// linear, cubic with exclude_outside) and coordinate transformation is exactly ONNX's
// reference: output o reads the n input positions nearest to its source coordinate (clamped
// to the edge), weighted by the mode's coefficients. tf_crop_and_resize's points outside the
// input get extrapolation_value (a bias on that axis; later axes blend it with itself).
#include <algorithm>
#include <cmath>

#include "frontends/onnx/node.hpp"

namespace beamlab::onnx {
namespace {

struct ResizeMode {
  std::string mode = "nearest", transform = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false, antialias = false;
};

// Resize-18's antialiasing filter for a downscale: linear's triangle or cubic's kernel
// stretched by 1/scale, over the positions floor(x) + start .. floor(x) + 1 - start, normalized
// to sum 1. At scale >= 1 it is the plain filter.
std::vector<double> antialiased(const ResizeMode& m, double ratio, double scale) {
  scale = std::min(scale, 1.0);
  double a = m.cubic_a, support = m.mode == "linear" ? 1 : 2;
  auto start = static_cast<int64_t>(std::floor(-support / scale) + 1);
  std::vector<double> c;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    double x = std::abs((static_cast<double>(i) - ratio) * scale), v = 0;
    if (m.mode == "linear")
      v = std::max(0.0, 1 - x);
    else if (x <= 1)
      v = ((a + 2) * x - (a + 3)) * x * x + 1;
    else if (x < 2)
      v = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    c.push_back(v);
    sum += v;
  }
  for (double& v : c) v /= sum;
  return c;
}

std::vector<double> coefficients(const ResizeMode& m, double ratio, double scale) {
  if (m.antialias && m.mode != "nearest") return antialiased(m, ratio, scale);
  if (m.mode == "linear") return {1 - ratio, ratio};
  if (m.mode == "cubic") {
    double a = m.cubic_a, r1 = ratio + 1, s = 1 - ratio, s1 = s + 1;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a};
  }
  if (ratio == 1) return {0, 1};
  if (m.nearest == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
  if (m.nearest == "floor") return {1, 0};
  if (m.nearest == "ceil") return {0, 1};
  user_assert(m.nearest == "round_prefer_floor")
      << "nearest_mode '" << m.nearest << "' is not one of round_prefer_floor, round_prefer_ceil, "
      << "floor, ceil";
  return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
}

// The source coordinate of output o of `out_int` (`out` before rounding); nullopt outside
// tf_crop_and_resize's input.
std::optional<double> source(const ResizeMode& m, int64_t o, int64_t in, double out,
                             int64_t out_int, double scale, double roi_start, double roi_end) {
  const std::string& t = m.transform;
  auto x = static_cast<double>(o);
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "half_pixel_symmetric") { // Resize-19: half_pixel centred on the input
    double adjustment = static_cast<double>(out_int) / out, center = static_cast<double>(in) / 2;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  if (t == "pytorch_half_pixel") return out == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (t == "align_corners") return out == 1 ? 0 : x * static_cast<double>(in - 1) / (out - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  user_assert(t == "tf_crop_and_resize")
      << "coordinate_transformation_mode '" << t << "' is not one of half_pixel, "
      << "half_pixel_symmetric (opset 19), pytorch_half_pixel, align_corners, asymmetric, "
      << "tf_half_pixel_for_nn, tf_crop_and_resize";
  double span = static_cast<double>(in - 1);
  double s = out == 1 ? 0.5 * (roi_start + roi_end) * span
                      : roi_start * span + x * (roi_end - roi_start) * span / (out - 1);
  if (s < 0 || s > span) return std::nullopt;
  return s;
}

// The n integer positions nearest x (ties: the lower), in order.
std::vector<int64_t> neighbours(double x, size_t n) {
  auto f = static_cast<int64_t>(std::floor(x));
  std::vector<int64_t> c;
  for (int64_t i = f - static_cast<int64_t>(n); i <= f + static_cast<int64_t>(n); ++i)
    c.push_back(i);
  std::sort(c.begin(), c.end(), [&](int64_t a, int64_t b) {
    double da = std::abs(x - static_cast<double>(a)), db = std::abs(x - static_cast<double>(b));
    return da < db || (da == db && a < b);
  });
  c.resize(n);
  std::sort(c.begin(), c.end());
  return c;
}

// Resizes one axis of x to `out` elements.
// `width` is ONNX's output width for the coordinate transform: in * scale, not rounded (with
// sizes, scale is sizes / in, or keep_aspect_ratio_policy's common scale).
Tensor resize_axis(const Tensor& x, int64_t axis, int64_t out, double scale, double width,
                   const ResizeMode& m, double roi_start, double roi_end) {
  int64_t in = x.shape()[static_cast<size_t>(axis)];
  std::vector<double> w(static_cast<size_t>(in * out), 0.0), bias(static_cast<size_t>(out), 0.0);
  bool extrapolates = false;
  for (int64_t o = 0; o < out; ++o) {
    std::optional<double> s = source(m, o, in, width, out, scale, roi_start, roi_end);
    if (!s) {
      bias[static_cast<size_t>(o)] = m.extrapolation;
      extrapolates = true;
      continue;
    }
    double ratio = *s == std::floor(*s) ? 1 : *s - std::floor(*s);
    std::vector<double> c = coefficients(m, ratio, scale);
    std::vector<int64_t> idx = neighbours(*s, c.size());
    if (m.exclude_outside) {
      double sum = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= in) c[i] = 0;
        sum += c[i];
      }
      if (sum != 0) // every tap outside: 0, as the reference gives
        for (double& v : c) v /= sum;
    }
    for (size_t i = 0; i < c.size(); ++i)
      w[static_cast<size_t>(std::clamp<int64_t>(idx[i], 0, in - 1) * out + o)] += c[i];
  }
  DType dt = float_of(x.dtype());
  Tensor mat(std::span<const double>(w), {in, out}, dt);
  Tensor y = x.cast(dt).transpose(axis, -1).matmul(mat);
  if (extrapolates) y = y + Tensor(std::span<const double>(bias), {out}, dt);
  y = y.transpose(axis, -1);
  return x.dtype().is_float() ? y : y.round().cast(x.dtype());
}

Tensor resize(const Node& n, const Tensor& x, std::vector<double> scales,
              std::vector<int64_t> sizes, std::vector<double> roi) {
  ResizeMode m;
  m.mode = n.attr_string("mode", "nearest");
  user_assert(m.mode == "nearest" || m.mode == "linear" || m.mode == "cubic")
      << "mode '" << m.mode << "' is not one of nearest, linear, cubic";
  m.transform = n.attr_string("coordinate_transformation_mode", "half_pixel");
  user_assert(m.transform != "half_pixel_symmetric" || n.opset() >= 19)
      << "coordinate_transformation_mode half_pixel_symmetric is Resize-19's; the model's opset is "
      << n.opset();
  m.nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  m.cubic_a = n.attr_float("cubic_coeff_a", -0.75);
  m.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
  m.extrapolation = n.attr_float("extrapolation_value", 0.0);
  m.antialias = n.attr_int("antialias", 0) != 0;
  const int64_t rank = x.ndim();
  auto r = static_cast<size_t>(rank);
  // Resize-18's axes: scales, sizes and roi name only these axes; the others keep their size.
  std::vector<int64_t> axes = n.attr_ints("axes");
  if (!axes.empty()) {
    for (int64_t& a : axes) a = Node::axis(a, rank, "axis");
    size_t k = axes.size();
    user_assert((scales.empty() || scales.size() == k) && (sizes.empty() || sizes.size() == k) &&
                (roi.empty() || roi.size() == 2 * k))
        << "with " << k << " axes, scales and sizes need " << k << " values and roi " << 2 * k;
    std::vector<double> all_scales(r, 1.0), all_roi;
    std::vector<int64_t> all_sizes(x.shape().begin(), x.shape().end());
    for (size_t i = 0; i < r; ++i) all_roi.push_back(0);
    for (size_t i = 0; i < r; ++i) all_roi.push_back(1);
    for (size_t i = 0; i < k; ++i) {
      auto a = static_cast<size_t>(axes[i]);
      if (!scales.empty()) all_scales[a] = scales[i];
      if (!sizes.empty()) all_sizes[a] = sizes[i];
      if (!roi.empty()) all_roi[a] = roi[i], all_roi[a + r] = roi[i + k];
    }
    if (!scales.empty()) scales = all_scales;
    if (!sizes.empty()) sizes = all_sizes;
    if (!roi.empty()) roi = all_roi;
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  user_assert(scales.size() == r || sizes.size() == r)
      << "needs " << r << " scales or " << r << " sizes (one per dim)";
  // keep_aspect_ratio_policy (18): the sizes' axes take one scale, the smallest (not_larger)
  // or the largest (not_smaller), and round their sizes to it (half up).
  std::string policy = n.attr_string("keep_aspect_ratio_policy", "stretch");
  user_assert(policy == "stretch" || policy == "not_larger" || policy == "not_smaller")
      << "keep_aspect_ratio_policy '" << policy << "' is not one of stretch, not_larger, "
      << "not_smaller";
  if (!sizes.empty() && policy != "stretch") {
    double common = policy == "not_larger" ? 1e300 : 0;
    for (int64_t a : axes) {
      double s = static_cast<double>(sizes[static_cast<size_t>(a)]) /
                 static_cast<double>(x.shape()[static_cast<size_t>(a)]);
      common = policy == "not_larger" ? std::min(common, s) : std::max(common, s);
    }
    scales.assign(r, 1.0);
    for (int64_t a : axes) {
      auto u = static_cast<size_t>(a);
      scales[u] = common;
      sizes[u] = static_cast<int64_t>(std::floor(common * static_cast<double>(x.shape()[u]) + 0.5));
    }
  }
  Tensor y = x;
  for (size_t a = 0; a < r; ++a) {
    int64_t in = x.shape()[a];
    bool by_scale = sizes.empty() || !scales.empty();
    double scale = by_scale ? scales[a] : static_cast<double>(sizes[a]) / static_cast<double>(in);
    auto out = sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in) * scale))
                             : sizes[a];
    user_assert(out >= 1) << "dim " << a << " would resize to " << out << " elements";
    double start = roi.size() == 2 * r ? roi[a] : 0, end = roi.size() == 2 * r ? roi[a + r] : 1;
    bool identity = out == in && scale == 1 && m.transform != "tf_crop_and_resize";
    double width = static_cast<double>(in) * scale; // ONNX's output width, not rounded
    if (!identity) y = resize_axis(y, static_cast<int64_t>(a), out, scale, width, m, start, end);
  }
  return y;
}

// AffineGrid (20): each output point's normalized coordinates [x, y(, z), 1] (x along the last
// dim, -1 and 1 the outer edges, or with align_corners the corner pixels' centres) mapped by
// theta (N, 2, 3) or (N, 3, 4): the sampling grid (N, H, W, 2) or (N, D, H, W, 3) GridSample
// reads.
Tensor affine_grid(const Node& n) {
  const Tensor& theta = n.in(0);
  std::vector<int64_t> size = n.host_ints(1);
  user_assert(size.size() == 4 || size.size() == 5)
      << "size must be (N, C, H, W) or (N, C, D, H, W), not " << shape_str(size);
  const auto nd = static_cast<int64_t>(size.size()) - 2;
  user_assert(theta.ndim() == 3 && dim(theta, 0) == size[0] && dim(theta, 1) == nd &&
              dim(theta, 2) == nd + 1)
      << "theta must be (" << size[0] << ", " << nd << ", " << nd + 1 << ") for size "
      << shape_str(size) << ", not " << shape_str(theta.shape());
  bool align = n.attr_int("align_corners", 0) != 0;
  auto coord = [align](int64_t i, int64_t s) {
    if (s == 1) return align ? -1.0 : 0.0;
    auto x = static_cast<double>(i);
    return align ? -1 + 2 * x / static_cast<double>(s - 1)
                 : -1 + (2 * x + 1) / static_cast<double>(s);
  };
  // Points in row-major order of the spatial dims; coordinates innermost dim first.
  Shape spatial(size.begin() + 2, size.end());
  int64_t points = shape_numel(spatial);
  std::vector<double> base;
  for (int64_t p = 0; p < points; ++p) {
    std::vector<int64_t> at(static_cast<size_t>(nd));
    for (int64_t d = nd - 1, rest = p; d >= 0; --d) {
      at[static_cast<size_t>(d)] = rest % spatial[static_cast<size_t>(d)];
      rest /= spatial[static_cast<size_t>(d)];
    }
    for (int64_t d = nd - 1; d >= 0; --d)
      base.push_back(coord(at[static_cast<size_t>(d)], spatial[static_cast<size_t>(d)]));
    base.push_back(1);
  }
  DType dt = float_of(theta.dtype());
  Tensor grid(std::span<const double>(base), {1, points, nd + 1}, dt);
  Shape out = {size[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(nd);
  return grid.matmul(theta.cast(dt).transpose(1, 2)).reshape(out).cast(theta.dtype());
}

// GridSample (16, and 20's N-D with its renamed modes): output point p of each image reads
// X at grid[p], normalized coordinates (innermost dim first) mapped onto the input (align_corners:
// -1 and 1 are the corner pixels' centres, else their outer edges), by nearest (ties to even),
// (N-)linear or (N-)cubic (A = -0.75) interpolation; a coordinate outside the input is clamped
// (border) or reflected (reflection) first, and a tap outside reads 0 (zeros), the edge
// (border) or its reflection. Taps are gathers from each image flattened.
Tensor grid_sample(const Node& n) {
  const Tensor &x = n.in(0), &grid = n.in(1);
  const int64_t nd = x.ndim() - 2;
  user_assert(nd >= 1 && grid.ndim() == x.ndim() && dim(grid, 0) == dim(x, 0) &&
              dim(grid, grid.ndim() - 1) == nd)
      << "X (N, C, D1..Dr) needs a grid (N, O1..Or, r); got " << shape_str(x.shape()) << " and "
      << shape_str(grid.shape());
  user_assert(n.opset() >= 20 || nd == 2) << "GridSample before opset 20 samples 2-D images only";
  std::string mode = n.attr_string("mode", n.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  user_assert(mode == "linear" || mode == "nearest" || mode == "cubic")
      << "mode '" << mode << "' is not one of "
      << (n.opset() >= 20 ? "linear, nearest, cubic" : "bilinear, nearest, bicubic");
  std::string padding = n.attr_string("padding_mode", "zeros");
  user_assert(padding == "zeros" || padding == "border" || padding == "reflection")
      << "padding_mode '" << padding << "' is not one of zeros, border, reflection";
  bool align = n.attr_int("align_corners", 0) != 0;
  DType dt = float_of(x.dtype());
  const int64_t batch = dim(x, 0), channels = dim(x, 1);
  Shape out_spatial(grid.shape().begin() + 1, grid.shape().end() - 1);
  const int64_t points = shape_numel(out_spatial);
  Tensor g = grid.cast(dt).reshape({batch, 1, points, nd});
  // Reflects v into [lo, hi] (the reference's rule, any number of times around).
  auto reflect = [](const Tensor& v, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return v.scalar_like(lo) + v * 0.0;
    Tensor below = v < lo, d = below.where(lo - v, v - hi);
    Tensor k = (d / range).floor(), r = d - k * range;
    Tensor even = (k - (k / 2.0).floor() * 2.0) < 0.5;
    Tensor from_lo = lo + r, from_hi = hi - r;
    Tensor out = below.where(even.where(from_lo, from_hi), even.where(from_hi, from_lo));
    return ((v < lo).logical_or(v > hi)).where(out, v);
  };
  struct Axis {
    Tensor coord;
    int64_t size;
    double lo, hi;
  };
  std::vector<Axis> axes; // spatial dim d (D1 first); grid's coordinate nd-1-d
  for (int64_t d = 0; d < nd; ++d) {
    int64_t size = dim(x, 2 + d);
    auto s = static_cast<double>(size);
    Tensor c = g.slice(-1, nd - 1 - d, nd - d).squeeze(-1);
    c = align ? (c + 1.0) / 2.0 * (s - 1) : ((c + 1.0) * s - 1.0) / 2.0;
    double lo = align ? 0 : -0.5, hi = align ? s - 1 : s - 0.5;
    if (mode == "nearest") c = c.round();
    if (padding == "border")
      c = ((c < lo).logical_or(c > hi)).where(c.clamp(0.0, s - 1), c);
    else if (padding == "reflection")
      c = reflect(c, lo, hi);
    axes.push_back({c, size, lo, hi});
  }
  // The taps of each axis: (offset from floor, weight) for a coordinate.
  auto cubic = [](const Tensor& t, int64_t k) { // t in [0, 1): weight of tap floor - 1 + k
    const double a = -0.75;
    Tensor u = k == 0 ? t + 1.0 : k == 1 ? t : k == 2 ? 1.0 - t : 2.0 - t;
    return k == 1 || k == 2 ? ((a + 2) * u - (a + 3)) * u * u + 1.0
                            : ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
  };
  const int64_t taps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  Tensor flat = x.reshape({batch, channels, -1});
  std::optional<Tensor> sum;
  int64_t combos = 1;
  for (int64_t d = 0; d < nd; ++d) combos *= taps;
  for (int64_t combo = 0; combo < combos; ++combo) {
    std::optional<Tensor> index, weight, inside;
    int64_t stride = 1, rest = combo;
    for (int64_t d = nd - 1; d >= 0; --d) {
      const Axis& a = axes[static_cast<size_t>(d)];
      int64_t k = rest % taps;
      rest /= taps;
      Tensor base = a.coord.floor();
      Tensor at = mode == "nearest" ? a.coord : base + static_cast<double>(k - (taps == 4));
      Tensor w = mode == "nearest"  ? a.coord.scalar_like(1)
                 : mode == "linear" ? (k == 0 ? base + 1.0 - a.coord : a.coord - base)
                                    : cubic(a.coord - base, k);
      auto last = static_cast<double>(a.size - 1);
      Tensor in = (at < 0.0).logical_or(at > last).logical_not();
      if (padding == "reflection") at = reflect(at, a.lo, a.hi).floor();
      at = at.clamp(0.0, last);
      Tensor i = at.cast(Scalar::Int64) * stride;
      index = index ? *index + i : i;
      weight = weight ? *weight * w : w;
      if (padding == "zeros") inside = inside ? inside->logical_and(in) : in;
      stride *= a.size;
    }
    Tensor v = flat.gather(2, index->expand({batch, channels, points})).cast(dt);
    if (inside) v = inside->where(v, v.scalar_like(0));
    Tensor term = v * *weight;
    sum = sum ? *sum + term : term;
  }
  Shape out = {batch, channels};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  return sum->reshape(out).cast(x.dtype());
}

} // namespace

void add_resize_ops(ConverterTable& t) {
  t["Resize"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    if (n.opset() < 11) return std::vector<Value>{resize(n, x, n.host_floats(1), {}, {})};
    std::vector<double> roi = n.has(1) ? n.host_floats(1) : std::vector<double>{};
    std::vector<double> scales = n.has(2) ? n.host_floats(2) : std::vector<double>{};
    std::vector<int64_t> sizes = n.has(3) ? n.host_ints(3) : std::vector<int64_t>{};
    return std::vector<Value>{resize(n, x, scales, sizes, roi)};
  };
  t["AffineGrid"] = [](const Node& n) { return std::vector<Value>{affine_grid(n)}; };
  t["GridSample"] = [](const Node& n) { return std::vector<Value>{grid_sample(n)}; };
  t["Upsample"] = [](const Node& n) {
    std::vector<double> scales = n.opset() >= 9 ? n.host_floats(1) : n.attr_floats("scales");
    return std::vector<Value>{resize(n, n.in(0), scales, {}, {})};
  };
}

} // namespace beamlab::onnx

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
  bool exclude_outside = false;
};

std::vector<double> coefficients(const ResizeMode& m, double ratio) {
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

// The source coordinate of output o; nullopt outside tf_crop_and_resize's input.
std::optional<double> source(const ResizeMode& m, int64_t o, int64_t in, double out, double scale,
                             double roi_start, double roi_end) {
  const std::string& t = m.transform;
  auto x = static_cast<double>(o);
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return out == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (t == "align_corners") return out == 1 ? 0 : x * static_cast<double>(in - 1) / (out - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  user_assert(t == "tf_crop_and_resize")
      << "coordinate_transformation_mode '" << t << "' is not one of half_pixel, "
      << "pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize";
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
// `width` is ONNX's output width for the coordinate transform: in * scale, not rounded.
Tensor resize_axis(const Tensor& x, int64_t axis, int64_t out, double scale, double width,
                   const ResizeMode& m, double roi_start, double roi_end) {
  int64_t in = x.shape()[static_cast<size_t>(axis)];
  std::vector<double> w(static_cast<size_t>(in * out), 0.0), bias(static_cast<size_t>(out), 0.0);
  bool extrapolates = false;
  for (int64_t o = 0; o < out; ++o) {
    std::optional<double> s = source(m, o, in, width, scale, roi_start, roi_end);
    if (!s) {
      bias[static_cast<size_t>(o)] = m.extrapolation;
      extrapolates = true;
      continue;
    }
    double ratio = *s == std::floor(*s) ? 1 : *s - std::floor(*s);
    std::vector<double> c = coefficients(m, ratio);
    std::vector<int64_t> idx = neighbours(*s, c.size());
    if (m.exclude_outside) {
      double sum = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= in) c[i] = 0;
        sum += c[i];
      }
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

Tensor resize(const Node& n, const Tensor& x, const std::vector<double>& scales_in,
              const std::vector<int64_t>& sizes, const std::vector<double>& roi) {
  ResizeMode m;
  m.mode = n.attr_string("mode", "nearest");
  user_assert(m.mode == "nearest" || m.mode == "linear" || m.mode == "cubic")
      << "mode '" << m.mode << "' is not one of nearest, linear, cubic";
  m.transform = n.attr_string("coordinate_transformation_mode", "half_pixel");
  m.nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  m.cubic_a = n.attr_float("cubic_coeff_a", -0.75);
  m.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
  m.extrapolation = n.attr_float("extrapolation_value", 0.0);
  auto r = static_cast<size_t>(x.ndim());
  user_assert(scales_in.size() == r || sizes.size() == r)
      << "needs " << r << " scales or " << r << " sizes (one per dim)";
  Tensor y = x;
  for (size_t a = 0; a < r; ++a) {
    int64_t in = x.shape()[a];
    double scale =
        sizes.empty() ? scales_in[a] : static_cast<double>(sizes[a]) / static_cast<double>(in);
    auto out = sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in) * scale))
                             : sizes[a];
    user_assert(out >= 1) << "dim " << a << " would resize to " << out << " elements";
    double start = roi.size() == 2 * r ? roi[a] : 0, end = roi.size() == 2 * r ? roi[a + r] : 1;
    bool identity = out == in && scale == 1 && m.transform != "tf_crop_and_resize";
    double width = sizes.empty() ? static_cast<double>(in) * scale : static_cast<double>(out);
    if (!identity) y = resize_axis(y, static_cast<int64_t>(a), out, scale, width, m, start, end);
  }
  return y;
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
  t["Upsample"] = [](const Node& n) {
    std::vector<double> scales = n.opset() >= 9 ? n.host_floats(1) : n.attr_floats("scales");
    return std::vector<Value>{resize(n, n.in(0), scales, {}, {})};
  };
}

} // namespace beamlab::onnx

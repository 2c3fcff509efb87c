// Signal ops: the window functions (Hann, Hamming, Blackman) computed on the host, and DFT
// as two matrix products with cos/sin matrices (complex values are a trailing axis of 2).
#include <cmath>
#include <numbers>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {
namespace {

// w[n] = sum_k c[k] cos(2 pi k n / N), N the size (periodic) or size - 1 (symmetric).
Tensor cosine_window(const Node& n, std::vector<double> c) {
  int64_t size = n.host_ints(0).at(0);
  user_assert(size >= 1) << "size must be at least 1, not " << size;
  double len = static_cast<double>(n.attr_int("periodic", 1) ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    double v = 0;
    for (size_t k = 0; k < c.size(); ++k)
      v += c[k] * std::cos(2 * std::numbers::pi * static_cast<double>(k * i) / len);
    w[static_cast<size_t>(i)] = v;
  }
  DType dt = dtype_of(static_cast<int>(n.attr_int("output_datatype", 1)), "output_datatype");
  return Tensor(std::span<const double>(w), {size}, dt);
}

// The (N x K) matrix of cos or sin(2 pi n k / N), signed.
Tensor dft_matrix(int64_t len, int64_t bins, bool sine, double sign, DType dt) {
  std::vector<double> m(static_cast<size_t>(len * bins));
  for (int64_t i = 0; i < len; ++i)
    for (int64_t k = 0; k < bins; ++k) {
      double a =
          2 * std::numbers::pi * static_cast<double>((i * k) % len) / static_cast<double>(len);
      m[static_cast<size_t>(i * bins + k)] = sine ? sign * std::sin(a) : std::cos(a);
    }
  return Tensor(std::span<const double>(m), {len, bins}, dt);
}

Tensor dft(const Node& n) {
  const Tensor& x = n.in(0);
  user_assert(x.ndim() >= 2 && (x.shape().back() == 1 || x.shape().back() == 2))
      << "input must be (..., signal, 1) real or (..., signal, 2) complex, not "
      << shape_str(x.shape());
  // DFT-20 takes the axis as input 2, by default -2 (the last signal axis); DFT-17 as an
  // attribute, by default 1.
  int64_t given = n.opset() >= 20 ? (n.has(2) ? n.host_ints(2).at(0) : -2) : n.attr_int("axis", 1);
  if (given < 0) given += 1; // counted from the end of the signal dims, not the last (re, im) dim
  int64_t axis = Node::axis(given, x.ndim() - 1, "axis");
  bool inverse = n.attr_int("inverse", 0) != 0, onesided = n.attr_int("onesided", 0) != 0;
  Tensor re = x.slice(-1, 0, 1).squeeze(-1).transpose(axis, -1);
  std::optional<Tensor> im;
  if (x.shape().back() == 2) im = x.slice(-1, 1, 2).squeeze(-1).transpose(axis, -1);
  int64_t len = re.shape().back();
  if (n.has(1)) {
    int64_t want = n.host_ints(1).at(0);
    user_assert(want >= 1) << "dft_length must be at least 1, not " << want;
    auto fit = [&](const Tensor& t) {
      if (want <= len) return t.slice(-1, 0, want);
      std::vector<std::pair<int64_t, int64_t>> pads(static_cast<size_t>(t.ndim()), {0, 0});
      pads.back() = {0, want - len};
      return t.pad(pads);
    };
    re = fit(re);
    if (im) im = fit(*im);
    len = want;
  }
  int64_t bins = onesided ? len / 2 + 1 : len;
  double sign = inverse ? 1 : -1; // X[k] = sum x[n] e^(sign i 2 pi n k / N)
  DType dt = float_of(x.dtype());
  Tensor c = dft_matrix(len, bins, false, sign, dt), s = dft_matrix(len, bins, true, sign, dt);
  Tensor out_re = re.cast(dt).matmul(c), out_im = re.cast(dt).matmul(s);
  if (im) {
    out_re = out_re - im->cast(dt).matmul(s);
    out_im = out_im + im->cast(dt).matmul(c);
  }
  if (inverse) {
    out_re = out_re / static_cast<double>(len);
    out_im = out_im / static_cast<double>(len);
  }
  std::vector<Tensor> parts = {out_re.transpose(axis, -1), out_im.transpose(axis, -1)};
  return Tensor::stack(parts, -1);
}

// STFT (17): frames of frame_length every frame_step, each times the window, transformed
// (onesided: the first length / 2 + 1 bins): (batch, frames, bins, 2).
Tensor stft(const Node& n) {
  const Tensor& x = n.in(0);
  user_assert(x.ndim() == 3 && (dim(x, 2) == 1 || dim(x, 2) == 2))
      << "signal must be (batch, length, 1) real or (batch, length, 2) complex, not "
      << shape_str(x.shape());
  int64_t step = n.host_ints(1).at(0);
  std::optional<Tensor> window = n.opt(2);
  user_assert(n.has(3) || window) << "give frame_length or a window";
  int64_t len = n.has(3) ? n.host_ints(3).at(0) : window->numel();
  user_assert(step >= 1 && len >= 1 && len <= dim(x, 1))
      << "frame_step " << step << " and frame_length " << len << " do not fit a signal of "
      << dim(x, 1);
  user_assert(!window || window->numel() == len)
      << "the window has " << window->numel() << " values for frames of " << len;
  bool onesided = n.attr_int("onesided", 1) != 0;
  DType dt = float_of(x.dtype());
  int64_t frames = (dim(x, 1) - len) / step + 1, bins = onesided ? len / 2 + 1 : len;
  auto framed = [&](const Tensor& part) { // (batch, frames, len)
    std::vector<Tensor> fs;
    for (int64_t f = 0; f < frames; ++f) fs.push_back(part.slice(1, f * step, f * step + len));
    Tensor t = Tensor::stack(fs, 1).cast(dt);
    return window ? t * window->cast(dt) : t;
  };
  Tensor re = framed(x.slice(-1, 0, 1).squeeze(-1));
  Tensor c = dft_matrix(len, bins, false, -1, dt), s = dft_matrix(len, bins, true, -1, dt);
  Tensor out_re = re.matmul(c), out_im = re.matmul(s);
  if (dim(x, 2) == 2) {
    Tensor im = framed(x.slice(-1, 1, 2).squeeze(-1));
    out_re = out_re - im.matmul(s);
    out_im = out_im + im.matmul(c);
  }
  std::vector<Tensor> parts = {out_re, out_im};
  return Tensor::stack(parts, -1);
}

// MelWeightMatrix (17): (dft_length / 2 + 1, num_mel_bins) triangular filters between mel
// points spaced evenly from lower_edge_hertz to upper_edge_hertz, as ONNX's reference builds
// them (bins rounded down, rising edge including its centre).
Tensor mel_weight_matrix(const Node& n) {
  int64_t mels = n.host_ints(0).at(0), dft = n.host_ints(1).at(0), rate = n.host_ints(2).at(0);
  double low = n.host_floats(3).at(0), high = n.host_floats(4).at(0);
  user_assert(mels >= 1 && dft >= 1 && rate >= 1 && low >= 0 && high > low)
      << "num_mel_bins, dft_length and sample_rate must be positive and the edges rising";
  int64_t spectrum = dft / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double lo = mel(low), step = (mel(high) - lo) / static_cast<double>(mels + 2); // sic, ONNX's
  std::vector<int64_t> bin;
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hz = 700 * (std::pow(10, (static_cast<double>(i) * step + lo) / 2595) - 1);
    bin.push_back(static_cast<int64_t>(
        std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate))));
  }
  std::vector<double> w(static_cast<size_t>(spectrum * mels), 0.0);
  auto put = [&](int64_t j, int64_t i, double v) {
    if (j >= 0 && j < spectrum) w[static_cast<size_t>(j * mels + i)] = v;
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = bin[static_cast<size_t>(i)], centre = bin[static_cast<size_t>(i + 1)],
            right = bin[static_cast<size_t>(i + 2)];
    if (centre == left)
      put(centre, i, 1);
    else
      for (int64_t j = left; j <= centre; ++j)
        put(j, i, static_cast<double>(j - left) / static_cast<double>(centre - left));
    for (int64_t j = centre; j < right; ++j)
      put(j, i, static_cast<double>(right - j) / static_cast<double>(right - centre));
  }
  DType dt =
      dtype_of(static_cast<int>(n.attr_int("output_datatype", 1)), "attribute 'output_datatype'");
  return Tensor(std::span<const double>(w), {spectrum, mels}, dt);
}

} // namespace

void add_signal_ops(ConverterTable& t) {
  t["HannWindow"] = [](const Node& n) { return std::vector<Value>{cosine_window(n, {0.5, -0.5})}; };
  t["HammingWindow"] = [](const Node& n) {
    return std::vector<Value>{cosine_window(n, {25.0 / 46, -21.0 / 46})};
  };
  t["BlackmanWindow"] = [](const Node& n) {
    return std::vector<Value>{cosine_window(n, {0.42, -0.5, 0.08})};
  };
  t["DFT"] = [](const Node& n) { return std::vector<Value>{dft(n)}; };
  t["STFT"] = [](const Node& n) { return std::vector<Value>{stft(n)}; };
  t["MelWeightMatrix"] = [](const Node& n) { return std::vector<Value>{mel_weight_matrix(n)}; };
}

} // namespace beamlab::onnx

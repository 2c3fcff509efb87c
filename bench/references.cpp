// The bench's references; see references.hpp.
#include "bench/references.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include <cblas.h>
#include <dnnl.hpp>

#include "engine/realize/machine_limits.hpp"
#include "engine/runtime/buffer.hpp"

namespace beamlab::bench {
namespace {

// Seconds per call: the median of at least 5 calls and 0.2 s, after one warm-up call (the
// median resists a noisy neighbour).
double median_seconds(const std::function<void()>& call) {
  call();
  std::vector<double> times;
  double total = 0;
  while (times.size() < 5 || total < 0.2) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    total += times.back();
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2),
                   times.end());
  return times[times.size() / 2];
}

dnnl::engine& cpu() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A oneDNN memory of `desc`, every byte of it (padding included) holding 0.5f.
dnnl::memory filled(const dnnl::memory::desc& desc) {
  dnnl::memory m(desc, cpu());
  auto* p = static_cast<float*>(m.get_data_handle());
  std::fill(p, p + desc.get_size() / sizeof(float), 0.5f);
  return m;
}

std::optional<Roof> roof_of(double flops, double bytes, double written, double seconds) {
  return roofline(
      limits(),
      {static_cast<int64_t>(flops), static_cast<int64_t>(bytes), static_cast<int64_t>(written)},
      seconds * 1e3);
}

} // namespace

const MachineLimits& limits() {
  static const MachineLimits l = measure_machine_limits();
  return l;
}

double limit_fraction(double flops, double bytes, double written, double seconds) {
  std::optional<Roof> r = roof_of(flops, bytes, written, seconds);
  return r ? r->fraction : 0;
}

std::string roof_bound(double flops, double bytes, double written, double seconds) {
  std::optional<Roof> r = roof_of(flops, bytes, written, seconds);
  return r ? "roof " + r->bound : "roof ?";
}

double onednn_matmul_gflops(int64_t m, int64_t n, int64_t k) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::memory::desc a({m, k}, dt::f32, tag::ab), b_any({k, n}, dt::f32, tag::any),
      b_plain({k, n}, dt::f32, tag::ab), c({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b_any, c), cpu());
  dnnl::stream s(cpu());
  dnnl::memory A = filled(a), B = filled(b_plain), C = filled(c), packed(pd.weights_desc(), cpu());
  dnnl::reorder(B, packed).execute(s, B, packed);
  dnnl::matmul mm(pd);
  double seconds = median_seconds([&] {
    mm.execute(s, {{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, C}});
    s.wait();
  });
  return 2.0 * static_cast<double>(m * n * k) / seconds / 1e9;
}

double onednn_conv2d_gflops(const ConvShape& conv, bool blocked) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  tag act = blocked ? tag::any : tag::nchw;
  const int64_t g = conv.groups, o = conv.out();
  dnnl::memory::dims weights =
      g == 1 ? dnnl::memory::dims{conv.cout, conv.c, conv.k, conv.k}
             : dnnl::memory::dims{g, conv.cout / g, conv.c / g, conv.k, conv.k};
  dnnl::memory::desc src({1, conv.c, conv.hw, conv.hw}, dt::f32, act),
      wei(weights, dt::f32, tag::any), dst({1, conv.cout, o, o}, dt::f32, act);
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei, dst,
          {conv.stride, conv.stride}, {conv.pad, conv.pad}, {conv.pad, conv.pad}),
      cpu());
  dnnl::stream s(cpu());
  dnnl::memory S = filled(pd.src_desc()), W = filled(pd.weights_desc()), D = filled(pd.dst_desc());
  dnnl::convolution_forward prim(pd);
  double seconds = median_seconds([&] {
    prim.execute(s, {{DNNL_ARG_SRC, S}, {DNNL_ARG_WEIGHTS, W}, {DNNL_ARG_DST, D}});
    s.wait();
  });
  return conv.flops() / seconds / 1e9;
}

double openblas_sgemm_gflops(int64_t m, int64_t n, int64_t k) {
  Buffer C(m * n * 4), A(m * k * 4), B(k * n * 4);
  for (float& x : A.as<float>()) x = 0.5f;
  for (float& x : B.as<float>()) x = 0.25f;
  double seconds = median_seconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, A.as<float>().data(), static_cast<int>(k),
                B.as<float>().data(), static_cast<int>(n), 0.0f, C.as<float>().data(),
                static_cast<int>(n));
  });
  return 2.0 * static_cast<double>(m * n * k) / seconds / 1e9;
}

std::string openblas_core() {
  return std::string(openblas_get_corename()) + " (" + openblas_get_config() + ")";
}

} // namespace beamlab::bench

// What the bench's figures are judged against, measured in the same run: the machine's limits
// (engine/realize/machine_limits.hpp: FMA peak, each memory level's bandwidth), oneDNN (the
// vendor library: matmul, and conv2d in its blocked layout and in NCHW) first, OpenBLAS sgemm
// second (its kernel choice follows OPENBLAS_CORETYPE; the core it ran is reported).
#pragma once

#include <cstdint>
#include <string>

#include "engine/support/roofline.hpp"

namespace beamlab::bench {

/// The machine's limits, measured once per process (a few seconds) with every core.
const MachineLimits& limits();

/// The fraction of the limits a kernel moving `bytes` (`written` of them its output) and
/// doing `flops` reaches in `seconds`: its roofline fraction (roofline.hpp), 0 if unknown.
double limit_fraction(double flops, double bytes, double written, double seconds);
/// "roof DRAM" or "roof compute": what bounds it.
std::string roof_bound(double flops, double bytes, double written, double seconds);

/// oneDNN's GFLOP/s for row-major (m x k) @ (k x n) float32, weights laid out as it prefers
/// (reordered once, outside the timing), median call.
double onednn_matmul_gflops(int64_t m, int64_t n, int64_t k);

/// A batch-1 float32 conv2d: 1 x c x h x w, cout filters of k x k in `groups` groups.
struct ConvShape {
  const char* name; ///< where it comes from, e.g. "resnet_3x3"
  int64_t c, hw, cout, k, stride, pad, groups;
  int64_t out() const { return (hw + 2 * pad - k) / stride + 1; }
  double flops() const {
    return 2.0 * static_cast<double>(cout * out() * out() * (c / groups) * k * k);
  }
};

/// oneDNN's GFLOP/s for the conv2d: activations in its preferred blocked layout (`blocked`)
/// or in NCHW; median call.
double onednn_conv2d_gflops(const ConvShape& conv, bool blocked);

/// OpenBLAS sgemm's GFLOP/s for row-major (m x k) @ (k x n), median call.
double openblas_sgemm_gflops(int64_t m, int64_t n, int64_t k);
/// The kernel OpenBLAS runs ("Haswell", "SkylakeX", "Zen") and its build configuration.
std::string openblas_core();

} // namespace beamlab::bench

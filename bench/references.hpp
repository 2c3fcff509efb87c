// What the bench's figures are judged against, measured in the same run: the machine's limits
// (engine/realize/machine_limits.hpp: FMA peak, each memory level's bandwidth), oneDNN (the
// vendor library: matmul, and conv2d in its blocked layout and in NCHW) first, OpenBLAS sgemm
// second (its kernel choice follows OPENBLAS_CORETYPE; the core it ran is reported). Whole
// models are judged against ONNX Runtime 1.30 on the same thread count (OrtSession).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

#include "engine/support/error.hpp"

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

/// ONNX Runtime 1.30 running one model in a child process: bench/ort_reference.cjs (installed
/// beside this executable) under Node.js, onnxruntime-node from BEAMLAB_ORT (default
/// build/ort; `bash scripts/install-ort` fills it). The session has `threads` intra-op threads
/// and is fed random inputs of the model's own shapes, as BM_Model feeds beamlab.
class OrtSession {
public:
  /// Starts the child (after a pause that lets this process's OpenMP threads go to sleep),
  /// loads the model and warms it up with 5 runs: fails with the command that fixes it when
  /// Node.js, the script or ONNX Runtime is missing, or with ORT's reason when it can't load
  /// the model. `inputs` give shapes for its symbolic dims, NAME=DIMS (x=1x77x768).
  static Expected<std::unique_ptr<OrtSession>> open(const std::string& model, int threads,
                                                    const std::vector<std::string>& inputs = {});
  ~OrtSession();
  OrtSession(const OrtSession&) = delete;
  OrtSession& operator=(const OrtSession&) = delete;

  /// `runs` runs, each timed in the child around its session.run: milliseconds.
  Expected<std::vector<double>> time_ms(int runs);
  /// The onnxruntime-node version that runs the model ("1.30.0").
  const std::string& version() const { return version_; }

private:
  OrtSession() = default;
  Expected<std::string> request(const std::string& line);
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string pending_; ///< read past the last line
  std::string version_;
};

/// ONNX Runtime's median milliseconds on the model (31 runs), measured once per process and
/// model; the error says why there is none.
Expected<double> ort_median_ms(const std::string& model, int threads);

} // namespace beamlab::bench

// Built-in workloads: named tensor programs with integer parameters and a dtype, for
// `beamlab run`, the benchmarks and the tuning corpora.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/tensor/tensor.hpp"

namespace beamlab {

struct WorkloadInfo {
  std::string name;
  std::string description;
  std::map<std::string, int64_t> defaults; ///< every parameter, with its default
  /// The dtypes it computes in, end to end; the first (float32) is the default.
  std::vector<DType> dtypes = {Scalar::Float32};
};

/// Every built-in workload.
const std::vector<WorkloadInfo>& workloads();

/// The workload's output (lazy) for `params` (missing ones take their defaults), computed in
/// `dtype`. Inputs are seeded random tensors of that dtype. A UserError names an unknown
/// workload or parameter, a bad value, or a dtype the workload does not support.
Tensor build_workload(const std::string& name, const std::map<std::string, int64_t>& params,
                      DType dtype = Scalar::Float32);

/// The same, with the dtype by name ("float32", "float16", ...).
Tensor build_workload(const std::string& name, const std::map<std::string, int64_t>& params,
                      const std::string& dtype);

} // namespace beamlab

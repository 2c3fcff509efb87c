// Built-in workloads: named tensor programs with integer parameters, for `beamlab run`, the
// benchmarks and (later) tuning corpora.
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
};

/// Every built-in workload.
const std::vector<WorkloadInfo>& workloads();

/// The workload's output (lazy) for `params` (missing ones take their defaults). Inputs are
/// seeded random tensors. A UserError names an unknown workload or parameter, or a bad value.
Tensor build_workload(const std::string& name, const std::map<std::string, int64_t>& params);

} // namespace beamlab

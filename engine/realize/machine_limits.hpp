// Measuring the machine's limits: the vector FMA peak (float32 and float64) and the read and
// triad bandwidth of each memory level, with the given threads, each on data it touched
// first. The kernels are codegen's limit kernels (engine/codegen/limit_kernels.hpp), linked by
// the JIT and launched with OpenMP like every kernel, one part per thread. A few seconds; the
// tuner stores the result per device (tuner/store/device.hpp) and `beamlab device` shows it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/support/roofline.hpp"

namespace beamlab {

/// One level of the data cache hierarchy, as the operating system describes it.
struct CacheSize {
  int level = 0;
  int64_t bytes = 0; ///< one instance's size
  int shared_by = 1; ///< logical CPUs sharing one instance
};

/// The data (or unified) caches of CPU 0, closest first: from sysfs, else from the C library
/// (sysconf, which reads CPUID; L1 and L2 then taken as private to a core, L3 as shared by all).
std::vector<CacheSize> data_caches();

struct LimitsOptions {
  int threads = 0;      ///< 0: every core
  double trial_ms = 10; ///< each trial's least length; repetitions are calibrated to it
  int trials = 5;       ///< the best trial is the limit
};

/// Measures the limits: each level on half its capacity for the threads, DRAM on at least
/// 256 MiB and 4x the last cache. The last cache level's size is checked by a sweep (a
/// virtual machine can report the host's whole cache): it ends where its read bandwidth drops
/// by 40%. A level that reads less than 10% over DRAM is dropped.
MachineLimits measure_machine_limits(const LimitsOptions& options = {});

} // namespace beamlab

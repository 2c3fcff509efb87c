// Running a kernel across cores with OpenMP.
#pragma once

#include <cstdint>

#include "engine/support/kernel_abi.hpp"

namespace beamlab {

/// Calls `entry` over the parallel range [0, extent), split into contiguous chunks across
/// `threads` OpenMP threads (0: all cores); extent 0 runs nothing. A negative extent means
/// "no parallel range": one call with [0, 1).
void launch(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t extent,
            int threads = 0);

/// Threads launch uses by default (OpenMP's maximum, i.e. the cores or OMP_NUM_THREADS).
int default_threads();

} // namespace beamlab

// Running a kernel across cores with OpenMP.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/support/kernel_abi.hpp"

namespace beamlab {

/// Calls `entry` over the parallel range [0, extent), split into contiguous chunks across
/// `threads` OpenMP threads (0: all cores); extent 0 runs nothing. A negative extent means
/// "no parallel range": one call with [0, 1).
void launch(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t extent,
            int threads = 0);

/// One thread's part of a launch: the OpenMP thread number and the steady_clock times (ns
/// since the clock's epoch, unless a caller rebases them) around its call of the kernel.
struct ThreadSpan {
  int thread = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

/// The same launch, also appending to `trace` (if not null) one span per thread that ran a
/// chunk, in thread order; a serial launch records thread 0. For profilers and timelines.
void launch(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t extent,
            int threads, std::vector<ThreadSpan>* trace);

/// Threads launch uses by default (OpenMP's maximum, i.e. the cores or OMP_NUM_THREADS).
int default_threads();

} // namespace beamlab

// OpenMP launch of kernels; see launch.hpp. The one place OpenMP is used.
#include "engine/runtime/launch.hpp"

#include <algorithm>
#include <chrono>

#include <omp.h>

namespace beamlab {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One call of the kernel by OpenMP thread `thread`, timed into `span` when tracing.
void call_chunk(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t begin,
                int64_t end, int thread, ThreadSpan* span) {
  if (!span) return call_kernel(entry, buffers, vars, begin, end);
  span->thread = thread;
  span->begin_ns = now_ns();
  call_kernel(entry, buffers, vars, begin, end);
  span->end_ns = now_ns();
}

} // namespace

int default_threads() { return omp_get_max_threads(); }

void launch(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t extent,
            int threads) {
  launch(entry, buffers, vars, extent, threads, nullptr);
}

void launch(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t extent,
            int threads, std::vector<ThreadSpan>* trace) {
  if (extent == 0) return;
  int64_t n = extent < 0 ? 1 : std::min<int64_t>(threads > 0 ? threads : default_threads(), extent);
  // Each thread writes only its own span, so the parallel region needs no lock.
  std::vector<ThreadSpan> spans(trace ? static_cast<size_t>(n) : 0);
  auto span = [&](int64_t t) { return trace ? &spans[static_cast<size_t>(t)] : nullptr; };
  if (extent < 0) {
    call_chunk(entry, buffers, vars, 0, 1, 0, span(0));
  } else if (n <= 1) {
    call_chunk(entry, buffers, vars, 0, extent, 0, span(0));
  } else {
    // Static contiguous chunks: each thread streams its own part of every buffer.
#pragma omp parallel for num_threads(static_cast<int>(n)) schedule(static, 1)
    for (int64_t t = 0; t < n; ++t)
      call_chunk(entry, buffers, vars, extent * t / n, extent * (t + 1) / n, omp_get_thread_num(),
                 span(t));
  }
  if (trace) trace->insert(trace->end(), spans.begin(), spans.end());
}

} // namespace beamlab

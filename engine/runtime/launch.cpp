// OpenMP launch of kernels; see launch.hpp. The one place OpenMP is used.
#include "engine/runtime/launch.hpp"

#include <algorithm>

#include <omp.h>

namespace beamlab {

int default_threads() { return omp_get_max_threads(); }

void launch(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t extent,
            int threads) {
  if (extent < 0) return call_kernel(entry, buffers, vars, 0, 1);
  if (extent == 0) return;
  int64_t n = std::min<int64_t>(threads > 0 ? threads : default_threads(), extent);
  if (n <= 1) return call_kernel(entry, buffers, vars, 0, extent);
  // Static contiguous chunks: each thread streams its own part of every buffer.
#pragma omp parallel for num_threads(static_cast<int>(n)) schedule(static, 1)
  for (int64_t t = 0; t < n; ++t)
    call_kernel(entry, buffers, vars, extent * t / n, extent * (t + 1) / n);
}

} // namespace beamlab

// Kernels that measure the machine rather than the compiler: the vector FMA peak and the
// bandwidth of each memory level are what every roofline in beamlab is judged against, so
// they are written directly in LLVM IR with the host's widest vectors (not through the
// scheduler, the Opts or the heuristic, whose quality they must not depend on), and compiled
// and linked like any kernel (the kernel ABI of engine/support/kernel_abi.hpp).
//
// Each kernel's parallel range is a list of parts, one per thread: part p works only on its
// own slice of every buffer, so a launch over `threads` parts gives each thread its own data.
//
//   fma_f32, fma_f64  buffers[0]: one seed per part (float or double); vars[0]: iterations.
//                     Runs kFmaAccumulators independent vector FMA chains for `iterations`
//                     steps, then writes their sum over the part's seed (so nothing is dead).
//   fill              buffers[0]: floats; vars[0]: elements per part. Writes the part's slice
//                     (first touch: the thread that will use the slice places its pages).
//   read              buffers[0]: floats, buffers[1]: one float per part; vars[0]: elements
//                     per part, vars[1]: repetitions. Sums the slice `repetitions` times into
//                     kFmaAccumulators vector accumulators and writes the total.
//   triad             buffers[0..2]: floats a, b, c; vars[0]: elements per part, vars[1]:
//                     repetitions. a = b + 0.5 c over the slice, `repetitions` times.
//   triad_nontemporal the same with streaming (cache-bypassing) stores.
//
// Elements per part must be a multiple of limit_block_elements(); buffers are 64-byte aligned.
#pragma once

#include <cstdint>

#include "engine/codegen/compile.hpp"

namespace beamlab {

enum class LimitKernel { fma_f32, fma_f64, fill, read, triad, triad_nontemporal };

/// Independent FMA (and read-sum) chains: enough to cover latency x pipes on any x86 core.
inline constexpr int kFmaAccumulators = 16;

/// The host's widest vector register in bytes: 64 with AVX-512, 32 with AVX, else 16.
int host_vector_bytes();

/// Floats a part's slice is a multiple of: one vector per accumulator.
int64_t limit_block_elements();

/// FLOPs one part does per FMA-kernel iteration (2 per lane per accumulator).
int64_t fma_flops_per_iteration(LimitKernel kind);

/// Compiles `kind` for the host; `opts.keep_assembly` keeps its assembly (tests check the FMA
/// loop is made of full-width vector FMAs).
Expected<CompiledKernel> emit_limit_kernel(LimitKernel kind, const CompileOptions& opts = {});

} // namespace beamlab

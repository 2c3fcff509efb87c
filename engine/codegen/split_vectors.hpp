// Vectors no register lines up with, split into register-wide pieces.
//
// A register tile of 7 columns by 16 channels computes in 112-lane vectors. LLVM legalizes a
// vector wider than a register by halving it (112, 56, 28, 14, 7 lanes) until the halves fit,
// so the pieces straddle registers and every broadcast and FMA step becomes shuffles: such a
// 7x16 tile of r_16_256_49_256 (ResNet-18's Winograd GEMM) ran 12x slower than an 8x16 one.
// When a kernel computes in a vector wider than kRegisterLanes whose width is not a power of two,
// every vector of it wider than kRegisterLanes becomes pieces of kRegisterLanes lanes (the last
// one what is left), lanes in order: elementwise ops, loads and stores (of memory and of the
// accumulators' registers) piece by piece, a lane selection (GEP) from the pieces its lanes come from. LLVM then sees only
// register-wide vectors. Kernels whose vectors are all powers of two are left as they are
// (LLVM's halving lines up with registers there).
#pragma once

#include <cstdint>

#include "engine/ir/uop.hpp"

namespace beamlab {

/// The lanes of one vector register of float32 (AVX-512).
inline constexpr int kRegisterLanes = 16;

/// `graph` (a lowered kernel graph: accumulators are registers, read and written whole) with its
/// vectors split (see above); `graph` itself when no vector needs it.
UOpPtr split_wide_vectors(const UOpPtr& graph);

} // namespace beamlab

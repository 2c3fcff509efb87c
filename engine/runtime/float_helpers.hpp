// Float conversions generated code calls but this host's runtime libraries may not provide.
//
// LLVM lowers conversions to bfloat16 to the compiler-rt helpers __truncsfbf2 and
// __truncdfbf2 on CPUs without native bf16 instructions (and always from double); GCC 12's
// libgcc has neither. The JIT loader binds these correctly rounded versions into every kernel.
//
// They are written without the __bf16 type, which host code compiled for baseline x86-64
// would itself lower to those missing helpers: the result is returned as a float whose low
// 16 bits are the bfloat16, which is the same register (xmm0) and bits the helper's callers
// read.
#pragma once

#include <cstdint>

namespace beamlab {

/// The bfloat16 bits of `f`, rounded to nearest even (NaN stays a quiet NaN).
uint16_t float_to_bfloat16_bits(float f);

/// The bfloat16 bits of `d`, rounded once (to float with round-to-odd, then to nearest even).
uint16_t double_to_bfloat16_bits(double d);

/// __truncsfbf2 and __truncdfbf2 for generated code; see above for the return convention.
extern "C" float beamlab_truncsfbf2(float f);
extern "C" float beamlab_truncdfbf2(double d);

} // namespace beamlab

// Evaluating ALU ops on constants, with the target's semantics.
//
// Integers wrap to their dtype's width (two's complement), divide truncating toward zero and
// take C remainders, like the LLVM code beamlab emits. Floats compute in double and round to
// the dtype (float16 and bfloat16 round to nearest even). Cases whose result is undefined on
// the target (division by zero, INT_MIN / -1, over-wide shifts) are not folded.
#pragma once

#include <optional>
#include <span>

#include "engine/ir/arg.hpp"
#include "engine/ir/dtype.hpp"

namespace beamlab {

/// The constant `op` yields on constant operands `args` (Int, Float or Bool args matching
/// `operand_dtype`), as an arg of `result_dtype`'s kind; nullopt when it must not be folded.
std::optional<Arg> const_eval(Op op, DType result_dtype, DType operand_dtype,
                              std::span<const Arg> args);

/// `v` wrapped to the width of integer dtype `dtype` (sign-extended when signed).
int64_t wrap_int(int64_t v, DType dtype);

/// `v` rounded to float dtype `dtype`'s precision.
double round_float(double v, DType dtype);

} // namespace beamlab

// Tests of constant evaluation: integer wrapping, float rounding and const_eval's folding rules.
#include "engine/ir/const_eval.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace beamlab {
namespace {

using S = Scalar;

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kU32Max = 4294967295;

// Folds `op` on operands of type `dt`; the result has type `dt` (bool for comparisons).
std::optional<Arg> fold(Op op, DType dt, std::vector<Arg> args) {
  DType result = is_comparison(op) ? DType(S::Bool) : dt;
  return const_eval(op, result, dt, args);
}

// The folded integer, or a sentinel that no test expects when folding was refused.
int64_t int_of(const std::optional<Arg>& a) {
  if (!a || !a->is_int()) {
    ADD_FAILURE() << "expected an int result, got " << (a ? a->str() : "no fold");
    return 0x5eadbeef;
  }
  return a->as_int();
}

double float_of(const std::optional<Arg>& a) {
  if (!a || !a->is_float()) {
    ADD_FAILURE() << "expected a float result, got " << (a ? a->str() : "no fold");
    return -12345.0;
  }
  return a->as_float();
}

bool bool_of(const std::optional<Arg>& a) {
  if (!a || a->kind() != Arg::Kind::Bool) {
    ADD_FAILURE() << "expected a bool result, got " << (a ? a->str() : "no fold");
    return false;
  }
  return a->as_bool();
}

// ---- wrap_int ----

TEST(WrapInt, SignedTypesSignExtend) {
  EXPECT_EQ(wrap_int(300, S::Int8), 44);
  EXPECT_EQ(wrap_int(200, S::Int8), -56);
  EXPECT_EQ(wrap_int(-129, S::Int8), 127);
  EXPECT_EQ(wrap_int(127, S::Int8), 127);
  EXPECT_EQ(wrap_int(32768, S::Int16), -32768);
  EXPECT_EQ(wrap_int(kI32Max + 1, S::Int32), kI32Min);
  EXPECT_EQ(wrap_int((int64_t{1} << 40) + 5, S::Int32), 5);
  EXPECT_EQ(wrap_int(0xFFFFFFFFLL, S::Int32), -1);
}

TEST(WrapInt, UnsignedTypesZeroExtend) {
  EXPECT_EQ(wrap_int(-1, S::UInt8), 255);
  EXPECT_EQ(wrap_int(256, S::UInt8), 0);
  EXPECT_EQ(wrap_int(-1, S::UInt16), 65535);
  EXPECT_EQ(wrap_int(-1, S::UInt32), 4294967295LL);
  EXPECT_EQ(wrap_int(int64_t{1} << 32, S::UInt32), 0);
}

TEST(WrapInt, SixtyFourBitTypesAreUnchanged) {
  EXPECT_EQ(wrap_int(kI64Min, S::Int64), kI64Min);
  EXPECT_EQ(wrap_int(-1, S::UInt64), -1); // the bit pattern of 2^64 - 1
  EXPECT_EQ(wrap_int(kI64Max, S::Index), kI64Max);
}

TEST(WrapInt, BoolKeepsTheLowBit) {
  EXPECT_EQ(wrap_int(2, S::Bool), 0);
  EXPECT_EQ(wrap_int(3, S::Bool), 1);
  EXPECT_EQ(wrap_int(-1, S::Bool), 1);
}

// ---- round_float ----

TEST(RoundFloat, Float16MaxAndOverflow) {
  EXPECT_EQ(round_float(65504.0, S::Float16), 65504.0);
  // 65520 is halfway between 65504 (odd mantissa) and 65536: ties-to-even goes up, to inf.
  EXPECT_EQ(round_float(65519.0, S::Float16), 65504.0);
  EXPECT_EQ(round_float(65519.99, S::Float16), 65504.0);
  EXPECT_EQ(round_float(65520.0, S::Float16), INFINITY);
  EXPECT_EQ(round_float(-65520.0, S::Float16), -INFINITY);
  EXPECT_EQ(round_float(1e10, S::Float16), INFINITY);
}

TEST(RoundFloat, Float16TiesToEven) {
  // The spacing above 1 is 2^-10.
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -11), S::Float16), 1.0);
  EXPECT_EQ(round_float(1.0 + 3 * std::ldexp(1.0, -11), S::Float16), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -20), S::Float16),
            1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(round_float(2049.0, S::Float16), 2048.0);
  EXPECT_EQ(round_float(2051.0, S::Float16), 2052.0);
}

TEST(RoundFloat, Float16NonRepresentableDecimals) {
  EXPECT_EQ(round_float(0.1, S::Float16), 0.0999755859375);
  EXPECT_EQ(round_float(0.2, S::Float16), 0.199951171875);
  EXPECT_EQ(round_float(-0.1, S::Float16), -0.0999755859375);
}

TEST(RoundFloat, Float16Subnormals) {
  const double tiny = std::ldexp(1.0, -24); // smallest float16 subnormal
  EXPECT_EQ(round_float(tiny, S::Float16), tiny);
  EXPECT_EQ(round_float(0.75 * tiny, S::Float16), tiny);
  EXPECT_EQ(round_float(0.5 * tiny, S::Float16), 0.0);      // tie, to even (zero)
  EXPECT_EQ(round_float(1.5 * tiny, S::Float16), 2 * tiny); // tie, to even
  EXPECT_EQ(round_float(1e-300, S::Float16), 0.0);
  EXPECT_TRUE(std::signbit(round_float(-1e-300, S::Float16)));
  // The smallest normal is exact; just below it rounds in steps of 2^-24.
  EXPECT_EQ(round_float(std::ldexp(1.0, -14), S::Float16), std::ldexp(1.0, -14));
  EXPECT_EQ(round_float(std::ldexp(1.0, -14) - 0.4 * tiny, S::Float16), std::ldexp(1.0, -14));
}

TEST(RoundFloat, BFloat16) {
  // 8 significant bits: spacing 2^-7 above 1.
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -8), S::BFloat16), 1.0);
  EXPECT_EQ(round_float(1.0 + 3 * std::ldexp(1.0, -8), S::BFloat16), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(round_float(0.1, S::BFloat16), 0.10009765625);
  EXPECT_EQ(round_float(257.0, S::BFloat16), 256.0);
  EXPECT_EQ(round_float(259.0, S::BFloat16), 260.0);
  const double max_bf16 = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  EXPECT_EQ(round_float(max_bf16, S::BFloat16), max_bf16);
  EXPECT_EQ(round_float(static_cast<double>(std::numeric_limits<float>::max()), S::BFloat16),
            INFINITY);
  EXPECT_EQ(round_float(1e39, S::BFloat16), INFINITY);
  // bfloat16 keeps float32's exponent range: float16 would flush this to zero.
  EXPECT_EQ(round_float(std::ldexp(1.0, -126), S::BFloat16), std::ldexp(1.0, -126));
}

TEST(RoundFloat, Float32AndFloat64) {
  EXPECT_EQ(round_float(0.1, S::Float32), static_cast<double>(0.1f));
  EXPECT_EQ(round_float(0.1, S::Float32), 0.100000001490116119384765625);
  EXPECT_EQ(round_float(1e39, S::Float32), INFINITY);
  EXPECT_EQ(round_float(0.1, S::Float64), 0.1);
}

TEST(RoundFloat, SpecialsPassThrough) {
  for (S s : {S::Float16, S::BFloat16, S::Float32}) {
    EXPECT_TRUE(std::isnan(round_float(NAN, s)));
    EXPECT_EQ(round_float(INFINITY, s), INFINITY);
    EXPECT_EQ(round_float(-INFINITY, s), -INFINITY);
    EXPECT_TRUE(std::signbit(round_float(-0.0, s)));
    EXPECT_EQ(round_float(-0.0, s), 0.0);
  }
}

// ---- const_eval on integers ----

TEST(ConstEvalInt, WrapsToTheDtypeWidth) {
  EXPECT_EQ(int_of(fold(Op::Add, S::Int8, {100, 100})), -56);
  EXPECT_EQ(int_of(fold(Op::Sub, S::Int8, {-100, 100})), 56);
  EXPECT_EQ(int_of(fold(Op::Mul, S::Int8, {16, 16})), 0);
  EXPECT_EQ(int_of(fold(Op::Neg, S::Int8, {-128})), -128);
  EXPECT_EQ(int_of(fold(Op::Add, S::Int32, {kI32Max, 1})), kI32Min);
  EXPECT_EQ(int_of(fold(Op::Sub, S::Int32, {kI32Min, 1})), kI32Max);
  EXPECT_EQ(int_of(fold(Op::Mul, S::Int32, {65536, 65536})), 0);
  EXPECT_EQ(int_of(fold(Op::Mul, S::Int32, {65536, 32768})), kI32Min);
  EXPECT_EQ(int_of(fold(Op::Add, S::Int64, {kI64Max, int64_t{1}})), kI64Min);
  EXPECT_EQ(int_of(fold(Op::Add, S::UInt8, {200, 100})), 44);
  EXPECT_EQ(int_of(fold(Op::Neg, S::UInt32, {5})), 4294967291LL);
}

TEST(ConstEvalInt, DivisionTruncatesTowardZero) {
  EXPECT_EQ(int_of(fold(Op::Idiv, S::Int32, {7, 2})), 3);
  EXPECT_EQ(int_of(fold(Op::Idiv, S::Int32, {-7, 2})), -3);
  EXPECT_EQ(int_of(fold(Op::Idiv, S::Int32, {7, -2})), -3);
  EXPECT_EQ(int_of(fold(Op::Idiv, S::Int32, {-7, -2})), 3);
  EXPECT_EQ(int_of(fold(Op::Idiv, S::Int32, {-1, 5})), 0);
}

TEST(ConstEvalInt, RemainderTakesTheSignOfTheDividend) {
  EXPECT_EQ(int_of(fold(Op::Mod, S::Int32, {7, 3})), 1);
  EXPECT_EQ(int_of(fold(Op::Mod, S::Int32, {-7, 3})), -1);
  EXPECT_EQ(int_of(fold(Op::Mod, S::Int32, {7, -3})), 1);
  EXPECT_EQ(int_of(fold(Op::Mod, S::Int32, {-7, -3})), -1);
  EXPECT_EQ(int_of(fold(Op::Mod, S::Index, {-6, 3})), 0);
}

TEST(ConstEvalInt, UndefinedCasesAreNotFolded) {
  EXPECT_EQ(fold(Op::Idiv, S::Int32, {5, 0}), std::nullopt);
  EXPECT_EQ(fold(Op::Mod, S::Int32, {5, 0}), std::nullopt);
  EXPECT_EQ(fold(Op::Idiv, S::UInt32, {5, 0}), std::nullopt);
  EXPECT_EQ(fold(Op::Mod, S::UInt8, {0, 0}), std::nullopt);
  EXPECT_EQ(fold(Op::Idiv, S::Int32, {kI32Min, -1}), std::nullopt);
  EXPECT_EQ(fold(Op::Mod, S::Int32, {kI32Min, -1}), std::nullopt);
  EXPECT_EQ(fold(Op::Idiv, S::Int8, {-128, -1}), std::nullopt);
  EXPECT_EQ(fold(Op::Idiv, S::Int64, {kI64Min, -1}), std::nullopt);
  // INT32_MIN / -1 is only undefined at 32 bits; in int64 it is an ordinary division.
  EXPECT_EQ(int_of(fold(Op::Idiv, S::Int64, {kI32Min, -1})), -kI32Min);
  EXPECT_EQ(int_of(fold(Op::Idiv, S::Int32, {kI32Min + 1, -1})), kI32Max);
}

TEST(ConstEvalInt, Shifts) {
  EXPECT_EQ(int_of(fold(Op::Shl, S::Int32, {1, 4})), 16);
  EXPECT_EQ(int_of(fold(Op::Shl, S::Int32, {1, 31})), kI32Min);
  EXPECT_EQ(int_of(fold(Op::Shl, S::Int8, {1, 7})), -128);
  EXPECT_EQ(int_of(fold(Op::Shl, S::Int64, {int64_t{1}, int64_t{63}})), kI64Min);
  EXPECT_EQ(int_of(fold(Op::Shr, S::Int32, {-8, 1})), -4); // arithmetic
  EXPECT_EQ(int_of(fold(Op::Shr, S::Int8, {-128, 7})), -1);
  EXPECT_EQ(int_of(fold(Op::Shr, S::UInt32, {kU32Max, 4})), 268435455);
  EXPECT_EQ(int_of(fold(Op::Shr, S::UInt8, {255, 7})), 1);
}

TEST(ConstEvalInt, OverWideAndNegativeShiftsAreNotFolded) {
  EXPECT_EQ(fold(Op::Shl, S::Int32, {1, 32}), std::nullopt);
  EXPECT_EQ(fold(Op::Shr, S::Int32, {1, 32}), std::nullopt);
  EXPECT_EQ(fold(Op::Shl, S::Int32, {1, 100}), std::nullopt);
  EXPECT_EQ(fold(Op::Shl, S::Int8, {1, 8}), std::nullopt);
  EXPECT_EQ(fold(Op::Shl, S::Int64, {int64_t{1}, int64_t{64}}), std::nullopt);
  EXPECT_EQ(fold(Op::Shr, S::UInt16, {1, 16}), std::nullopt);
  EXPECT_EQ(fold(Op::Shl, S::Int32, {1, -1}), std::nullopt);
}

TEST(ConstEvalInt, UnsignedCompareAndDivide) {
  // uint64 values above INT64_MAX travel as negative int64 bit patterns.
  EXPECT_FALSE(bool_of(fold(Op::CmpLt, S::UInt64, {int64_t{-1}, int64_t{1}})));
  EXPECT_TRUE(bool_of(fold(Op::CmpLt, S::UInt64, {int64_t{1}, int64_t{-1}})));
  EXPECT_EQ(int_of(fold(Op::Idiv, S::UInt64, {int64_t{-2}, int64_t{2}})), kI64Max);
  EXPECT_EQ(int_of(fold(Op::Mod, S::UInt64, {int64_t{-1}, int64_t{10}})),
            5); // 2^64-1 = 18446744073709551615
  EXPECT_EQ(int_of(fold(Op::Max, S::UInt64, {int64_t{-1}, int64_t{5}})), -1);
  EXPECT_FALSE(bool_of(fold(Op::CmpLt, S::UInt32, {kU32Max, 1})));
  EXPECT_TRUE(bool_of(fold(Op::CmpLt, S::UInt32, {1, kU32Max})));
  EXPECT_EQ(int_of(fold(Op::Idiv, S::UInt32, {kU32Max, 2})), 2147483647);
  EXPECT_EQ(int_of(fold(Op::Mod, S::UInt32, {kU32Max, 10})), 5);
  EXPECT_EQ(int_of(fold(Op::Max, S::UInt32, {kU32Max, 1})), 4294967295LL);
}

TEST(ConstEvalInt, SignedCompareAndMax) {
  EXPECT_TRUE(bool_of(fold(Op::CmpLt, S::Int32, {-1, 1})));
  EXPECT_FALSE(bool_of(fold(Op::CmpLt, S::Int32, {1, 1})));
  EXPECT_TRUE(bool_of(fold(Op::CmpNe, S::Int32, {1, 2})));
  EXPECT_FALSE(bool_of(fold(Op::CmpNe, S::Int32, {2, 2})));
  EXPECT_TRUE(bool_of(fold(Op::CmpEq, S::Int32, {-3, -3})));
  EXPECT_EQ(int_of(fold(Op::Max, S::Int32, {-3, 2})), 2);
  EXPECT_EQ(int_of(fold(Op::Max, S::Int32, {-3, -7})), -3);
}

TEST(ConstEvalInt, Bitwise) {
  EXPECT_EQ(int_of(fold(Op::And, S::Int32, {12, 10})), 8);
  EXPECT_EQ(int_of(fold(Op::Or, S::Int32, {12, 10})), 14);
  EXPECT_EQ(int_of(fold(Op::Xor, S::Int32, {12, 10})), 6);
  EXPECT_EQ(int_of(fold(Op::And, S::Int8, {-1, 0x0F})), 15);
  EXPECT_EQ(int_of(fold(Op::Xor, S::UInt8, {255, 1})), 254);
}

TEST(ConstEvalInt, BoolOperandsGiveBools) {
  EXPECT_FALSE(bool_of(fold(Op::And, S::Bool, {true, false})));
  EXPECT_TRUE(bool_of(fold(Op::Or, S::Bool, {true, false})));
  EXPECT_FALSE(bool_of(fold(Op::Xor, S::Bool, {true, true})));
  EXPECT_TRUE(bool_of(fold(Op::CmpNe, S::Bool, {true, false})));
  EXPECT_TRUE(bool_of(fold(Op::CmpLt, S::Bool, {false, true})));
}

TEST(ConstEvalInt, MulAccAndWhere) {
  EXPECT_EQ(int_of(fold(Op::MulAcc, S::Int32, {3, 4, 5})), 17);
  EXPECT_EQ(int_of(fold(Op::MulAcc, S::Int8, {100, 2, 1})), -55);
  std::vector<Arg> pick_a = {true, 7, 9};
  std::vector<Arg> pick_b = {false, 7, 9};
  EXPECT_EQ(int_of(const_eval(Op::Where, S::Int32, S::Bool, pick_a)), 7);
  EXPECT_EQ(int_of(const_eval(Op::Where, S::Int32, S::Bool, pick_b)), 9);
  std::vector<Arg> pick_f = {false, 1.5, 2.5};
  EXPECT_EQ(float_of(const_eval(Op::Where, S::Float32, S::Bool, pick_f)), 2.5);
}

TEST(ConstEvalInt, RefusesWhatItCannotEvaluate) {
  EXPECT_EQ(fold(Op::Exp2, S::Int32, {3}), std::nullopt);     // float-only op on ints
  EXPECT_EQ(fold(Op::Add, S::Int32, {1.5, 2}), std::nullopt); // a float arg in an int op
  EXPECT_EQ(fold(Op::Add, S::Int32, {"x", 2}), std::nullopt);
  EXPECT_EQ(fold(Op::Add, S::Int32, {Arg(), 2}), std::nullopt);
  EXPECT_EQ(fold(Op::Load, S::Int32, {1, 2}), std::nullopt);
}

// ---- const_eval on floats ----

TEST(ConstEvalFloat, RoundsToTheResultDtype) {
  EXPECT_EQ(float_of(fold(Op::Add, S::Float32, {0.1, 0.2})), 0.300000011920928955078125);
  EXPECT_EQ(float_of(fold(Op::Add, S::Float64, {0.1, 0.2})), 0.30000000000000004);
  EXPECT_EQ(float_of(fold(Op::Add, S::Float16, {65504.0, 16.0})), INFINITY);
  EXPECT_EQ(float_of(fold(Op::Add, S::Float16, {65504.0, 15.0})), 65504.0);
  // float16(0.1) + float16(0.2) = 0.2999267578125 lies exactly between two float16 values.
  EXPECT_EQ(float_of(fold(Op::Add, S::Float16, {0.0999755859375, 0.199951171875})), 0.2998046875);
  EXPECT_EQ(
      float_of(fold(Op::Mul, S::BFloat16, {1.0 + std::ldexp(1.0, -7), 1.0 + std::ldexp(1.0, -7)})),
      1.0 + std::ldexp(1.0, -6));
}

TEST(ConstEvalFloat, Arithmetic) {
  EXPECT_EQ(float_of(fold(Op::Sub, S::Float32, {1.0, 3.0})), -2.0);
  EXPECT_EQ(float_of(fold(Op::Mul, S::Float32, {1.5, -4.0})), -6.0);
  EXPECT_EQ(float_of(fold(Op::Fdiv, S::Float32, {1.0, 4.0})), 0.25);
  EXPECT_EQ(float_of(fold(Op::Fdiv, S::Float32, {1.0, 0.0})), INFINITY);
  EXPECT_TRUE(std::isnan(float_of(fold(Op::Fdiv, S::Float32, {0.0, 0.0}))));
  EXPECT_EQ(float_of(fold(Op::Pow, S::Float32, {2.0, 10.0})), 1024.0);
  EXPECT_EQ(float_of(fold(Op::Max, S::Float32, {-1.0, 2.0})), 2.0);
  EXPECT_TRUE(std::isnan(float_of(fold(Op::Max, S::Float32, {NAN, 2.0}))));
  EXPECT_TRUE(std::isnan(float_of(fold(Op::Max, S::Float32, {2.0, NAN}))));
  EXPECT_EQ(float_of(fold(Op::MulAcc, S::Float32, {2.0, 3.0, 0.5})), 6.5);
  // Int args of a float op convert to the float value.
  EXPECT_EQ(float_of(fold(Op::Add, S::Float32, {1, 0.5})), 1.5);
}

TEST(ConstEvalFloat, UnaryOps) {
  EXPECT_TRUE(std::signbit(float_of(fold(Op::Neg, S::Float32, {0.0}))));
  EXPECT_EQ(float_of(fold(Op::Neg, S::Float32, {2.5})), -2.5);
  EXPECT_EQ(float_of(fold(Op::Exp2, S::Float32, {3.0})), 8.0);
  EXPECT_EQ(float_of(fold(Op::Log2, S::Float32, {0.125})), -3.0);
  EXPECT_EQ(float_of(fold(Op::Sqrt, S::Float32, {2.0})), 1.41421353816986083984375);
  EXPECT_EQ(float_of(fold(Op::Sqrt, S::Float64, {2.0})), std::sqrt(2.0));
  EXPECT_EQ(float_of(fold(Op::Recip, S::Float32, {4.0})), 0.25);
  EXPECT_EQ(float_of(fold(Op::Recip, S::Float32, {-0.0})), -INFINITY);
  EXPECT_EQ(float_of(fold(Op::Trunc, S::Float32, {-2.7})), -2.0);
  EXPECT_EQ(float_of(fold(Op::Trunc, S::Float32, {2.7})), 2.0);
  EXPECT_EQ(float_of(fold(Op::Sin, S::Float64, {0.0})), 0.0);
}

TEST(ConstEvalFloat, Comparisons) {
  EXPECT_TRUE(bool_of(fold(Op::CmpLt, S::Float32, {-0.5, 0.5})));
  EXPECT_FALSE(bool_of(fold(Op::CmpLt, S::Float32, {NAN, 1.0})));
  EXPECT_FALSE(bool_of(fold(Op::CmpLt, S::Float32, {1.0, NAN})));
  EXPECT_TRUE(bool_of(fold(Op::CmpNe, S::Float32, {NAN, NAN})));
  EXPECT_FALSE(bool_of(fold(Op::CmpEq, S::Float32, {NAN, NAN})));
  EXPECT_TRUE(bool_of(fold(Op::CmpEq, S::Float32, {0.0, -0.0})));
}

TEST(ConstEvalFloat, IntegerOnlyOpsAreNotFolded) {
  EXPECT_EQ(fold(Op::Idiv, S::Float32, {7.0, 2.0}), std::nullopt);
  EXPECT_EQ(fold(Op::Mod, S::Float32, {7.0, 2.0}), std::nullopt);
  EXPECT_EQ(fold(Op::Shl, S::Float32, {1.0, 2.0}), std::nullopt);
  EXPECT_EQ(fold(Op::And, S::Float32, {1.0, 2.0}), std::nullopt);
}

} // namespace
} // namespace beamlab

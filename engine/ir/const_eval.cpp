// Constant evaluation of ALU ops; see const_eval.hpp.
#include "engine/ir/const_eval.hpp"

#include <cmath>
#include <limits>

#include "engine/support/error.hpp"

namespace beamlab {

int64_t wrap_int(int64_t v, DType dtype) {
  int bits = dtype.bits();
  if (bits >= 64) return v;
  auto u = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if (!dtype.is_unsigned() && !dtype.is_bool() && (u >> (bits - 1)) & 1) u |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(u);
}

namespace {

// `v` rounded to nearest-even with `bits` significant bits; normal exponents from 2^min_exp to
// 2^max_exp, gradual underflow below, infinity above. Direct from double, so no double rounding.
double round_to_format(double v, int bits, int min_exp, int max_exp) {
  if (!std::isfinite(v) || v == 0) return v;
  int e = 0;
  std::frexp(v, &e); // |v| = m * 2^e, 0.5 <= m < 1: the leading bit has weight 2^(e-1)
  int quantum_exp = std::max(e - 1, min_exp) - (bits - 1);
  double r = std::ldexp(std::nearbyint(std::ldexp(v, -quantum_exp)), quantum_exp);
  double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - bits), max_exp);
  if (std::fabs(r) > largest) return std::copysign(INFINITY, v);
  return r;
}

} // namespace

double round_float(double v, DType dtype) {
  switch (dtype.scalar()) {
  case Scalar::Float16: return round_to_format(v, 11, -14, 15);
  case Scalar::BFloat16: return round_to_format(v, 8, -126, 127);
  case Scalar::Float32: return static_cast<double>(static_cast<float>(v));
  default: return v;
  }
}

namespace {

using U64 = uint64_t;

int64_t scalar_int(const Arg& a) { return a.kind() == Arg::Kind::Bool ? a.as_bool() : a.as_int(); }

std::optional<int64_t> int_binary(Op op, DType dt, int64_t a, int64_t b) {
  bool is_unsigned = dt.is_unsigned() || dt.is_bool();
  U64 ua = static_cast<U64>(a), ub = static_cast<U64>(b);
  switch (op) {
  // Wrapping arithmetic through unsigned, which C++ defines.
  case Op::Add: return static_cast<int64_t>(ua + ub);
  case Op::Sub: return static_cast<int64_t>(ua - ub);
  case Op::Mul: return static_cast<int64_t>(ua * ub);
  case Op::Idiv:
  case Op::Mod: {
    if (b == 0) return std::nullopt;
    if (is_unsigned) return static_cast<int64_t>(op == Op::Idiv ? ua / ub : ua % ub);
    if (a == dt.int_min() && b == -1) return std::nullopt; // overflows
    return op == Op::Idiv ? a / b : a % b;
  }
  case Op::Max: return is_unsigned ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a, b);
  case Op::CmpLt: return is_unsigned ? ua < ub : a < b;
  case Op::CmpNe: return a != b;
  case Op::CmpEq: return a == b;
  case Op::And: return a & b;
  case Op::Or: return a | b;
  case Op::Xor: return a ^ b;
  case Op::Shl:
  case Op::Shr: {
    if (b < 0 || b >= dt.bits()) return std::nullopt;
    if (op == Op::Shl) return static_cast<int64_t>(ua << b);
    if (is_unsigned) return static_cast<int64_t>(ua >> b);
    return a >> b; // arithmetic shift on signed values
  }
  default: return std::nullopt;
  }
}

std::optional<double> float_unary(Op op, double a) {
  switch (op) {
  case Op::Neg: return -a;
  case Op::Exp2: return std::exp2(a);
  case Op::Log2: return std::log2(a);
  case Op::Sin: return std::sin(a);
  case Op::Sqrt: return std::sqrt(a);
  case Op::Recip: return 1.0 / a;
  case Op::Trunc: return std::trunc(a);
  default: return std::nullopt;
  }
}

std::optional<double> float_binary(Op op, double a, double b) {
  switch (op) {
  case Op::Add: return a + b;
  case Op::Sub: return a - b;
  case Op::Mul: return a * b;
  case Op::Fdiv: return a / b;
  case Op::Max:
    // As LLVM's maximum: NaN propagates and +0.0 is greater than -0.0.
    if (std::isnan(a) || std::isnan(b)) return std::nan("");
    if (a == b) return std::signbit(a) ? b : a;
    return std::max(a, b);
  case Op::Pow: return std::pow(a, b);
  case Op::CmpLt: return a < b;
  case Op::CmpNe: return a != b;
  case Op::CmpEq: return a == b;
  default: return std::nullopt;
  }
}

Arg make_result(DType dt, double f) {
  if (dt.is_bool()) return Arg(f != 0);
  return Arg(round_float(f, dt));
}

Arg make_result(DType dt, int64_t i) {
  if (dt.is_bool()) return Arg(i != 0);
  return Arg(wrap_int(i, dt));
}

} // namespace

std::optional<Arg> const_eval(Op op, DType result_dtype, DType operand_dtype,
                              std::span<const Arg> args) {
  for (const Arg& a : args)
    if (a.kind() != Arg::Kind::Int && a.kind() != Arg::Kind::Float && a.kind() != Arg::Kind::Bool)
      return std::nullopt;
  if (op == Op::Where) {
    if (args.size() != 3) return std::nullopt;
    return scalar_int(args[0]) ? args[1] : args[2];
  }
  if (operand_dtype.is_float()) {
    auto fv = [&](size_t i) {
      return args[i].is_float() ? args[i].as_float() : double(scalar_int(args[i]));
    };
    std::optional<double> r;
    if (args.size() == 1) r = float_unary(op, fv(0));
    if (args.size() == 2) r = float_binary(op, fv(0), fv(1));
    if (args.size() == 3 && op == Op::MulAcc) r = std::fma(fv(0), fv(1), fv(2)); // one rounding
    if (!r) return std::nullopt;
    return make_result(result_dtype, *r);
  }
  for (const Arg& a : args)
    if (a.is_float()) return std::nullopt;
  std::optional<int64_t> r;
  if (args.size() == 1 && op == Op::Neg)
    r = static_cast<int64_t>(-static_cast<U64>(scalar_int(args[0])));
  if (args.size() == 2) r = int_binary(op, operand_dtype, scalar_int(args[0]), scalar_int(args[1]));
  if (args.size() == 3 && op == Op::MulAcc)
    r = static_cast<int64_t>(static_cast<U64>(scalar_int(args[0])) *
                                 static_cast<U64>(scalar_int(args[1])) +
                             static_cast<U64>(scalar_int(args[2])));
  if (!r) return std::nullopt;
  return make_result(result_dtype, *r);
}

} // namespace beamlab

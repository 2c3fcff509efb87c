// Value bounds [vmin, vmax] of integer, index and bool UOps.
//
// Computed once per node when it is interned, from its sources' bounds: the range analysis
// that the symbolic simplifier's division, modulo and comparison rules stand on. Results are
// always sound: when a bound can't be derived, or the exact result would leave the dtype's
// range (and so wrap), the node gets the dtype's full range. Arithmetic runs in 128 bits so
// that computing a bound never overflows.
#include "engine/ir/uop.hpp"

#include <algorithm>
#include <initializer_list>

namespace beamlab {
namespace {

using Wide = __int128;

struct Interval {
  Wide lo, hi;
};

Interval full_range(DType dtype) { return {dtype.int_min(), dtype.int_max()}; }

Interval of(const UOpPtr& u) { return {u->vmin(), u->vmax()}; }

Interval hull(std::initializer_list<Wide> values) { return {std::min(values), std::max(values)}; }

// uint64 nodes carry no usable bounds (see compute_bounds).
bool has_int_bounds(const UOpPtr& u) {
  return (u->dtype().is_int() || u->dtype().is_bool()) && u->dtype().scalar() != Scalar::UInt64;
}

// Smallest 2^k - 1 that is >= v (v >= 0).
Wide all_ones_above(Wide v) {
  Wide m = 0;
  while (m < v) m = m * 2 + 1;
  return m;
}

Interval bool_interval(bool can_be_false, bool can_be_true) {
  return {can_be_false ? 0 : 1, can_be_true ? 1 : 0};
}

Interval comparison_bounds(Op op, const UOpPtr& x, const UOpPtr& y) {
  if (!has_int_bounds(x) || !has_int_bounds(y)) return {0, 1};
  Interval a = of(x), b = of(y);
  bool disjoint = a.hi < b.lo || b.hi < a.lo;
  bool same_point = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
  switch (op) {
  case Op::CmpLt: return bool_interval(a.hi >= b.lo, a.lo < b.hi);
  case Op::CmpNe: return bool_interval(!disjoint, !same_point);
  case Op::CmpEq: return bool_interval(!same_point, !disjoint);
  default: return {0, 1};
  }
}

// Remainder bounds with C semantics: |x % y| < |y| and the sign follows x.
Interval mod_bounds(Interval a, Interval b, DType dtype) {
  if (b.lo <= 0 && b.hi >= 0) return full_range(dtype);
  Wide m = std::max(b.lo < 0 ? -b.lo : b.lo, b.hi < 0 ? -b.hi : b.hi) - 1;
  Wide smallest_divisor = b.lo > 0 ? b.lo : -b.hi;
  if (a.lo >= 0 && a.hi < smallest_divisor) return a; // x % y == x
  if (a.lo >= 0) return {0, std::min(a.hi, m)};
  if (a.hi <= 0) return {std::max(a.lo, -m), 0};
  return {std::max(a.lo, -m), std::min(a.hi, m)};
}

Interval div_bounds(Interval a, Interval b, DType dtype) {
  if (b.lo <= 0 && b.hi >= 0) return full_range(dtype);
  // Truncating division is monotone in each operand while the divisor keeps its sign.
  return hull({a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi});
}

Interval bitwise_bounds(Op op, Interval a, Interval b, DType dtype) {
  if (dtype.is_bool()) {
    if (op == Op::And) return {a.lo & b.lo, a.hi & b.hi};
    if (op == Op::Or) return {a.lo | b.lo, a.hi | b.hi};
    return {0, 1};
  }
  if (a.lo < 0 || b.lo < 0) return full_range(dtype);
  if (op == Op::And) return {0, std::min(a.hi, b.hi)};
  Wide ones = all_ones_above(std::max(a.hi, b.hi));
  if (op == Op::Or) return {std::max(a.lo, b.lo), ones};
  return {0, ones};
}

Interval shift_bounds(Op op, Interval a, Interval b, DType dtype) {
  if (b.lo != b.hi || b.lo < 0 || b.lo >= dtype.bits()) return full_range(dtype);
  auto s = static_cast<int>(b.lo);
  if (op == Op::Shl) return {a.lo * (Wide{1} << s), a.hi * (Wide{1} << s)};
  return {a.lo >> s, a.hi >> s};
}

Interval arg_bounds(const Arg& arg, DType dtype) {
  // DEFINE_VAR's arg is (name, lo, hi); anything else (a malformed graph) gets no bounds.
  if (arg.kind() != Arg::Kind::Tuple || arg.items().size() != 3 || !arg.items()[1].is_int() ||
      !arg.items()[2].is_int() || arg.items()[1].as_int() > arg.items()[2].as_int())
    return full_range(dtype);
  return {arg.items()[1].as_int(), arg.items()[2].as_int()};
}

Interval const_bounds(const Arg& arg, DType dtype) {
  if (arg.kind() == Arg::Kind::Bool) return {arg.as_bool(), arg.as_bool()};
  if (arg.is_int()) return {arg.as_int(), arg.as_int()};
  return full_range(dtype);
}

Interval raw_bounds(Op op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg) {
  auto int_src = [&](size_t i) { return i < src.size() && has_int_bounds(src[i]); };
  switch (op) {
  case Op::Const: return const_bounds(arg, dtype);
  case Op::DefineVar: return arg_bounds(arg, dtype);
  case Op::Range:
  case Op::Special:
    if (!int_src(0)) return full_range(dtype);
    return {0, std::max<Wide>(0, Wide{src[0]->vmax()} - 1)};
  case Op::Vectorize: {
    Interval r{dtype.int_max(), dtype.int_min()};
    for (const UOpPtr& s : src) {
      if (!has_int_bounds(s)) return full_range(dtype);
      r = {std::min<Wide>(r.lo, s->vmin()), std::max<Wide>(r.hi, s->vmax())};
    }
    return r;
  }
  case Op::Gep:
  case Op::Cast: return int_src(0) ? of(src[0]) : full_range(dtype);
  case Op::CmpLt:
  case Op::CmpNe:
  case Op::CmpEq: return comparison_bounds(op, src[0], src[1]);
  case Op::Where:
    if (!int_src(1) || !int_src(2)) return full_range(dtype);
    if (int_src(0) && src[0]->is_known()) return of(src[src[0]->vmin() ? 1 : 2]);
    return hull(
        {Wide{src[1]->vmin()}, Wide{src[2]->vmin()}, Wide{src[1]->vmax()}, Wide{src[2]->vmax()}});
  default: break;
  }
  if (op == Op::Neg && int_src(0)) return {-Wide{src[0]->vmax()}, -Wide{src[0]->vmin()}};
  if (!is_binary_alu(op) || !int_src(0) || !int_src(1)) return full_range(dtype);
  Interval a = of(src[0]), b = of(src[1]);
  switch (op) {
  case Op::Add: return {a.lo + b.lo, a.hi + b.hi};
  case Op::Sub: return {a.lo - b.hi, a.hi - b.lo};
  case Op::Mul: return hull({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
  case Op::Idiv: return div_bounds(a, b, dtype);
  case Op::Mod: return mod_bounds(a, b, dtype);
  case Op::Max: return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  case Op::And:
  case Op::Or:
  case Op::Xor: return bitwise_bounds(op, a, b, dtype);
  case Op::Shl:
  case Op::Shr: return shift_bounds(op, a, b, dtype);
  default: return full_range(dtype);
  }
}

} // namespace

Bounds compute_bounds(Op op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg) {
  // uint64 values above INT64_MAX can't be represented; its ranges are left unknown.
  if (dtype.scalar() == Scalar::UInt64) return {0, dtype.int_max()};
  Interval r = raw_bounds(op, dtype, src, arg);
  Interval full = full_range(dtype);
  // A result outside the dtype's range wraps around, so nothing narrower is sound.
  if (r.lo < full.lo || r.hi > full.hi || r.lo > r.hi) r = full;
  return {static_cast<int64_t>(r.lo), static_cast<int64_t>(r.hi)};
}

} // namespace beamlab

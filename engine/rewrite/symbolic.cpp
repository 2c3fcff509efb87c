// Symbolic integer algebra; see symbolic.hpp. The rules, grouped by the ops they rewrite.
#include "engine/rewrite/symbolic.hpp"

#include <cmath>

#include <algorithm>
#include <bit>
#include <functional>
#include <numeric>

#include "engine/ir/const_eval.hpp"
#include "engine/rewrite/linear_form.hpp"

namespace beamlab {
namespace {

using Wide = __int128;

bool fits(Wide v, DType dt) { return v >= dt.int_min() && v <= dt.int_max(); }

UOpPtr bool_const(bool v) { return UOp::const_bool(v); }

// ---- constant folding -------------------------------------------------------------------

// An integer constant converted to float dtype `to` with one rounding, as the target does.
double int_to_float(int64_t v, bool is_unsigned, DType to) {
  Wide exact = is_unsigned ? Wide{static_cast<uint64_t>(v)} : Wide{v};
  if (to.scalar() == Scalar::Float32)
    return is_unsigned ? double(static_cast<float>(static_cast<uint64_t>(v)))
                       : double(static_cast<float>(v));
  double d = is_unsigned ? static_cast<double>(static_cast<uint64_t>(v)) : static_cast<double>(v);
  if (to.scalar() == Scalar::Float64) return d;
  // float16/bfloat16: if the double is inexact, step it toward zero and set its lowest bit
  // (round to odd); rounding that to the narrow format gives the correctly rounded result.
  auto back = static_cast<Wide>(d); // d is integral and |d| <= 2^64
  if (back != exact) {
    bool too_far = back < 0 ? back < exact : back > exact;
    if (too_far) d = std::nextafter(d, 0.0);
    d = std::bit_cast<double>(std::bit_cast<uint64_t>(d) | 1);
  }
  return round_float(d, to);
}

UOpPtr fold_constants(const Match& m) {
  const UOpPtr& u = m.root;
  if (u->dtype().lanes() != 1) return nullptr;
  std::vector<Arg> args;
  for (const UOpPtr& s : u->src()) args.push_back(s->arg());
  DType operand = u->op() == Op::Where ? u->dtype() : u->src(0)->dtype();
  std::optional<Arg> out = const_eval(u->op(), u->dtype(), operand, args);
  if (!out) return nullptr;
  return UOp::make(Op::Const, u->dtype(), {}, *out);
}

UOpPtr fold_cast(const Match& m) {
  const UOpPtr &u = m.root, &x = m["x"];
  DType to = u->dtype(), from = x->dtype();
  if (to == from) return x;
  if (!x->is_const() || to.lanes() != 1) return nullptr;
  const Arg& a = x->arg();
  if (to.is_bool()) return bool_const(a.is_float() ? a.as_float() != 0 : x->const_value() != 0);
  if (to.is_float() && a.is_float()) return UOp::const_float(to, round_float(a.as_float(), to));
  if (to.is_float())
    return UOp::const_float(to, int_to_float(x->const_value(), from.is_unsigned(), to));
  if (!to.is_int()) return nullptr;
  if (!a.is_float()) return int_const(to, x->const_value());
  // Out-of-range float to int conversion is undefined on the target (and NaN fails every
  // comparison): leave it for the program to hit.
  double t = std::trunc(a.as_float());
  double hi = std::ldexp(1.0, to.is_unsigned() ? to.bits() : to.bits() - 1);
  double lo = to.is_unsigned() ? 0.0 : -hi;
  if (!(t >= lo && t < hi)) return nullptr;
  if (to.is_unsigned()) return int_const(to, static_cast<int64_t>(static_cast<uint64_t>(t)));
  return int_const(to, static_cast<int64_t>(t));
}

// An integer or bool node whose bounds pin its value is that value.
UOpPtr fold_known(const Match& m) {
  const UOpPtr& u = m.root;
  if (!u->is_known() || u->dtype().lanes() != 1) return nullptr;
  if (u->dtype().is_bool()) return bool_const(u->vmin() != 0);
  if (!u->dtype().is_int()) return nullptr;
  return int_const(u->dtype(), u->vmin());
}

// ---- sums and products ------------------------------------------------------------------

UOpPtr canonical_sum(const Match& m) {
  if (!is_symbolic_int(m.root->dtype())) return nullptr;
  UOpPtr out = build(decompose(m.root));
  return out == m.root ? nullptr : out;
}

// x*y for non-constant factors: constants move out ((x*c)*y -> (x*y)*c), factors in order.
UOpPtr canonical_product(const Match& m) {
  const UOpPtr& u = m.root;
  if (!is_symbolic_int(u->dtype())) return nullptr;
  if (u->src(0)->is_const() || u->src(1)->is_const()) return canonical_sum(m);
  for (int i = 0; i < 2; ++i) {
    const UOpPtr& f = u->src(i);
    if (f->op() == Op::Mul && f->src(1)->is_const()) return (f->src(0) * u->src(1 - i)) * f->src(1);
  }
  if (compare_uops(*u->src(1), *u->src(0)) < 0) return u->src(1) * u->src(0);
  return nullptr;
}

// ---- division and remainder by constants ------------------------------------------------

// Floor division for b > 0 (cannot overflow).
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && (a < 0)); }

// Divides out the greatest common divisor of the divisor and every coefficient:
// (g*a)//(g*b) -> a//b and (g*a)%(g*b) -> (a%b)*g, exact for truncating division.
UOpPtr divmod_gcd(Op op, const LinearForm& lf, int64_t c) {
  int64_t g = c;
  for (const LinearTerm& t : lf.terms) g = gcd_magnitude(g, t.coef);
  g = gcd_magnitude(g, lf.constant);
  if (g <= 1) return nullptr;
  LinearForm reduced = lf;
  for (LinearTerm& t : reduced.terms) t.coef /= g;
  reduced.constant /= g;
  UOpPtr small = build(reduced);
  UOpPtr divisor = int_const(lf.dtype, c / g);
  return op == Op::Idiv ? small / divisor : (small % divisor) * g;
}

// Splits x = c*w + r, where w collects c's multiples out of the coefficients at least c (a
// term 59*y with c = 58 leaves y in r) and out of the constant. With truncating division,
// x//c = w + r//c and x%c = r%c hold when r == 0, or when x >= 0 and r >= 0.
UOpPtr divmod_split(Op op, const UOpPtr& x, const LinearForm& lf, int64_t c) {
  // c > 0, so the floor quotient of the constant and c times it fit in int64.
  LinearForm whole{lf.dtype, {}, floor_div(lf.constant, c)};
  LinearForm rest{lf.dtype, {}, static_cast<int64_t>(Wide{lf.constant} - Wide{whole.constant} * c)};
  for (const LinearTerm& t : lf.terms) {
    if (t.coef >= c) whole.terms.push_back({t.base, t.coef / c});
    if (t.coef % c != 0 || t.coef < c)
      rest.terms.push_back({t.base, t.coef < c ? t.coef : t.coef % c});
  }
  if (whole.terms.empty() && whole.constant == 0) return nullptr;
  // The parts are evaluated on their own, so each must be exact too.
  if (!fits_exactly(whole) || !fits_exactly(rest)) return nullptr;
  UOpPtr r = build(rest);
  bool exact = r->is_const() && r->const_value() == 0;
  if (!exact && (x->vmin() < 0 || r->vmin() < 0)) return nullptr;
  if (op == Op::Mod) return r % c;
  return build(whole) + r / c;
}

// Splits x = g*b + r, where g divides c and the coefficients of b's terms, and 0 <= r < g
// holds for every value: then x//c = b//(c/g) and x%c = (b%(c/g))*g + r for x >= 0. A
// flattened index unflattened into a blocked layout, ((o*576 + i) // 9216) with i < 576,
// becomes o // 16. The widest such g is tried first.
UOpPtr divmod_factor(Op op, const UOpPtr& x, const LinearForm& lf, int64_t c) {
  if (x->vmin() < 0) return nullptr;
  std::vector<int64_t> gs;
  for (const LinearTerm& t : lf.terms)
    if (int64_t g = gcd_magnitude(c, t.coef); g > 1 && g < c) gs.push_back(g);
  std::sort(gs.begin(), gs.end(), std::greater<>());
  for (int64_t g : gs) {
    LinearForm b{lf.dtype, {}, 0}, r{lf.dtype, {}, lf.constant};
    for (const LinearTerm& t : lf.terms) {
      if (t.coef % g == 0)
        b.terms.push_back({t.base, t.coef / g});
      else
        r.terms.push_back(t);
    }
    UOpPtr rest = build(r), base = build(b);
    if (rest->vmin() < 0 || rest->vmax() >= g || base->vmin() < 0) continue;
    UOpPtr k = int_const(lf.dtype, c / g);
    return op == Op::Idiv ? base / k : (base % k) * g + rest;
  }
  return nullptr;
}

UOpPtr fold_divmod(const Match& m) {
  const UOpPtr &u = m.root, &x = m["x"];
  DType dt = u->dtype();
  Op op = u->op();
  if (!is_symbolic_int(dt)) return nullptr;
  int64_t c = m["c"]->const_value();
  if (c == 0) return nullptr; // undefined: leave it for the program to hit
  if (c < 0) {
    if (c == dt.int_min()) return nullptr;
    return op == Op::Idiv ? (x / -c) * -1 : x % -c; // C: x/-c == -(x/c), x%-c == x%c
  }
  if (c == 1) return op == Op::Idiv ? x : int_const(dt, 0);
  // Every value of x gives the same quotient.
  if (x->vmin() / c == x->vmax() / c) {
    int64_t q = x->vmin() / c;
    return op == Op::Idiv ? int_const(dt, q) : x - q * c;
  }
  if (op == Op::Idiv && x->op() == Op::Idiv && x->src(1)->is_const() &&
      x->src(1)->const_value() > 0 && fits(Wide{c} * x->src(1)->const_value(), dt))
    return x->src(0) / (c * x->src(1)->const_value());
  if (op == Op::Mod && x->op() == Op::Mod && x->src(1)->is_const() &&
      x->src(1)->const_value() > 0 && x->src(1)->const_value() % c == 0)
    return x->src(0) % c;
  // The identities below hold for integers, not modulo 2^n: x must not wrap.
  LinearForm lf = decompose(x);
  if (!fits_exactly(lf)) return nullptr;
  if (UOpPtr out = divmod_gcd(op, lf, c)) return out;
  if (UOpPtr out = divmod_split(op, x, lf, c)) return out;
  return divmod_factor(op, x, lf, c);
}

// ---- comparisons, max, where --------------------------------------------------------------

// (s + k) < c  ->  s < c - k;  (g*s) < c  ->  s < ceil(c/g); each only when nothing wraps.
UOpPtr fold_less_than(const Match& m) {
  const UOpPtr &x = m["x"], &cst = m["c"];
  DType dt = x->dtype();
  if (!is_symbolic_int(dt)) return nullptr;
  LinearForm lf = decompose(x);
  if (lf.terms.empty()) return nullptr;
  Wide c = cst->const_value();
  if (lf.constant != 0) {
    LinearForm s = lf;
    s.constant = 0;
    UOpPtr sum = build(s);
    Wide k = lf.constant;
    if (!fits(sum->vmin() + k, dt) || !fits(sum->vmax() + k, dt) || !fits(c - k, dt))
      return nullptr;
    return lt(sum, int_const(dt, static_cast<int64_t>(c - k)));
  }
  int64_t g = 0;
  for (const LinearTerm& t : lf.terms) g = gcd_magnitude(g, t.coef);
  if (g <= 1 || lf.terms[0].coef < 0) return nullptr;
  LinearForm s = lf;
  for (LinearTerm& t : s.terms) t.coef /= g;
  UOpPtr small = build(s);
  if (!fits(Wide{small->vmin()} * g, dt) || !fits(Wide{small->vmax()} * g, dt)) return nullptr;
  Wide ceil_div = c >= 0 ? (c + g - 1) / g : -((-c) / g);
  return lt(small, int_const(dt, static_cast<int64_t>(ceil_div)));
}

// (x + k) == c  ->  x == c - k, which holds even when the sum wraps.
UOpPtr fold_equality(const Match& m) {
  const UOpPtr &x = m["x"], &cst = m["c"];
  if (!is_symbolic_int(x->dtype())) return nullptr;
  LinearForm lf = decompose(x);
  if (lf.constant == 0 || lf.terms.empty()) return nullptr;
  int64_t k = lf.constant;
  lf.constant = 0;
  UOpPtr moved =
      int_const(x->dtype(), static_cast<int64_t>(static_cast<uint64_t>(cst->const_value()) -
                                                 static_cast<uint64_t>(k)));
  return alu(m.root->op(), build(lf), moved);
}

UOpPtr fold_max(const Match& m) {
  const UOpPtr &a = m.root->src(0), &b = m.root->src(1);
  if (a == b) return a;
  if (!a->dtype().is_int() || a->dtype().is_unsigned()) return nullptr;
  if (a->vmin() >= b->vmax()) return a;
  if (b->vmin() >= a->vmax()) return b;
  return nullptr;
}

// Commutative ops keep constants on the right and other operands in canonical order.
UOpPtr order_operands(const Match& m) {
  const UOpPtr &a = m.root->src(0), &b = m.root->src(1);
  if (compare_uops(*b, *a) >= 0) return nullptr;
  return alu(m.root->op(), b, a);
}

UOpPtr self_compare(const Match& m) {
  DType dt = m["x"]->dtype();
  if ((!dt.is_int() && !dt.is_bool()) || dt.lanes() != 1) return nullptr; // NaN != NaN
  return bool_const(m.root->op() != Op::CmpLt && m.root->op() != Op::CmpNe);
}

// A gated INDEX: a gate that always holds goes (a partitioned loop's whole tiles); the address
// is simplified given the gate.
UOpPtr simplify_gated_index(const Match& m) {
  const UOpPtr& u = m.root;
  if (u->src().size() != 3) return nullptr;
  if (u->src(2)->is_const() && u->src(2)->const_value() != 0) // a gate that always holds
    return u->replace_src({u->src(0), u->src(1)});
  UOpPtr addr = simplify_given(u->src(1), u->src(2));
  return addr == u->src(1) ? nullptr : u->replace_src({u->src(0), addr, u->src(2)});
}

PatternMatcher build_symbolic() {
  UPat x = UPat::var("x"), c = UPat::cvar("c");
  OpSet alu_ops;
  for (int i = 0; i < kNumOps; ++i)
    if (is_alu(static_cast<Op>(i))) alu_ops.add(static_cast<Op>(i));
  OpSet int_like = alu_ops;
  int_like.add(Op::Cast);
  return PatternMatcher({
      // all-constant ALU ops evaluate now
      {UPat(alu_ops, {UPat::cvar()}, UPat::SrcMode::Each), fold_constants},
      // a value pinned by its bounds is a constant
      {UPat::ops(int_like), fold_known},
      {UPat(Op::Cast, {x}), fold_cast},
      // x op x
      {alu_pat(Op::CmpLt, {x, x}), self_compare},
      {alu_pat(Op::CmpNe, {x, x}), self_compare},
      {alu_pat(Op::CmpEq, {x, x}), self_compare},
      {alu_pat(Op::And, {x, x}), [](const Match& m) { return m["x"]; }},
      {alu_pat(Op::Or, {x, x}), [](const Match& m) { return m["x"]; }},
      {alu_pat(Op::Xor, {x, x}).dtype_if([](DType dt) { return dt.lanes() == 1; }),
       [](const Match& m) { return UOp::const_like(m["x"]->dtype(), 0); }},
      {UPat(Op::Where, {UPat::var(), x, x}), [](const Match& m) { return m["x"]; }},
      // bool and/or with a constant
      {alu_pat(Op::And, {x, c}).dtypes({Scalar::Bool}),
       [](const Match& m) { return m["c"]->const_value() ? m["x"] : m["c"]; }},
      {alu_pat(Op::Or, {x, c}).dtypes({Scalar::Bool}),
       [](const Match& m) { return m["c"]->const_value() ? m["c"] : m["x"]; }},
      // where with a known condition
      {UPat(Op::Where, {c, UPat::var("a"), UPat::var("b")}),
       [](const Match& m) { return m["c"]->const_value() ? m["a"] : m["b"]; }},
      // sums, differences, negations and constant products as canonical linear forms
      {UPat::ops({Op::Add, Op::Sub, Op::Neg}), canonical_sum},
      {UPat::ops({Op::Mul}), canonical_product},
      // division and remainder by a constant
      {UPat(Op::Idiv, {x, c}), fold_divmod},
      {UPat(Op::Mod, {x, c}), fold_divmod},
      // comparisons against constants
      {UPat(Op::CmpLt, {x, c}), fold_less_than},
      {UPat(Op::CmpEq, {x, c}), fold_equality},
      {UPat(Op::CmpNe, {x, c}), fold_equality},
      // max decided by bounds
      {UPat::ops({Op::Max}), fold_max},
      // a gated address under its gate
      {UPat::ops({Op::Index}), simplify_gated_index},
      // canonical operand order of the other commutative ops
      {UPat::ops({Op::Max, Op::And, Op::Or, Op::Xor, Op::CmpNe, Op::CmpEq}), order_operands},
  });
}

} // namespace

const PatternMatcher& pm_symbolic() {
  static const PatternMatcher pm = build_symbolic();
  return pm;
}

UOpPtr simplify(const UOpPtr& u) {
  return graph_rewrite(u, pm_symbolic(), {}, {.name = "symbolic", .spec = &spec_scalar()});
}

UOpPtr simplify_kernel(const UOpPtr& u) {
  return graph_rewrite(u, pm_symbolic(), {}, {.name = "symbolic", .spec = &spec_kernel()});
}

} // namespace beamlab

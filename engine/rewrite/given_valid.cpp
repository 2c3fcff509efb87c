// Simplification of a gated address under its gate; see symbolic.hpp.
//
// A padded or windowed access computes its address with divisions and remainders that only
// fold when the gate's bounds are known: the remainder in (r*58 + c) % 200704 vanishes once
// the gate says 0 <= r, c < 56. The gate is split into clauses `E < k` and `k < E` over linear
// expressions E; a division or remainder whose operand contains a multiple of some clause's E
// is bounded with the clause's interval in E's place, and folds when that pins the quotient of
// its part that c does not divide.
// tinygrad's uop_given_valid does the same with substituted variables.
#include <algorithm>
#include <unordered_map>

#include "engine/ir/printer.hpp"
#include "engine/rewrite/linear_form.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

using Wide = __int128;

// E's non-constant part lies in [lo, hi] whenever the gate holds.
struct Clause {
  std::vector<LinearTerm> terms;
  Wide lo, hi;
};

bool same_terms(const std::vector<LinearTerm>& a, const std::vector<LinearTerm>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) {
           return x.base == y.base && x.coef == y.coef;
         });
}

// Adds the bound `E <= k` (upper) or `E >= k` to `out`, for E a symbolic integer expression.
void add_bound(const UOpPtr& e, int64_t k, bool upper, std::vector<Clause>& out) {
  if (!is_symbolic_int(e->dtype())) return;
  LinearForm lf = decompose(e);
  if (lf.terms.empty() || !fits_exactly(lf)) return;
  Wide bound = Wide{k} - lf.constant;
  auto it = std::find_if(out.begin(), out.end(),
                         [&](const Clause& c) { return same_terms(c.terms, lf.terms); });
  if (it == out.end()) {
    LinearForm rest = lf;
    rest.constant = 0;
    UOpPtr sum = build(rest);
    out.push_back({lf.terms, sum->vmin(), sum->vmax()});
    it = out.end() - 1;
  }
  if (upper)
    it->hi = std::min(it->hi, bound);
  else
    it->lo = std::max(it->lo, bound);
}

void split_clauses(const UOpPtr& gate, std::vector<Clause>& out) {
  if (gate->op() == Op::And && gate->dtype() == DType(Scalar::Bool)) {
    split_clauses(gate->src(0), out);
    split_clauses(gate->src(1), out);
  } else if (gate->op() == Op::CmpLt && gate->src(1)->is_const()) {
    add_bound(gate->src(0), gate->src(1)->const_value() - 1, true, out); // E < k
  } else if (gate->op() == Op::CmpLt && gate->src(0)->is_const()) {
    add_bound(gate->src(1), gate->src(0)->const_value() + 1, false, out); // k < E
  }
}

// The coefficient of `base` in `terms`, 0 if absent.
int64_t coef_of(const std::vector<LinearTerm>& terms, const UOp* base) {
  for (const LinearTerm& t : terms)
    if (t.base.get() == base) return t.coef;
  return 0;
}

// Bounds of `lf` when the gate holds: each clause whose terms appear in `lf` as a multiple
// m*E is taken out and bounded by m times the clause's interval.
std::pair<Wide, Wide> bounds_given(LinearForm lf, const std::vector<Clause>& clauses) {
  Wide lo = lf.constant, hi = lf.constant;
  for (const Clause& c : clauses) {
    int64_t first = coef_of(lf.terms, c.terms[0].base.get());
    if (first == 0 || first % c.terms[0].coef != 0) continue;
    int64_t m = first / c.terms[0].coef;
    bool multiple = std::all_of(c.terms.begin(), c.terms.end(), [&](const LinearTerm& t) {
      return Wide{coef_of(lf.terms, t.base.get())} == Wide{m} * t.coef;
    });
    if (!multiple) continue;
    std::erase_if(lf.terms,
                  [&](const LinearTerm& t) { return coef_of(c.terms, t.base.get()) != 0; });
    lo += m > 0 ? m * c.lo : m * c.hi;
    hi += m > 0 ? m * c.hi : m * c.lo;
  }
  for (const LinearTerm& t : lf.terms) {
    Wide a = Wide{t.coef} * t.base->vmin(), b = Wide{t.coef} * t.base->vmax();
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return {lo, hi};
}

Wide floor_div(Wide a, Wide b) { return a / b - (a % b != 0 && a < 0); }

// x // c or x % c (c > 0) when the gate holds, if it folds: with x >= 0, x = c*w + r where w
// takes the terms c divides, and r's bounds within one multiple of c: x // c = w + q and
// x % c = r - q*c for that q.
UOpPtr fold_given(Op op, const UOpPtr& x, int64_t c, const std::vector<Clause>& clauses) {
  LinearForm lf = decompose(x);
  if (!fits_exactly(lf) || bounds_given(lf, clauses).first < 0) return nullptr;
  LinearForm w{lf.dtype, {}, 0}, r{lf.dtype, {}, lf.constant};
  for (const LinearTerm& t : lf.terms) {
    if (t.coef % c == 0)
      w.terms.push_back({t.base, t.coef / c});
    else
      r.terms.push_back(t);
  }
  auto [lo, hi] = bounds_given(r, clauses);
  Wide q = floor_div(lo, c);
  if (q != floor_div(hi, c) || !fits_exactly(w) || !fits_exactly(r)) return nullptr;
  DType dt = x->dtype();
  if (op == Op::Idiv) return build(w) + int_const(dt, static_cast<int64_t>(q));
  return build(r) - int_const(dt, static_cast<int64_t>(q * c));
}

} // namespace

UOpPtr simplify_given(const UOpPtr& addr, const UOpPtr& gate) {
  // Runs on every gated INDEX the simplifier visits: most have no division to fold.
  std::vector<UOpPtr> nodes = toposort(addr);
  if (std::none_of(nodes.begin(), nodes.end(),
                   [](const UOpPtr& u) { return u->op() == Op::Idiv || u->op() == Op::Mod; }))
    return addr;
  std::vector<Clause> clauses;
  split_clauses(gate, clauses);
  if (clauses.empty()) return addr;
  std::unordered_map<const UOp*, UOpPtr> done;
  bool changed = false;
  for (const UOpPtr& u : nodes) {
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : u->src()) src.push_back(done.at(s.get()));
    UOpPtr out = u->replace_src(std::move(src));
    bool divmod = (u->op() == Op::Idiv || u->op() == Op::Mod) && out->src(1)->is_const() &&
                  out->src(1)->const_value() > 0 && is_symbolic_int(u->dtype());
    if (divmod)
      if (UOpPtr folded = fold_given(u->op(), out->src(0), out->src(1)->const_value(), clauses)) {
        out = folded;
        changed = true;
      }
    done.emplace(u.get(), std::move(out));
  }
  return changed ? simplify_kernel(done.at(addr.get())) : addr;
}

} // namespace beamlab

// Linear forms; see linear_form.hpp.
#include "engine/rewrite/linear_form.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>

#include "engine/ir/const_eval.hpp"

namespace beamlab {

bool is_symbolic_int(DType dt) { return dt.is_int() && !dt.is_unsigned() && dt.lanes() == 1; }

UOpPtr int_const(DType dtype, int64_t v) { return UOp::const_int(dtype, wrap_int(v, dtype)); }

namespace {

int64_t wrap_mul(int64_t a, int64_t b, DType dt) {
  return wrap_int(static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)), dt);
}
int64_t wrap_add(int64_t a, int64_t b, DType dt) {
  return wrap_int(static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)), dt);
}

template <class T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int compare_args(const Arg& a, const Arg& b) {
  if (a.kind() != b.kind()) return three_way(a.kind(), b.kind());
  switch (a.kind()) {
  case Arg::Kind::None: return 0;
  case Arg::Kind::Bool: return three_way(a.as_bool(), b.as_bool());
  case Arg::Kind::Int: return three_way(a.as_int(), b.as_int());
  case Arg::Kind::Float:
    return three_way(std::bit_cast<uint64_t>(a.as_float()), std::bit_cast<uint64_t>(b.as_float()));
  case Arg::Kind::Str:
    return a.as_str().compare(b.as_str()) < 0 ? -1 : (a.as_str() == b.as_str() ? 0 : 1);
  case Arg::Kind::Op: return three_way(a.as_op(), b.as_op());
  case Arg::Kind::Tuple: {
    const auto &x = a.items(), &y = b.items();
    for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
      if (int c = compare_args(x[i], y[i])) return c;
    return three_way(x.size(), y.size());
  }
  }
  return 0;
}

// A constant factor of a product: x*c or c*x.
const UOp* const_factor(const UOpPtr& u, UOpPtr& other) {
  if (u->op() != Op::Mul) return nullptr;
  if (u->src(1)->is_const()) return other = u->src(0), u->src(1).get();
  if (u->src(0)->is_const()) return other = u->src(1), u->src(0).get();
  return nullptr;
}

// Flattens `u * scale` into terms (unmerged) and the constant.
void collect(const UOpPtr& root, LinearForm& lf) {
  DType dt = lf.dtype;
  std::vector<std::pair<UOpPtr, int64_t>> work = {{root, 1}};
  while (!work.empty()) {
    auto [u, scale] = std::move(work.back());
    work.pop_back();
    if (u->dtype() != dt) {
      lf.terms.push_back({u, scale});
      continue;
    }
    UOpPtr other;
    switch (u->op()) {
    case Op::Const:
      lf.constant = wrap_add(lf.constant, wrap_mul(u->const_value(), scale, dt), dt);
      continue;
    case Op::Add:
      work.emplace_back(u->src(1), scale);
      work.emplace_back(u->src(0), scale);
      continue;
    case Op::Sub:
      work.emplace_back(u->src(1), wrap_mul(scale, -1, dt));
      work.emplace_back(u->src(0), scale);
      continue;
    case Op::Neg: work.emplace_back(u->src(0), wrap_mul(scale, -1, dt)); continue;
    default: break;
    }
    if (const UOp* c = const_factor(u, other)) {
      work.emplace_back(other, wrap_mul(scale, c->const_value(), dt));
      continue;
    }
    lf.terms.push_back({u, scale});
  }
}

// Sums the coefficients of equal bases and drops zero terms, in canonical order.
void merge(LinearForm& lf) {
  // Equal bases merge below, so their relative order does not matter.
  std::sort(lf.terms.begin(), lf.terms.end(), [](const LinearTerm& a, const LinearTerm& b) {
    return compare_uops(*a.base, *b.base) < 0;
  });
  std::vector<LinearTerm> merged;
  for (LinearTerm& t : lf.terms) {
    if (!merged.empty() && merged.back().base == t.base)
      merged.back().coef = wrap_add(merged.back().coef, t.coef, lf.dtype);
    else
      merged.push_back(std::move(t));
  }
  std::erase_if(merged, [](const LinearTerm& t) { return t.coef == 0; });
  lf.terms = std::move(merged);
}

bool is_divmod_by(const UOpPtr& u, Op op, const UOpPtr& x, int64_t c) {
  return u->op() == op && u->src(0) == x && u->src(1)->is_const() && u->src(1)->const_value() == c;
}

// One recombination of division and remainder terms, if any applies:
//   (x//c)*(c*k) + (x%c)*k  ->  x*k        (x = c*(x//c) + x%c, truncating or not)
//   x*k - (x//c)*(c*k)      ->  (x%c)*k
bool recombine_divmod(LinearForm& lf) {
  DType dt = lf.dtype;
  for (size_t i = 0; i < lf.terms.size(); ++i) {
    const UOpPtr& q = lf.terms[i].base;
    if (q->op() != Op::Idiv || !q->src(1)->is_const() || q->src(1)->const_value() <= 0) continue;
    const UOpPtr& x = q->src(0);
    int64_t c = q->src(1)->const_value();
    for (size_t j = 0; j < lf.terms.size(); ++j) {
      const LinearTerm& t = lf.terms[j];
      bool is_rem =
          is_divmod_by(t.base, Op::Mod, x, c) && wrap_mul(t.coef, c, dt) == lf.terms[i].coef;
      bool is_whole = t.base == x && wrap_mul(t.coef, -c, dt) == lf.terms[i].coef;
      if (!is_rem && !is_whole) continue;
      LinearTerm replacement{is_rem ? x : alu(Op::Mod, x, int_const(dt, c)), t.coef};
      lf.terms.erase(lf.terms.begin() + static_cast<std::ptrdiff_t>(std::max(i, j)));
      lf.terms.erase(lf.terms.begin() + static_cast<std::ptrdiff_t>(std::min(i, j)));
      lf.terms.push_back(std::move(replacement));
      return true;
    }
  }
  return false;
}

} // namespace

namespace {

// Compares the nodes themselves, not their sources.
int compare_headers(const UOp& a, const UOp& b) {
  if (a.is_const() != b.is_const()) return a.is_const() ? 1 : -1;
  if (a.op() != b.op()) return three_way(a.op(), b.op());
  if (a.dtype() != b.dtype()) return a.dtype().str() < b.dtype().str() ? -1 : 1;
  return compare_args(a.arg(), b.arg());
}

} // namespace

int compare_uops(const UOp& a, const UOp& b) {
  // Lexicographic over (header, sources...), depth first on an explicit stack: graphs can be
  // deeper than the call stack.
  struct Pair {
    const UOp* a;
    const UOp* b;
    size_t next;
  };
  std::vector<Pair> stack = {{&a, &b, 0}};
  while (!stack.empty()) {
    Pair& p = stack.back();
    if (p.next == 0) {
      if (p.a == p.b) {
        stack.pop_back();
        continue;
      }
      if (int c = compare_headers(*p.a, *p.b)) return c;
    }
    size_t common = std::min(p.a->src().size(), p.b->src().size());
    if (p.next < common) {
      size_t i = p.next++;
      stack.push_back({p.a->src(i).get(), p.b->src(i).get(), 0});
      continue;
    }
    if (int c = three_way(p.a->src().size(), p.b->src().size())) return c;
    stack.pop_back();
  }
  return 0;
}

LinearForm decompose(const UOpPtr& u) {
  LinearForm lf{u->dtype(), {}, 0};
  collect(u, lf);
  merge(lf);
  while (recombine_divmod(lf)) merge(lf);
  return lf;
}

bool fits_exactly(const LinearForm& lf) {
  using Wide = __int128;
  Wide lo = lf.constant, hi = lf.constant;
  for (const LinearTerm& t : lf.terms) {
    Wide a = Wide{t.coef} * t.base->vmin(), b = Wide{t.coef} * t.base->vmax();
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return lo >= lf.dtype.int_min() && hi <= lf.dtype.int_max();
}

int64_t gcd_magnitude(int64_t a, int64_t b) {
  auto mag = [](int64_t v) {
    return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  };
  uint64_t g = std::gcd(mag(a), mag(b));
  return g > static_cast<uint64_t>(INT64_MAX) ? 0 : static_cast<int64_t>(g);
}

UOpPtr build(const LinearForm& lf) {
  UOpPtr sum;
  for (const LinearTerm& t : lf.terms) {
    UOpPtr term = t.coef == 1 ? t.base : t.base * int_const(lf.dtype, t.coef);
    sum = sum ? sum + term : term;
  }
  if (!sum) return int_const(lf.dtype, lf.constant);
  if (lf.constant != 0) sum = sum + int_const(lf.dtype, lf.constant);
  return sum;
}

} // namespace beamlab

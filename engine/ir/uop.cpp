// UOp construction and interning; see uop.hpp.
#include "engine/ir/uop.hpp"

#include <limits>
#include <mutex>
#include <unordered_map>

#include "engine/support/error.hpp"

namespace beamlab {

// The intern table: hash -> weak references to the live nodes with that hash. It is the one
// process-wide cache of the IR; it is allocated once and never freed, so nodes held by static
// objects can still be released at exit.
struct InternTable {
  std::mutex mutex;
  std::unordered_multimap<uint64_t, std::weak_ptr<const UOp>> nodes;
};

namespace {

InternTable& intern_table() {
  static auto* table = new InternTable(); // NOLINT: intentionally immortal, see above
  return *table;
}

uint64_t structural_hash(Op op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg) {
  StableHasher h;
  h.add_str(op_name(op)).add_str(dtype.str());
  arg.hash_into(h);
  h.add_u64(src.size());
  for (const UOpPtr& s : src) h.add_u64(s->hash());
  return h.finish();
}

// Releasing a node releases its sources; a long chain would recurse once per node and could
// overflow the stack. The outermost release on a thread keeps a local list of the sources of
// dying nodes and releases them in a loop; nested releases only append to it. The list is
// reached through a raw thread_local pointer, which has no destructor, so releases that run
// during exit (nodes held by static objects) never touch a destroyed thread_local.
thread_local std::vector<UOpPtr>* t_pending_release = nullptr;

} // namespace

void release_uop(const UOp* u) {
  {
    InternTable& table = intern_table();
    std::lock_guard lock(table.mutex);
    auto [lo, hi] = table.nodes.equal_range(u->hash());
    for (auto it = lo; it != hi;) it = it->second.expired() ? table.nodes.erase(it) : std::next(it);
  }
  auto* node = const_cast<UOp*>(u); // NOLINT: we are its last owner
  std::vector<UOpPtr> sources = std::move(node->src_);
  delete node;
  if (t_pending_release) {
    for (UOpPtr& s : sources) t_pending_release->push_back(std::move(s));
    return;
  }
  std::vector<UOpPtr> pending = std::move(sources);
  t_pending_release = &pending;
  while (!pending.empty()) {
    UOpPtr last = std::move(pending.back());
    pending.pop_back();
    last.reset();
  }
  t_pending_release = nullptr;
}

UOp::UOp(Op op, DType dtype, std::vector<UOpPtr> src, Arg arg, uint64_t hash)
    : op_(op), dtype_(dtype), src_(std::move(src)), arg_(std::move(arg)), hash_(hash) {
  vmin_ = std::numeric_limits<int64_t>::min();
  vmax_ = std::numeric_limits<int64_t>::max();
  if (dtype_.is_int() || dtype_.is_bool()) {
    Bounds b = compute_bounds(op_, dtype_, src_, arg_);
    vmin_ = b.lo;
    vmax_ = b.hi;
  }
}

UOp::~UOp() = default;

bool UOp::same_as(Op op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg) const {
  return op_ == op && dtype_ == dtype && src_ == src && arg_ == arg;
}

UOpPtr UOp::make(Op op, DType dtype, std::vector<UOpPtr> src, Arg arg) {
  Arity arity = op_arity(op);
  internal_assert(static_cast<int>(src.size()) >= arity.min &&
                  (arity.max < 0 || static_cast<int>(src.size()) <= arity.max))
      << op_name(op) << " takes " << arity.min << ".." << arity.max << " sources, got "
      << src.size();
  for (const UOpPtr& s : src) internal_assert(s) << op_name(op) << " with a null source";
  uint64_t h = structural_hash(op, dtype, src, arg);
  InternTable& table = intern_table();
  // Nodes locked while searching must be dropped after the mutex is released: dropping the
  // last reference runs release_uop, which takes the mutex. `seen` outlives `lock`.
  std::vector<UOpPtr> seen;
  std::lock_guard lock(table.mutex);
  auto [lo, hi] = table.nodes.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    UOpPtr live = it->second.lock();
    if (live && live->same_as(op, dtype, src, arg)) return live;
    if (live) seen.push_back(std::move(live));
  }
  UOpPtr node(new UOp(op, dtype, std::move(src), std::move(arg), h), release_uop);
  table.nodes.emplace(h, node);
  return node;
}

size_t live_uop_count() {
  InternTable& table = intern_table();
  std::lock_guard lock(table.mutex);
  size_t n = 0;
  for (const auto& [h, w] : table.nodes) n += !w.expired();
  return n;
}

UOpPtr UOp::replace_src(std::vector<UOpPtr> src) const {
  if (src == src_) return ptr();
  return make(op_, dtype_, std::move(src), arg_);
}

UOpPtr UOp::const_int(DType dtype, int64_t v) {
  internal_assert(dtype.is_int() && dtype.lanes() == 1) << "const_int of " << dtype.str();
  return make(Op::Const, dtype, {}, Arg(v));
}

UOpPtr UOp::const_float(DType dtype, double v) {
  internal_assert(dtype.is_float() && dtype.lanes() == 1) << "const_float of " << dtype.str();
  return make(Op::Const, dtype, {}, Arg(v));
}

UOpPtr UOp::const_bool(bool v) { return make(Op::Const, Scalar::Bool, {}, Arg(v)); }

UOpPtr UOp::const_like(DType dtype, double v) {
  if (dtype.is_float()) return const_float(dtype, v);
  if (dtype.is_bool()) return const_bool(v != 0);
  return const_int(dtype, static_cast<int64_t>(v));
}

UOpPtr UOp::variable(const std::string& name, int64_t lo, int64_t hi, DType dtype) {
  internal_assert(lo <= hi) << "variable " << name << " with empty range [" << lo << ", " << hi
                            << "]";
  return make(Op::DefineVar, dtype, {}, Arg{Arg(name), Arg(lo), Arg(hi)});
}

UOpPtr UOp::range(const UOpPtr& end, int64_t axis_id) {
  return make(Op::Range, end->dtype(), {end}, Arg(axis_id));
}

int64_t UOp::const_value() const {
  internal_assert(is_const()) << op_name(op_) << " is not a constant";
  return arg_.kind() == Arg::Kind::Bool ? arg_.as_bool() : arg_.as_int();
}

UOpPtr alu(Op op, const UOpPtr& a) { return UOp::make(op, a->dtype(), {a}); }

UOpPtr alu(Op op, const UOpPtr& a, const UOpPtr& b) {
  DType out = is_comparison(op) ? DType(Scalar::Bool).vec(a->dtype().lanes()) : a->dtype();
  return UOp::make(op, out, {a, b});
}

UOpPtr alu(Op op, const UOpPtr& a, const UOpPtr& b, const UOpPtr& c) {
  DType out = op == Op::Where ? b->dtype() : a->dtype();
  return UOp::make(op, out, {a, b, c});
}

namespace {
UOpPtr lit(const UOpPtr& like, int64_t v) { return UOp::const_like(like->dtype(), double(v)); }
UOpPtr int_lit(const UOpPtr& like, int64_t v) {
  // Through const_int, not const_like, so 64-bit values don't round through a double.
  return like->dtype().is_int() ? UOp::const_int(like->dtype(), v) : lit(like, v);
}
} // namespace

UOpPtr operator+(const UOpPtr& a, const UOpPtr& b) { return alu(Op::Add, a, b); }
UOpPtr operator+(const UOpPtr& a, int64_t b) { return a + int_lit(a, b); }
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b) { return alu(Op::Sub, a, b); }
UOpPtr operator-(const UOpPtr& a, int64_t b) { return a - int_lit(a, b); }
UOpPtr operator-(const UOpPtr& a) { return alu(Op::Neg, a); }
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b) { return alu(Op::Mul, a, b); }
UOpPtr operator*(const UOpPtr& a, int64_t b) { return a * int_lit(a, b); }
UOpPtr operator/(const UOpPtr& a, const UOpPtr& b) {
  return alu(a->dtype().is_float() ? Op::Fdiv : Op::Idiv, a, b);
}
UOpPtr operator/(const UOpPtr& a, int64_t b) { return a / int_lit(a, b); }
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b) { return alu(Op::Mod, a, b); }
UOpPtr operator%(const UOpPtr& a, int64_t b) { return a % int_lit(a, b); }
UOpPtr maximum(const UOpPtr& a, const UOpPtr& b) { return alu(Op::Max, a, b); }
UOpPtr minimum(const UOpPtr& a, const UOpPtr& b) { return -maximum(-a, -b); }
UOpPtr lt(const UOpPtr& a, const UOpPtr& b) { return alu(Op::CmpLt, a, b); }
UOpPtr lt(const UOpPtr& a, int64_t b) { return lt(a, int_lit(a, b)); }
UOpPtr ne(const UOpPtr& a, const UOpPtr& b) { return alu(Op::CmpNe, a, b); }
UOpPtr eq(const UOpPtr& a, const UOpPtr& b) { return alu(Op::CmpEq, a, b); }
UOpPtr where(const UOpPtr& c, const UOpPtr& a, const UOpPtr& b) { return alu(Op::Where, c, a, b); }
UOpPtr cast(const UOpPtr& a, DType to) { return UOp::make(Op::Cast, to, {a}); }
UOpPtr sink(std::vector<UOpPtr> src) { return UOp::make(Op::Sink, Scalar::Void, std::move(src)); }

} // namespace beamlab

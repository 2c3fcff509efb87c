// Applying Opts to kernel ASTs; see opt.hpp.
#include "engine/opt/opt.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <functional>
#include <iterator>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

constexpr std::string_view kOpNames[] = {"UPCAST", "UNROLL", "THREAD", "GROUP",
                                         "TILE",   "SWAP",   "PADTO",  "PACK"};

// A loop's iterations; for a symbolic extent, the most it can be: what scratch around a symbolic
// loop is laid out for. A split of a symbolic loop (split_symbolic) uses the expression.
int64_t extent_of(const UOp& range) { return max_extent(range); }

// Every node of `root` with `range` replaced by `value`, except in REDUCE range lists, where it
// is replaced by `parts` (the loops that now run its iterations).
UOpPtr replace_range(const UOpPtr& root, const UOp* range, const std::vector<UOpPtr>& parts,
                     const UOpPtr& value) {
  std::unordered_map<const UOp*, UOpPtr> done;
  for (const UOpPtr& u : toposort(root)) {
    if (u.get() == range) {
      done.emplace(u.get(), value);
      continue;
    }
    std::vector<UOpPtr> src;
    for (size_t i = 0; i < u->src().size(); ++i) {
      const UOpPtr& s = u->src(i);
      if (u->op() == Op::Reduce && i > 0 && s.get() == range)
        src.insert(src.end(), parts.begin(), parts.end());
      else
        src.push_back(done.at(s.get()));
    }
    done.emplace(u.get(), u->replace_src(std::move(src)));
  }
  return done.at(root.get());
}

// The row-major position of `ranges` (the last varies fastest) in a buffer of their extents.
UOpPtr linear_index(const std::vector<UOpPtr>& ranges) {
  UOpPtr lin = UOp::const_int(Scalar::Index, 0);
  int64_t stride = 1;
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
    lin = lin + *it * stride;
    stride *= extent_of(**it);
  }
  return lin;
}

// The RANGEs reachable from `u`.
std::vector<UOpPtr> ranges_below(const UOpPtr& u) {
  std::vector<UOpPtr> out;
  for (const UOpPtr& n : toposort(u))
    if (n->op() == Op::Range) out.push_back(n);
  return out;
}

class KernelState {
public:
  explicit KernelState(const UOpPtr& ast) : ast_(ast), inputs_(input_slots(ast)) {
    for (const UOpPtr& u : toposort(ast)) {
      if (u->op() == Op::Range) loops_.push_back({u, loop_kind(*u)});
      if (u->op() == Op::DefineGlobal)
        buffer_count_ = std::max<int64_t>(buffer_count_, u->arg().as_int() + 1);
    }
    std::sort(loops_.begin(), loops_.end(), [](const Loop& a, const Loop& b) {
      if (is_lane(a.kind) != is_lane(b.kind)) return is_lane(b.kind);
      return a.range->arg().items()[0].as_int() < b.range->arg().items()[0].as_int();
    });
  }

  Expected<void> apply(const Opt& o) {
    std::string name = to_string(o);
    auto reject = [&](const std::string& why) -> Expected<void> {
      return make_unexpected(name + ": " + why);
    };
    if (o.op == OptOp::Pack) return pack(o.axis, o.arg, reject);
    std::vector<size_t> axes = addressable();
    auto axis_ok = [&](int64_t a) { return a >= 0 && a < static_cast<int64_t>(axes.size()); };
    if (!axis_ok(o.axis))
      return reject("axis " + std::to_string(o.axis) + " is out of range (the kernel has " +
                    std::to_string(axes.size()) + " loop and reduce axes)");
    size_t at = axes[static_cast<size_t>(o.axis)];
    LoopKind kind = loops_[at].kind;
    int64_t n = extent_of(*loops_[at].range);
    if (o.op == OptOp::Swap) {
      if (!axis_ok(o.arg) || o.arg == o.axis)
        return reject("the second axis must be another axis of the kernel");
      size_t other = axes[static_cast<size_t>(o.arg)];
      // Two loops, or two loops of one reduction (their nesting order: a convolution's taps
      // outside its channels keeps the padding masks out of the inner loop).
      LoopKind other_kind = loops_[other].kind;
      bool loops = kind == LoopKind::Loop && other_kind == LoopKind::Loop;
      bool reduces = kind == LoopKind::Reduce && other_kind == LoopKind::Reduce &&
                     same_reduction(loops_[at].range, loops_[other].range);
      if (!loops && !reduces)
        return reject("SWAP exchanges two loop axes or two reduce axes of one reduction");
      std::swap(loops_[at], loops_[other]);
      renumber();
      return {};
    }
    int64_t amt = o.arg;
    if (amt < 2) return reject("the amount must be at least 2");
    bool has_parallel = std::any_of(loops_.begin(), loops_.end(),
                                    [](const Loop& l) { return l.kind == LoopKind::Parallel; });
    if (symbolic_extent(*loops_[at].range))
      return split_symbolic(o, at, has_parallel,
                            "axis " + std::to_string(o.axis) + " runs to a symbolic extent (" +
                                extent_label(*loops_[at].range) + ", at most " + std::to_string(n) +
                                ")",
                            reject);
    if (o.op == OptOp::Padto) return pad_to(at, amt, kind, reject);
    if (n % amt != 0)
      return reject("the axis has " + std::to_string(n) + " iterations, not a multiple of " +
                    std::to_string(amt));
    switch (o.op) {
    case OptOp::Upcast:
    case OptOp::Unroll: {
      LoopKind want = o.op == OptOp::Upcast ? LoopKind::Loop : LoopKind::Reduce;
      if (kind != want)
        return reject(o.op == OptOp::Upcast
                          ? "UPCAST applies to loop axes (UNROLL to reduce axes)"
                          : "UNROLL applies to reduce axes (UPCAST to loop axes)");
      KernelState before = *this;
      split(at, n / amt, kind, at, amt,
            o.op == OptOp::Upcast ? LoopKind::Upcast : LoopKind::Unroll);
      if (int64_t wide = lanes(); wide > kMaxOptLanes) {
        *this = std::move(before);
        return reject("the kernel would have " + std::to_string(wide) + " lanes, more than " +
                      std::to_string(kMaxOptLanes));
      }
      return {};
    }
    case OptOp::Thread:
      if (kind != LoopKind::Loop) return reject("THREAD applies to loop axes");
      split(at, amt, LoopKind::Parallel, has_parallel ? 1 : 0, n / amt, LoopKind::Loop);
      merge_parallel();
      return {};
    case OptOp::Tile: {
      if (kind != LoopKind::Loop) return reject("TILE applies to loop axes");
      if (amt == n) return reject("a tile of the whole axis changes nothing");
      size_t first = has_parallel ? 1 : 0;
      split(at, n / amt, LoopKind::Loop, first, amt, LoopKind::Loop);
      return {};
    }
    case OptOp::Group: return group(at, amt, kind, has_parallel, reject);
    case OptOp::Swap:
    case OptOp::Padto:
    case OptOp::Pack: break;
    }
    internal_error << "unhandled opt";
    return {};
  }

  OptimizedKernel result() const {
    OptimizedKernel k;
    k.stages = packs_;
    k.main = k.stages.size();
    k.stages.push_back(ast_);
    if (combine_) k.stages.push_back(combine_);
    k.scratch = scratch_;
    for (const Loop& l : loops_)
      k.axes.push_back({extent_of(*l.range), l.kind, symbolic_extent(*l.range)});
    k.lanes = lanes();
    return k;
  }

private:
  struct Loop {
    UOpPtr range;
    LoopKind kind;
  };

  // True when some REDUCE runs over both ranges.
  bool same_reduction(const UOpPtr& a, const UOpPtr& b) const {
    for (const UOpPtr& u : toposort(ast_)) {
      if (u->op() != Op::Reduce) continue;
      auto has = [&](const UOpPtr& r) {
        return std::find(u->src().begin() + 1, u->src().end(), r) != u->src().end();
      };
      if (has(a) && has(b)) return true;
    }
    return false;
  }

  std::vector<size_t> addressable() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < loops_.size(); ++i)
      if (!is_lane(loops_[i].kind)) out.push_back(i);
    return out;
  }

  // The widest vector a node of the kernel can have: the product of the lane axes (upcast and
  // unroll ranges) it varies with. A REDUCE no longer varies with its own ranges, so sibling
  // reductions (softmax's max inside its sum's body, hoisted) don't multiply; a reduction whose
  // body reads another's unroll axis (a 1x1 conv under a window's taps) does.
  int64_t lanes() const {
    auto is_lane_range = [](const UOp& u) { return u.op() == Op::Range && is_lane(loop_kind(u)); };
    std::unordered_map<const UOp*, std::vector<const UOp*>> varies; // sorted lane ranges
    int64_t widest = 1;
    for (const UOpPtr& u : toposort(ast_)) {
      std::vector<const UOp*> mine;
      if (is_lane_range(*u)) mine.push_back(u.get());
      for (const UOpPtr& s : u->src()) {
        const std::vector<const UOp*>& theirs = varies[s.get()];
        std::vector<const UOp*> both;
        std::set_union(mine.begin(), mine.end(), theirs.begin(), theirs.end(),
                       std::back_inserter(both));
        mine = std::move(both);
      }
      if (u->op() == Op::Reduce)
        std::erase_if(mine, [&](const UOp* r) {
          return std::any_of(u->src().begin() + 1, u->src().end(),
                             [&](const UOpPtr& own) { return own.get() == r; });
        });
      int64_t n = 1;
      for (const UOp* r : mine) n *= extent_of(*r);
      widest = std::max(widest, n);
      varies[u.get()] = std::move(mine);
    }
    return widest;
  }

  UOpPtr fresh_range(const UOpPtr& extent, LoopKind kind) {
    return kernel_range(extent, 1'000'000 + next_fresh_++, kind);
  }
  UOpPtr fresh_range(int64_t extent, LoopKind kind) {
    return fresh_range(UOp::const_int(Scalar::Index, extent), kind);
  }

  // Splits loop `at` into an outer loop (placed at `outer_pos` among the other loops) and an
  // inner one (in the split loop's place, or, if it is lanes, first among the lane axes, so
  // the first UPCAST, the heuristic's store-contiguous one, stays the innermost lane axis); a
  // part of extent 1 is left out. Returns the outer loop.
  UOpPtr split(size_t at, int64_t outer_extent, LoopKind outer_kind, size_t outer_pos,
               int64_t inner_extent, LoopKind inner_kind) {
    return split(at, UOp::const_int(Scalar::Index, outer_extent), outer_kind, outer_pos,
                 UOp::const_int(Scalar::Index, inner_extent), inner_kind);
  }
  // The same with extents that may be symbolic (a symbolic axis padded to a multiple: one part
  // is the constant amount, the other the expression).
  UOpPtr split(size_t at, const UOpPtr& outer_extent, LoopKind outer_kind, size_t outer_pos,
               const UOpPtr& inner_extent, LoopKind inner_kind) {
    UOpPtr old = loops_[at].range;
    UOpPtr outer = outer_extent->vmax() > 1 ? fresh_range(outer_extent, outer_kind) : nullptr;
    UOpPtr inner = inner_extent->vmax() > 1 ? fresh_range(inner_extent, inner_kind) : nullptr;
    std::vector<UOpPtr> parts;
    UOpPtr value = UOp::const_int(Scalar::Index, 0);
    if (outer) {
      parts.push_back(outer);
      value = outer * inner_extent;
    }
    if (inner) {
      parts.push_back(inner);
      value = value + inner;
    }
    ast_ = simplify_kernel(replace_range(ast_, old.get(), parts, simplify_kernel(value)));
    loops_.erase(loops_.begin() + static_cast<std::ptrdiff_t>(at));
    size_t inner_at = at;
    if (outer) {
      size_t pos = std::min(outer_pos, loops_.size());
      loops_.insert(loops_.begin() + static_cast<std::ptrdiff_t>(pos), {outer, outer_kind});
      if (pos <= inner_at) ++inner_at;
    }
    if (inner) {
      if (is_lane(inner_kind))
        loops_.insert(std::find_if(loops_.begin(), loops_.end(),
                                   [](const Loop& l) { return is_lane(l.kind); }),
                      {inner, inner_kind});
      else
        loops_.insert(loops_.begin() + static_cast<std::ptrdiff_t>(inner_at), {inner, inner_kind});
    }
    renumber();
    return outer ? loops_[std::min(outer_pos, loops_.size() - 1)].range : nullptr;
  }

  // Gives every loop the axis id of its position, and its kind.
  void renumber() {
    std::unordered_map<const UOp*, UOpPtr> map;
    for (size_t i = 0; i < loops_.size(); ++i) {
      Loop& l = loops_[i];
      UOpPtr r = kernel_range(l.range->src(0), static_cast<int64_t>(i), l.kind);
      if (r != l.range) map.emplace(l.range.get(), r);
      l.range = r;
    }
    ast_ = substitute(ast_, map);
  }

  template <class Reject>
  Expected<void> group(size_t at, int64_t amt, LoopKind kind, bool has_parallel,
                       const Reject& reject) {
    if (kind != LoopKind::Reduce) return reject("GROUP applies to reduce axes");
    if (combine_) return reject("the kernel is already grouped");
    std::vector<UOpPtr> reduces;
    for (const UOpPtr& u : toposort(ast_))
      if (u->op() == Op::Reduce) reduces.push_back(u);
    if (reduces.size() != 1) return reject("GROUP needs a kernel with exactly one reduction");
    UOpPtr red = reduces[0];
    if (red->dtype().lanes() != 1) return reject("GROUP needs a scalar reduction");
    // The loops the reduction's result varies with, in nesting order.
    std::unordered_set<const UOp*> own;
    for (size_t i = 1; i < red->src().size(); ++i) own.insert(red->src(i).get());
    std::vector<UOpPtr> outside;
    std::vector<UOpPtr> below = ranges_below(red);
    for (const Loop& l : loops_) {
      if (!own.count(l.range.get()) &&
          std::find(below.begin(), below.end(), l.range) != below.end())
        outside.push_back(l.range);
    }
    int64_t per_group = 1;
    for (const UOpPtr& r : outside) per_group *= extent_of(*r);
    UOpPtr scratch =
        buffer_param(buffer_count_ + static_cast<int64_t>(scratch_.size()), red->dtype());
    scratch_.push_back({red->dtype(), amt * per_group});
    auto slot_of = [&](const UOpPtr& g) {
      return simplify_kernel(g * per_group + linear_index(outside));
    };
    // The combining stage: the kernel with the reduction reading the partial results.
    int64_t max_id = 0;
    for (const Loop& l : loops_) max_id = std::max(max_id, l.range->arg().items()[0].as_int());
    UOpPtr g2 = kernel_range(amt, max_id + 1, LoopKind::Reduce);
    UOpPtr partials = load(index(scratch, slot_of(g2)), red->dtype());
    combine_ = simplify_kernel(
        substitute(ast_, {{red.get(), reduce_over(partials, {g2}, reduce_op_of(*red))}}));
    // The partial stage: each group reduces its share into its scratch slot.
    // (The group index is a placeholder until the split makes the group loop.)
    UOpPtr placeholder = UOp::variable("group", 0, amt - 1);
    ast_ = sink({store(index(scratch, slot_of(placeholder)), red)});
    UOpPtr g = split(at, amt, LoopKind::Parallel, has_parallel ? 1 : 0,
                     extent_of(*loops_[at].range) / amt, LoopKind::Reduce);
    // Each group reduces only its share: the group loop is not one of the REDUCE's loops.
    std::unordered_map<const UOp*, UOpPtr> ungroup{{placeholder.get(), g}};
    for (const UOpPtr& u : toposort(ast_))
      if (u->op() == Op::Reduce) {
        std::vector<UOpPtr> src;
        for (const UOpPtr& s : u->src())
          if (s != g) src.push_back(s);
        ungroup.emplace(u.get(), u->replace_src(std::move(src)));
      }
    ast_ = simplify_kernel(substitute(ast_, ungroup));
    // Loops the partial stage no longer has (the output's other loops) are dropped.
    std::vector<UOpPtr> present = ranges_below(ast_);
    std::erase_if(loops_, [&](const Loop& l) {
      return std::find(present.begin(), present.end(), l.range) == present.end();
    });
    renumber();
    merge_parallel();
    return {};
  }

  // A kernel runs one parallel range, split into contiguous chunks across the cores: a second
  // one (THREAD or GROUP on a kernel already parallel) is folded into the first, the first
  // varying slowest, so THREAD over channels and then rows splits channels x rows.
  void merge_parallel() {
    if (loops_.size() < 2 || loops_[0].kind != LoopKind::Parallel ||
        loops_[1].kind != LoopKind::Parallel)
      return;
    UOpPtr outer = loops_[0].range, inner = loops_[1].range;
    internal_assert(!symbolic_extent(*outer) && !symbolic_extent(*inner))
        << "a parallel range of symbolic extent"; // THREAD's chunk count is constant
    int64_t inner_extent = extent_of(*inner);
    UOpPtr both = fresh_range(extent_of(*outer) * inner_extent, LoopKind::Parallel);
    ast_ = simplify_kernel(
        substitute(ast_, {{outer.get(), both / inner_extent}, {inner.get(), both % inner_extent}}));
    loops_.erase(loops_.begin(), loops_.begin() + 2);
    loops_.insert(loops_.begin(), {both, LoopKind::Parallel});
    renumber();
  }

  // PADTO: the loop runs to a multiple of `amt`; every memory access that moves with it is
  // gated by the loop being inside its old extent, so the extra iterations compute values that
  // are never stored from loads that never happen.
  template <class Reject>
  Expected<void> pad_to(size_t at, int64_t amt, LoopKind kind, const Reject& reject) {
    if (kind != LoopKind::Loop) return reject("PADTO applies to loop axes");
    UOpPtr old = loops_[at].range;
    int64_t n = extent_of(*old), padded = (n + amt - 1) / amt * amt;
    if (padded == n) return reject("the axis has " + std::to_string(n) + " iterations already");
    if (padded > 2 * n)
      return reject("padding " + std::to_string(n) + " iterations to " + std::to_string(padded) +
                    " would more than double the work");
    if (divides_by_computed()) return reject(kComputedDivisor);
    pad_and_gate(at, UOp::const_int(Scalar::Index, padded), UOp::const_int(Scalar::Index, n));
    return {};
  }

  // An integer division by a loaded value, or by one that moves with a loop, could trap in an
  // extra iteration of a padded loop; a variable's (a symbolic shape's) can't where its range
  // keeps it positive.
  static constexpr const char* kComputedDivisor =
      "the kernel divides by a computed integer, which an extra iteration could make zero";
  bool divides_by_computed() const {
    for (const UOpPtr& u : toposort(ast_)) {
      if ((u->op() != Op::Idiv && u->op() != Op::Mod) || u->src(1)->is_const()) continue;
      if (u->src(1)->vmin() <= 0) return true;
      for (const UOpPtr& d : toposort(u->src(1)))
        if (d->op() == Op::Range || d->op() == Op::Load) return true;
    }
    return false;
  }

  // Loop `at` runs to `padded` (at least its extent `n`); every memory access that moves with
  // it is gated by the loop being below `n`. With `clamp_reads`, a read where that says yes
  // reads at the clamped position min(loop, n - 1) instead, ungated: what an extra iteration
  // computes is never stored, and an ungated read keeps its plain load (a matmul's row read as
  // a broadcast operand of its FMAs, not selected per step: 1.7-1.9x). A reduce loop's extra
  // iterations add the reduction's identity (0 for a sum, -inf for a max), not what they read.
  void pad_and_gate(size_t at, const UOpPtr& padded, const UOpPtr& n,
                    const std::function<bool(const UOp& index)>& clamp_reads = nullptr) {
    UOpPtr old = loops_[at].range;
    UOpPtr range = fresh_range(padded, loops_[at].kind);
    UOpPtr inside = lt(range, n);
    UOpPtr clamped = where(inside, range, simplify_kernel(n - 1));
    std::unordered_map<const UOp*, UOpPtr> done;
    std::unordered_set<const UOp*> moves; // nodes that vary with the loop
    for (const UOpPtr& u : toposort(ast_)) {
      if (u.get() == old.get()) {
        done.emplace(u.get(), range);
        moves.insert(u.get());
        continue;
      }
      // A reduction over the loop is the same at every iteration of it: it doesn't move.
      bool over = u->op() == Op::Reduce &&
                  std::find(u->src().begin() + 1, u->src().end(), old) != u->src().end();
      std::vector<UOpPtr> src;
      for (const UOpPtr& s : u->src()) {
        src.push_back(done.at(s.get()));
        if (moves.contains(s.get()) && !over) moves.insert(u.get());
      }
      UOpPtr out = u->replace_src(std::move(src));
      if (u->op() == Op::Index && moves.contains(u.get())) {
        UOpPtr gate = out->src().size() > 2 ? alu(Op::And, out->src(2), inside) : inside;
        out = index(out->src(0), out->src(1), gate);
      }
      if (u->op() == Op::Load && moves.contains(u->src(0).get()) && clamp_reads &&
          clamp_reads(*u->src(0))) {
        // The read's own index (and gate) at the clamped position; its ordering sources kept.
        std::vector<UOpPtr> read = out->src();
        read[0] = substitute(u->src(0), {{old.get(), clamped}});
        out = u->replace_src(std::move(read));
      }
      if (over) {
        std::vector<UOpPtr> src = out->src();
        src[0] = where(inside, src[0], reduce_identity(u->arg().as_op(), src[0]->dtype()));
        out = out->replace_src(std::move(src));
      }
      done.emplace(u.get(), std::move(out));
    }
    ast_ = simplify_kernel(done.at(ast_.get()));
    loops_[at].range = range;
    renumber();
  }

  // UPCAST, THREAD or TILE by `o.arg` of a loop axis of symbolic extent n, or UNROLL of a
  // reduce axis: the loop runs to n rounded up to a multiple, gated past n (as PADTO's; a
  // reduction's extra iterations add its identity), then splits into the constant amount and
  // ceil(n / amount) (THREAD: that many chunks of ceil(n / amount) iterations each).
  template <class Reject>
  Expected<void> split_symbolic(const Opt& o, size_t at, bool has_parallel, const std::string& what,
                                const Reject& reject) {
    LoopKind kind = loops_[at].kind;
    bool loop_split = o.op == OptOp::Upcast || o.op == OptOp::Thread || o.op == OptOp::Tile;
    bool reduce_split = o.op == OptOp::Unroll;
    if (!(kind == LoopKind::Loop && loop_split) && !(kind == LoopKind::Reduce && reduce_split))
      return reject(what + "; of the splits only UPCAST, THREAD and TILE of a loop axis and "
                           "UNROLL of a reduce axis apply to one (rounded up and gated)");
    if (divides_by_computed()) return reject(kComputedDivisor);
    int64_t amt = o.arg;
    UOpPtr n = loops_[at].range->src(0);
    UOpPtr parts = simplify_kernel((n + (amt - 1)) / amt);
    KernelState before = *this;
    // Reads are clamped, not gated, except the contiguous ones an UPCAST or UNROLL makes vectors
    // of (a masked vector load costs what a plain one does).
    UOpPtr old = loops_[at].range;
    bool vectors = o.op == OptOp::Upcast || o.op == OptOp::Unroll;
    pad_and_gate(at, simplify_kernel(parts * amt), n,
                 [&](const UOp& index) { return !vectors || stride_of(index.src(1), old) != 1; });
    UOpPtr whole = UOp::const_int(Scalar::Index, amt);
    switch (o.op) {
    case OptOp::Upcast:
    case OptOp::Unroll:
      split(at, parts, kind, at, whole,
            o.op == OptOp::Upcast ? LoopKind::Upcast : LoopKind::Unroll);
      if (int64_t wide = lanes(); wide > kMaxOptLanes) {
        *this = std::move(before);
        return reject("the kernel would have " + std::to_string(wide) + " lanes, more than " +
                      std::to_string(kMaxOptLanes));
      }
      return {};
    case OptOp::Thread:
      split(at, whole, LoopKind::Parallel, has_parallel ? 1 : 0, parts, LoopKind::Loop);
      merge_parallel();
      return {};
    default:
      split(at, parts, LoopKind::Loop, has_parallel ? 1 : 0, whole, LoopKind::Loop);
      return {};
    }
  }

  // PACK: input `input` is copied, before the kernel, into a scratch buffer laid out in the
  // kernel's loop order (the loops its index uses, outermost first, lanes last), and the kernel
  // reads the copy: each step of the inner loops then reads the next contiguous piece (matmul's
  // B as panels [N/32][K][32] under a 32-column tile, where B's rows a whole power of two apart
  // alias in the caches), and a padded read's gate moves into the copy.
  template <class Reject>
  Expected<void> pack(int64_t input, int64_t arg, const Reject& reject) {
    if (arg != 0) return reject("PACK's second number must be 0");
    if (input < 0 || input >= static_cast<int64_t>(inputs_.size()))
      return reject("input " + std::to_string(input) + " is out of range (the kernel reads " +
                    std::to_string(inputs_.size()) + " buffers)");
    int64_t slot = inputs_[static_cast<size_t>(input)];
    std::vector<UOpPtr> reads; // the INDEXes loaded from the input
    DType element = Scalar::Void;
    for (const UOpPtr& u : toposort(ast_))
      if (u->op() == Op::Load && u->src(0)->op() == Op::Index &&
          u->src(0)->src(0)->arg().as_int() == slot &&
          std::find(reads.begin(), reads.end(), u->src(0)) == reads.end()) {
        reads.push_back(u->src(0));
        element = u->dtype();
      }
    if (reads.empty()) return reject("input " + std::to_string(input) + " is packed already");
    if (reads.size() > 1)
      return reject("input " + std::to_string(input) + " is read at " +
                    std::to_string(reads.size()) + " places; PACK copies a buffer read at one");
    const UOpPtr& read = reads[0];
    std::vector<UOpPtr> used = ranges_below(read);
    if (std::any_of(used.begin(), used.end(), [](const UOpPtr& r) { return symbolic_extent(*r); }))
      return reject("input " + std::to_string(input) +
                    " is read along a loop of symbolic extent; PACK copies fixed shapes");
    for (const UOpPtr& u : toposort(read))
      if (u->src().empty() && u->op() != Op::Range && u->op() != Op::Const && u != read->src(0))
        return reject("the input's index depends on more than the kernel's loops");
    std::vector<Loop> order; // the loops the read uses, in nesting order
    for (const Loop& l : loops_)
      if (std::find(used.begin(), used.end(), l.range) != used.end()) order.push_back(l);
    int64_t size = 1;
    for (const Loop& l : order) size *= extent_of(*l.range);
    int64_t span = read->src(1)->vmax() - read->src(1)->vmin() + 1;
    if (order.empty() || size > 2 * span)
      return reject("the copy would hold " + std::to_string(size) + " elements for " +
                    std::to_string(span) + " read; PACK copies no more than twice the data");
    UOpPtr scratch = buffer_param(buffer_count_ + static_cast<int64_t>(scratch_.size()), element);
    scratch_.push_back({element, size});
    auto linear = [](const std::vector<UOpPtr>& ranges) {
      return simplify_kernel(linear_index(ranges));
    };
    // The copy: the same loops, nested as the input lies in memory (its largest strides
    // outside: reading B's rows whole, not down its columns a page a step: 3x), the outermost
    // across the cores, lanes still lanes and innermost.
    std::vector<size_t> nest(order.size());
    std::iota(nest.begin(), nest.end(), size_t{0});
    std::vector<int64_t> strides;
    for (const Loop& l : order)
      strides.push_back(std::abs(stride_of(read->src(1), l.range).value_or(0)));
    std::sort(nest.begin(), nest.end(), [&](size_t a, size_t b) {
      if (is_lane(order[a].kind) != is_lane(order[b].kind)) return is_lane(order[b].kind);
      if (!is_lane(order[a].kind) && strides[a] != strides[b]) return strides[a] > strides[b];
      return a < b;
    });
    std::vector<UOpPtr> mine(order.size()), theirs;
    std::unordered_map<const UOp*, UOpPtr> to_copy;
    for (size_t depth = 0; depth < nest.size(); ++depth) {
      const Loop& l = order[nest[depth]];
      LoopKind kind = is_lane(l.kind) ? LoopKind::Upcast
                      : depth == 0    ? LoopKind::Parallel
                                      : LoopKind::Loop;
      mine[nest[depth]] = kernel_range(extent_of(*l.range), static_cast<int64_t>(depth), kind);
    }
    for (size_t i = 0; i < order.size(); ++i) {
      theirs.push_back(order[i].range);
      to_copy.emplace(order[i].range.get(), mine[i]);
    }
    UOpPtr copied = load(substitute(read, to_copy), element);
    packs_.push_back(simplify_kernel(sink({store(index(scratch, linear(mine)), copied)})));
    ast_ = simplify_kernel(substitute(ast_, {{read.get(), index(scratch, linear(theirs))}}));
    return {};
  }

  static Op reduce_op_of(const UOp& red) { return red.arg().as_op(); }

  UOpPtr ast_;
  UOpPtr combine_;
  std::vector<UOpPtr> packs_;   ///< PACK's copies, run before the kernel
  std::vector<int64_t> inputs_; ///< the buffer slots the kernel reads, in order
  std::vector<ScratchBuffer> scratch_;
  std::vector<Loop> loops_;
  int64_t buffer_count_ = 0;
  int64_t next_fresh_ = 0;
};

} // namespace

std::string_view opt_op_name(OptOp op) { return kOpNames[static_cast<int>(op)]; }

std::string to_string(const Opt& opt) {
  std::ostringstream os;
  os << opt_op_name(opt.op) << '(' << opt.axis << ',' << opt.arg << ')';
  return os.str();
}

std::string to_string(const std::vector<Opt>& opts) {
  std::string out;
  for (const Opt& o : opts) out += (out.empty() ? "" : " ") + to_string(o);
  return out;
}

Expected<std::vector<Opt>> parse_opts(std::string_view text) {
  std::vector<Opt> out;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',' || text[i] == '\t')) ++i;
  };
  skip();
  while (i < text.size()) {
    size_t open = text.find('(', i), close = text.find(')', i);
    std::string_view token =
        text.substr(i, close == std::string_view::npos ? text.npos : close + 1 - i);
    auto bad = [&](const std::string& why) {
      return make_unexpected("bad opt '" + std::string(token) + "': " + why +
                             " (expected e.g. UPCAST(1,16) THREAD(0,2))");
    };
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
      return bad("missing parentheses");
    std::string_view name = text.substr(i, open - i);
    auto it = std::find(std::begin(kOpNames), std::end(kOpNames), name);
    if (it == std::end(kOpNames))
      return bad("unknown op; the ops are UPCAST UNROLL THREAD GROUP TILE SWAP PADTO PACK");
    std::string_view args = text.substr(open + 1, close - open - 1);
    size_t comma = args.find(',');
    if (comma == std::string_view::npos) return bad("needs two integers");
    int64_t a = 0, b = 0;
    auto pa = std::from_chars(args.data(), args.data() + comma, a);
    auto pb = std::from_chars(args.data() + comma + 1, args.data() + args.size(), b);
    if (pa.ec != std::errc{} || pa.ptr != args.data() + comma || pb.ec != std::errc{} ||
        pb.ptr != args.data() + args.size() || a < 0 || a > 1000)
      return bad("needs two integers");
    out.push_back({static_cast<OptOp>(it - std::begin(kOpNames)), static_cast<int>(a), b});
    i = close + 1;
    skip();
  }
  return out;
}

Expected<OptimizedKernel> apply_opts(const UOpPtr& ast, const std::vector<Opt>& opts) {
  KernelState k(ast);
  for (const Opt& o : opts)
    if (Expected<void> ok = k.apply(o); !ok) return make_unexpected(ok.error());
  return k.result();
}

int64_t threads_worth(int64_t work, int threads) {
  if (threads <= 1 || work < 2 * kThreadGrain) return 1;
  return std::clamp<int64_t>(work / kThreadGrain, 1, threads);
}

bool ParallelProfile::fills() const { return used >= worth && balance >= kMinBalance; }

ParallelProfile parallel_profile(const OptimizedKernel& k, int threads) {
  int64_t chunks = 1, work = 1;
  for (const Axis& a : k.axes) {
    work *= a.extent;
    if (a.kind == LoopKind::Parallel) chunks *= a.extent;
  }
  return parallel_profile(chunks, work, threads);
}

ParallelProfile parallel_profile(int64_t chunks, int64_t work, int threads) {
  ParallelProfile p;
  p.threads = std::max(threads, 1);
  p.chunks = std::max<int64_t>(chunks, 1);
  p.work = work;
  p.used = std::min<int64_t>(p.threads, p.chunks);
  p.per_thread = (p.chunks + p.used - 1) / p.used;
  p.balance = static_cast<double>(p.chunks) / static_cast<double>(p.used * p.per_thread);
  p.worth = threads_worth(p.work, p.threads);
  return p;
}

std::vector<Axis> kernel_axes(const UOpPtr& ast) { return KernelState(ast).result().axes; }

std::vector<int64_t> input_slots(const UOpPtr& ast) {
  std::vector<int64_t> slots;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Op::Load && u->src(0)->op() == Op::Index)
      slots.push_back(u->src(0)->src(0)->arg().as_int());
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

std::optional<int64_t> stride_of(const UOpPtr& idx, const UOpPtr& range) {
  UOpPtr diff = simplify_kernel(substitute(idx, {{range.get(), range + 1}}) - idx);
  if (!diff->is_const()) return std::nullopt;
  return diff->const_value();
}

} // namespace beamlab

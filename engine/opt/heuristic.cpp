// The default Opt list (what a kernel runs with before any search), and the search's action
// menu.
//
// The heuristic reads the kernel's memory accesses: for each axis, the stride with which each
// LOAD and the STORE move when the axis steps by one. Then, as tinygrad's hand-coded
// optimizations do for CPUs:
//   * a kernel with no loop worth running in parallel (a full reduction) is GROUPed across the
//     cores;
//   * the loop axis the STORE walks contiguously is UPCAST to a vector register's width;
//   * in a reduction kernel, one more loop axis that some LOAD of the reduction's loop doesn't
//     move along (data reused from registers: matmul's rows) is UPCAST to make a register tile;
//   * a reduce axis some LOAD walks contiguously is UNROLLed to vector width, unless a register
//     tile was made;
//   * the outermost loop runs across the cores (THREAD).
#include <algorithm>
#include <optional>

#include "engine/ir/printer.hpp"
#include "engine/opt/opt.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

struct AxisAccess {
  int64_t extent = 0;
  AxisKind kind = AxisKind::Loop;
  std::optional<int64_t> store_stride;
  std::vector<std::optional<int64_t>> load_strides;
};

// How far `idx` moves when `range` steps by one, if that is a constant.
std::optional<int64_t> stride_of(const UOpPtr& idx, const UOpPtr& range) {
  UOpPtr stepped = substitute(idx, {{range.get(), range + 1}});
  UOpPtr diff = simplify_kernel(stepped - idx);
  if (!diff->is_const()) return std::nullopt;
  return diff->const_value();
}

// The addressable axes of stage 0 and how the kernel's memory accesses move along them.
std::vector<AxisAccess> accesses(const OptimizedKernel& k) {
  std::vector<UOpPtr> ranges, loads, stores;
  for (const UOpPtr& u : toposort(k.stages[0])) {
    if (u->op() == Op::Range) ranges.push_back(u);
    if (u->op() == Op::Load && u->src(0)->op() == Op::Index) loads.push_back(u->src(0)->src(1));
    if (u->op() == Op::Store) stores.push_back(u->src(0)->src(1));
  }
  std::sort(ranges.begin(), ranges.end(), [](const UOpPtr& a, const UOpPtr& b) {
    return a->arg().items()[0].as_int() < b->arg().items()[0].as_int();
  });
  std::vector<AxisAccess> out;
  for (const UOpPtr& r : ranges) {
    AxisAccess a;
    a.extent = r->src(0)->const_value();
    const std::string& kind = r->arg().items()[1].as_str();
    if (kind == "upcast" || kind == "unroll") continue;
    a.kind = kind == "reduce"     ? AxisKind::Reduce
             : kind == "parallel" ? AxisKind::Parallel
                                  : AxisKind::Loop;
    if (!stores.empty()) a.store_stride = stride_of(stores[0], r);
    for (const UOpPtr& l : loads) a.load_strides.push_back(stride_of(l, r));
    out.push_back(a);
  }
  return out;
}

std::optional<int64_t> largest_divisor(int64_t n, std::initializer_list<int64_t> menu) {
  for (int64_t d : menu)
    if (d <= n && n % d == 0) return d;
  return std::nullopt;
}

class Planner {
public:
  Planner(const UOpPtr& ast) : ast_(ast) { refresh(); }

  bool try_apply(Opt o) {
    std::vector<Opt> next = opts_;
    next.push_back(o);
    Expected<OptimizedKernel> k = apply_opts(ast_, next);
    if (!k) return false;
    opts_ = std::move(next);
    kernel_ = std::move(*k);
    axes_ = accesses(kernel_);
    return true;
  }

  const std::vector<AxisAccess>& axes() const { return axes_; }
  const std::vector<Opt>& opts() const { return opts_; }

private:
  void refresh() {
    kernel_ = *apply_opts(ast_, {});
    axes_ = accesses(kernel_);
  }
  UOpPtr ast_;
  std::vector<Opt> opts_;
  OptimizedKernel kernel_;
  std::vector<AxisAccess> axes_;
};

int itemsize_of_output(const UOpPtr& ast) {
  for (const UOpPtr& u : ast->src())
    if (u->op() == Op::Store) return std::max(1, u->src(1)->dtype().scalar_type().itemsize());
  return 4;
}

} // namespace

std::vector<Opt> heuristic_opts(const UOpPtr& ast, int threads) {
  Planner p(ast);
  auto find = [&](auto pred) -> int {
    const auto& axes = p.axes();
    for (size_t i = 0; i < axes.size(); ++i)
      if (pred(axes[i])) return static_cast<int>(i);
    return -1;
  };
  auto find_last = [&](auto pred) -> int {
    const auto& axes = p.axes();
    for (size_t i = axes.size(); i-- > 0;)
      if (pred(axes[i])) return static_cast<int>(i);
    return -1;
  };
  int64_t width = std::clamp<int64_t>(64 / itemsize_of_output(ast), 4, 16);
  int64_t loop_work = 1;
  bool has_reduce = false;
  for (const AxisAccess& a : p.axes()) {
    if (a.kind == AxisKind::Loop) loop_work *= a.extent;
    has_reduce |= a.kind == AxisKind::Reduce;
  }
  // A reduction with too few outputs to share among the cores: partial sums per core.
  if (has_reduce && threads > 1 && loop_work < threads) {
    int r = find([](const AxisAccess& a) { return a.kind == AxisKind::Reduce; });
    if (auto g = largest_divisor(
            p.axes()[static_cast<size_t>(r)].extent,
            {int64_t{threads} * 8, int64_t{threads} * 4, int64_t{threads} * 2, int64_t{threads}}))
      p.try_apply({OptOp::Group, r, *g});
  }
  // Vectorize the loop axis the output is stored along.
  bool vectorized = false, full_vector = false;
  int contiguous = find_last(
      [](const AxisAccess& a) { return a.kind == AxisKind::Loop && a.store_stride == 1; });
  if (contiguous >= 0)
    if (auto w = largest_divisor(p.axes()[static_cast<size_t>(contiguous)].extent,
                                 {width, width / 2, width / 4})) {
      vectorized = p.try_apply({OptOp::Upcast, contiguous, *w});
      full_vector = *w == width;
    }
  // A register tile: a second output axis along which some load stays put.
  bool tiled = false;
  if (has_reduce && vectorized) {
    // Loads inside the reduction's loop: only their reuse saves work per iteration.
    std::vector<bool> in_reduce(p.axes().empty() ? 0 : p.axes()[0].load_strides.size());
    for (const AxisAccess& a : p.axes())
      for (size_t j = 0; j < in_reduce.size(); ++j)
        if (a.kind == AxisKind::Reduce && a.load_strides[j] != 0) in_reduce[j] = true;
    // Reusing a vector load (one that moves along the vectorized axis) saves more than
    // reusing a scalar that is broadcast already: conv2d tiles output channels, not rows.
    const AxisAccess& vec = p.axes()[static_cast<size_t>(contiguous)];
    auto reuse_score = [&](const AxisAccess& a) {
      if (&a == &vec || a.kind != AxisKind::Loop || a.extent <= 1 || !a.store_stride ||
          *a.store_stride == 0)
        return 0;
      int score = 0;
      for (size_t j = 0; j < in_reduce.size(); ++j)
        if (in_reduce[j] && a.load_strides[j] == 0)
          score = std::max(score, vec.load_strides[j] == 0 ? 1 : 2);
      return score;
    };
    int reuse = -1, best = 0;
    for (size_t i = 0; i < p.axes().size(); ++i)
      if (int sc = reuse_score(p.axes()[i]); sc >= best && sc > 0) {
        best = sc;
        reuse = static_cast<int>(i);
      }
    // Rows of a part-filled vector share registers, and each row's broadcast costs a shuffle:
    // a shorter tile (measured on conv2d's 8-wide rows: 4 rows twice as fast as 8).
    std::initializer_list<int64_t> tiles = {8, 4, 2}, short_tiles = {4, 2};
    if (reuse >= 0)
      if (auto t = largest_divisor(p.axes()[static_cast<size_t>(reuse)].extent,
                                   full_vector ? tiles : short_tiles))
        tiled = p.try_apply({OptOp::Upcast, reuse, *t});
  }
  // Reductions along contiguous memory, unless a register tile already fills the registers.
  if (!tiled) {
    for (size_t i = 0; i < p.axes().size(); ++i) {
      const AxisAccess& a = p.axes()[i];
      bool walks = std::any_of(a.load_strides.begin(), a.load_strides.end(),
                               [](const std::optional<int64_t>& s) { return s == 1; });
      if (a.kind != AxisKind::Reduce || !walks) continue;
      if (auto u = largest_divisor(a.extent, {width, width / 2, width / 4}))
        p.try_apply({OptOp::Unroll, static_cast<int>(i), *u});
    }
  }
  // Across the cores.
  if (threads > 1) {
    int outer = find([](const AxisAccess& a) {
      return a.kind == AxisKind::Parallel || (a.kind == AxisKind::Loop && a.extent > 1);
    });
    if (outer >= 0 && p.axes()[static_cast<size_t>(outer)].kind == AxisKind::Loop) {
      int64_t n = p.axes()[static_cast<size_t>(outer)].extent;
      p.try_apply({OptOp::Thread, outer, n % threads == 0 ? int64_t{threads} : n});
    }
  }
  return p.opts();
}

std::vector<Opt> candidate_actions(const UOpPtr& ast, const std::vector<Opt>& applied,
                                   int threads) {
  Expected<OptimizedKernel> base = apply_opts(ast, applied);
  if (!base) return {};
  std::vector<Opt> out;
  int n = 0;
  for (const Axis& a : base->axes)
    if (a.kind != AxisKind::Upcast && a.kind != AxisKind::Unroll) ++n;
  auto consider = [&](Opt o) {
    std::vector<Opt> next = applied;
    next.push_back(o);
    if (apply_opts(ast, next)) out.push_back(o);
  };
  for (int axis = 0; axis < n; ++axis) {
    for (OptOp op : {OptOp::Upcast, OptOp::Unroll, OptOp::Tile, OptOp::Thread, OptOp::Group})
      for (int64_t amt : opt_amounts(op, threads)) consider({op, axis, amt});
    for (int other = axis + 1; other < n; ++other) consider({OptOp::Swap, axis, other});
  }
  return out;
}

std::vector<int64_t> opt_amounts(OptOp op, int threads) {
  int64_t t = std::max(threads, 1);
  switch (op) {
  case OptOp::Upcast:
  case OptOp::Unroll: return {2, 3, 4, 8, 16, 32};
  case OptOp::Tile: return {16, 32, 64, 128};
  case OptOp::Thread:
  case OptOp::Group: return t > 1 ? std::vector<int64_t>{t, 2 * t, 4 * t} : std::vector<int64_t>{};
  case OptOp::Swap: return {};
  }
  return {};
}

} // namespace beamlab

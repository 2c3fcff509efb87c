// The default Opt list (what a kernel runs with before any search), and the search's action
// menu.
//
// The heuristic reads the kernel's memory accesses: for each axis, the stride with which each
// LOAD and the STORE move when the axis steps by one, and which axes a LOAD's padding gate
// depends on. Then, as tinygrad's hand-coded optimizations do for CPUs, and beyond them:
//   * reduce loops no padding gate depends on nest inside the gated ones (SWAP: a
//     convolution's channels inside its taps);
//   * a kernel with no loop worth running in parallel (a full reduction) is GROUPed across the
//     cores;
//   * the loop axis the STORE walks contiguously is UPCAST to a vector register's width (under
//     a register tile, a row no half vector divides is first padded to whole vectors: PADTO);
//   * in a reduction kernel, one more loop axis that some LOAD of the reduction's loop doesn't
//     move along (data reused from registers: matmul's rows) is UPCAST to make a register tile
//     of about 16 accumulators: the vector part is then two registers wide, taking lanes from
//     the next axis the STORE moves along when the contiguous one is short; when the rows are
//     short, would gather, or take a long window of taps (a 3x3 convolution), and some LOAD
//     walks the tile axis contiguously (blocked weights) or is PACKed to (OIHW weights), the
//     tile axis is the vector (a few vectors of it) and columns of the row are the tile;
//   * a tiled row of whole three-vector steps takes three vectors under 8 rows (24
//     accumulators); one whole vectors don't divide is padded to three vectors where that
//     wastes a quarter or less, else (if no half vector divides it) to one;
//   * with no register tile, rows of outputs whose windows overlap (a pooling's) are UPCAST
//     together under the window's taps unrolled, so the rows' shared loads are loaded once;
//   * a kernel whose reduction loop would be gathered by lanes along the output (a row's max)
//     vectorizes the reduction instead, unless those lanes share its arithmetic, or the input
//     they would gather is read 16 times or more and can be PACKed into the register tile's
//     panels (x @ W.T's weights, attention's keys), a matmul's B;
//   * the data a row of tiles streams (matmul's B; one batch's, in a batched matmul) past a
//     core's L2 is cache-blocked (TILE), or the columns run outermost (SWAP) where even one
//     column of tiles streams more than a quarter of L2;
//   * a reduce axis some LOAD walks contiguously is UNROLLed, four vectors wide where the
//     kernel stays within four vectors, unless a register tile was made;
//   * the outermost loop runs across the cores (THREAD), in a kernel of at least 16K
//     iterations (a smaller one runs faster than the threads start), unless a loop inside it
//     leaves each thread much less to read in a kernel that reads more than it writes (a 1x1
//     projection's rows, not its channels).
#include <algorithm>
#include <bit>
#include <iterator>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/opt/opt.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

struct AxisAccess {
  int64_t extent = 0;
  LoopKind kind = LoopKind::Loop;
  std::optional<int64_t> store_stride;
  std::vector<std::optional<int64_t>> load_strides;
  /// Per LOAD, its stride inside aligned blocks of kBlock steps where it has no one stride
  /// (weights stored blocked: (o/16)*big + o%16 moves by 1 inside each block of 16).
  std::vector<std::optional<int64_t>> block_strides;
  bool gates = false;    ///< some load's validity (padding) depends on the axis
  bool symbolic = false; ///< its extent is a variable's (`extent` is then its largest)
  UOpPtr range;          ///< its RANGE in the main stage
};

// Per node of `order` (a topological order), whether it varies with `range`.
std::unordered_map<const UOp*, bool> varies_with(const std::vector<UOpPtr>& order,
                                                 const UOpPtr& range) {
  std::unordered_map<const UOp*, bool> varies;
  for (const UOpPtr& u : order) {
    bool v = u == range;
    for (const UOpPtr& s : u->src()) v = v || varies[s.get()];
    varies[u.get()] = v;
  }
  return varies;
}

// Whether some reduction of `root` doesn't vary with `range`: each chunk of a thread split
// along it would compute that reduction again (a LayerNorm's mean along its columns).
bool reduction_independent_of(const UOpPtr& root, const UOpPtr& range) {
  const std::vector<UOpPtr> order = toposort(root);
  std::unordered_map<const UOp*, bool> varies = varies_with(order, range);
  return std::any_of(order.begin(), order.end(),
                     [&](const UOpPtr& u) { return u->op() == Op::Reduce && !varies.at(u.get()); });
}

// The arithmetic nodes (not index math) inside the reductions' bodies of `root` that don't
// depend on `range`: what lanes along it would compute once for all (a GELU fused into a
// matmul's input).
int64_t work_independent_of(const UOpPtr& root, const UOpPtr& range) {
  const std::vector<UOpPtr> order = toposort(root);
  std::unordered_map<const UOp*, bool> varies = varies_with(order, range);
  std::unordered_set<const UOp*> counted;
  int64_t n = 0;
  for (const UOpPtr& u : order) {
    if (u->op() != Op::Reduce) continue;
    for (const UOpPtr& b : toposort(u->src(0))) {
      bool alu = b->op() != Op::Load && b->op() != Op::Const && b->op() != Op::Index &&
                 b->op() != Op::Range && b->op() != Op::DefineGlobal && b->op() != Op::Reduce &&
                 b->dtype().scalar() != Scalar::Index && !b->dtype().is_bool();
      if (alu && !varies.at(b.get()) && counted.insert(b.get()).second) ++n;
    }
  }
  return n;
}

constexpr int64_t kBlock = 16;

// The stride of `idx` along `range` inside aligned blocks of kBlock steps: `range` read as
// range*kBlock + lane, the stride along lane.
std::optional<int64_t> block_stride_of(const UOpPtr& idx, const UOpPtr& range) {
  if (symbolic_extent(*range) || range->src(0)->const_value() % kBlock != 0) return std::nullopt;
  UOpPtr lane = kernel_range(kBlock, -1, LoopKind::Loop);
  UOpPtr blocked = simplify_kernel(substitute(idx, {{range.get(), range * kBlock + lane}}));
  return stride_of(blocked, lane);
}

// The addressable axes of the main stage and how the kernel's memory accesses move along them.
std::vector<AxisAccess> accesses(const OptimizedKernel& k) {
  std::vector<UOpPtr> ranges, loads, stores;
  std::vector<const UOp*> gated; // ranges some load's gate depends on
  for (const UOpPtr& u : toposort(k.main_stage())) {
    if (u->op() == Op::Range) ranges.push_back(u);
    if (u->op() == Op::Load && u->src(0)->op() == Op::Index) {
      loads.push_back(u->src(0)->src(1));
      if (u->src(0)->src().size() > 2)
        for (const UOpPtr& r : toposort(u->src(0)->src(2)))
          if (r->op() == Op::Range) gated.push_back(r.get());
    }
    if (u->op() == Op::Store) stores.push_back(u->src(0)->src(1));
  }
  std::sort(ranges.begin(), ranges.end(), [](const UOpPtr& a, const UOpPtr& b) {
    return a->arg().items()[0].as_int() < b->arg().items()[0].as_int();
  });
  std::vector<AxisAccess> out;
  for (const UOpPtr& r : ranges) {
    AxisAccess a;
    a.symbolic = symbolic_extent(*r);
    a.extent = max_extent(*r); // a symbolic axis is tiled as at its largest, gated past n
    if (is_lane(loop_kind(*r))) continue;
    a.kind = loop_kind(*r);
    if (!stores.empty()) a.store_stride = stride_of(stores[0], r);
    for (const UOpPtr& l : loads) {
      a.load_strides.push_back(stride_of(l, r));
      a.block_strides.push_back(a.load_strides.back() ? a.load_strides.back()
                                                      : block_stride_of(l, r));
    }
    a.gates = std::find(gated.begin(), gated.end(), r.get()) != gated.end();
    a.range = r;
    out.push_back(a);
  }
  return out;
}

std::optional<int64_t> largest_divisor(int64_t n, std::initializer_list<int64_t> menu) {
  for (int64_t d : menu)
    if (d <= n && n % d == 0) return d;
  return std::nullopt;
}

// Whether some reduce axis moves LOAD j: it is read in the reduction's loop.
bool read_in_reduction(const std::vector<AxisAccess>& axes, size_t j) {
  return std::any_of(axes.begin(), axes.end(), [&](const AxisAccess& a) {
    return a.kind == LoopKind::Reduce && a.load_strides[j] != 0;
  });
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
  const UOpPtr& stage() const { return kernel_.main_stage(); }
  /// The kernel's widest vector with `o` applied too (0 if it doesn't apply).
  int64_t lanes_with(Opt o) const {
    std::vector<Opt> next = opts_;
    next.push_back(o);
    Expected<OptimizedKernel> k = apply_opts(ast_, next);
    return k ? k->lanes : 0;
  }
  const std::vector<Opt>& opts() const { return opts_; }
  const OptimizedKernel& kernel() const { return kernel_; }

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

namespace {

// Moves the reduce loops no padding gate depends on inside the gated ones (keeping each group's
// order) when they run at least 8 iterations: a convolution's channels inside its taps, so the
// masks are computed once per tap and the inner loop is plain loads and FMAs (conv2d 64x56x56
// 3x3 with the register tile below: 1.7x).
void nest_gated_reductions_outside(Planner& p) {
  std::vector<int> slots; // the reduce axes' positions
  int64_t inner = 1;
  for (size_t i = 0; i < p.axes().size(); ++i)
    if (p.axes()[i].kind == LoopKind::Reduce) {
      slots.push_back(static_cast<int>(i));
      if (!p.axes()[i].gates) inner *= p.axes()[i].extent;
    }
  auto gates = [&](int a) { return p.axes()[static_cast<size_t>(a)].gates; };
  std::vector<int> want, now = slots;
  std::copy_if(slots.begin(), slots.end(), std::back_inserter(want), gates);
  std::copy_if(slots.begin(), slots.end(), std::back_inserter(want),
               [&](int a) { return !gates(a); });
  if (inner < 8 || want == slots) return;
  for (size_t k = 0; k < slots.size(); ++k) {
    size_t j = static_cast<size_t>(std::find(now.begin(), now.end(), want[k]) - now.begin());
    if (j == k) continue;
    if (!p.try_apply({OptOp::Swap, slots[k], slots[j]})) return; // loops of two reductions
    std::swap(now[k], now[j]);
  }
}

// The loop axis to make a register tile along: one the output moves along and some load of
// the reduction's loop doesn't (its value is reused from a register). Reusing a vector load (one
// that moves along the vectorized axis) saves more than reusing a scalar that is broadcast
// already: conv2d tiles output channels, not rows. -1 if none.
int register_tile_axis(const std::vector<AxisAccess>& axes, size_t vec) {
  std::vector<bool> in_reduce(axes.empty() ? 0 : axes[0].load_strides.size());
  for (const AxisAccess& a : axes)
    for (size_t j = 0; j < in_reduce.size(); ++j)
      if (a.kind == LoopKind::Reduce && a.load_strides[j] != 0) in_reduce[j] = true;
  auto reuse_score = [&](size_t i) {
    const AxisAccess& a = axes[i];
    if (i == vec || a.kind != LoopKind::Loop || a.extent <= 1 || !a.store_stride ||
        *a.store_stride == 0)
      return 0;
    int score = 0;
    for (size_t j = 0; j < in_reduce.size(); ++j)
      if (in_reduce[j] && a.load_strides[j] == 0)
        score = std::max(score, axes[vec].load_strides[j] == 0 ? 1 : 2);
    return score;
  };
  int reuse = -1, best = 0;
  for (size_t i = 0; i < axes.size(); ++i)
    if (int sc = reuse_score(i); sc >= best && sc > 0) {
      best = sc;
      reuse = static_cast<int>(i);
    }
  return reuse;
}

// A loop axis other than `skip` along which some load's windows overlap: the load moves along
// it by at most what a reduce axis spans (a pooling's rows: stride 2 rows apart, 3 taps tall).
// -1 if none.
int overlapping_rows(const std::vector<AxisAccess>& axes, int skip) {
  for (size_t i = 0; i < axes.size(); ++i) {
    const AxisAccess& a = axes[i];
    if (static_cast<int>(i) == skip || a.kind != LoopKind::Loop || a.extent <= 1) continue;
    for (size_t j = 0; j < a.load_strides.size(); ++j) {
      const std::optional<int64_t>& step = a.load_strides[j];
      if (!step || *step == 0) continue;
      for (const AxisAccess& r : axes) {
        const std::optional<int64_t>& tap = r.load_strides[j];
        if (r.kind == LoopKind::Reduce && tap && *tap != 0 &&
            std::abs(*step) < std::abs(*tap) * r.extent && std::abs(*step) % std::abs(*tap) == 0)
          return static_cast<int>(i);
      }
    }
  }
  return -1;
}

// The input each LOAD reads, in PACK's numbering (input_slots), in the order accesses() lists
// the loads.
std::vector<int> load_inputs(const UOpPtr& stage) {
  std::vector<int64_t> inputs = input_slots(stage);
  std::vector<int> out;
  for (const UOpPtr& u : toposort(stage))
    if (u->op() == Op::Load && u->src(0)->op() == Op::Index) {
      int64_t slot = u->src(0)->src(0)->arg().as_int();
      out.push_back(
          static_cast<int>(std::find(inputs.begin(), inputs.end(), slot) - inputs.begin()));
    }
  return out;
}

// The bytes of LOAD j one problem of a batch reads: its element size times the extents of the
// axes it moves along, but for batch axes (loop axes outside the register tile's, `tile`, that
// every load moves along: each step is a problem of its own, a Winograd GEMM's 16 or 36 points,
// attention's heads).
int64_t bytes_per_batch(const std::vector<AxisAccess>& axes, size_t j, int64_t itemsize,
                        size_t tile) {
  int64_t bytes = itemsize;
  for (size_t i = 0; i < axes.size(); ++i) {
    const AxisAccess& a = axes[i];
    bool batch = i < tile && a.kind == LoopKind::Loop &&
                 std::all_of(a.load_strides.begin(), a.load_strides.end(),
                             [](const std::optional<int64_t>& s) { return s != 0; });
    if (a.load_strides[j] != 0 && !batch) bytes *= a.extent;
  }
  return bytes;
}

// How many times the kernel reads each element of LOAD j: the product of the loop axes it
// doesn't move along. A copy of an input read 16 times or more costs little beside the kernel
// (a convolution's weights, read once per output pixel).
int64_t load_reuse(const std::vector<AxisAccess>& axes, size_t j) {
  int64_t reuse = 1;
  for (const AxisAccess& a : axes)
    if (a.kind != LoopKind::Reduce && a.load_strides[j] == 0) reuse *= a.extent;
  return reuse;
}
constexpr int64_t kPackReuse = 16;

// The period with which loop axis i of an elementwise stage selects constants, if it does: a
// WHERE's condition depends on the axis (a stack of constants, a Winograd transform's
// coefficients), and in lanes of that many iterations each lane's condition is a constant. That
// is the axis' own extent, 16 or less, where the condition reads the axis itself and no load
// moves along it (a transform-domain element's axis), or k where it reads the axis only as
// axis % k, k <= 16 dividing the extent (an output's position in its Winograd tile).
// `order` is the stage's nodes in topological order.
std::optional<int64_t> selection_period(const std::vector<AxisAccess>& axes, size_t i,
                                        const std::vector<UOpPtr>& order) {
  const AxisAccess& a = axes[i];
  if (a.kind != LoopKind::Loop || a.symbolic || a.extent < 2) return std::nullopt;
  // Whether each node varies with the axis other than through axis % k; the k's seen.
  std::unordered_map<const UOp*, bool> direct;
  std::vector<int64_t> periods;
  for (const UOpPtr& u : order) {
    bool modulo = u->op() == Op::Mod && u->src(0) == a.range && u->src(1)->is_const();
    if (modulo) periods.push_back(u->src(1)->const_value());
    bool v = u == a.range;
    for (const UOpPtr& s : u->src()) v = v || (!modulo && direct[s.get()]);
    direct[u.get()] = v;
  }
  std::unordered_map<const UOp*, bool> varies = varies_with(order, a.range);
  bool selects = false, directly = false;
  for (const UOpPtr& u : order)
    if (u->op() == Op::Where && varies.at(u->src(0).get())) {
      selects = true;
      directly |= direct.at(u->src(0).get());
    }
  if (!selects) return std::nullopt;
  if (directly) {
    bool loaded = std::any_of(a.load_strides.begin(), a.load_strides.end(),
                              [](const std::optional<int64_t>& s) { return s != 0; });
    return a.extent <= 16 && !loaded ? std::optional(a.extent) : std::nullopt;
  }
  std::sort(periods.begin(), periods.end());
  periods.erase(std::unique(periods.begin(), periods.end()), periods.end());
  if (periods.size() != 1 || periods[0] > 16 || a.extent % periods[0] != 0) return std::nullopt;
  return periods[0];
}

// The inputs (PACK's numbering: by buffer slot) worth copying into panels: read in the
// reduction's loop at a row stride that is a multiple of 1 KiB, not along the tile axis, and at
// more than 1 MiB of them.
std::vector<int> inputs_to_pack(const std::vector<AxisAccess>& axes, size_t tile,
                                const UOpPtr& stage, int64_t itemsize) {
  std::vector<int> inputs = load_inputs(stage), out;
  for (size_t j = 0; j < inputs.size(); ++j) {
    if (axes[tile].load_strides[j] != 0) continue;
    bool rows = false;
    for (const AxisAccess& a : axes) {
      const std::optional<int64_t>& s = a.load_strides[j];
      rows |= a.kind == LoopKind::Reduce && s && std::abs(*s) > 1 && *s * itemsize % 1024 == 0;
    }
    if (rows && bytes_per_batch(axes, j, itemsize, tile) > (int64_t{1} << 20) &&
        std::find(out.begin(), out.end(), inputs[j]) == out.end())
      out.push_back(inputs[j]);
  }
  return out;
}

// The divisors of n from 2 up, n last.
std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 2; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// The first Loop axis of a fixed extent over one, in nesting order (-1 if none).
int first_loop(const Planner& p) {
  for (size_t i = 0; i < p.axes().size(); ++i)
    if (p.axes()[i].kind == LoopKind::Loop && p.axes()[i].extent > 1 && !p.axes()[i].symbolic)
      return static_cast<int>(i);
  return -1;
}

// The bytes each LOAD of the main stage reads in one run, in accesses()'s order, and the bytes
// its STOREs write: the itemsize times the elements each moves over, counted once (the span
// of an affine index, where a convolution's windows overlap; else the product of the extents
// of the axes it moves along, lanes too).
struct Footprints {
  std::vector<double> loads;
  double stored = 0;
};
Footprints footprints(const OptimizedKernel& k) {
  std::vector<UOpPtr> ranges;
  Footprints out;
  auto bytes = [&](const UOpPtr& index, DType dtype) {
    double product = 1, span = 1;
    bool affine = true;
    for (const UOpPtr& r : ranges) {
      std::optional<int64_t> stride = stride_of(index, r);
      if (stride == 0) continue;
      product *= static_cast<double>(max_extent(*r));
      if (stride)
        span += static_cast<double>(std::abs(*stride) * (max_extent(*r) - 1));
      else
        affine = false;
    }
    return static_cast<double>(dtype.itemsize()) * (affine ? std::min(product, span) : product);
  };
  for (const UOpPtr& u : toposort(k.main_stage())) {
    if (u->op() == Op::Range) ranges.push_back(u);
    if (u->op() == Op::Load && u->src(0)->op() == Op::Index)
      out.loads.push_back(bytes(u->src(0)->src(1), u->dtype()));
    if (u->op() == Op::Store) out.stored += bytes(u->src(0)->src(1), u->src(1)->dtype());
  }
  return out;
}

// The loop axis to split across the `worth` threads the kernel pays for first, where it isn't
// the outermost: the one whose split leaves each thread the fewest bytes to read (each load's
// footprint, shared out where the load moves along the split axis), if that is under 0.8x of
// the outermost's and the kernel reads more than it writes. In a network a kernel's input
// comes from the last kernel, in the other cores' caches, so the bytes a thread pulls in are
// what it waits for: a 1x1 convolution whose input outweighs its weights (more pixels than
// output channels) reads half the input and all the weights in a thread's rows, all the input
// in its output channels (MobileNetV2's 384 -> 64 projections at 14 x 14: 0.031-0.066 ms by
// run -> 0.033 in the network, Zen 5, 2 threads). A kernel that writes more than it reads (an
// expansion) keeps the outermost: the next kernel (a depthwise convolution, by channels) reads
// its output where it was written (its 32 -> 192 expansions at 28 x 28: 0.029 split by
// channels, 0.039 by rows). An axis the reductions don't vary with is not a candidate (each
// thread would recompute them). -1: the outermost it is.
int least_read_axis(const Planner& p, int64_t worth) {
  const std::vector<AxisAccess>& axes = p.axes();
  const int outer = first_loop(p);
  if (outer < 0) return -1;
  const Footprints f = footprints(p.kernel());
  if (f.stored >= std::accumulate(f.loads.begin(), f.loads.end(), 0.0)) return -1;
  auto per_thread = [&](size_t split) {
    double bytes = 0;
    for (size_t j = 0; j < f.loads.size(); ++j)
      bytes +=
          axes[split].load_strides[j] != 0 ? f.loads[j] / static_cast<double>(worth) : f.loads[j];
    return bytes;
  };
  int best = -1;
  double least = 0.8 * per_thread(static_cast<size_t>(outer));
  for (size_t i = static_cast<size_t>(outer) + 1; i < axes.size(); ++i) {
    const AxisAccess& a = axes[i];
    if (a.kind != LoopKind::Loop || a.extent < worth || a.symbolic ||
        reduction_independent_of(p.stage(), a.range))
      continue;
    if (double bytes = per_thread(i); bytes < least) {
      best = static_cast<int>(i);
      least = bytes;
    }
  }
  return best;
}

// Across the cores: as many threads as the kernel's work pays for (threads_worth: none below
// 16K iterations, where 16x16x16 elementwise runs in 0.5 us alone and 2.4 us threaded), each
// with an equal share. The parallel axis takes whole loop axes, outermost first, and a part
// of the next one: the fewest iterations that split evenly (balance >= 0.9) over those
// threads, so THREAD over a convolution's two 32-channel blocks goes on into its rows on 16
// cores, and a matmul's 8-row tiles into its column blocks. Where every loop axis together
// can't (a 7x7 layer's 32 x 7 tiles on 64 cores), the reduction is split too (GROUP: split-K);
// else the most even split found stays.
void spread_across_cores(Planner& p, int threads) {
  ParallelProfile now = parallel_profile(p.kernel(), threads);
  if (now.worth <= 1 || now.fills()) return;
  int64_t chunks = now.chunks, work = now.work;
  std::vector<int64_t> loops; // the loop axes' extents, outermost first
  for (const AxisAccess& a : p.axes())
    if (a.kind == LoopKind::Loop && a.extent > 1 && !a.symbolic) loops.push_back(a.extent);
  auto profile = [&](int64_t c) { return parallel_profile(c, work, threads); };
  // Where the fixed loop axes can't fill the cores, or the outermost of them is one the
  // reductions don't vary with (a LayerNorm's columns beside its symbolic rows: each chunk would
  // recompute its rows' mean and variance), a symbolic one (a sequence of any length) goes
  // across them: as many chunks as the work at its largest pays for, each ceil(n / chunks)
  // iterations, the last ones gated.
  int64_t fixed = chunks;
  for (int64_t e : loops) fixed *= e;
  auto symbolic = std::find_if(p.axes().begin(), p.axes().end(), [](const AxisAccess& a) {
    return a.kind == LoopKind::Loop && a.symbolic;
  });
  int outer = first_loop(p);
  bool recomputes =
      outer >= 0 && reduction_independent_of(p.stage(), p.axes()[static_cast<size_t>(outer)].range);
  if ((!profile(fixed).fills() || recomputes) && symbolic != p.axes().end() &&
      p.try_apply({OptOp::Thread, static_cast<int>(symbolic - p.axes().begin()), now.worth}))
    return;
  // A loop inside the outermost that leaves each thread much less to read goes across first
  // (least_read_axis): its fewest iterations that fill the threads, else all of it and more.
  if (int across = least_read_axis(p, now.worth); across >= 0) {
    std::vector<int64_t> parts = divisors(p.axes()[static_cast<size_t>(across)].extent);
    auto fills = std::find_if(parts.begin(), parts.end(),
                              [&](int64_t m) { return profile(chunks * m).fills(); });
    if (p.try_apply({OptOp::Thread, across, fills != parts.end() ? *fills : parts.back()})) {
      spread_across_cores(p, threads);
      return;
    }
  }
  // The choice: the first `whole` loop axes whole and `part` iterations of the next.
  size_t whole = 0;
  int64_t part = 1, prefix = chunks, best = chunks;
  bool found = false;
  for (size_t k = 0; k < loops.size() && !found; prefix *= loops[k], ++k)
    for (int64_t m : divisors(loops[k])) {
      ParallelProfile f = profile(prefix * m);
      if (f.fills() || f.effective() > profile(best).effective()) {
        whole = k, part = m, best = f.chunks;
        found = f.fills();
        if (found) break;
      }
    }
  auto thread = [](Planner& q, size_t axes, int64_t last) {
    for (size_t k = 0; k < axes; ++k) {
      int a = first_loop(q);
      q.try_apply({OptOp::Thread, a, q.axes()[static_cast<size_t>(a)].extent});
    }
    if (last > 1) q.try_apply({OptOp::Thread, first_loop(q), last});
  };
  if (!found) {
    // Split-K: every loop axis across the cores, and the outermost reduce axis in parts.
    int64_t all = chunks;
    for (int64_t e : loops) all *= e;
    Planner split = p;
    thread(split, loops.size(), 1);
    for (size_t r = 0; r < split.axes().size(); ++r) {
      if (split.axes()[r].kind != LoopKind::Reduce) continue;
      for (int64_t g : divisors(split.axes()[r].extent))
        if (profile(all * g).fills() && split.try_apply({OptOp::Group, static_cast<int>(r), g})) {
          p = std::move(split);
          return;
        }
      break;
    }
  }
  thread(p, whole, part);
}

// The plan `p` spread across the cores. Where its register tile leaves fewer tiles than the
// threads its work pays for and the reduction can't be split (an attention's two reductions
// under 16 x 16 lanes: 8 tiles for 64 threads), the tile shrinks: each UPCAST after the first
// (the vector) is halved in turn, last first, until the plan fills the threads; else the plan
// that keeps the most threads busy.
std::vector<Opt> fill_the_cores(const UOpPtr& ast, Planner p, int threads) {
  auto busy = [&](const Planner& q) {
    ParallelProfile f = parallel_profile(q.kernel(), threads);
    return std::pair(f.fills(), f.effective());
  };
  std::vector<Opt> core = p.opts();
  spread_across_cores(p, threads);
  Planner best = p;
  for (int step = 0; step < 8 && !busy(best).first; ++step) {
    std::vector<Opt> smaller = core;
    auto first = std::find_if(smaller.begin(), smaller.end(),
                              [](const Opt& o) { return o.op == OptOp::Upcast; });
    if (first == smaller.end()) break;
    auto last = std::find_if(smaller.rbegin(), smaller.rend(), [&](const Opt& o) {
      return o.op == OptOp::Upcast && &o != &*first && o.arg % 2 == 0;
    });
    if (last == smaller.rend()) break;
    if (last->arg == 2)
      smaller.erase(std::next(last).base());
    else
      last->arg /= 2;
    Planner q(ast);
    bool applies =
        std::all_of(smaller.begin(), smaller.end(), [&](const Opt& o) { return q.try_apply(o); });
    if (!applies) break;
    core = smaller;
    spread_across_cores(q, threads);
    if (busy(q) > busy(best)) best = std::move(q);
  }
  return best.opts();
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
  int64_t width = std::clamp<int64_t>(64 / itemsize_of_output(ast), 4, 16);
  int64_t loop_work = 1;
  bool has_reduce = false;
  for (const AxisAccess& a : p.axes()) {
    if (a.kind == LoopKind::Loop) loop_work *= a.extent;
    has_reduce |= a.kind == LoopKind::Reduce;
  }
  nest_gated_reductions_outside(p);
  // A reduction with too few outputs to share among the cores: partial sums per core.
  if (has_reduce && threads > 1 && loop_work < threads) {
    int r = find([](const AxisAccess& a) { return a.kind == LoopKind::Reduce; });
    if (auto g = largest_divisor(
            p.axes()[static_cast<size_t>(r)].extent,
            {int64_t{threads} * 8, int64_t{threads} * 4, int64_t{threads} * 2, int64_t{threads}}))
      p.try_apply({OptOp::Group, r, *g});
  }
  // The vector and register-tile decisions read the axes as they are now; an UPCAST of a whole
  // axis removes it, so later positions are translated.
  const std::vector<AxisAccess> base = p.axes();
  const UOpPtr base_stage = p.stage();
  int64_t reduction = 1; // the iterations of the reduce axes together
  for (const AxisAccess& a : base)
    if (a.kind == LoopKind::Reduce) reduction *= a.extent;
  std::vector<bool> gone(base.size());
  auto position = [&](int axis) {
    return axis - static_cast<int>(std::count(gone.begin(), gone.begin() + axis, true));
  };
  auto upcast = [&](int axis, int64_t amount) {
    if (!p.try_apply({OptOp::Upcast, position(axis), amount})) return false;
    gone[static_cast<size_t>(axis)] = base[static_cast<size_t>(axis)].extent == amount;
    return true;
  };
  int contiguous = -1; // the loop axis the output is stored along
  for (size_t i = 0; i < base.size(); ++i)
    if (base[i].kind == LoopKind::Loop && base[i].store_stride == 1)
      contiguous = static_cast<int>(i);
  // When a load of the reduction's loop walks a reduce axis of whole vectors contiguously but
  // moves along the output's contiguous axis by a stride, lanes along that axis would gather it
  // every step (a row's max): the reduction vectorizes along its data instead (4096x1024 row
  // max: 2.9x), unless the lanes would share more than a little arithmetic (a transformer's GELU
  // fused into its down projection: 2x the other way). An input read 16 times or more that way
  // (x @ W.T's weights, read once per row; attention's keys in q @ k^T, once per query) is
  // PACKed into the register tile's panels instead, a matmul's B, where a register tile fits
  // (Zen 5, 2 threads: the mlp workload's 256 x 1024 x 1024 layers 8.2 -> 1.8 ms, 4.5x over
  // vectors along the reduction; BERT's 12 x 128 x 128 x 64 scores 0.23-0.28 -> 0.067-0.076).
  auto walks = [](const AxisAccess& a, size_t j) { return a.load_strides[j] == 1; };
  const std::vector<int> inputs = load_inputs(base_stage); // the input each load reads
  std::vector<int> panel_packs; // such inputs, packed once the tile is in place
  if (contiguous >= 0) {
    const AxisAccess& out = base[static_cast<size_t>(contiguous)];
    for (size_t j = 0; j < out.load_strides.size(); ++j) {
      bool strided = !out.load_strides[j] || (*out.load_strides[j] != 0 && !walks(out, j));
      bool along_reduce = std::any_of(base.begin(), base.end(), [&](const AxisAccess& a) {
        return a.kind == LoopKind::Reduce && walks(a, j) && a.extent % width == 0;
      });
      if (!strided || !along_reduce) continue;
      // (Only an input PACK can copy: read at one place, along loops of fixed extent, a copy
      // no more than twice the data; else the lanes would gather it, x @ x.T's second read.)
      if (out.load_strides[j] && load_reuse(base, j) >= kPackReuse &&
          register_tile_axis(base, static_cast<size_t>(contiguous)) >= 0 &&
          Planner(p).try_apply({OptOp::Pack, inputs[j], 0})) {
        panel_packs.push_back(inputs[j]);
        continue;
      }
      if (work_independent_of(base_stage, out.range) <= 4) contiguous = -1;
      panel_packs.clear();
      break;
    }
  }
  int tile_axis = has_reduce && contiguous >= 0
                      ? register_tile_axis(base, static_cast<size_t>(contiguous))
                      : -1;
  // Vectorize the contiguous axis. Under a register tile the vector part fills two registers
  // (matmul: 32 columns x 8 rows, 16 accumulators of the 32 registers); a row shorter than
  // that takes lanes from the next axis the output moves along (conv2d's 56-wide rows: 8
  // columns x 4 rows x 8 channels, 1.9x over 8 columns x 8 channels).
  // A row no half vector divides is padded to whole vectors first, when that at most doubles it
  // (conv2d's 28-wide rows as 32: 1.7x over 4-lane vectors).
  // The period with which each axis selects constants (elementwise kernels only).
  std::vector<std::optional<int64_t>> periods(base.size());
  bool selecting = false;
  if (!has_reduce) {
    const std::vector<UOpPtr> order = toposort(base_stage); // the stage's, once for every axis
    for (size_t i = 0; i < base.size(); ++i)
      selecting |= (periods[i] = selection_period(base, i, order)).has_value();
  }
  int64_t lanes = 1, lanes_along_contiguous = 1;
  bool padded_row = false, tiled = false;
  // Output channels in lanes: the tile axis is the vector (or a few vectors of it) and columns
  // of the row the register tile, each of its inputs one broadcast load, when a load of the
  // reduction's loop walks the tile axis contiguously but not the rows (weights stored blocked
  // by the ONNX import) or can be PACKed to (an input read 16 times or more that moves along
  // the tile axis by a stride: an OIHW convolution's weights), and
  //   * the output's rows are at most half a vector (a 7x7 layer's rows of 7), lanes along
  //     them would gather a load of the reduction's loop (a stride-2 convolution's input), or
  //     the reduction is long, slides a window (below) and the rows are at most 16 wide: 16
  //     channels x the row (5-16 columns whole, in vectors split into registers by codegen;
  //     shorter ones padded to a power of two) (ResNet-18's 7x7 layers, 16 channels x 8
  //     columns: 3.5x over 8-lane rows x 4 channels; 512 x 7 x 7 over 512 x 3 x 3 with its weights
  //     packed: 95 -> 170 GFLOP/s; 7 columns, not 8 padded: 1.1x);
  //   * or the row is longer than 16, a whole number of 7 columns and not of 4 (below);
  //   * or the reduction is long and slides a window along the row (a reduce axis moves a
  //     load the row moves, by at most the row's step: a 3x3 convolution's 9 taps x channels; not a
  //     1x1's channels: 14-wide rows ran at 0.6x this way) and the row a whole number of 4 or 8
  //     columns but not of two vectors (a matmul's rows fill two vectors, its register tile's best
  //     shape): about 16 accumulators of vectors of channels x that many columns (3x3 convolutions
  //     at 56 wide, 32 channels x 8 columns: 245 -> 389 GFLOP/s; at 28 wide, 64 x 4: 217 -> 342;
  //     stride 2, 64 x 4: 174 -> 299);
  // and the reduction is two vectors long or more (`amortized` below).
  std::vector<int> packs;
  if (contiguous >= 0 && tile_axis >= 0) {
    const AxisAccess &row = base[static_cast<size_t>(contiguous)],
                     &tile = base[static_cast<size_t>(tile_axis)];
    bool blocked_load = false, gathered = false, window = false;
    int packable = -1;
    for (size_t j = 0; j < row.load_strides.size(); ++j) {
      if (std::find(panel_packs.begin(), panel_packs.end(), inputs[j]) != panel_packs.end())
        continue; // packed to walk the row
      bool in_loop = read_in_reduction(base, j);
      blocked_load |= tile.block_strides[j] == 1 && row.load_strides[j] == 0;
      gathered |= in_loop && (!row.load_strides[j] || std::abs(*row.load_strides[j]) > 1);
      window |= row.load_strides[j] && *row.load_strides[j] != 0 &&
                std::any_of(base.begin(), base.end(), [&](const AxisAccess& a) {
                  const std::optional<int64_t>& r = a.load_strides[j];
                  return a.kind == LoopKind::Reduce && r && *r != 0 &&
                         std::abs(*r) <= std::abs(*row.load_strides[j]);
                });
      if (in_loop && row.load_strides[j] == 0 && tile.load_strides[j] != 0 &&
          tile.block_strides[j] != 1 && load_reuse(base, j) >= kPackReuse)
        packable = inputs[j];
    }
    // Rows of whole power-of-two blocks of columns take vectors of channels; other rows up to
    // 16 wide (14: 240 GFLOP/s this way, 224 as 64 channels x 2 columns) are the tile whole
    // from 5 columns up (below), padded below that.
    int64_t columns = std::min<int64_t>(row.extent & -row.extent, 8), vectors = 1;
    bool long_window = reduction >= 256 && window,
         blocks = long_window && columns >= 4 && row.extent % (2 * width) != 0;
    bool short_rows =
        2 * row.extent <= width || (gathered && !blocks) || (long_window && row.extent <= 16);
    // A row longer than 16 of whole 7-column tiles and no whole 4-column ones (a Winograd GEMM's
    // 49 tiles of a 7x7 map) takes them, not a row padded to vectors (0.61 -> 0.46-0.51 ms;
    // 28 and 196 keep theirs: 4-column tiles, measured equal at 196).
    bool sevens = !short_rows && row.extent > 16 && row.extent % 4 != 0 && row.extent % 7 == 0;
    // Channels in lanes store each vector scattered, a lane to a plane: that pays only after a
    // reduction of two vectors or more per lane (not a Winograd input transform's 16 taps into
    // 16 planes, each a plane of rows: rows in lanes ran it 1.5x faster).
    bool amortized = reduction >= 2 * width;
    if ((short_rows || blocks || sevens) && amortized && (blocked_load || packable >= 0) &&
        tile.extent % width == 0 && width <= kBlock) {
      if (short_rows) {
        // A row of 5 to 16 columns is the tile whole (7 columns compute in 112-lane vectors,
        // split into registers by codegen: MobileNetV2's 1x1 convolutions at 7x7 0.148 ->
        // 0.071 ms, ResNet-18's 3x3 ones 1.23 -> 1.10, over 8 columns padded); a shorter one is
        // padded to a power of two. A longer row that gathers under a window (a stride-2
        // convolution whose reduction is short, ResNet-18's 7x7/2 stem) takes 8 columns, so two
        // vectors of channels share each broadcast input (0.686 -> 0.631 ms over 16 columns x
        // 1 vector, 2 threads, Zen 5).
        columns = row.extent >= 5 && row.extent <= 16 ? row.extent
                  : row.extent > 16 && window && !long_window && tile.extent % (2 * width) == 0
                      ? 8
                      : std::min<int64_t>(std::bit_ceil(static_cast<uint64_t>(row.extent)), 16);
        // Rows of 8 columns or fewer take two vectors of channels: 16 accumulators at 8, as
        // two FMA pipes of 4-cycle latency need 8 in flight (MobileNetV2's 1x1 convolutions at
        // 7x7, 32 x 8: 1.2-1.3x over 16 x 8). More vectors for shorter rows were not measured.
        if (columns <= 8 && tile.extent % (2 * width) == 0) vectors = 2;
      } else {
        if (sevens) columns = 7;
        while (vectors * 2 * columns <= 16 && tile.extent % (vectors * 2 * width) == 0)
          vectors *= 2;
      }
      if (upcast(tile_axis, vectors * width)) {
        if (row.extent % columns != 0) p.try_apply({OptOp::Padto, position(contiguous), columns});
        tiled = upcast(contiguous, columns);
        gone[static_cast<size_t>(contiguous)] = tiled && (row.extent + columns - 1) / columns == 1;
        lanes = width;
        contiguous = -1;
        if (!blocked_load) packs.push_back(packable);
      }
    }
  }
  if (contiguous >= 0) {
    int64_t n = base[static_cast<size_t>(contiguous)].extent;
    // Without a reduction, a row at least a vector long that no quarter vector divides (an
    // input image padded to 230 or 226 columns) is padded too: unvectorized it copied 0.64 MB
    // in 0.063-0.079 ms.
    // So is a shorter one of an elementwise kernel that selects constants, where padding to a
    // half vector wastes an eighth of it or less (a Winograd transform over 14 or 7 tiles a row:
    // 0.138 -> 0.076 ms as 16 over unvectorized).
    int64_t halves = (n + width / 2 - 1) / (width / 2) * (width / 2);
    // Under a register tile of 8 rows, a row of whole three-vector steps takes three vectors, and
    // one whole vectors don't divide is padded to three of them where that wastes a quarter of
    // it or less: 24 accumulators, 11 loads a step for 24 FMAs (one vector x 16 rows: 17 for
    // 16). A Winograd F(4x4) GEMM's 196 tiles a row as 240, 64 channels x 64: 0.189 -> 0.160 ms
    // alone, 0.31 -> 0.23 in ResNet-18 (2 x 8 at 224: 0.181); BERT's 768 and 3072 columns as
    // they are: its 128 x 3072 x 768 up projection 2.18-2.24 -> 1.96-1.99 ms alone.
    const int64_t three = 3 * width, padded_three = (n + three - 1) / three * three;
    const bool whole_threes = n % three == 0;
    bool three_vectors = false;
    if (tile_axis >= 0 && n > three && base[static_cast<size_t>(tile_axis)].extent % 8 == 0 &&
        (whole_threes || (n % width != 0 && 4 * padded_three <= 5 * n))) {
      Planner before = p;
      if ((whole_threes || p.try_apply({OptOp::Padto, contiguous, three})) &&
          upcast(contiguous, three)) {
        lanes = lanes_along_contiguous = three;
        padded_row = !whole_threes;
        three_vectors = true;
      } else {
        p = std::move(before);
      }
    }
    bool pad_row = three_vectors    ? false
                   : tile_axis >= 0 ? n % (width / 2) != 0
                   : selecting && n < width
                       ? n > width / 4 && n % (width / 4) != 0 && 7 * halves <= 8 * n
                       : !has_reduce && n >= width && n % (width / 4) != 0;
    if (pad_row)
      for (int64_t to : {width, width / 2}) {
        int64_t padded = (n + to - 1) / to * to;
        if (padded <= 2 * n && p.try_apply({OptOp::Padto, contiguous, to})) {
          n = padded;
          padded_row = true;
          break;
        }
      }
    std::optional<int64_t> w = tile_axis >= 0
                                   ? largest_divisor(n, {2 * width, width, width / 2, width / 4})
                                   : largest_divisor(n, {width, width / 2, width / 4});
    if (!three_vectors && w && p.try_apply({OptOp::Upcast, contiguous, *w})) {
      lanes = lanes_along_contiguous = *w;
      gone[static_cast<size_t>(contiguous)] = n == *w;
    }
  }
  // An elementwise kernel's axis that selects constants goes into lanes by its period, after the
  // row: each lane then selects one constant, and the multiplications by 0 and 1 fold away (a
  // Winograd F(4x4) input transform of 64 channels at 56x56, 6 x 6 points x 16 tiles in lanes:
  // 0.138 -> 0.076 ms; its output transform, rows by 4 of the tile: 0.19 -> 0.07; F(2x2) at
  // 14x14, rows by 2: 0.075 -> 0.009).
  for (size_t i = 0; i < base.size(); ++i)
    if (static_cast<int>(i) != contiguous && periods[i]) upcast(static_cast<int>(i), *periods[i]);
  // (Not a padded row: its lanes' masks differ row to row; 14-wide rows as 16 x 2 rows ran at
  // half the speed of 16 x 16 channels. Nor an axis that moves a load the row's lanes share:
  // its broadcast would become a gather, a depthwise convolution's weights along its
  // channels: 8 columns x 8 rows ran 1.4x faster than 8 columns x 4 channels x 8 rows.)
  if (lanes > 1 && tile_axis >= 0 && lanes < 2 * width && !padded_row && !tiled) {
    const AxisAccess& row = base[static_cast<size_t>(contiguous)];
    int fill = -1;
    for (size_t i = 0; i < base.size(); ++i) {
      const AxisAccess& a = base[i];
      bool gathers = false;
      for (size_t j = 0; j < a.load_strides.size(); ++j)
        gathers |= row.load_strides[j] == 0 && a.load_strides[j] != 0;
      if (static_cast<int>(i) == contiguous || static_cast<int>(i) == tile_axis ||
          a.kind != LoopKind::Loop || a.extent <= 1 || !a.store_stride || *a.store_stride == 0 ||
          gathers)
        continue;
      if (fill < 0 ||
          std::abs(*a.store_stride) < std::abs(*base[static_cast<size_t>(fill)].store_stride))
        fill = static_cast<int>(i);
    }
    if (fill >= 0)
      for (int64_t f = 2 * width / lanes; f >= 2; f /= 2)
        if (base[static_cast<size_t>(fill)].extent % f == 0) {
          if (upcast(fill, f)) lanes *= f;
          break;
        }
  }
  // The register tile: about 16 accumulators. Rows of a part-filled vector share registers, and
  // each row's broadcast costs a shuffle: a shorter tile (measured on conv2d's 8-wide rows: 4
  // rows twice as fast as 8).
  if (lanes > 1 && tile_axis >= 0 && !tiled) {
    std::initializer_list<int64_t> tiles = {8, 4, 2}, short_tiles = {4, 2},
                                   one_vector = {16, 8, 4, 2};
    const AxisAccess& tile = base[static_cast<size_t>(tile_axis)];
    // Whole vectors of channels of one position (the output's contiguous axis gone into them,
    // not a padded row) over a reduction of two vectors or more whose input is broadcast across
    // the lanes (a 1x1 convolution on channel blocks; not a depthwise one, whose input moves
    // with its channels) take positions 7 at a time where 7 divides the row: each pair of
    // weight vectors is reused by 7 broadcasts, 14 accumulators (MobileNetV2, 2 threads, in the
    // whole program: 576 -> 96 channels at 14x14 0.19 -> 0.065 ms over 2 x 2 positions; 144 ->
    // 24 at 56x56 0.17 -> 0.11 over 8).
    bool channel_vectors = contiguous >= 0 && gone[static_cast<size_t>(contiguous)] &&
                           lanes >= width && lanes % width == 0;
    bool broadcast_input = false;
    for (size_t j = 0; j < tile.load_strides.size(); ++j)
      broadcast_input |= base[static_cast<size_t>(contiguous)].load_strides[j] == 0 &&
                         tile.load_strides[j] != 0 && read_in_reduction(base, j);
    std::optional<int64_t> t =
        channel_vectors && !padded_row && broadcast_input && reduction >= 2 * width &&
                tile.extent % 7 == 0
            ? std::optional<int64_t>(7)
            : largest_divisor(tile.extent, lanes == width && padded_row ? one_vector
                                           : lanes >= width             ? tiles
                                                                        : short_tiles);
    if (t) tiled = upcast(tile_axis, *t);
    // A matmul's rows of odd count, 16 or more, that no tile above divides (a sequence of 77
    // tokens) go in tiles of 7 or 5 that do, else are padded to a multiple of 8 (as a symbolic
    // length's rows are): with no register tile, BERT's 77 x 3072 x 768 GEMM ran at 34 GFLOP/s,
    // with 7 rows at 350 (Zen 5, 2 threads).
    if (!t && lanes >= width && tile.extent >= 16 && contiguous >= 0 &&
        !gone[static_cast<size_t>(contiguous)]) {
      Planner before = p;
      std::optional<int64_t> exact = largest_divisor(tile.extent, {7, 5});
      if ((exact || p.try_apply({OptOp::Padto, position(tile_axis), 8})) &&
          upcast(tile_axis, exact ? *exact : 8)) {
        t = exact ? *exact : 8;
        tiled = true;
      } else {
        p = std::move(before);
      }
    }
    // Whole vectors of channels over a row of positions no tile above fills (one vector of
    // channels, a short reduction): fewer than 8 accumulators leave the FMA pipes waiting, so
    // the tile takes positions of a second axis the same loads don't move along (14x14: 2
    // columns x 2 rows x 2 vectors, 0.15 -> 0.05 ms), or else tiles of the row (7x7: 8
    // columns x 2 vectors, 0.24 -> 0.07 ms; 49 positions as 7 x 7 now, below).
    // Only where the vector is the output's whole contiguous axis (channels of one position):
    // a matmul's rows of odd length keep their plans.
    int64_t accumulators = (lanes / width) * (tiled ? *t : 1);
    if (channel_vectors && accumulators < 8) {
      auto same_reuse = [&](const AxisAccess& a) {
        for (size_t j = 0; j < a.load_strides.size(); ++j)
          if (tile.load_strides[j] == 0 && a.load_strides[j] != 0) return false;
        return true;
      };
      for (size_t i = 0; i < base.size() && accumulators < 8; ++i) {
        const AxisAccess& a = base[i];
        if (static_cast<int>(i) == tile_axis || static_cast<int>(i) == contiguous || gone[i] ||
            a.kind != LoopKind::Loop || a.extent <= 1 || !a.store_stride || *a.store_stride == 0 ||
            !same_reuse(a))
          continue;
        std::optional<int64_t> more = largest_divisor(a.extent, {8, 4, 2}); // halves divide too
        while (more && accumulators * *more > 16)
          more = *more > 2 ? std::optional(*more / 2) : std::nullopt;
        if (more && upcast(static_cast<int>(i), *more)) {
          accumulators *= *more;
          tiled = true;
        }
      }
      // A row no tile of 8 divides goes in tiles of 7, 6 or 5 that do (49 positions as 7 x 7:
      // 0.20 -> 0.17 ms over 7 tiles of 8 padded), else is padded to 8.
      std::optional<int64_t> exact =
          tile.extent % 8 != 0 ? largest_divisor(tile.extent, {7, 6, 5}) : std::nullopt;
      int64_t padded = (tile.extent + 7) / 8 * 8;
      if (!tiled && exact) {
        tiled = upcast(tile_axis, *exact);
        gone[static_cast<size_t>(tile_axis)] = tiled && *exact == tile.extent;
      } else if (!tiled && tile.extent >= 5 && padded * 7 <= tile.extent * 8 &&
                 p.try_apply({OptOp::Padto, position(tile_axis), 8})) {
        tiled = upcast(tile_axis, 8);
        gone[static_cast<size_t>(tile_axis)] = tiled && padded == 8; // the whole padded axis
      }
    }
  }
  // Overlapping windows with nothing to tile (a pooling: its one load moves along every axis):
  // rows of outputs whose windows overlap (a row's next window starts inside this one) share
  // loads when they are lanes together, so the row axis takes up to 8 of them (ResNet-18's
  // 3x3/2 max pool: 8 columns x 8 rows ran 2x as fast as 8 columns).
  // The window's taps, 16 or fewer, are then unrolled whole: a row's load under one tap is the
  // next row's under another, one load for both (the max pool in ResNet-18: 0.21-0.26 -> 0.09
  // ms, as fast as ONNX Runtime's; 0.098 -> 0.073 alone).
  if (lanes > 1 && tile_axis < 0 && !tiled) {
    int rows = overlapping_rows(base, contiguous);
    if (rows >= 0)
      if (auto t = largest_divisor(base[static_cast<size_t>(rows)].extent, {8, 4, 2});
          t && upcast(rows, *t)) {
        int64_t taps = 1;
        for (const AxisAccess& a : p.axes())
          if (a.kind == LoopKind::Reduce) taps *= a.extent;
        for (size_t i = 0; taps <= 16 && i < p.axes().size(); ++i) {
          const LoopKind kind = p.axes()[i].kind;
          const int64_t extent = p.axes()[i].extent;
          const size_t before = p.axes().size();
          if (kind == LoopKind::Reduce && extent > 1 &&
              p.try_apply({OptOp::Unroll, static_cast<int>(i), extent}) && p.axes().size() < before)
            --i; // the whole axis became lanes (i = 0 wraps, and the loop's ++i brings it back)
        }
      }
  }
  // Cache blocking: when the data a row of tiles streams through (matmul's B) is larger than a
  // core's L2 (1 MiB is typical), the contiguous axis runs in blocks whose share of it is about
  // 512 KiB, so every row of tiles re-reads it from L2 (matmul 2048: 1.4x).
  if (tiled && contiguous >= 0 && !gone[static_cast<size_t>(contiguous)]) {
    int64_t streamed = 0;
    const AxisAccess& row = base[static_cast<size_t>(tile_axis)];
    for (size_t j = 0; j < row.load_strides.size(); ++j)
      if (row.load_strides[j] == 0)
        streamed = std::max(streamed, bytes_per_batch(base, j, itemsize_of_output(ast),
                                                      static_cast<size_t>(tile_axis)));
    const int64_t steps =
        (base[static_cast<size_t>(contiguous)].extent + lanes_along_contiguous - 1) /
        lanes_along_contiguous; // a padded row's last step too
    int64_t block = 1;
    while (block * 2 < steps && steps % (block * 2) == 0 &&
           streamed / steps * block * 2 <= (int64_t{512} << 10))
      block *= 2;
    if (streamed > (int64_t{1} << 20) && block >= 2)
      p.try_apply({OptOp::Tile, position(contiguous), block});
    // A single step's share already past 256 KiB (a long reduction: BERT's 128 x 768 x 3072
    // down projection, 576 KiB of B a column of 48-wide tiles) leaves no block to take: the
    // columns then run outermost, each one's share read from memory once and from L2 by every
    // row of tiles (2.42 -> 1.92 ms with 32-wide tiles, Zen 5, 2 threads). Not where the tile
    // took the rows whole: one row of tiles reuses nothing.
    else if (streamed > (int64_t{1} << 20) && block == 1 && steps > 0 && tile_axis < contiguous &&
             !gone[static_cast<size_t>(tile_axis)] && streamed / steps > (int64_t{256} << 10))
      p.try_apply({OptOp::Swap, position(tile_axis), position(contiguous)});
  }
  // Reductions along contiguous memory, unless a register tile already fills the registers:
  // four vectors a step where the kernel stays within four vectors (four accumulator chains;
  // softmax's NaN-propagating max is latency-bound with one: 1.3x), else one.
  if (!tiled) {
    for (size_t i = 0; i < p.axes().size(); ++i) {
      const AxisAccess& a = p.axes()[i];
      bool walked = std::any_of(a.load_strides.begin(), a.load_strides.end(),
                                [](const std::optional<int64_t>& s) { return s == 1; });
      if (a.kind != LoopKind::Reduce || !walked) continue;
      size_t axes_before = p.axes().size();
      int64_t extent = a.extent;
      bool unrolled = false;
      for (int64_t u : {4 * width, 2 * width})
        if (extent % u == 0 && p.lanes_with({OptOp::Unroll, static_cast<int>(i), u}) <= 4 * width)
          if ((unrolled = p.try_apply({OptOp::Unroll, static_cast<int>(i), u}))) break;
      if (!unrolled)
        if (auto u = largest_divisor(extent, {width, width / 2, width / 4}))
          p.try_apply({OptOp::Unroll, static_cast<int>(i), *u});
      if (p.axes().size() < axes_before) --i; // the whole axis became lanes
    }
  }
  // Packed panels: an input the register tile reuses (it doesn't move along the tile axis) and
  // that each step of the reduction reads a row of, a multiple of 1 KiB apart (matmul's B), is
  // copied first, in the loop order, when there are at least 4 rows of tiles to share the copy
  // and it is larger than a core's L2 (1 MiB). Rows a power of two apart fall into a few cache
  // sets, so the tile's stream through B missed L1 and L2 (matmul 1024: 115 -> 330 GFLOP/s).
  if (tiled && base[static_cast<size_t>(tile_axis)].extent >= 32)
    for (int input :
         inputs_to_pack(base, static_cast<size_t>(tile_axis), base_stage, itemsize_of_output(ast)))
      if (std::find(packs.begin(), packs.end(), input) == packs.end()) packs.push_back(input);
  if (tiled)
    for (int input : panel_packs)
      if (std::find(packs.begin(), packs.end(), input) == packs.end()) packs.push_back(input);
  for (int input : packs) p.try_apply({OptOp::Pack, input, 0});
  return fill_the_cores(ast, p, threads);
}

std::vector<Opt> candidate_actions(const UOpPtr& ast, const std::vector<Opt>& applied,
                                   int threads) {
  Expected<OptimizedKernel> base = apply_opts(ast, applied);
  if (!base) return {};
  std::vector<Opt> out;
  int n = 0;
  for (const Axis& a : base->axes)
    if (a.kind != LoopKind::Upcast && a.kind != LoopKind::Unroll) ++n;
  auto consider = [&](Opt o) {
    std::vector<Opt> next = applied;
    next.push_back(o);
    if (apply_opts(ast, next)) out.push_back(o);
  };
  // THREAD also takes a whole axis, or the part that brings the parallel axis to 1, 2 or 4
  // times the threads (a convolution's 2 channel blocks, then 8 of its rows on 16 cores).
  // A kernel whose split fills the threads already gets no more of either (the menu stays as
  // small as it was on 2 cores).
  ParallelProfile now = parallel_profile(*base, threads);
  int64_t parallel = now.chunks;
  bool filled = parallel > 1 && now.fills();
  auto thread_amounts = [&](int64_t extent) {
    std::vector<int64_t> amounts = opt_amounts(OptOp::Thread, threads);
    if (threads > 1) {
      amounts.push_back(extent);
      for (int64_t k : {1, 2, 4})
        if (int64_t want = k * threads; want % parallel == 0) amounts.push_back(want / parallel);
    }
    std::sort(amounts.begin(), amounts.end());
    amounts.erase(std::unique(amounts.begin(), amounts.end()), amounts.end());
    return amounts;
  };
  for (int axis = 0; axis < n; ++axis) { // lanes are last: the first n axes are addressed
    int64_t extent = base->axes[static_cast<size_t>(axis)].extent;
    for (OptOp op :
         {OptOp::Upcast, OptOp::Unroll, OptOp::Tile, OptOp::Thread, OptOp::Group, OptOp::Padto}) {
      if (filled && (op == OptOp::Thread || op == OptOp::Group)) continue;
      for (int64_t amt : op == OptOp::Thread ? thread_amounts(extent) : opt_amounts(op, threads))
        consider({op, axis, amt});
    }
    for (int other = axis + 1; other < n; ++other) consider({OptOp::Swap, axis, other});
  }
  // PACK addresses the buffers the kernel reads.
  for (int input = 0; input < static_cast<int>(input_slots(ast).size()); ++input)
    consider({OptOp::Pack, input, 0});
  return out;
}

std::vector<int64_t> opt_amounts(OptOp op, int threads) {
  int64_t t = std::max(threads, 1);
  switch (op) {
  case OptOp::Upcast: return {2, 3, 4, 7, 8, 16, 32}; // 7: rows of 7x7 and 14x14 maps whole
  case OptOp::Unroll: return {2, 3, 4, 8, 16, 32};
  case OptOp::Tile: return {16, 32, 64, 128};
  case OptOp::Thread:
  case OptOp::Group: return t > 1 ? std::vector<int64_t>{t, 2 * t, 4 * t} : std::vector<int64_t>{};
  case OptOp::Padto: return {8, 16, 32};
  case OptOp::Pack: return {0};
  case OptOp::Swap: return {};
  }
  return {};
}

} // namespace beamlab

// Features of kernels and plans; see features.hpp.
//
// Every size enters as log2(1 + x), so kernels a thousand times apart differ by ten, not by a
// thousandfold; counts of a few and fractions enter as they are. The names and the order are
// one table (kNames below) that feature_names() returns and both parts fill by name, so a
// feature added in one place is added everywhere.
#include "tuner/search/features.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace beamlab::tuner {
namespace {

// clang-format off
constexpr std::string_view kKernelNames[] = {
    // work and data
    "kernel.flops", "kernel.bytes", "kernel.output_bytes", "kernel.intensity", "kernel.buffers",
    // static op counts by family
    "kernel.alu_ops", "kernel.transcendental_ops", "kernel.index_ops", "kernel.index_divmods",
    "kernel.loads", "kernel.stores", "kernel.reduces", "kernel.casts", "kernel.gated_accesses",
    // dynamic counts: each op times the iterations it runs
    "kernel.transcendental_flops", "kernel.load_count",
    // dtypes
    "kernel.output_bits", "kernel.output_float", "kernel.min_data_bits", "kernel.max_data_bits",
    "kernel.data_dtypes",
    // loops
    "kernel.loop_axes", "kernel.reduce_axes", "kernel.loop_size", "kernel.reduce_size",
    "kernel.inner_loop", "kernel.inner_reduce",
};

// The Opt kinds in OptOp's order, and those whose amount is a size (SWAP's is an axis, PACK's 0).
constexpr std::string_view kOptNames[] = {"upcast", "unroll", "thread", "group",
                                          "tile",   "swap",   "padto",  "pack"};
constexpr bool kSized[] = {true, true, true, true, true, false, true, false};

constexpr std::string_view kPlanNames[] = {
    "plan.opts",
    "plan.count.upcast", "plan.count.unroll", "plan.count.thread", "plan.count.group",
    "plan.count.tile", "plan.count.swap", "plan.count.padto", "plan.count.pack",
    "plan.amount.upcast", "plan.amount.unroll", "plan.amount.thread", "plan.amount.group",
    "plan.amount.tile", "plan.amount.padto",
    // vectors and blocking
    "plan.lanes", "plan.upcast_size", "plan.unroll_size", "plan.tile_max",
    // the thread split
    "plan.threads", "plan.parallel_extent", "plan.chunks_per_thread", "plan.thread_balance",
    "plan.work_per_chunk",
    // size of what is compiled
    "plan.nodes", "plan.main_nodes", "plan.ops", "plan.stages", "plan.scratch_bytes",
    // the main stage's loops as they remain
    "plan.loop_axes", "plan.reduce_axes", "plan.loop_size", "plan.reduce_size",
    "plan.inner_extent", "plan.inner_is_reduce",
    // memory access along the innermost loop and the innermost lane axis
    "plan.inner_store_stride", "plan.inner_loads_contiguous", "plan.inner_loads_invariant",
    "plan.lane_store_contiguous", "plan.lane_loads_contiguous", "plan.lane_loads_invariant",
};
// clang-format on

constexpr size_t kKernelSize = std::size(kKernelNames);
constexpr size_t kPlanSize = std::size(kPlanNames);

/// log2(1 + x): sizes and counts that span orders of magnitude.
float size_feature(double x) { return static_cast<float>(std::log2(1.0 + std::max(0.0, x))); }

/// One part of a vector, filled by name: a name not in the table is a bug caught at once.
class Filler {
public:
  Filler(Features& out, size_t offset, std::span<const std::string_view> names)
      : out_(out), offset_(offset), names_(names) {}
  void set(std::string_view name, double value) {
    auto it = std::find(names_.begin(), names_.end(), name);
    internal_assert(it != names_.end()) << "no feature named '" << name << "'";
    out_[offset_ + static_cast<size_t>(it - names_.begin())] = static_cast<float>(value);
  }
  void set_size(std::string_view name, double value) { set(name, size_feature(value)); }

private:
  Features& out_;
  size_t offset_;
  std::span<const std::string_view> names_;
};

bool is_transcendental(Op op) {
  switch (op) {
  case Op::Exp2:
  case Op::Log2:
  case Op::Sin:
  case Op::Sqrt:
  case Op::Recip:
  case Op::Fdiv:
  case Op::Pow: return true;
  default: return false;
  }
}

/// Index arithmetic (addresses, gates) as opposed to arithmetic on the data.
bool is_index_math(const UOp& u) {
  if (u.dtype().scalar() == Scalar::Index) return true;
  return !u.src().empty() && u.src(0)->dtype().scalar() == Scalar::Index;
}

int64_t extent_of(const UOp& range) { return range.src(0)->vmax(); } // a symbolic one: its most

/// For every node, the product of the extents of the loops it runs in (a REDUCE's result no
/// longer varies with the loops it reduces): how often it executes. As kernel_cost counts.
std::unordered_map<const UOp*, double> iteration_counts(const std::vector<UOpPtr>& nodes) {
  std::unordered_map<const UOp*, std::vector<const UOp*>> ranges;
  std::unordered_map<const UOp*, double> count;
  for (const UOpPtr& u : nodes) {
    std::vector<const UOp*> mine;
    if (u->op() == Op::Range) mine.push_back(u.get());
    for (const UOpPtr& s : u->src()) {
      const std::vector<const UOp*>& theirs = ranges.at(s.get());
      mine.insert(mine.end(), theirs.begin(), theirs.end());
    }
    // Only the set matters (its product); sorting by address just dedupes it.
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    double n = 1;
    for (const UOp* r : mine) n *= static_cast<double>(extent_of(*r));
    count.emplace(u.get(), n);
    if (u->op() == Op::Reduce)
      std::erase_if(mine, [&](const UOp* r) {
        return std::any_of(u->src().begin() + 1, u->src().end(),
                           [&](const UOpPtr& own) { return own.get() == r; });
      });
    ranges.emplace(u.get(), std::move(mine));
  }
  return count;
}

/// Each buffer slot's bytes: the largest element index the kernel reaches, plus one.
std::vector<double> buffer_bytes(const std::vector<UOpPtr>& nodes) {
  std::vector<double> bytes;
  for (const UOpPtr& u : nodes) {
    if (u->op() != Op::Index || u->src(0)->op() != Op::DefineGlobal) continue;
    auto slot = static_cast<size_t>(u->src(0)->arg().as_int());
    if (bytes.size() <= slot) bytes.resize(slot + 1, 0);
    int64_t last = u->src(1)->vmax();
    if (last == INT64_MAX || last < 0) continue; // no usable bound
    double b = (static_cast<double>(last) + 1) * u->src(0)->dtype().base().itemsize();
    bytes[slot] = std::max(bytes[slot], b);
  }
  return bytes;
}

void fill_kernel(Filler& f, const UOpPtr& ast) {
  std::vector<UOpPtr> nodes = toposort(ast);
  std::unordered_map<const UOp*, double> runs = iteration_counts(nodes);
  double flops = 0, transcendental_flops = 0, load_count = 0;
  int alu = 0, transcendental = 0, index_ops = 0, divmods = 0, loads = 0, stores = 0, reduces = 0,
      casts = 0, gated = 0;
  int min_bits = 0, max_bits = 0;
  std::vector<Scalar> data_types;
  auto saw_data = [&](DType t) {
    int bits = t.scalar_type().bits();
    min_bits = min_bits == 0 ? bits : std::min(min_bits, bits);
    max_bits = std::max(max_bits, bits);
    if (std::find(data_types.begin(), data_types.end(), t.scalar()) == data_types.end())
      data_types.push_back(t.scalar());
  };
  DType output = Scalar::Void;
  for (const UOpPtr& u : nodes) {
    Op op = u->op();
    double n = runs.at(u.get());
    if (is_alu(op) && is_index_math(*u)) {
      ++index_ops;
      if (op == Op::Idiv || op == Op::Mod) ++divmods;
    } else if (is_alu(op) || op == Op::Reduce) {
      flops += n; // as kernel_cost counts: one per data ALU op or REDUCE step
      if (op == Op::Reduce)
        ++reduces;
      else if (is_transcendental(op))
        ++transcendental, transcendental_flops += n;
      else
        ++alu;
    }
    if (op == Op::Cast || op == Op::Bitcast) ++casts;
    if (op == Op::Index && u->src().size() > 2) ++gated;
    if (op == Op::Load) ++loads, load_count += n, saw_data(u->dtype());
    if (op == Op::Store) {
      ++stores;
      saw_data(u->src(1)->dtype());
      if (u->src(0)->src(0)->arg().as_int() == 0) output = u->src(1)->dtype();
    }
  }
  std::vector<double> bytes = buffer_bytes(nodes);
  double total_bytes = 0;
  for (double b : bytes) total_bytes += b;
  f.set_size("kernel.flops", flops);
  f.set_size("kernel.bytes", total_bytes);
  f.set_size("kernel.output_bytes", bytes.empty() ? 0 : bytes[0]);
  f.set_size("kernel.intensity", total_bytes > 0 ? flops / total_bytes : 0);
  f.set("kernel.buffers", static_cast<double>(bytes.size()));
  f.set_size("kernel.alu_ops", alu);
  f.set_size("kernel.transcendental_ops", transcendental);
  f.set_size("kernel.index_ops", index_ops);
  f.set_size("kernel.index_divmods", divmods);
  f.set_size("kernel.loads", loads);
  f.set_size("kernel.stores", stores);
  f.set_size("kernel.reduces", reduces);
  f.set_size("kernel.casts", casts);
  f.set_size("kernel.gated_accesses", gated);
  f.set_size("kernel.transcendental_flops", transcendental_flops);
  f.set_size("kernel.load_count", load_count);
  f.set("kernel.output_bits", output.is_void() ? 0 : output.scalar_type().bits());
  f.set("kernel.output_float", output.is_float() ? 1 : 0);
  f.set("kernel.min_data_bits", min_bits);
  f.set("kernel.max_data_bits", max_bits);
  f.set("kernel.data_dtypes", static_cast<double>(data_types.size()));

  double loop_size = 1, reduce_size = 1;
  int loop_axes = 0, reduce_axes = 0;
  int64_t inner_loop = 0, inner_reduce = 0;
  for (const Axis& a : kernel_axes(ast)) {
    if (a.kind == LoopKind::Reduce) {
      ++reduce_axes, reduce_size *= static_cast<double>(a.extent), inner_reduce = a.extent;
    } else {
      ++loop_axes, loop_size *= static_cast<double>(a.extent), inner_loop = a.extent;
    }
  }
  f.set("kernel.loop_axes", loop_axes);
  f.set("kernel.reduce_axes", reduce_axes);
  f.set_size("kernel.loop_size", loop_size);
  f.set_size("kernel.reduce_size", reduce_axes ? reduce_size : 0);
  f.set_size("kernel.inner_loop", inner_loop);
  f.set_size("kernel.inner_reduce", inner_reduce);
}

/// An index expression evaluated at points, for how far it moves when one loop steps: much
/// cheaper than the symbolic stride_of (a simplification per access and loop), and this runs
/// for every candidate.
class IndexProbe {
public:
  explicit IndexProbe(const UOpPtr& index) : nodes_(toposort(index)) {}

  /// The index's step when `range` goes up by one, if the same from the origin and from the
  /// middle of every loop (exact for affine indices; one with a division or modulo may step
  /// otherwise elsewhere); none when not.
  std::optional<int64_t> stride(const UOp* range) const {
    std::optional<int64_t> step = step_at(range, false);
    if (!step || step != step_at(range, true)) return std::nullopt;
    return step;
  }

private:
  std::optional<int64_t> step_at(const UOp* range, bool middle) const {
    std::optional<int64_t> from = value(range, 0, middle), to = value(range, 1, middle);
    if (!from || !to) return std::nullopt;
    return *to - *from;
  }

  /// The index with every loop at the origin (or its middle), `range` moved on by `step`.
  std::optional<int64_t> value(const UOp* range, int64_t step, bool middle) const {
    std::unordered_map<const UOp*, int64_t> v;
    for (const UOpPtr& u : nodes_) {
      std::optional<int64_t> x = evaluate(*u, v);
      if (u->op() == Op::Range) {
        int64_t n = extent_of(*u);
        x = middle ? std::max<int64_t>(0, std::min(n / 2, n - 2)) : 0;
        if (u.get() == range) *x += step;
      }
      if (!x) return std::nullopt;
      v.emplace(u.get(), *x);
    }
    return v.at(nodes_.back().get());
  }

  /// One node's value from its sources' (integer and bool arithmetic only).
  static std::optional<int64_t> evaluate(const UOp& u,
                                         const std::unordered_map<const UOp*, int64_t>& v) {
    auto src = [&](size_t i) { return v.at(u.src(i).get()); };
    switch (u.op()) {
    case Op::Const:
      if (u.dtype().is_float()) return std::nullopt;
      return u.const_value();
    case Op::DefineVar: return u.vmin();
    case Op::Cast: return src(0);
    case Op::Neg: return -src(0);
    case Op::Add: return src(0) + src(1);
    case Op::Sub: return src(0) - src(1);
    case Op::Mul: return src(0) * src(1);
    case Op::Idiv: return src(1) == 0 ? std::nullopt : std::optional(src(0) / src(1));
    case Op::Mod: return src(1) == 0 ? std::nullopt : std::optional(src(0) % src(1));
    case Op::Max: return std::max(src(0), src(1));
    case Op::CmpLt: return src(0) < src(1);
    case Op::CmpNe: return src(0) != src(1);
    case Op::CmpEq: return src(0) == src(1);
    case Op::And: return src(0) & src(1);
    case Op::Or: return src(0) | src(1);
    case Op::Where: return src(0) ? src(1) : src(2);
    default: return std::nullopt; // a loaded index, a range (set by the caller), ...
    }
  }

  std::vector<UOpPtr> nodes_;
};

/// How the main stage's loads and its store move along one of its loops.
struct AccessPattern {
  std::optional<int64_t> store_stride;              ///< of the first store; none: not constant
  double loads_contiguous = 0, loads_invariant = 0; ///< fractions of the loads
};

/// The access patterns along each of `ranges` (null: no such loop, an empty pattern).
std::vector<AccessPattern> access_along(const std::vector<UOpPtr>& nodes,
                                        const std::vector<const UOp*>& ranges) {
  std::vector<AccessPattern> out(ranges.size());
  std::vector<int> contiguous(ranges.size()), invariant(ranges.size());
  int loads = 0;
  bool stored = false;
  for (const UOpPtr& u : nodes) {
    bool is_load = u->op() == Op::Load && u->src(0)->op() == Op::Index;
    bool is_store = u->op() == Op::Store && !stored && u->src(0)->op() == Op::Index;
    if (!is_load && !is_store) continue;
    IndexProbe probe(u->src(0)->src(1));
    loads += is_load;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (!ranges[i]) continue;
      std::optional<int64_t> stride = probe.stride(ranges[i]);
      if (is_store) out[i].store_stride = stride;
      contiguous[i] += is_load && stride == 1;
      invariant[i] += is_load && stride == 0;
    }
    stored |= is_store;
  }
  for (size_t i = 0; i < ranges.size() && loads > 0; ++i) {
    out[i].loads_contiguous = static_cast<double>(contiguous[i]) / loads;
    out[i].loads_invariant = static_cast<double>(invariant[i]) / loads;
  }
  return out;
}

void fill_plan(Filler& f, const OptimizedKernel& k, const std::vector<Opt>& plan, int threads) {
  std::array<int, std::size(kOptNames)> count{};
  std::array<double, std::size(kOptNames)> amount{};
  int64_t tile_max = 0;
  for (const Opt& o : plan) {
    auto i = static_cast<size_t>(o.op);
    ++count[i];
    if (kSized[i]) amount[i] += std::log2(static_cast<double>(std::max<int64_t>(o.arg, 1)));
    if (o.op == OptOp::Tile) tile_max = std::max(tile_max, o.arg);
  }
  f.set("plan.opts", static_cast<double>(plan.size()));
  for (size_t i = 0; i < std::size(kOptNames); ++i) {
    f.set("plan.count." + std::string(kOptNames[i]), count[i]);
    if (kSized[i]) f.set("plan.amount." + std::string(kOptNames[i]), amount[i]);
  }

  double upcast = 1, unroll = 1, loop_size = 1, reduce_size = 1, iterations = 1;
  int64_t parallel = 0, inner_extent = 0;
  int loop_axes = 0, reduce_axes = 0;
  bool inner_is_reduce = false;
  std::optional<size_t> inner_axis, lane_axis;
  for (size_t i = 0; i < k.axes.size(); ++i) {
    const Axis& a = k.axes[i];
    auto n = static_cast<double>(a.extent);
    iterations *= n;
    switch (a.kind) {
    case LoopKind::Parallel: parallel = a.extent; break;
    case LoopKind::Loop: ++loop_axes, loop_size *= n; break;
    case LoopKind::Reduce: ++reduce_axes, reduce_size *= n; break;
    case LoopKind::Upcast: upcast *= n; break;
    case LoopKind::Unroll: unroll *= n; break;
    }
    if (!is_lane(a.kind)) {
      inner_axis = i, inner_extent = a.extent, inner_is_reduce = a.kind == LoopKind::Reduce;
    } else {
      lane_axis = i; // lanes are last; the last is the innermost (the first UPCAST's)
    }
  }
  f.set_size("plan.lanes", static_cast<double>(k.lanes));
  f.set_size("plan.upcast_size", upcast);
  f.set_size("plan.unroll_size", unroll);
  f.set_size("plan.tile_max", static_cast<double>(tile_max));

  f.set_size("plan.threads", threads);
  f.set_size("plan.parallel_extent", static_cast<double>(parallel));
  double chunks = parallel > 0 ? static_cast<double>(parallel) : 1;
  double t = std::max(threads, 1);
  f.set("plan.chunks_per_thread", parallel > 0 ? chunks / t : 0);
  // The cores busy over the rounds of chunks: 1 when the chunks divide evenly among them.
  f.set("plan.thread_balance", parallel > 0 ? chunks / (std::ceil(chunks / t) * t) : 0);
  f.set_size("plan.work_per_chunk", iterations / chunks);

  double nodes = 0;
  for (const UOpPtr& stage : k.stages) nodes += static_cast<double>(toposort(stage).size());
  std::vector<UOpPtr> main_nodes = toposort(k.main_stage());
  double scratch = 0;
  for (const ScratchBuffer& s : k.scratch)
    scratch += static_cast<double>(s.size) * s.dtype.scalar_type().itemsize();
  f.set_size("plan.nodes", nodes);
  f.set_size("plan.main_nodes", static_cast<double>(main_nodes.size()));
  f.set_size("plan.ops", static_cast<double>(main_nodes.size()) * static_cast<double>(k.lanes));
  f.set("plan.stages", static_cast<double>(k.stages.size()));
  f.set_size("plan.scratch_bytes", scratch);

  f.set("plan.loop_axes", loop_axes);
  f.set("plan.reduce_axes", reduce_axes);
  f.set_size("plan.loop_size", loop_axes ? loop_size : 0);
  f.set_size("plan.reduce_size", reduce_axes ? reduce_size : 0);
  f.set_size("plan.inner_extent", static_cast<double>(inner_extent));
  f.set("plan.inner_is_reduce", inner_is_reduce ? 1 : 0);

  // The main stage's RANGE of axis i has axis id i (apply_opts numbers them by position).
  auto range_of = [&](std::optional<size_t> axis) -> const UOp* {
    for (const UOpPtr& u : main_nodes)
      if (axis && u->op() == Op::Range &&
          u->arg().items().at(0).as_int() == static_cast<int64_t>(*axis))
        return u.get();
    return nullptr;
  };
  std::vector<AccessPattern> along =
      access_along(main_nodes, {range_of(inner_axis), range_of(lane_axis)});
  const AccessPattern &inner = along[0], &lane = along[1];
  f.set("plan.inner_store_stride",
        inner.store_stride ? size_feature(static_cast<double>(std::abs(*inner.store_stride))) : -1);
  f.set("plan.inner_loads_contiguous", inner.loads_contiguous);
  f.set("plan.inner_loads_invariant", inner.loads_invariant);
  f.set("plan.lane_store_contiguous", lane.store_stride == 1 ? 1 : 0);
  f.set("plan.lane_loads_contiguous", lane.loads_contiguous);
  f.set("plan.lane_loads_invariant", lane.loads_invariant);
}

} // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out(std::begin(kKernelNames), std::end(kKernelNames));
    out.insert(out.end(), std::begin(kPlanNames), std::end(kPlanNames));
    return out;
  }();
  return names;
}

Features kernel_features(const UOpPtr& ast) {
  Features out(kKernelSize, 0.0f);
  Filler f(out, 0, kKernelNames);
  fill_kernel(f, ast);
  return out;
}

Features plan_features(const OptimizedKernel& optimized, const Features& kernel,
                       const std::vector<Opt>& plan, int threads) {
  internal_assert(kernel.size() == kKernelSize)
      << "plan_features: the kernel part has " << kernel.size() << " features, not " << kKernelSize;
  Features out = kernel;
  out.resize(kKernelSize + kPlanSize, 0.0f);
  Filler f(out, kKernelSize, kPlanNames);
  fill_plan(f, optimized, plan, threads);
  return out;
}

Expected<Features> plan_features(const UOpPtr& ast, const Features& kernel,
                                 const std::vector<Opt>& plan, int threads) {
  Expected<OptimizedKernel> optimized = apply_opts(ast, plan);
  if (!optimized) return make_unexpected(optimized.error());
  return plan_features(*optimized, kernel, plan, threads);
}

} // namespace beamlab::tuner

// The kernel optimization space: a kernel's axes, and the Opts that transform them.
//
// A kernel AST (from the scheduler) has one RANGE per loop; its arg (axis id, kind) gives the
// loop's nesting position (lower ids outside) and kind. An Opt addresses an axis by its
// position among the kernel's loop and reduce axes in nesting order (upcast and unroll axes
// are already lanes, not loops, and are not addressed), so a text form like
// "UPCAST(1,16) THREAD(0,2)" means the same thing wherever it is read.
//
//   UPCAST(a, n)   loop axis a: its last n iterations per step become n vector lanes
//   UNROLL(a, n)   reduce axis a: the same, reduced across lanes each step
//   THREAD(a, n)   loop axis a: split into n chunks run in parallel across cores (outermost);
//                  on a kernel already parallel, its n parts join the parallel axis (which
//                  becomes old x n iterations), so several THREADs split several axes at once
//   GROUP(a, n)    reduce axis a: n partial reductions in parallel (joining the parallel axis
//                  as THREAD does: split-K), then a combining stage
//   TILE(a, n)     loop axis a: blocks of n, the block loop moved outermost (cache blocking)
//   SWAP(a, b)     axes a and b exchange nesting positions: two loop axes, or two reduce axes of
//                  one reduction
//   PADTO(a, n)    loop axis a runs to the next multiple of n, its extra iterations' memory
//                  accesses masked off (a 28-wide row as two full 16-lane vectors)
//   PACK(i, 0)     input i (the i-th buffer the kernel reads, by parameter slot) is copied
//                  before the kernel into a scratch buffer laid out in the kernel's loop order
//                  as it stands (matmul's B as contiguous panels under its register tile); the
//                  kernel reads the copy
//
// Applying a list is deterministic: the same AST and list always give the same stages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/uop.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

enum class OptOp { Upcast, Unroll, Thread, Group, Tile, Swap, Padto, Pack };

struct Opt {
  OptOp op;
  int axis;
  int64_t arg; ///< the amount, or SWAP's second axis
  bool operator==(const Opt&) const = default;
};

std::string_view opt_op_name(OptOp op);
/// "UPCAST(1,16)".
std::string to_string(const Opt& opt);
/// Space-separated opts; "" for none.
std::string to_string(const std::vector<Opt>& opts);
/// Inverse of to_string; the reason naming the bad token on failure.
Expected<std::vector<Opt>> parse_opts(std::string_view text);

/// The widest vector a kernel may compute in (OptimizedKernel::lanes).
inline constexpr int64_t kMaxOptLanes = 1024;

struct Axis {
  int64_t extent; ///< iterations; the most a symbolic extent can be
  LoopKind kind;
  bool symbolic = false; ///< the extent is known only when the kernel runs (split rounded up)
};

/// A buffer a kernel's stages need beyond the kernel's own (GROUP's partial results, PACK's
/// copies). It is bound to the DEFINE_GLOBAL slot after the kernel's buffers, in order.
struct ScratchBuffer {
  DType dtype;
  int64_t size;
};

/// A kernel with its Opts applied: stages run one after another (PACK's copies, the kernel,
/// GROUP's combining stage).
struct OptimizedKernel {
  std::vector<UOpPtr> stages;
  size_t main = 0; ///< the kernel's own stage in `stages` (after PACK's copies)
  std::vector<ScratchBuffer> scratch;
  std::vector<Axis> axes; ///< the main stage's axes in nesting order, lanes last
  /// The widest vector a node of the main stage has: the product of the upcast and unroll axes
  /// it varies with (stacked UNROLLs of one reduction multiply; sibling reductions' don't).
  int64_t lanes = 1;
  const UOpPtr& main_stage() const { return stages.at(main); }
};

/// Applies `opts` to `ast` in order; the first Opt that doesn't apply is rejected with the
/// reason, naming it.
Expected<OptimizedKernel> apply_opts(const UOpPtr& ast, const std::vector<Opt>& opts);

/// The axes of a kernel AST in nesting order, upcast and unroll axes last.
std::vector<Axis> kernel_axes(const UOpPtr& ast);

/// The buffer slots `ast` loads from, ascending: PACK(i, 0)'s input i is the i-th.
std::vector<int64_t> input_slots(const UOpPtr& ast);

/// How far the index `idx` moves when `range` steps by one, if that is a constant.
std::optional<int64_t> stride_of(const UOpPtr& idx, const UOpPtr& range);

/// How a plan's parallel work falls on `threads` cores, computed without running it. The
/// runtime splits the main stage's parallel axis (its `chunks` iterations, each the same work)
/// into one contiguous run per thread, over min(threads, chunks) threads.
struct ParallelProfile {
  int threads = 1;        ///< the cores it was asked about
  int64_t chunks = 1;     ///< parallel iterations (1: the kernel runs serially)
  int64_t used = 1;       ///< threads that get work: min(threads, chunks)
  int64_t per_thread = 1; ///< the most chunks one of them runs
  /// chunks / (used * per_thread): the busy threads' mean work over their most, 1 when even
  double balance = 1;
  int64_t work = 1;  ///< iterations of the main stage (every axis's extent multiplied)
  int64_t worth = 1; ///< the threads its work pays for (threads_worth)
  /// True when the plan fills the threads its work pays for, evenly: used >= worth and
  /// balance >= kMinBalance.
  bool fills() const;
  /// The threads' worth of work done in the time of the busiest: chunks / per_thread.
  double effective() const { return static_cast<double>(chunks) / static_cast<double>(per_thread); }
};
inline constexpr double kMinBalance = 0.9;
/// The fewest iterations worth one more thread: a smaller share runs faster than the thread
/// starts (about 2 us to fork and join).
inline constexpr int64_t kThreadGrain = int64_t{1} << 13;
/// The threads a kernel of `work` iterations pays for on `threads` cores: one per
/// kThreadGrain, at least 1, at most `threads` (1 below two grains).
int64_t threads_worth(int64_t work, int threads);
ParallelProfile parallel_profile(const OptimizedKernel& k, int threads);
/// The profile of a parallel axis of `chunks` iterations in a kernel of `work` iterations.
ParallelProfile parallel_profile(int64_t chunks, int64_t work, int threads);

/// A good default Opt list for this host with `threads` cores (see heuristic.cpp).
std::vector<Opt> heuristic_opts(const UOpPtr& ast, int threads);

/// The amounts a search tries for `op` (SWAP: none, its arg is an axis).
std::vector<int64_t> opt_amounts(OptOp op, int threads);

/// Every Opt that applies to the kernel after `applied`, for search: amounts from opt_amounts.
std::vector<Opt> candidate_actions(const UOpPtr& ast, const std::vector<Opt>& applied, int threads);

} // namespace beamlab

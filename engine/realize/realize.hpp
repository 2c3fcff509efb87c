// Realization: a schedule -> compiled kernels -> a prepared execution plan that runs them.
//
// For each kernel the optimization policy picks an Opt list (the heuristic by default; a
// tuner or a cache plugs in through OptPolicy, so the engine never depends on them). Each
// stage of the optimized kernel is expanded, lowered, compiled by LLVM and linked; compiled
// stages are cached in memory by the hash of their AST, so a kernel seen again is not
// compiled again. An ExecutionPlan owns the buffers: inputs are bound, outputs allocated, and
// intermediates share storage wherever their lifetimes (first write to last read) don't
// overlap. A plan runs any number of times without recompiling, and can profile each kernel.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/codegen/compile.hpp"
#include "engine/opt/opt.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"
#include "engine/schedule/schedule.hpp"

namespace beamlab {

/// Chooses each kernel's Opts.
class OptPolicy {
public:
  virtual ~OptPolicy() = default;
  virtual std::vector<Opt> opts_for(const ScheduleItem& kernel, int threads) const = 0;
  /// The Opts of a kernel of constants, run once before a plan's first run (a Winograd filter
  /// transform): not worth a search, so a policy that searches answers without one.
  virtual std::vector<Opt> opts_for_once(const ScheduleItem& kernel, int threads) const {
    return opts_for(kernel, threads);
  }
};

/// The hand-written heuristic, with explicit overrides by kernel name or key (hex).
class HeuristicPolicy : public OptPolicy {
public:
  std::vector<Opt> opts_for(const ScheduleItem& kernel, int threads) const override;
  /// Use `opts` for the kernels named `name_or_key` (a kernel name, its hex key, or "*").
  void set(const std::string& name_or_key, std::vector<Opt> opts) {
    overrides_[name_or_key] = std::move(opts);
  }

private:
  std::unordered_map<std::string, std::vector<Opt>> overrides_;
};

/// The policy a realize without RealizeOptions::policy uses: the heuristic unless a program
/// installs another (a tuner's, for BEAM=W; see tuner/batch/policy.hpp). Null restores the
/// heuristic. The policy must outlive every realize that uses it.
void set_default_policy(const OptPolicy* policy);
const OptPolicy& default_policy();

/// A compiled, linked stage.
struct CompiledStage {
  CompiledKernel kernel;
  std::shared_ptr<const LoadedKernel> code;
};

/// Expands, lowers, compiles and links one stage AST, through the process-wide cache keyed by
/// the AST's hash. A compile or link failure is returned, not thrown.
Expected<std::shared_ptr<const CompiledStage>> compile_stage(const UOpPtr& stage,
                                                             const std::string& name);
/// Stages compiled so far (cache size) and how many lookups hit.
struct CompileCacheStats {
  size_t entries = 0;
  size_t hits = 0;
  size_t misses = 0;
};
CompileCacheStats compile_cache_stats();

/// Work and traffic of a kernel: arithmetic on data over its loop extents (not index math, nor
/// the comparisons, logic and selects (WHERE) that only choose a value: counted, a Winograd
/// transform's coefficients picked by position put it past the FMA peak), and the bytes of
/// every buffer it touches once. A kernel over symbolic variables
/// counts each at its value in `values`, or at its upper bound: a buffer indexed by a loop of
/// symbolic extent counts the share of it that loop reaches (rows 0..n-1 of 512: n/512; exact
/// for a buffer sized by the loop's largest extent, as a scheduled one is).
struct KernelCost {
  int64_t flops = 0;
  int64_t bytes = 0;
};
KernelCost kernel_cost(const ScheduleItem& kernel, const VarValues& values = {});

/// One kernel compiled with an Opt list, run on buffers its caller owns: what a tuner's
/// sandboxed worker builds and times. It owns the scratch its Opts need (GROUP's partials).
class KernelCandidate {
public:
  struct Error {
    bool rejected = false; ///< the Opts don't apply (else the compile failed)
    std::string message;
  };
  /// Applies `opts` to `ast` (a kernel AST from the scheduler) and compiles every stage.
  static Expected<KernelCandidate, Error> build(const UOpPtr& ast, const std::vector<Opt>& opts,
                                                const std::string& name);
  /// Runs every stage once on `buffers`: one pointer per DEFINE_GLOBAL slot of the AST, with
  /// `vars` giving the value of each symbolic variable the kernel runs over.
  void run(const std::vector<void*>& buffers, int threads, const VarValues& vars = {}) const;

  uint64_t code_hash() const { return code_hash_; } ///< over every stage's machine code
  size_t code_bytes() const { return code_bytes_; } ///< object sizes, a measure of bloat
  double compile_ms() const { return compile_ms_; }
  const OptimizedKernel& optimized() const { return optimized_; }

private:
  OptimizedKernel optimized_;
  std::vector<std::shared_ptr<const CompiledStage>> stages_;
  std::vector<std::shared_ptr<Buffer>> scratch_;
  uint64_t code_hash_ = 0;
  size_t code_bytes_ = 0;
  double compile_ms_ = 0;
};

struct RealizeOptions {
  int threads = 0;                   ///< 0: every core (OMP_NUM_THREADS)
  const OptPolicy* policy = nullptr; ///< null: default_policy()
  VarValues vars = {};               ///< the symbolic variables' values (ExecutionPlan::bind)
};

/// A UserError when `values` names a variable not in `variables`, or a value outside its range.
void check_values(const std::vector<Variable>& variables, const VarValues& values);

/// Writes `v` as element `i` of `base`, an array of `dtype`; `exact` is an integer dtype's
/// value (a 64-bit integer a double can't hold).
void put_element(void* base, DType dtype, size_t i, double v, int64_t exact);
/// Every element of `buffer` set to `value`, a CONST of the buffer's dtype.
void fill_buffer(Buffer& buffer, const UOp& value);

/// Buffers by BUFFER id.
using BufferMap = std::unordered_map<int64_t, std::shared_ptr<Buffer>>;

struct KernelProfile {
  std::string name;
  uint64_t key = 0;
  std::string opts;
  double ms = 0;                  ///< median of the runs
  std::vector<double> samples_ms; ///< every sample (a launch, or a batch's mean), in order
  int launches_per_sample = 1;
  double gflops = 0;
  double gbps = 0;
  double compile_ms = 0;
  KernelCost cost;
  ParallelProfile split; ///< how its parallel work falls on the plan's threads
  bool once = false;     ///< a kernel of constants, run once before the plan's first run (ms 0)
};

/// One kernel of a traced execution: when it started and ended and what each thread did,
/// in ns from the start of the execution. The spans of a kernel with several stages (GROUP)
/// follow in stage order.
struct KernelTrace {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::vector<ThreadSpan> spans;
};

struct PlannedKernel {
  ScheduleItem item;
  std::vector<Opt> opts;
  OptimizedKernel optimized;
  std::vector<std::shared_ptr<const CompiledStage>> stages;
  std::vector<int> slots; ///< the plan's buffer for each DEFINE_GLOBAL slot (incl. scratch)
  /// Stages run once, before the plan's first run, and skipped by every run: PACK copies of
  /// constant buffers (a model's weights into a GEMM's panels), and every stage of a kernel
  /// of constants (`once`).
  std::vector<bool> prepared;
  /// It reads only constants (a model's weights, or what such kernels computed from them: a
  /// Winograd filter transform), so its output is a constant too, computed once.
  bool once = false;
};

class ExecutionPlan {
public:
  /// Compiles every kernel of `schedule`; `inputs` binds the BUFFERs that hold data already.
  /// A kernel whose Opts don't apply or that fails to compile is a UserError naming it.
  static ExecutionPlan prepare(const Schedule& schedule, const BufferMap& inputs,
                               const RealizeOptions& options = {});

  /// The symbolic variables the plan's kernels run over, by name.
  const std::vector<Variable>& variables() const { return variables_; }
  /// Sets the variables' values for the runs that follow, without compiling anything: a
  /// UserError names a variable the plan doesn't have, or a value outside its range.
  void bind(const VarValues& values);

  /// Runs every kernel once, in order (a UserError if a variable has no value).
  void run();
  /// bind(values), then run(): the plan at other sizes, nothing compiled.
  void run(const VarValues& values) {
    bind(values);
    run();
  }
  /// Runs the plan `repeats` times (after one warm-up) and reports each kernel's median. With
  /// `min_sample_ms`, each sample is the mean of as many back-to-back launches as take that
  /// long (calibrated per kernel), so a microsecond kernel's samples aren't launch jitter.
  std::vector<KernelProfile> profile(int repeats, double min_sample_ms = 0);
  /// Each kernel's plan, cost, compile time and split over the plan's threads, running
  /// nothing (times 0): a plan for more cores than this machine has can be read here.
  std::vector<KernelProfile> describe() const;
  /// The whole plan's time, `repeats` samples in ms (after one warm-up), each the mean of as
  /// many back-to-back runs as take `min_sample_ms` (calibrated like profile's).
  std::vector<double> sample(int repeats, double min_sample_ms = 0);
  /// Runs the plan once (after one warm-up) recording every thread's span of every launch:
  /// per kernel, in order, where the time went across cores.
  std::vector<KernelTrace> trace();

  /// The buffer holding a BUFFER node of the schedule.
  std::shared_ptr<Buffer> buffer(const UOp& buffer_node) const;
  const std::vector<PlannedKernel>& kernels() const { return kernels_; }
  /// The threads each launch uses (RealizeOptions::threads, or every core).
  int threads() const { return threads_; }
  /// Bytes allocated for intermediates and scratch (after sharing by liveness).
  size_t intermediate_bytes() const { return intermediate_bytes_; }
  /// Intermediate BUFFERs and the number of storages they share.
  size_t intermediate_count() const { return intermediate_count_; }
  size_t storage_count() const { return storage_count_; }

private:
  void run_kernel(const PlannedKernel& k, std::vector<ThreadSpan>* trace = nullptr);
  /// The kernel's stages that were run when the plan was prepared (`prepared`), or the others.
  void run_stages(const PlannedKernel& k, bool prepared, std::vector<ThreadSpan>* trace = nullptr);
  KernelProfile describe(const PlannedKernel& k) const;
  std::vector<std::shared_ptr<Buffer>> buffers_;
  bool prepared_ran_ = false; ///< the kernels' prepared stages have run
  std::unordered_map<int64_t, int> slot_of_id_;
  std::vector<PlannedKernel> kernels_;
  std::vector<Variable> variables_;
  VarValues values_;
  int threads_ = 0;
  size_t intermediate_bytes_ = 0, intermediate_count_ = 0, storage_count_ = 0;
};

} // namespace beamlab

// What a tuner needs from the engine beyond the Tensor API: a kernel in the text form a
// sandboxed worker receives, read back there, built with an Opt list and run on raw buffers.
//
//   KernelTask t = kernel_task(tensor.schedule().items[0]);   // tuner side
//   UOpPtr ast = *parse_graph(t.ast);                          // worker side
//   auto c = KernelCandidate::build(ast, opts, t.name);        // compile, then c->run(ptrs, n)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/codegen/compile.hpp"
#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/realize/machine_limits.hpp"
#include "engine/runtime/openmp.hpp"
#include "engine/support/process.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab {

struct KernelBufferSpec {
  DType dtype; ///< element type
  int64_t count = 0;
  /// Constants in a real run (ScheduleItem::constant_slots): evicted from the caches before
  /// each timed run, as a real run finds them.
  bool constant = false;
  int64_t bytes() const { return count * dtype.itemsize(); }
};

struct KernelTask {
  std::string name;
  uint64_t key = 0;
  std::string ast;                       ///< print_graph of the AST; parse_graph reads it back
  std::vector<KernelBufferSpec> buffers; ///< per DEFINE_GLOBAL slot; 0 is the output
  int64_t reduce_length = 1;             ///< elements combined into each output (tolerances)
  /// kernel_cost, for rooflines: of one timed run (a kernel over symbolic variables: summed
  /// over its launches at `tune_at`).
  int64_t flops = 0, bytes = 0;
  /// The AST itself, when known (kernel_task, task_from_record); else `ast` is parsed.
  UOpPtr graph = nullptr;
  /// A kernel over symbolic variables: the values it is timed at (a sample is one launch at
  /// each, back to back) and the values every candidate is checked at (each check's inputs
  /// run at each). Empty for a fixed shape. kernel_task fills them with default_bindings.
  std::vector<VarValues> tune_at = {}, check_at = {};
};

/// The task of a scheduled kernel; one over symbolic variables is tuned at `tune_at` (each
/// binding cut to its own variables; empty: default_bindings).
KernelTask kernel_task(const ScheduleItem& item, const std::vector<VarValues>& tune_at = {});
/// The task's AST: `graph`, or `ast` parsed once more; "kernel NAME: why" when it doesn't parse.
Expected<UOpPtr> task_graph(const KernelTask& task);
/// The symbolic variables a kernel's loops run over, with their ranges, by name (none for a
/// fixed shape).
std::vector<Variable> kernel_variables(const UOpPtr& ast);

/// Where a kernel over symbolic variables is tuned and checked, by default: tuned at every
/// variable's upper bound and at a small value (an eighth of it, at least the lower bound),
/// checked there and at the lower bound, where a plan's remainder handling does the most.
struct KernelBindings {
  std::vector<VarValues> tune_at, check_at;
};
KernelBindings default_bindings(const UOpPtr& ast);
/// The default's values: every variable at its upper bound, then at an eighth of it.
std::vector<VarValues> default_tune_at(const std::vector<Variable>& vars);
/// Tuned at `tune_at` instead (each binding cut to the kernel's own variables; a corpus gives
/// them for a whole program), checked there and at both ends of the ranges.
KernelBindings bindings_at(const UOpPtr& ast, const std::vector<VarValues>& tune_at);
/// "seq=512, seq=64" (a binding of several variables: "m=8 n=16").
std::string bindings_str(const std::vector<VarValues>& bindings);

/// Bumped whenever the meaning of an Opt list changes (what apply_opts builds from it), so
/// stored plans are not replayed under another meaning.
inline constexpr int kOptVersion = 1;

/// The machine a plan is tuned for, as the tuning cache keys it.
struct HostIdentity {
  std::string cpu_model;       ///< from /proc/cpuinfo ("unknown" elsewhere)
  std::string isa;             ///< the CPU name and features LLVM targets
  int cores = 0;               ///< logical cores (the machine's, whatever this process may use)
  std::string llvm_version;    ///< "19.1.7"
  std::string beamlab_version; ///< "0.1.0"
};
HostIdentity host_identity();

/// The CPUs this process may run on: its affinity mask, which a Slurm allocation, taskset or a
/// cgroup cpuset narrows (the machine's online CPUs when the mask can't be read); at least 1.
/// What the tuner sizes its worker pool by and what OpenMP's default thread count follows.
int usable_cores();
/// Those CPUs as a list like "0-3,6" (empty when the mask can't be read).
std::string allowed_cpus();

/// The compiler a plan is tuned with: beamlab and LLVM versions, the hash recipe and the Opt
/// version, e.g. "beamlab 0.1.0, LLVM 19.1.7, hash v1, opts v1".
std::string compiler_identity();

/// The product of the extents of an AST's reduce ranges (1 without reductions).
int64_t reduce_length(const UOpPtr& ast);

} // namespace beamlab

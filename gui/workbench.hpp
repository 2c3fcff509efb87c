// The kernel workbench's engine side: a kernel's axes and generated code for an Opt list
// (compiled in this process, for reading), and an Opt list tried by hand (compiled, checked
// and timed in a sandbox, and journaled in the database as a "by hand" run).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tuner/measure/pool.hpp"
#include "tuner/search/search.hpp"
#include "tuner/store/journal.hpp"

namespace beamlab::gui {

/// The optimized kernel's axes and each stage's LLVM IR and assembly.
struct KernelCode {
  std::vector<Axis> axes;
  std::string llvm_ir, assembly; ///< the stages', one after another
};

/// The code `opts` build for `ast`; the reason (naming the Opt) when they don't apply or the
/// compile fails.
Expected<KernelCode> kernel_code(const std::string& ast, const std::vector<Opt>& opts,
                                 const std::string& name);

/// What trying a plan by hand found.
struct HandResult {
  tuner::Candidate candidate; ///< the plan's: status, error, samples
  double heuristic_ms = 0;    ///< re-measured beside it
  std::vector<double> heuristic_samples_ms;
  int64_t run_id = 0; ///< the "by hand" run it was journaled in
};

/// Measures Opt lists tried by hand on one sandbox pool, and journals them. Thread-safe: one
/// measurement at a time.
class HandBench {
public:
  explicit HandBench(std::string db_path) : db_path_(std::move(db_path)) {}
  /// Checks and times `opts` on `task` in a sandbox (with the heuristic, for comparison).
  /// Rejected plans come back at once with status rejected and the reason.
  Expected<HandResult> measure(const KernelTask& task, const std::vector<Opt>& opts);

private:
  std::string db_path_;
  std::mutex mutex_;
  std::unique_ptr<tuner::WorkerPool> pool_;
  int64_t run_id_ = 0;
};

} // namespace beamlab::gui

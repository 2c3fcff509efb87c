// Kernel code for reading and plans tried by hand; see workbench.hpp.
#include "gui/workbench.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/realize/pipeline.hpp"
#include "tuner/store/run.hpp"

namespace beamlab::gui {

Expected<KernelCode> kernel_code(const std::string& ast_text, const std::vector<Opt>& opts,
                                 const std::string& name) {
  try {
    auto ast = parse_graph(ast_text);
    if (!ast) return make_unexpected(ast.error().str("ast"));
    auto optimized = optimize_kernel(*ast, opts);
    if (!optimized) return make_unexpected(optimized.error());
    KernelCode code;
    code.axes = optimized->axes;
    for (size_t i = 0; i < optimized->stages.size(); ++i) {
      std::string stage = stage_name(name, *optimized, i);
      auto k = generate_code(optimized->stages[i],
                             {.name = stage, .keep_llvm_ir = true, .keep_assembly = true});
      if (!k) return make_unexpected("compiling " + stage + ": " + k.error());
      code.llvm_ir += k->llvm_ir;
      code.assembly += k->assembly;
    }
    return code;
  } catch (const std::exception& e) {
    return make_unexpected(std::string(e.what()));
  }
}

Expected<HandResult> HandBench::measure(const KernelTask& task, const std::vector<Opt>& opts) {
  std::lock_guard lock(mutex_);
  HandResult out;
  out.candidate.opts = opts;
  auto ast = task_graph(task);
  if (!ast) return make_unexpected(ast.error());
  if (auto applied = apply_opts(*ast, opts); !applied) {
    out.candidate.status = tuner::Status::rejected;
    out.candidate.error = applied.error();
    return out;
  }
  try {
    if (!pool_) {
      tuner::PoolOptions o;
      o.workers = 2;
      o.sandbox.threads = usable_cores();
      pool_ = std::make_unique<tuner::WorkerPool>(o);
    }
    tuner::SearchSettings s;
    s.max_iterations = 0;
    s.seeds = {opts};
    s.finalists = 3;
    s.final_rounds = 3;
    s.time_budget_s = 60;
    s.early_stop = 1e9;           // a plan tried by hand is timed to the end, however slow
    s.confirm_in_process = false; // no winner is claimed: the plan is shown as measured
    auto r = tuner::tune_kernel(task, *pool_, s);
    if (!r) return make_unexpected(r.error());
    auto it = std::find_if(r->candidates.begin(), r->candidates.end(),
                           [&](const tuner::Candidate& c) { return c.opts == opts; });
    if (it == r->candidates.end()) {
      // The plan builds the same kernel as the heuristic or the unoptimized one.
      it = std::find_if(r->candidates.begin(), r->candidates.end(), [&](const tuner::Candidate& c) {
        return tuner::plan_hash(*ast, c.opts) == tuner::plan_hash(*ast, opts);
      });
      internal_assert(it != r->candidates.end()) << "the plan tried by hand was not measured";
    }
    out.candidate = *it;
    out.candidate.opts = opts;
    out.heuristic_ms = r->heuristic_ms;
    out.heuristic_samples_ms = r->candidates.at(static_cast<size_t>(r->heuristic)).samples_ms;
    db::Database db(db_path_);
    tuner::ActiveRun run =
        run_id_ == 0 ? tuner::ActiveRun::begin(db, {.kind = db::RunKind::tune,
                                                    .label = "by hand",
                                                    .command = "beamlab-gui (Opts tried by hand)",
                                                    .settings = settings_json(s).dump(),
                                                    .git_revision = ""})
                     : tuner::ActiveRun::resume(db, run_id_);
    run_id_ = out.run_id = run.id();
    tuner::journal_hand_tried(db, run.id(), task, *r, out.candidate);
    run.finish(false, false);
    return out;
  } catch (const std::exception& e) {
    return make_unexpected(std::string(e.what()));
  }
}

} // namespace beamlab::gui

// Kernel code for reading and plans tried by hand; see workbench.hpp.
#include "gui/workbench.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "engine/codegen/expand.hpp"
#include "engine/codegen/lower.hpp"

namespace beamlab::gui {

Expected<KernelCode> kernel_code(const std::string& ast_text, const std::vector<Opt>& opts,
                                 const std::string& name) {
  try {
    auto ast = parse_graph(ast_text);
    if (!ast) return make_unexpected(ast.error().str("ast"));
    auto optimized = apply_opts(*ast, opts);
    if (!optimized) return make_unexpected(optimized.error());
    KernelCode code;
    code.axes = optimized->axes;
    for (size_t i = 0; i < optimized->stages.size(); ++i) {
      UOpPtr lowered = lower_kernel(expand_upcasts(optimized->stages[i]));
      std::string stage = optimized->stages.size() > 1 ? fmt::format("{}_s{}", name, i) : name;
      auto k =
          compile_kernel(lowered, {.name = stage, .keep_llvm_ir = true, .keep_assembly = true});
      if (!k) return make_unexpected("compiling " + stage + ": " + k.error());
      code.llvm_ir += k->llvm_ir;
      code.assembly += k->assembly;
    }
    return code;
  } catch (const std::exception& e) {
    return make_unexpected(std::string(e.what()));
  }
}

namespace {

// The hand run's tuning of the kernel: every plan tried on it, appended.
void journal(db::Database& db, int64_t run_id, const KernelTask& task, const tuner::TuneResult& r,
             const tuner::Candidate& tried, const tuner::SearchSettings& settings, int threads) {
  int64_t kernel_id = db.upsert_kernel(tuner::kernel_record(task));
  db::Tuning t =
      db.open_tuning(run_id, kernel_id, threads, "by hand", settings.to_json().dump(), "", 0);
  std::vector<db::CandidateRow> old = db.candidates(t.id);
  int next = 0;
  for (const db::CandidateRow& c : old) next = std::max(next, c.seq + 1);
  std::vector<db::CandidateRow> rows;
  if (old.empty()) {
    // The first plan tried on the kernel: the reference and the heuristic come first.
    std::vector<int> ids = {r.empty};
    if (r.heuristic != r.empty) ids.push_back(r.heuristic);
    for (int id : ids) {
      rows.push_back(tuner::candidate_row(r.candidates.at(static_cast<size_t>(id))));
      rows.back().seq = next++;
    }
  }
  rows.push_back(tuner::candidate_row(tried));
  rows.back().seq = next;
  rows.back().parent = -1;
  db.save_candidates(t.id, rows);
  // The tuning's summary: the fastest plan tried by hand so far (the reference aside).
  rows.insert(rows.begin(), old.begin(), old.end());
  t.status = "done";
  t.heuristic_opts = to_string(r.candidates.at(static_cast<size_t>(r.heuristic)).opts);
  if (r.heuristic_ms > 0) t.heuristic_ms = r.heuristic_ms;
  double best = 0;
  for (const db::CandidateRow& c : rows) {
    if (c.status != "ok" || c.samples_ms.empty() || c.seq == 0) continue;
    double median = beamlab::quantile(c.samples_ms, 0.5);
    if (best == 0 || median < best) {
      best = median;
      t.winner_opts = c.opts;
      t.winner_ms = median;
    }
  }
  t.stop_reason = "plans tried by hand";
  db.finish_tuning(t);
}

} // namespace

Expected<HandResult> HandBench::measure(const KernelTask& task, const std::vector<Opt>& opts) {
  std::lock_guard lock(mutex_);
  HandResult out;
  out.candidate.opts = opts;
  auto ast = parse_graph(task.ast);
  if (!ast) return make_unexpected(ast.error().str("ast"));
  if (auto applied = apply_opts(*ast, opts); !applied) {
    out.candidate.status = tuner::Status::rejected;
    out.candidate.error = applied.error();
    return out;
  }
  try {
    if (!pool_) {
      tuner::PoolOptions o;
      o.workers = 2;
      o.sandbox.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
      pool_ = std::make_unique<tuner::WorkerPool>(o);
    }
    tuner::SearchSettings s;
    s.max_iterations = 0;
    s.seeds = {opts};
    s.finalists = 3;
    s.final_rounds = 3;
    s.time_budget_s = 60;
    s.early_stop = 1e9; // a plan tried by hand is timed to the end, however slow
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
    db::Database db(db_path_);
    if (run_id_ == 0) {
      run_id_ = db.begin_run({.device_id = db.upsert_device(tuner::this_device()),
                              .kind = db::RunKind::tune,
                              .label = "by hand",
                              .command = "beamlab-gui (Opts tried by hand)",
                              .settings = s.to_json().dump(),
                              .git_revision = "",
                              .host = tuner::host_name()});
    } else {
      db.reopen_run(run_id_);
    }
    journal(db, run_id_, task, *r, out.candidate, s, r->threads);
    db.end_run(run_id_, db::RunStatus::done);
    out.run_id = run_id_;
    return out;
  } catch (const std::exception& e) {
    return make_unexpected(std::string(e.what()));
  }
}

} // namespace beamlab::gui

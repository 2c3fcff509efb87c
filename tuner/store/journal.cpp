// The tuning journal; see journal.hpp.
#include "tuner/store/journal.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "tuner/measure/fidelity.hpp"

namespace beamlab::tuner {

TuningJournal::TuningJournal(db::Database& db, int64_t run_id, const KernelTask& task,
                             const std::string& workload, int threads,
                             const SearchSettings& settings, const std::string& actions,
                             double budget_s, const std::vector<WarmSeed>& warm)
    : db_(db) {
  int64_t kernel_id = db.upsert_kernel(kernel_record(task));
  nlohmann::json recorded = settings_json(settings);
  if (!warm.empty()) recorded["warm_start"] = warm_start_json(warm);
  tuning_ =
      db.open_tuning(run_id, kernel_id, threads, workload, recorded.dump(), actions, budget_s);
  if (finished()) return;
  for (const db::CandidateRow& row : db.candidates(tuning_.id))
    replay_.emplace(row.opts, candidate_from_row(row));
}

void TuningJournal::record(const Event& e) {
  if ((e.kind == Event::Kind::settled || e.kind == Event::Kind::reference) && e.candidate)
    db_.save_candidate(tuning_.id, candidate_row(*e.candidate));
}

void TuningJournal::finish(const TuneResult& r) {
  std::vector<db::CandidateRow> rows;
  for (const Candidate& c : r.candidates) rows.push_back(candidate_row(c));
  db_.save_candidates(tuning_.id, rows);
  summarize(tuning_, r);
  db_.finish_tuning(tuning_);
}

void TuningJournal::fail(const std::string& error) {
  tuning_.status = db::TuningStatus::failed;
  tuning_.error = error;
  db_.finish_tuning(tuning_);
}

namespace {

// The search's verdict timed again in this process before it is journaled and cached
// (tuner/measure/fidelity.hpp). A winner the real engine runs slower than the heuristic,
// beyond noise, is overruled: the heuristic's plan is kept.
void check_fidelity(TuneResult& r, const KernelTask& task, const UOpPtr& ast, int threads,
                    WorkerPool& pool) {
  // Only a verdict the re-measurement reached: both timed there, in paired rounds.
  if (r.winner < 0 || r.heuristic < 0 || r.winner == r.heuristic ||
      r.candidates.at(static_cast<size_t>(r.heuristic)).status != Status::ok ||
      r.speedup.rounds == 0 || r.heuristic_ms <= 0)
    return;
  Fidelity f = check_in_process(
      task, ast, r.best().opts, r.candidates.at(static_cast<size_t>(r.heuristic)).opts, threads,
      pool.gate(), std::max(2, r.settings.final_rounds), std::max(1, r.settings.final_runs));
  if (!f.checked()) {
    r.fidelity = "unchecked: " + f.error;
    return;
  }
  r.in_process = f.in_process;
  if (f.in_process.hi < 1) {
    r.fidelity = fmt::format("overruled: the winner ran {:.2f}x the heuristic's time in process "
                             "({:.4f} vs {:.4f} ms); the heuristic's plan is kept",
                             1 / f.in_process.estimate, f.winner_ms, f.heuristic_ms);
    r.winner = r.heuristic;
    r.winner_ms = r.heuristic_ms;
    r.speedup = PairedRatio{1, 1, 1, r.speedup.rounds};
    r.tie_with_heuristic = false;
    // The runner-up comparison was the old winner's.
    r.runner_up = {};
    r.tie = false;
    r.noise = 0;
    return;
  }
  double gap = f.in_process.estimate / r.speedup.estimate - 1;
  r.fidelity = std::abs(gap) <= 0.05 ? "agrees" : fmt::format("differs by {:+.0f}%", 100 * gap);
}

} // namespace

Expected<TuneResult> tune_journaled(const KernelTask& task, const std::string& workload,
                                    WorkerPool& pool, const SearchSettings& settings,
                                    CacheContext& ctx, const EventSink& sink,
                                    const std::vector<WarmSeed>& warm) {
  auto ast = task_graph(task);
  if (!ast) return make_unexpected(ast.error());
  int threads = settings.threads > 0 ? settings.threads : pool.sandbox_options().threads;
  std::string actions = action_space(*ast, threads);
  SearchSettings seeded = settings;
  for (std::vector<Opt>& plan : seed_plans(warm)) seeded.seeds.push_back(std::move(plan));
  std::unique_ptr<TuningJournal> journal;
  if (ctx.db && ctx.run_id > 0 && writes(ctx.mode))
    journal = std::make_unique<TuningJournal>(*ctx.db, ctx.run_id, task, workload, threads,
                                              settings, actions, settings.time_budget_s, warm);
  EventSink record = [&](const Event& e) {
    if (journal) journal->record(e);
    if (sink) sink(e);
  };
  Expected<TuneResult> r =
      tune_kernel(task, pool, seeded, record, journal ? &journal->replay() : nullptr);
  if (!r) {
    if (journal) journal->fail(r.error());
    return r;
  }
  if (!settings.control || !settings.control->cancelled())
    check_fidelity(*r, task, *ast, threads, pool);
  if (journal) journal->finish(*r);
  if (ctx.db) cache_store(ctx, *r, *ast, actions, !warm.empty());
  return r;
}

void journal_hand_tried(db::Database& db, int64_t run_id, const KernelTask& task,
                        const TuneResult& r, const Candidate& tried) {
  int64_t kernel_id = db.upsert_kernel(kernel_record(task));
  db::Tuning t = db.open_tuning(run_id, kernel_id, r.threads, kHandTriedWorkload,
                                settings_json(r.settings).dump(), "", 0);
  std::vector<db::CandidateRow> old = db.candidates(t.id);
  int next = 0;
  for (const db::CandidateRow& c : old) next = std::max(next, c.seq + 1);
  std::vector<db::CandidateRow> rows;
  if (old.empty()) {
    // The first plan tried on the kernel: the reference and the heuristic come first.
    std::vector<int> ids = {r.empty};
    if (r.heuristic != r.empty) ids.push_back(r.heuristic);
    for (int id : ids) {
      rows.push_back(candidate_row(r.candidates.at(static_cast<size_t>(id))));
      rows.back().seq = next++;
    }
  }
  rows.push_back(candidate_row(tried));
  rows.back().seq = next;
  rows.back().parent = -1;
  db.save_candidates(t.id, rows);
  // The tuning's summary: the fastest plan tried by hand so far (the reference aside).
  rows.insert(rows.begin(), old.begin(), old.end());
  t.status = db::TuningStatus::done;
  t.heuristic_opts = beamlab::to_string(r.candidates.at(static_cast<size_t>(r.heuristic)).opts);
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

} // namespace beamlab::tuner

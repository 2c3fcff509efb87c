// The tuning journal; see journal.hpp.
#include "tuner/store/journal.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "tuner/search/winner.hpp"

namespace beamlab::tuner {

namespace {

std::string recorded_bindings(const db::Tuning& t, const char* key) {
  auto settings = nlohmann::json::parse(t.settings, nullptr, false);
  if (!settings.is_object() || !settings.contains(key)) return "";
  try {
    return bindings_str(settings[key].get<std::vector<VarValues>>());
  } catch (const nlohmann::json::exception&) {
    return "(unreadable)";
  }
}

} // namespace

std::string tuned_at(const db::Tuning& t) { return recorded_bindings(t, "tuned_at"); }
std::string checked_at(const db::Tuning& t) { return recorded_bindings(t, "checked_at"); }

TuningJournal::TuningJournal(db::Database& db, int64_t run_id, const KernelTask& task,
                             const std::string& workload, int threads,
                             const SearchSettings& settings, const std::string& actions,
                             double budget_s, const std::vector<WarmSeed>& warm)
    : db_(db) {
  int64_t kernel_id = db.upsert_kernel(kernel_record(task));
  nlohmann::json recorded = settings_json(settings);
  if (!warm.empty()) recorded["warm_start"] = warm_start_json(warm);
  if (!task.tune_at.empty()) {
    recorded["tuned_at"] = task.tune_at;
    recorded["checked_at"] = task.check_at;
  }
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
  std::vector<Candidate> all;
  for (const db::CandidateRow& c : rows) all.push_back(candidate_from_row(c));
  if (std::optional<size_t> best = best_tried_by_hand(all)) {
    t.winner_opts = rows[*best].opts;
    t.winner_ms = all[*best].median_ms();
  }
  t.stop_reason = "plans tried by hand";
  db.finish_tuning(t);
}

} // namespace beamlab::tuner

// The journal's tables: tunings, their candidates and samples; see database.hpp.
#include "db/database.hpp"
#include "db/database_internal.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "db/sqlite.hpp"
#include "db/table.hpp"
#include "engine/support/error.hpp"

namespace beamlab::db {

// The tunings table: what a search is (set when it opens) and what it found (set when it ends).
const Columns<Tuning> kTuningKey = {
    column("run_id", &Tuning::run_id),     column("kernel_id", &Tuning::kernel_id),
    column("workload", &Tuning::workload), column("threads", &Tuning::threads),
    column("settings", &Tuning::settings), column("actions", &Tuning::actions),
    column("budget_s", &Tuning::budget_s)};
const Columns<Tuning> kTuningOutcome =
    Columns<Tuning>{text_column(
                        "status", &Tuning::status, [](TuningStatus v) { return to_string(v); },
                        [](const std::string& t) { return parse_tuning_status(t); }),
                    column("heuristic_opts", &Tuning::heuristic_opts),
                    column("heuristic_ms", &Tuning::heuristic_ms),
                    column("winner_opts", &Tuning::winner_opts),
                    column("winner_ms", &Tuning::winner_ms),
                    column("noise", &Tuning::noise),
                    column("tie", &Tuning::tie),
                    column("tie_with_heuristic", &Tuning::tie_with_heuristic)} +
    interval_columns("speedup", "speedup_lo", "speedup_hi", &Tuning::speedup) +
    Columns<Tuning>{column("rounds_disturbed", &Tuning::rounds_disturbed),
                    column("round_ms", &Tuning::round_ms)} +
    interval_columns("in_process_speedup", "in_process_lo", "in_process_hi", &Tuning::in_process) +
    Columns<Tuning>{
        column("fidelity", &Tuning::fidelity),       column("iterations", &Tuning::iterations),
        column("stop_reason", &Tuning::stop_reason), column("error", &Tuning::error),
        column("wall_s", &Tuning::wall_s),           column("restarts", &Tuning::restarts),
        column("reference_s", &Tuning::reference_s), column("compiling_s", &Tuning::compiling_s),
        column("timing_s", &Tuning::timing_s)};
const Columns<Tuning> kTuningId = {column("id", &Tuning::id)};
const Columns<Tuning> kTuningAll = kTuningId + kTuningKey + kTuningOutcome;

namespace {

std::string select_tunings() { return "SELECT " + names(kTuningAll) + " FROM tunings"; }
} // namespace

Tuning Database::open_tuning(int64_t run_id, int64_t kernel_id, int threads,
                             const std::string& workload, const std::string& settings,
                             const std::string& actions, double budget_s) {
  Tuning t;
  t.run_id = run_id;
  t.kernel_id = kernel_id;
  t.workload = workload;
  t.threads = threads;
  t.settings = settings;
  t.actions = actions;
  t.budget_s = budget_s;
  static const std::string sql = "INSERT INTO tunings (" + names(kTuningKey) +
                                 ", status) VALUES (" + placeholders(kTuningKey) +
                                 ", 'running') ON CONFLICT (run_id, kernel_id, threads) DO NOTHING";
  Statement insert = conn_->prepare(sql);
  bind_columns(kTuningKey, t, insert, 1);
  insert.run();
  Statement st =
      conn_->prepare(select_tunings() + " WHERE run_id = ? AND kernel_id = ? AND threads = ?");
  st.bind_all(run_id, kernel_id, threads);
  internal_assert(st.step());
  return read_row(kTuningAll, st);
}

void Database::finish_tuning(const Tuning& t) {
  static const std::string sql =
      "UPDATE tunings SET " + assignments(kTuningOutcome) + " WHERE id = ?";
  Statement st = conn_->prepare(sql);
  st.bind(bind_columns(kTuningOutcome, t, st, 1), t.id);
  st.run();
}

namespace {
// The tunings `where` (one `?`, bound to `value`) says, in its order.
std::vector<Tuning> tunings_where(Connection& conn, const std::string& where, int64_t value) {
  Statement st = conn.prepare(select_tunings() + " WHERE " + where);
  st.bind(1, value);
  std::vector<Tuning> out;
  while (st.step()) out.push_back(read_row(kTuningAll, st));
  return out;
}
} // namespace

std::vector<Tuning> Database::tunings(int64_t run_id) {
  return tunings_where(*conn_, "run_id = ? ORDER BY id", run_id);
}

std::optional<Tuning> Database::tuning(int64_t id) {
  std::vector<Tuning> one = tunings_where(*conn_, "id = ?", id);
  return one.empty() ? std::nullopt : std::optional(std::move(one.front()));
}

std::vector<Tuning> Database::tunings_of_kernel(int64_t kernel_id) {
  return tunings_where(*conn_, "kernel_id = ? ORDER BY run_id, id", kernel_id);
}

std::map<int64_t, Database::RunStats> Database::run_stats() {
  Statement st = conn_->prepare("SELECT t.run_id, count(DISTINCT t.id), count(c.id) FROM tunings t "
                                "LEFT JOIN candidates c ON c.tuning_id = t.id GROUP BY t.run_id");
  std::map<int64_t, RunStats> out;
  while (st.step()) out[st.i64(0)] = {static_cast<int>(st.i64(1)), st.i64(2)};
  Statement b = conn_->prepare("SELECT run_id, count(*) FROM benchmarks GROUP BY run_id");
  while (b.step()) out[b.i64(0)].benchmarks = b.i64(1);
  return out;
}

std::map<int64_t, int64_t> Database::tunings_with_workload(const std::string& workload) {
  Statement st =
      conn_->prepare("SELECT run_id, count(*) FROM tunings WHERE workload = ? GROUP BY run_id");
  st.bind(1, workload);
  std::map<int64_t, int64_t> out;
  while (st.step()) out[st.i64(0)] = st.i64(1);
  return out;
}

std::map<int64_t, int64_t> Database::candidate_counts(int64_t run_id) {
  Statement st = conn_->prepare("SELECT t.id, count(c.id) FROM tunings t LEFT JOIN candidates c "
                                "ON c.tuning_id = t.id WHERE t.run_id = ? GROUP BY t.id");
  st.bind(1, run_id);
  std::map<int64_t, int64_t> out;
  while (st.step()) out[st.i64(0)] = st.i64(1);
  return out;
}

std::map<int64_t, std::map<std::string, int64_t>> Database::status_counts(int64_t run_id) {
  Statement st = conn_->prepare("SELECT t.id, c.status, count(*) FROM tunings t JOIN candidates c "
                                "ON c.tuning_id = t.id WHERE t.run_id = ? GROUP BY t.id, c.status");
  st.bind(1, run_id);
  std::map<int64_t, std::map<std::string, int64_t>> out;
  while (st.step()) out[st.i64(0)][st.text(1)] = st.i64(2);
  return out;
}

std::vector<double> Database::samples_of(int64_t tuning_id, const std::string& opts) {
  Statement st = conn_->prepare(
      "SELECT s.ms FROM samples s WHERE s.candidate_id = (SELECT id FROM candidates WHERE "
      "tuning_id = ? AND opts = ? AND status = 'ok' ORDER BY seq LIMIT 1) ORDER BY s.idx");
  st.bind_all(tuning_id, opts);
  std::vector<double> out;
  while (st.step()) out.push_back(st.f64(0));
  return out;
}

// --- candidates ------------------------------------------------------------------------------

// The candidates table: a candidate as the search settled it (its samples are rows of their
// own), then what is derived from its samples when it is written, and where it belongs.
const Columns<CandidateRow> kCandidateFields = {column("seq", &CandidateRow::seq),
                                                column("opts", &CandidateRow::opts),
                                                column("parent", &CandidateRow::parent),
                                                column("iteration", &CandidateRow::iteration),
                                                column("status", &CandidateRow::status),
                                                column("error", &CandidateRow::error),
                                                column("compile_ms", &CandidateRow::compile_ms),
                                                column("code_hash", &CandidateRow::code_hash),
                                                column("code_bytes", &CandidateRow::code_bytes),
                                                column("max_error", &CandidateRow::max_error),
                                                column("duplicate_of", &CandidateRow::duplicate_of),
                                                column("settled_in", &CandidateRow::settled_in)};

// ", c.best_ms, c.median_ms, c.finished_at": the derived columns after `prefix`.
std::string candidate_derived(std::string_view prefix) {
  std::string out;
  for (std::string_view d : kCandidateDerived) out += ", " + std::string(prefix) + std::string(d);
  return out;
}

namespace {

// "c = excluded.c" for each of the candidate's own columns but seq (the conflict's key), and the
// derived ones.
std::string candidate_upsert_assignments() {
  std::string out;
  for (const Column<CandidateRow>& c : kCandidateFields)
    if (c.name != "seq") out += std::string(c.name) + " = excluded." + std::string(c.name) + ", ";
  for (std::string_view d : kCandidateDerived)
    out += std::string(d) + " = excluded." + std::string(d) + ", ";
  return out.substr(0, out.size() - 2);
}

void insert_candidate(Connection& conn, int64_t tuning_id, const CandidateRow& c) {
  std::optional<double> best, median;
  if (!c.samples_ms.empty()) {
    std::vector<double> s = c.samples_ms;
    std::sort(s.begin(), s.end());
    best = s.front();
    median = s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  }
  static const std::string sql =
      "INSERT INTO candidates (tuning_id, " + names(kCandidateFields) + candidate_derived("") +
      ") VALUES (?, " + placeholders(kCandidateFields) +
      ", ?, ?, ?) ON CONFLICT (tuning_id, seq) DO UPDATE SET " + candidate_upsert_assignments();
  Statement insert = conn.prepare(sql);
  insert.bind(1, tuning_id);
  int next = bind_columns(kCandidateFields, c, insert, 2);
  insert.bind(next, best).bind(next + 1, median).bind(next + 2, now_utc());
  insert.run();
  Statement id = conn.prepare("SELECT id FROM candidates WHERE tuning_id = ? AND seq = ?");
  id.bind_all(tuning_id, c.seq);
  internal_assert(id.step());
  int64_t cid = id.i64(0);
  conn.prepare("DELETE FROM samples WHERE candidate_id = ?").bind(1, cid).run();
  Statement ins = conn.prepare("INSERT INTO samples (candidate_id, idx, ms) VALUES (?, ?, ?)");
  for (size_t i = 0; i < c.samples_ms.size(); ++i) {
    ins.bind_all(cid, static_cast<int64_t>(i), c.samples_ms[i]).run();
    ins.reset();
  }
}
} // namespace

void Database::save_candidate(int64_t tuning_id, const CandidateRow& c) {
  Transaction t(*conn_);
  insert_candidate(*conn_, tuning_id, c);
  t.commit();
}

void Database::save_candidates(int64_t tuning_id, const std::vector<CandidateRow>& cs) {
  Transaction t(*conn_);
  for (const CandidateRow& c : cs) insert_candidate(*conn_, tuning_id, c);
  t.commit();
}

std::vector<CandidateRow> Database::candidates(int64_t tuning_id) {
  Statement st = conn_->prepare(
      "SELECT " + names(kCandidateFields, "c.") +
      ", (SELECT group_concat(ms, ' ') FROM (SELECT ms FROM samples s WHERE s.candidate_id = "
      "c.id ORDER BY idx)) FROM candidates c WHERE c.tuning_id = ? ORDER BY c.seq");
  st.bind(1, tuning_id);
  std::vector<CandidateRow> out;
  while (st.step()) {
    CandidateRow c;
    std::string samples = st.text(read_columns(kCandidateFields, st, 0, c));
    for (size_t pos = 0; pos < samples.size();) {
      size_t end = samples.find(' ', pos);
      if (end == std::string::npos) end = samples.size();
      c.samples_ms.push_back(std::stod(samples.substr(pos, end - pos)));
      pos = end + 1;
    }
    out.push_back(std::move(c));
  }
  return out;
}

int64_t Database::candidate_count() {
  return conn_->scalar_i64("SELECT count(*) FROM candidates").value_or(0);
}

} // namespace beamlab::db

// The summary of a tune run, as text or JSON; see tune_summary.hpp.
#include "apps/tune_summary.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tuner/store/records.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::cli {
namespace {

// One kernel's line of the summary, before it is written as text or JSON.
struct SummaryRow {
  const tuner::BatchKernel* k = nullptr;
  double heuristic_ms = 0, tuned_ms = 0; ///< 0: unknown
  /// A search's speedup is paired by round, with its interval; a cached plan's is the ratio of
  /// its stored times. A tie is printed as a tie, never as a speedup.
  std::optional<double> speedup, ci_lo, ci_hi, in_process;
  bool tie = false;
  std::optional<Roof> roof;
  std::string over; ///< why the time is over its roof, if it is
};

SummaryRow summary_row(const tuner::BatchKernel& k, const MachineLimits& limits) {
  SummaryRow row;
  row.k = &k;
  row.heuristic_ms = k.heuristic_ms();
  row.tuned_ms = k.tuned_ms();
  const db::Tuning& t = k.result;
  row.tie = t.tie_with_heuristic;
  if (std::optional<tuner::Speedup> s = tuner::speedup_of(t)) {
    row.speedup = s->estimate;
    if (s->interval) std::tie(row.ci_lo, row.ci_hi) = *s->interval;
  }
  if (t.in_process) row.in_process = t.in_process->estimate;
  row.roof = roofline(limits, tuner::traffic_of(k.task), row.tuned_ms);
  if (row.roof) row.over = row.roof->over_note();
  return row;
}

// The notes under the table: the in-process check, disturbed rounds, figures over their roof.
std::vector<std::string> notes_of(const SummaryRow& row) {
  const tuner::BatchKernel& k = *row.k;
  std::vector<std::string> notes;
  if (!k.task.tune_at.empty() && k.outcome != tuner::BatchKernel::Outcome::cached)
    notes.push_back(fmt::format("{}: one plan for every value of its variables; timed at {} "
                                "(a launch at each), checked at {}",
                                k.task.name, bindings_str(k.task.tune_at),
                                bindings_str(k.task.check_at)));
  if (!k.result.fidelity.empty() && k.result.fidelity != "agrees")
    notes.push_back(k.task.name + ": in process, " + k.result.fidelity);
  if (k.result.rounds_disturbed > 0)
    notes.push_back(fmt::format("{}: {} re-measurement round(s) slowed by outside load, dropped "
                                "and run again",
                                k.task.name, k.result.rounds_disturbed));
  if (!row.over.empty()) notes.push_back(k.task.name + ": " + row.over);
  return notes;
}

bool failed(const tuner::BatchKernel& k) {
  return k.outcome == tuner::BatchKernel::Outcome::failed;
}

struct Totals {
  int failed = 0, candidates = 0;
  double search_s = 0, reference_s = 0, compiling_s = 0, timing_s = 0;
  double compile_cpu_s = 0, searched_compiling_s = 0; ///< of the kernels searched now
};

// A search's own work: its wall time less the reference, the compile phases and timing.
double own_work_s(double wall_s, double reference_s, double compiling_s, double timing_s) {
  return std::max(0.0, wall_s - reference_s - compiling_s - timing_s);
}

// Where a search's time went (db::Tuning), for JSON.
Json search_time_json(double wall_s, double reference_s, double compiling_s, double timing_s) {
  return {{"reference_s", json_number(reference_s)},
          {"compiling_s", json_number(compiling_s)},
          {"timing_s", json_number(timing_s)},
          {"other_s", json_number(own_work_s(wall_s, reference_s, compiling_s, timing_s))}};
}

Totals totals_of(const tuner::BatchReport& r) {
  Totals t;
  for (const tuner::BatchKernel& k : r.kernels) {
    if (failed(k)) {
      ++t.failed;
      continue;
    }
    t.candidates += k.candidates;
    t.search_s += k.result.wall_s;
    t.reference_s += k.result.reference_s;
    t.compiling_s += k.result.compiling_s;
    t.timing_s += k.result.timing_s;
    if (k.outcome == tuner::BatchKernel::Outcome::tuned) {
      t.compile_cpu_s += k.compile_cpu_s;
      t.searched_compiling_s += k.result.compiling_s;
    }
  }
  return t;
}

Json row_json(const SummaryRow& row) {
  const tuner::BatchKernel& k = *row.k;
  auto known = [](double ms) { return ms > 0 ? json_number(ms) : Json(nullptr); };
  return {{"kernel", k.task.name},
          {"key", hash_hex(k.task.key)},
          {"workloads", k.workloads},
          {"outcome", to_string(k.outcome)},
          {"heuristic_ms", known(row.heuristic_ms)},
          {"tuned_ms", failed(k) ? Json(nullptr) : known(row.tuned_ms)},
          {"speedup", json_number(row.speedup)},
          {"tie", row.tie},
          {"ci95", row.ci_lo ? Json::array({json_number(row.ci_lo), json_number(row.ci_hi)})
                             : Json(nullptr)},
          {"in_process", json_number(row.in_process)},
          {"roof_percent", row.roof ? json_number(100 * row.roof->fraction) : Json(nullptr)},
          {"bound", row.roof ? Json(row.roof->bound) : Json(nullptr)},
          {"candidates", k.candidates},
          {"search_s", json_number(k.result.wall_s)},
          {"search_time", search_time_json(k.result.wall_s, k.result.reference_s,
                                           k.result.compiling_s, k.result.timing_s)},
          {"opts", k.result.winner_opts},
          {"statuses", k.status_counts},
          {"budget_s", json_number(k.budget_s)},
          {"warm_seeds", k.warm_seeds},
          {"tuned_at", k.task.tune_at},
          {"checked_at", k.task.check_at},
          {"error", k.result.error}};
}

// Each program whole, tuned against the heuristic (tuner/batch/whole_program.hpp).
void print_programs(const tuner::BatchReport& r, std::FILE* out) {
  if (r.programs.empty()) return;
  fmt::print(out,
             "whole programs, the batch's plans against the heuristic's in this process, "
             "paired ({:.1f} s):\n",
             r.programs_s);
  for (const tuner::ProgramCheck& p : r.programs) {
    if (p.plans == 0) {
      fmt::print(out, "  {:<36} {}\n", p.label, p.note);
      continue;
    }
    int kept = p.plans - static_cast<int>(p.reverted.size());
    if (kept == 0) {
      fmt::print(out,
                 "  {:<36} {:.4f} ms: the heuristic's plans kept; the tuned ones were no "
                 "faster inside it ({})\n",
                 p.label, p.heuristic_ms, fmt::join(p.reverted, ", "));
      continue;
    }
    std::string verdict = p.speedup.significant()
                              ? fmt::format("{:.2f}x faster", p.speedup.estimate)
                              : fmt::format("tie ({:.2f}x)", p.speedup.estimate);
    fmt::print(out,
               "  {:<36} {:.4f} -> {:.4f} ms  {} (95% CI {:.2f}-{:.2f}), {} tuned plan(s) "
               "of {} kernel(s)",
               p.label, p.heuristic_ms, p.tuned_ms, verdict, p.speedup.lo, p.speedup.hi, kept,
               p.kernels);
    if (!p.reverted.empty())
      fmt::print(out, "; not kept, no faster inside it: {}", fmt::join(p.reverted, ", "));
    fmt::print(out, "\n");
  }
}

Json programs_json(const tuner::BatchReport& r) {
  Json rows = Json::array();
  for (const tuner::ProgramCheck& p : r.programs)
    rows.push_back({{"program", p.label},
                    {"kernels", p.kernels},
                    {"plans", p.plans},
                    {"reverted", p.reverted},
                    {"heuristic_ms", json_number(p.heuristic_ms)},
                    {"tuned_ms", json_number(p.tuned_ms)},
                    {"speedup", json_number(p.speedup.estimate)},
                    {"ci95", {json_number(p.speedup.lo), json_number(p.speedup.hi)}},
                    {"faster", p.speedup.significant()},
                    {"note", p.note}});
  return rows;
}

} // namespace

void print_summary(const tuner::BatchReport& r, const SummaryPlace& at, std::FILE* out) {
  fmt::print(out, "{:<26} {:<8} {:>10} {:>10} {:>8} {:>11} {:>7} {:>6} {:<7} {:>6} {:>8}  {}\n",
             "kernel", "source", "heur. ms", "tuned ms", "speedup", "95% CI", "in-proc", "roof%",
             "bound", "cands", "search s", "opts");
  std::vector<std::string> notes;
  for (const tuner::BatchKernel& k : r.kernels) {
    if (failed(k)) {
      fmt::print(out, "{:<26} {:<8} {}\n", k.task.name, "failed", k.result.error);
      continue;
    }
    SummaryRow row = summary_row(k, r.limits);
    for (std::string& n : notes_of(row)) notes.push_back(std::move(n));
    std::string speedup = row.tie       ? "tie"
                          : row.speedup ? fmt::format("{:.2f}x", *row.speedup)
                                        : "-";
    std::string interval = row.ci_lo ? fmt::format("{:.2f}-{:.2f}", *row.ci_lo, *row.ci_hi) : "-";
    std::string in_process = row.in_process ? fmt::format("{:.2f}x", *row.in_process) : "-";
    const std::optional<Roof>& roof = row.roof;
    fmt::print(
        out, "{:<26} {:<8} {:>10} {:>10.4f} {:>8} {:>11} {:>7} {:>6} {:<7} {:>6} {:>8.1f}  {}\n",
        k.task.name, to_string(k.outcome),
        row.heuristic_ms > 0 ? fmt::format("{:.4f}", row.heuristic_ms) : "-", row.tuned_ms, speedup,
        interval, in_process,
        roof ? fmt::format("{:.1f}{}", 100 * roof->fraction, row.over.empty() ? "" : "!") : "-",
        roof ? roof->bound : "-", k.candidates, k.result.wall_s,
        k.result.winner_opts.empty() ? "(none)" : k.result.winner_opts);
  }
  for (const std::string& n : notes) fmt::print(out, "  ! {}\n", n);
  Totals t = totals_of(r);
  fmt::print(out,
             "{} kernel(s){}: {} tuned, {} from the cache, {} resumed, {} failed; {} candidates "
             "in {:.1f} s of search ({:.1f}/s); {:.1f} s in all ({:.1f} s preparing)\n",
             r.kernels.size(),
             r.kernels.size() < size_t(r.total_kernels)
                 ? fmt::format(" of {} in this shard", r.total_kernels)
                 : "",
             r.count(tuner::BatchKernel::Outcome::tuned),
             r.count(tuner::BatchKernel::Outcome::cached),
             r.count(tuner::BatchKernel::Outcome::resumed), t.failed, t.candidates, t.search_s,
             t.search_s > 0 ? t.candidates / t.search_s : 0.0, r.wall_s, r.prepare_s);
  if (t.search_s > 0) {
    auto share = [&](double x) {
      return fmt::format("{:.1f} s ({:.0f}%)", x, 100 * x / t.search_s);
    };
    // How busy the sandboxes were while the searches waited for compiles: low on a machine of
    // many cores when an iteration has too few plans for them, or one compile holds it up.
    std::string busy =
        t.searched_compiling_s > 0 && r.sandboxes > 0
            ? fmt::format(", {} sandboxes {:.0f}% busy", r.sandboxes,
                          100 * t.compile_cpu_s / (t.searched_compiling_s * r.sandboxes))
            : "";
    fmt::print(out,
               "search time: compiling {}{}, timing {} (alone on the machine), the reference {}, "
               "the search's own work {}\n",
               share(t.compiling_s), busy, share(t.timing_s), share(t.reference_s),
               share(own_work_s(t.search_s, t.reference_s, t.compiling_s, t.timing_s)));
  }
  print_programs(r, out);
  if (r.warm_start)
    fmt::print(
        out,
        "warm start: {} of {} kernel(s) tuned were seeded with the plans of tuned kernels of "
        "the same structure\n",
        r.warm_started(), r.count(tuner::BatchKernel::Outcome::tuned));
  fmt::print(out,
             "speedup: the heuristic's time over the tuned plan's, paired by re-measurement round "
             "(95% CI; 'tie': the interval includes 1); in-proc: the same timed in this process "
             "before caching\n");
  // Kernels searched by this run (or the one it resumes); a cached plan was timed when tuned.
  auto reads_constants = [](const tuner::BatchKernel& k) {
    return k.outcome != tuner::BatchKernel::Outcome::cached &&
           std::any_of(k.task.buffers.begin(), k.task.buffers.end(),
                       [](const KernelBufferSpec& b) { return b.constant; });
  };
  if (auto cold = std::count_if(r.kernels.begin(), r.kernels.end(), reads_constants); cold > 0)
    fmt::print(out,
               "cold weights: {} kernel(s) read a model's weights; each timed run of their plans "
               "(the heuristic's too) starts with them evicted from the caches, as in a real "
               "run\n",
               cold);
  fmt::print(out,
             "roof% is the tuned time's share of the roofline of the level the kernel's data "
             "fits in (bound: what limits it)\ndevice limits: {}\n{}\n",
             describe(r.limits),
             at.run_id > 0   ? fmt::format("run {} in {}", at.run_id, at.db)
             : at.db.empty() ? std::string("not journaled (--cache off)")
                             : "not journaled (--cache read-only: " + at.db + ")");
}

Json summary_json(const tuner::BatchReport& r, const SummaryPlace& at, const std::string& target,
                  bool interrupted) {
  Json doc = json_document("tune");
  doc["run"] = at.run_id > 0 ? Json(at.run_id) : Json(nullptr);
  doc["target"] = target;
  doc["db"] = at.db.empty() ? Json(nullptr) : Json(at.db);
  doc["interrupted"] = interrupted;
  Json& rows = doc["kernels"] = Json::array();
  Json& notes = doc["notes"] = Json::array();
  for (const tuner::BatchKernel& k : r.kernels) {
    SummaryRow row = summary_row(k, r.limits);
    rows.push_back(row_json(row));
    if (!failed(k))
      for (const std::string& n : notes_of(row)) notes.push_back(n);
  }
  Totals t = totals_of(r);
  doc["totals"] = {
      {"kernels", r.kernels.size()},
      {"total_kernels", r.total_kernels},
      {"tuned", r.count(tuner::BatchKernel::Outcome::tuned)},
      {"cached", r.count(tuner::BatchKernel::Outcome::cached)},
      {"resumed", r.count(tuner::BatchKernel::Outcome::resumed)},
      {"failed", t.failed},
      {"warm_started", r.warm_start ? Json(r.warm_started()) : Json(nullptr)},
      {"candidates", t.candidates},
      {"search_s", json_number(t.search_s)},
      {"search_time", search_time_json(t.search_s, t.reference_s, t.compiling_s, t.timing_s)},
      {"sandboxes", r.sandboxes},
      {"compile_cpu_s", json_number(t.compile_cpu_s)},
      {"wall_s", json_number(r.wall_s)},
      {"prepare_s", json_number(r.prepare_s)}};
  doc["programs"] = programs_json(r);
  doc["programs_s"] = json_number(r.programs_s);
  doc["device_limits"] = limits_json(r.limits);
  return doc;
}

void print_repeat_study(const tuner::RepeatStudy& study, int repeats) {
  fmt::print("\n== determinism over {} repeats: each kernel's distinct winners timed together in "
             "this process, paired by round\n{:<26} {:>6} {:>11} {:>7}  {}\n",
             repeats, "kernel", "plans", "worst/best", "within", "winners");
  for (const tuner::RepeatKernel& k : study.kernels) {
    if (!k.error.empty()) {
      fmt::print("{:<26} {}\n", k.name, k.error);
      continue;
    }
    double worst = *std::max_element(k.over_best.begin(), k.over_best.end());
    int within = static_cast<int>(std::count(k.within.begin(), k.within.end(), true));
    std::string winners;
    for (size_t i = 0; i < k.winners.size(); ++i)
      winners +=
          fmt::format("{}{}{}", i ? " | " : "", k.winners[i].empty() ? "(none)" : k.winners[i],
                      k.within[i] ? "" : " (slower)");
    fmt::print("{:<26} {:>6} {:>10.2f}x {:>3}/{:<3}  {}\n", k.name, k.distinct, worst, within,
               k.winners.size(), winners);
  }
  fmt::print("determinism: {} of {} (kernel, repeat) winners within noise of the best plan the "
             "repeats found ({:.1f}%)\n",
             study.within, study.pairs, 100 * study.score());
}

Json repeat_study_json(const tuner::RepeatStudy& study, int repeats, const Json& runs,
                       bool interrupted) {
  Json doc = json_document("tune-repeat");
  doc["repeats"] = repeats;
  doc["interrupted"] = interrupted;
  doc["runs"] = runs;
  Json& rows = doc["kernels"] = Json::array();
  for (const tuner::RepeatKernel& k : study.kernels) {
    Json winners = Json::array();
    for (size_t i = 0; i < k.winners.size(); ++i)
      winners.push_back({{"opts", k.winners[i]},
                         {"over_best", json_number(k.over_best[i])},
                         {"within", static_cast<bool>(k.within[i])}});
    double worst =
        k.over_best.empty() ? 0 : *std::max_element(k.over_best.begin(), k.over_best.end());
    rows.push_back({{"kernel", k.name},
                    {"plans", k.distinct},
                    {"worst_over_best", k.error.empty() ? json_number(worst) : Json(nullptr)},
                    {"within", std::count(k.within.begin(), k.within.end(), true)},
                    {"winners", winners},
                    {"error", k.error}});
  }
  doc["determinism"] = {
      {"within", study.within}, {"pairs", study.pairs}, {"score", json_number(study.score())}};
  return doc;
}

} // namespace beamlab::cli

// Matching two runs' measurements and judging each change; see compare.hpp.
#include "reports/compare.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include <beamlab/beamlab.hpp>

namespace beamlab::reports {

namespace {

const Measurement* find(const RunData& run, const Measurement& m) {
  for (const Measurement& x : run.items)
    if (x.section == m.section && x.key == m.key) return &x;
  return nullptr;
}

std::string device_text(const RunData& r) {
  if (!r.device) return "an unknown device";
  return fmt::format("{} ({} cores, LLVM {})", r.device->info.cpu_model, r.device->info.cores,
                     r.device->info.llvm_version);
}

/// The machine references of the suite (its limits, oneDNN, OpenBLAS sgemm) measure the
/// machine, not beamlab: when they moved, so may everything else.
bool is_reference(const ComparedRow& row) {
  return row.section() == Section::suite &&
         (row.name().starts_with("BM_Limits") || row.name().starts_with("BM_Reference") ||
          row.name().starts_with("BM_OneDnn"));
}

void add_warnings(Comparison& c) {
  if (!c.same_device)
    c.warnings.push_back(fmt::format(
        "The runs are from different devices: the baseline ran on {}, the candidate on {}. "
        "Changes include the machines' difference.",
        device_text(c.baseline), device_text(c.candidate)));
  for (const ComparedRow& row : c.rows)
    if (is_reference(row) && judged(row.delta.verdict) && row.delta.verdict != Verdict::unchanged)
      c.warnings.push_back(fmt::format(
          "The machine itself moved: the reference {} changed by {:+.1f}% between the runs, so "
          "changes of that size elsewhere may be the machine, not the code.",
          row.name(), row.delta.change * 100));
  if (c.baseline.run.kind != c.candidate.run.kind)
    c.warnings.push_back(fmt::format(
        "The runs are of different kinds ({} and {}): a tuning run's kernel times are the "
        "winner's as the sandbox timed it (alone, its caches warm), a bench run's are the "
        "bench's own (inside its workload); their changes are shown but judged neither way. "
        "Compare like with like for a verdict.",
        to_string(c.baseline.run.kind), to_string(c.candidate.run.kind)));
  for (const RunData* r : {&c.baseline, &c.candidate})
    if (r->run.status != db::RunStatus::done)
      c.warnings.push_back(
          fmt::format("{} is {}: it may be incomplete.", r->title(), to_string(r->run.status)));
  if (c.baseline.run.id == c.candidate.run.id)
    c.warnings.push_back("The baseline and the candidate are the same run.");
}

} // namespace

Comparison::Counts Comparison::counts() const {
  Counts n;
  for (const ComparedRow& r : rows) switch (r.delta.verdict) {
    case Verdict::regression: ++n.regressions; break;
    case Verdict::improvement: ++n.improvements; break;
    case Verdict::unchanged: ++n.unchanged; break;
    case Verdict::unknown: ++n.unknown; break;
    case Verdict::incomparable: ++n.incomparable; break;
    }
  return n;
}

std::string Comparison::counts_text() const {
  Counts n = counts();
  auto plural = [](int k, const char* one, const char* many) {
    return fmt::format("{} {}", k, k == 1 ? one : many);
  };
  std::string text =
      fmt::format("{}, {}, {} within noise", plural(n.regressions, "regression", "regressions"),
                  plural(n.improvements, "improvement", "improvements"), n.unchanged);
  if (n.unknown) text += fmt::format(", {} without data", n.unknown);
  if (n.incomparable) text += fmt::format(", {} measured differently (no verdict)", n.incomparable);
  return text;
}

std::string Comparison::history_text() const {
  size_t own = 0;
  for (const ComparedRow& r : rows) own += r.delta.history_runs > 0;
  std::string read = fmt::format(
      "{} earlier bench run(s) on the candidate's device with its settings", history_runs);
  if (own == 0)
    return fmt::format("No measurement was in enough of the history ({}; {} needed): every floor "
                       "is {:.1f}%.",
                       read, rule.history_min_runs, rule.min_change * 100);
  std::string rest =
      own < rows.size() ? fmt::format(", the rest {:.1f}%", rule.min_change * 100) : "";
  return fmt::format("The history held {}: {} of {} measurements have their own floor{}.", read,
                     own, rows.size(), rest);
}

std::vector<const ComparedRow*> Comparison::regressions_above(double pct) const {
  std::vector<const ComparedRow*> out;
  for (const ComparedRow& r : rows)
    if (r.delta.verdict == Verdict::regression && r.delta.change * 100 > pct) out.push_back(&r);
  return out;
}

Comparison compare_runs(RunData baseline, RunData candidate, const VerdictRule& rule,
                        const History& history) {
  Comparison c;
  c.rule = rule;
  c.history_runs = history.runs;
  // Unknown devices (a run without one) are not called different.
  c.same_device = !baseline.device || !candidate.device ||
                  baseline.device->fingerprint == candidate.device->fingerprint;
  for (const Measurement& m : candidate.items) {
    const Measurement* base = find(baseline, m);
    if (!base) {
      c.only_candidate.push_back(m);
      continue;
    }
    std::optional<Drift> drift = drift_of(history.medians_of(m), rule.history_min_runs);
    Delta delta = compare_samples(base->samples_ms, m.samples_ms, rule, drift);
    if (baseline.run.kind != candidate.run.kind && delta.verdict != Verdict::unknown)
      delta.verdict = Verdict::incomparable;
    c.rows.push_back({*base, m, delta});
  }
  for (const Measurement& m : baseline.items)
    if (!find(candidate, m)) c.only_baseline.push_back(m);
  user_assert(!c.rows.empty())
      << "the baseline " << baseline.title() << " and the candidate " << candidate.title()
      << " measured nothing in common (" << baseline.items.size() << " and "
      << candidate.items.size()
      << " measurements); compare runs of the same workloads, e.g. two 'beamlab bench' runs "
         "of one corpus";
  // Worst first within a section; rows without data last; ties by name and key.
  std::sort(c.rows.begin(), c.rows.end(), [](const ComparedRow& a, const ComparedRow& b) {
    auto rank = [](const ComparedRow& r) {
      return std::tuple<Section, bool, double, const std::string&, const std::string&>(
          r.section(), r.delta.verdict == Verdict::unknown, -r.delta.change, r.name(),
          r.candidate.key);
    };
    return rank(a) < rank(b);
  });
  c.baseline = std::move(baseline);
  c.candidate = std::move(candidate);
  add_warnings(c);
  return c;
}

Comparison compare_stored(db::Database& db, int64_t baseline, int64_t candidate,
                          const VerdictRule& rule, int history_window) {
  RunData b = load_run_data(db, baseline), c = load_run_data(db, candidate);
  History history = load_history(db, c, history_window);
  return compare_runs(std::move(b), std::move(c), rule, history);
}

} // namespace beamlab::reports

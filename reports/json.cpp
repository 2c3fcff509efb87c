// The JSON renderer: everything a report says, for scripts and dashboards (schema
// "beamlab-report/1"). Times are medians in ms, changes and spreads relative (0.2 = 20%),
// unknowns null. See report.hpp.
#include <cmath>

#include <nlohmann/json.hpp>

#include "reports/report.hpp"
#include "reports/report_internal.hpp"

namespace beamlab::reports {

using json = nlohmann::ordered_json;

namespace {

constexpr const char* kSchema = "beamlab-report/1";

/// A finite number, or null (JSON has no NaN or infinity).
json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }
json number(const std::optional<double>& x) { return x ? number(*x) : json(nullptr); }

// A roof as data; null when unknown.
json roof_json(const std::optional<Roof>& r) {
  if (!r) return nullptr;
  return {{"fraction", number(r->fraction)}, {"level", r->level},       {"bound", r->bound},
          {"gflops", number(r->gflops)},     {"gbps", number(r->gbps)}, {"note", r->over_note()}};
}

json limits_json(const std::optional<MachineLimits>& l) {
  if (!l) return nullptr;
  json levels = json::array();
  for (const MemoryLevel& m : l->levels)
    levels.push_back({{"name", m.name},
                      {"capacity_bytes", m.capacity_bytes},
                      {"working_set_bytes", m.working_set_bytes},
                      {"read_gbps", number(m.read_gbps)},
                      {"triad_gbps", number(m.triad_gbps)}});
  return {{"threads", l->threads},
          {"vector_bytes", l->vector_bytes},
          {"fma_f32_gflops", number(l->fma_f32_gflops)},
          {"fma_f64_gflops", number(l->fma_f64_gflops)},
          {"levels", levels}};
}

json run_json(const RunData& r) {
  json j = {{"id", r.run.id},
            {"kind", to_string(r.run.kind)},
            {"label", r.run.label},
            {"status", to_string(r.run.status)},
            {"started_at", r.run.started_at},
            {"git_revision", r.run.git_revision},
            {"host", r.run.host},
            {"command", r.run.command},
            {"device", nullptr}};
  if (r.device)
    j["device"] = {{"cpu", r.device->info.cpu_model},
                   {"cores", r.device->info.cores},
                   {"fingerprint", r.device->fingerprint},
                   {"limits", limits_json(r.device->limits)}};
  return j;
}

json stats_json(const SampleStats& s) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n},        {"median_ms", s.median}, {"q1_ms", s.q1},       {"q3_ms", s.q3},
          {"min_ms", s.min}, {"max_ms", s.max},       {"spread", s.spread()}};
}

json measurement_json(const Measurement& m) {
  json j = {{"section", to_string(m.section)}, {"key", m.key}, {"name", m.name}};
  if (m.section == Section::kernel) {
    j["workloads"] = m.workloads;
    j["opts"] = m.plan;
    j["source"] = m.source;
    j["flops"] = m.flops;
    j["bytes"] = m.bytes;
  } else if (!m.plan.empty()) {
    j["label"] = m.plan;
  }
  return j;
}

json rule_json(const VerdictRule& r) {
  return {{"alpha", r.alpha},
          {"min_change", r.min_change},
          {"history_floor", r.history_floor},
          {"history_min_runs", r.history_min_runs},
          {"method", describe_rule(r)}};
}

/// Names and labels are the users' bytes: invalid UTF-8 becomes U+FFFD rather than an error.
std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace

std::string render_json(const Comparison& c) {
  Comparison::Counts n = c.counts();
  json j = {{"schema", kSchema},
            {"kind", "comparison"},
            {"baseline", run_json(c.baseline)},
            {"candidate", run_json(c.candidate)},
            {"same_device", c.same_device},
            {"warnings", c.warnings},
            {"rule", rule_json(c.rule)},
            {"history_runs", c.history_runs},
            {"counts",
             {{"regressions", n.regressions},
              {"improvements", n.improvements},
              {"unchanged", n.unchanged},
              {"unknown", n.unknown},
              {"incomparable", n.incomparable}}},
            {"rows", json::array()},
            {"only_baseline", json::array()},
            {"only_candidate", json::array()}};
  for (const ComparedRow& r : c.rows) {
    const Delta& d = r.delta;
    const bool known = d.verdict != Verdict::unknown;
    json row = measurement_json(r.candidate);
    if (r.section() == Section::kernel) {
      row["baseline_opts"] = r.baseline.plan;
      row["baseline_source"] = r.baseline.source;
    }
    row["baseline"] = stats_json(d.baseline);
    row["candidate"] = stats_json(d.candidate);
    row["change"] = known ? number(d.change) : json(nullptr);
    row["noise"] = known ? number(d.noise) : json(nullptr);
    row["floor"] = number(d.floor);
    row["floor_history_runs"] = d.history_runs;
    // A change measured differently is shown, not judged: no threshold, p or test (as Markdown,
    // HTML and the GUI show it).
    row["threshold"] = judged(d.verdict) ? number(d.threshold) : json(nullptr);
    row["p"] = judged(d.verdict) ? number(d.p) : json(nullptr);
    row["rank_test"] = judged(d.verdict) && d.tested;
    row["verdict"] = to_string(d.verdict);
    j["rows"].push_back(std::move(row));
  }
  for (const Measurement& m : c.only_baseline) j["only_baseline"].push_back(measurement_json(m));
  for (const Measurement& m : c.only_candidate) j["only_candidate"].push_back(measurement_json(m));
  return dump(j);
}

std::string render_json(const RunSummary& s) {
  json j = {{"schema", kSchema},
            {"kind", "summary"},
            {"run", run_json(s.data)},
            {"tunings", json::array()},
            {"measurements", json::array()}};
  for (const TunedKernel& k : s.tunings) {
    json statuses = json::object();
    for (const auto& [status, count] : k.statuses) statuses[status] = count;
    j["tunings"].push_back(
        {{"name", k.kernel.name},
         {"key", k.kernel.hash},
         {"workload", k.tuning.workload},
         {"status", to_string(k.tuning.status)},
         {"error", k.tuning.error},
         {"heuristic_ms", number(k.tuning.heuristic_ms)},
         {"tuned_ms", number(k.tuning.winner_ms)},
         {"speedup", number(k.speedup())},
         {"speedup_lo", k.tuning.speedup ? number(k.tuning.speedup->lo) : json(nullptr)},
         {"speedup_hi", k.tuning.speedup ? number(k.tuning.speedup->hi) : json(nullptr)},
         {"tie_with_heuristic", k.tuning.tie_with_heuristic},
         {"rounds_disturbed", k.tuning.rounds_disturbed},
         {"in_process_speedup",
          k.tuning.in_process ? number(k.tuning.in_process->estimate) : json(nullptr)},
         {"fidelity", k.tuning.fidelity},
         {"roofline", roof_json(k.roof)},
         {"heuristic_opts", k.tuning.heuristic_opts},
         {"tuned_opts", k.tuning.winner_opts},
         {"candidates", k.candidates},
         {"statuses", statuses},
         {"search_s", number(k.tuning.wall_s)},
         {"stop_reason", k.tuning.stop_reason}});
  }
  for (Section section : {Section::workload, Section::kernel, Section::suite})
    for (const Measurement* m : s.measured(section)) {
      json row = measurement_json(*m);
      SampleStats st = describe(m->samples_ms);
      row["stats"] = stats_json(st);
      row["roofline"] = st.n ? roof_json(s.roof(*m, st.median)) : json(nullptr);
      row["samples_ms"] = m->samples_ms;
      j["measurements"].push_back(std::move(row));
    }
  j["against_ort"] = json::array();
  for (const AgainstOrt& a : s.against_ort())
    j["against_ort"].push_back({{"model", a.model},
                                {"plans", a.plans},
                                {"beamlab", stats_json(a.beamlab)},
                                {"ort", stats_json(a.ort)},
                                {"ratio", number(a.ratio())}});
  return dump(j);
}

} // namespace beamlab::reports

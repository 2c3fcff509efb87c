// A single run's summary; see summary.hpp.
#include "reports/summary.hpp"

#include "tuner/store/device.hpp"

namespace beamlab::reports {

std::optional<double> TunedKernel::speedup() const {
  if (!heuristic_ms || !tuned_ms || *tuned_ms <= 0) return std::nullopt;
  return *heuristic_ms / *tuned_ms;
}

std::string TunedKernel::outcome() const {
  if (status == db::TuningStatus::done) return stop_reason;
  return to_string(status) + (error.empty() ? std::string() : ": " + error);
}

std::optional<double> RunSummary::roofline(int64_t flops, int64_t bytes, double ms) const {
  if (!peak_gflops || !peak_gbps || ms <= 0 || (flops == 0 && bytes == 0)) return std::nullopt;
  return tuner::roofline_fraction(flops, bytes, ms, *peak_gflops, *peak_gbps);
}

std::vector<const Measurement*> RunSummary::measured(Section section) const {
  std::vector<const Measurement*> out;
  if (section == Section::kernel && !tunings.empty()) return out;
  for (const Measurement& m : data.items)
    if (m.section == section) out.push_back(&m);
  return out;
}

RunSummary summarize_run(db::Database& db, int64_t run_id) {
  RunSummary s;
  s.data = load_run_data(db, run_id);
  if (s.data.device) {
    s.peak_gflops = s.data.device->peak_gflops;
    s.peak_gbps = s.data.device->peak_gbps;
  }
  std::map<int64_t, std::map<std::string, int64_t>> statuses = db.status_counts(run_id);
  for (const db::Tuning& t : db.tunings(run_id)) {
    std::optional<db::Kernel> k = db.kernel(t.kernel_id);
    TunedKernel row;
    row.name = k ? k->name : "?";
    row.hash = k ? k->hash : "";
    row.workload = t.workload;
    row.status = t.status;
    row.error = t.error;
    row.heuristic_ms = t.heuristic_ms;
    row.tuned_ms = t.winner_ms;
    row.heuristic_opts = t.heuristic_opts;
    row.winner_opts = t.winner_opts;
    if (k && t.winner_ms) row.roofline = s.roofline(k->flops, k->bytes, *t.winner_ms);
    row.statuses = statuses[t.id];
    for (const auto& [status, n] : row.statuses) row.candidates += n;
    row.wall_s = t.wall_s;
    row.stop_reason = t.stop_reason;
    s.tunings.push_back(std::move(row));
  }
  return s;
}

} // namespace beamlab::reports

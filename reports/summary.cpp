// A single run's summary; see summary.hpp.
#include "reports/summary.hpp"

#include "tuner/store/device.hpp"

namespace beamlab::reports {

std::optional<double> TunedKernel::speedup() const {
  if (!tuning.heuristic_ms || !tuning.winner_ms || *tuning.winner_ms <= 0) return std::nullopt;
  return *tuning.heuristic_ms / *tuning.winner_ms;
}

std::string TunedKernel::outcome() const {
  if (tuning.status == db::TuningStatus::done) return tuning.stop_reason;
  return to_string(tuning.status) + (tuning.error.empty() ? std::string() : ": " + tuning.error);
}

namespace {

// The roofline fraction when the peaks are known and the kernel was measured.
std::optional<double> roofline_at(int64_t flops, int64_t bytes, double ms,
                                  std::optional<double> peak_gflops,
                                  std::optional<double> peak_gbps) {
  if (!peak_gflops || !peak_gbps || ms <= 0 || (flops == 0 && bytes == 0)) return std::nullopt;
  return tuner::roofline_fraction(flops, bytes, ms, *peak_gflops, *peak_gbps);
}

} // namespace

TunedKernel tuned_kernel(db::Database& db, const db::Tuning& t,
                         const std::optional<db::Device>& device) {
  TunedKernel row;
  row.tuning = t;
  if (auto k = db.kernel(t.kernel_id)) row.kernel = std::move(*k);
  if (t.winner_ms && device)
    row.roofline = roofline_at(row.kernel.flops, row.kernel.bytes, *t.winner_ms,
                               device->peak_gflops, device->peak_gbps);
  return row;
}

std::optional<double> RunSummary::roofline(int64_t flops, int64_t bytes, double ms) const {
  return roofline_at(flops, bytes, ms, peak_gflops, peak_gbps);
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
    TunedKernel row = tuned_kernel(db, t, s.data.device);
    row.statuses = statuses[t.id];
    for (const auto& [status, n] : row.statuses) row.candidates += n;
    s.tunings.push_back(std::move(row));
  }
  return s;
}

} // namespace beamlab::reports

// A single run's summary; see summary.hpp.
#include "reports/summary.hpp"

#include "reports/stats.hpp"
#include "tuner/store/device.hpp"
#include "tuner/store/records.hpp"

namespace beamlab::reports {

std::optional<double> TunedKernel::speedup() const {
  std::optional<tuner::Speedup> s = tuner::speedup_of(tuning);
  return s ? std::optional(s->estimate) : std::nullopt;
}

std::string TunedKernel::outcome() const {
  if (tuning.status == db::TuningStatus::done) return tuning.stop_reason;
  return to_string(tuning.status) + (tuning.error.empty() ? std::string() : ": " + tuning.error);
}

TunedKernel tuned_kernel(db::Database& db, const db::Tuning& t,
                         const std::optional<db::Device>& device) {
  TunedKernel row;
  row.tuning = t;
  if (auto k = db.kernel(t.kernel_id)) row.kernel = std::move(*k);
  if (t.winner_ms && device && device->limits)
    row.roof = roofline(*device->limits, tuner::traffic_of(row.kernel), *t.winner_ms);
  return row;
}

std::optional<Roof> RunSummary::roof(const Measurement& m, double ms) const {
  if (!data.device || !data.device->limits) return std::nullopt;
  return roofline(*data.device->limits, {m.flops, m.bytes, std::nullopt}, ms);
}

std::vector<std::string> RunSummary::over_roof_notes() const {
  std::vector<std::string> out;
  auto note = [&](const std::string& name, const std::optional<Roof>& r) {
    if (r && !r->over_note().empty()) out.push_back(name + ": " + r->over_note());
  };
  for (const TunedKernel& k : tunings) note(k.kernel.name, k.roof);
  for (Section section : {Section::workload, Section::kernel, Section::suite})
    for (const Measurement* m : measured(section))
      if (!m->samples_ms.empty()) note(m->name, roof(*m, describe(m->samples_ms).median));
  return out;
}

std::vector<const Measurement*> RunSummary::measured(Section section) const {
  std::vector<const Measurement*> out;
  if (section == Section::kernel && !tunings.empty()) return out;
  for (const Measurement& m : data.items)
    if (m.section == section) out.push_back(&m);
  return out;
}

std::vector<AgainstOrt> RunSummary::against_ort() const {
  // Suite names are "BM_Model/NAME/PLANS/real_time" (or manual_time, for ORT's own timing).
  auto parts = [](const std::string& name) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= name.size();) {
      size_t slash = std::min(name.find('/', at), name.size());
      out.push_back(name.substr(at, slash - at));
      at = slash + 1;
    }
    return out;
  };
  std::map<std::string, const Measurement*> ort;
  for (const Measurement* m : measured(Section::suite)) {
    std::vector<std::string> p = parts(m->name);
    if (p.size() >= 3 && p[0] == "BM_Model" && p[2] == "ort" && !m->samples_ms.empty())
      ort[p[1]] = m;
  }
  std::vector<AgainstOrt> out;
  for (const Measurement* m : measured(Section::suite)) {
    std::vector<std::string> p = parts(m->name);
    if (p.size() < 3 || p[0] != "BM_Model" || p[2] == "ort" || m->samples_ms.empty()) continue;
    auto o = ort.find(p[1]);
    if (o == ort.end()) continue;
    out.push_back({p[1], p[2], describe(m->samples_ms), describe(o->second->samples_ms)});
  }
  return out;
}

RunSummary summarize_run(db::Database& db, int64_t run_id) {
  RunSummary s;
  s.data = load_run_data(db, run_id);
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

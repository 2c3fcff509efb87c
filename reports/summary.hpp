// A single run's summary (`beamlab report --run`): for a tuning run, per kernel the heuristic
// and tuned times, the speedup, the fraction of the device's roofline, the candidates by
// status and the search's time; for a benchmark run, each measurement's median, spread and
// roofline fraction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_data.hpp"
#include "reports/stats.hpp"

namespace beamlab::reports {

/// A kernel's tuning in a run as the reports and the GUI show it: the stored outcome and kernel,
/// and what is derived from them.
struct TunedKernel {
  db::Tuning tuning;
  db::Kernel kernel;
  std::optional<Roof> roof;                ///< the tuned plan under the device's roofline
  std::map<std::string, int64_t> statuses; ///< candidates per status (when counted)
  int64_t candidates = 0;
  /// heuristic / tuned time: the paired estimate when the search stored one, else the ratio
  /// of the stored times, when both are known.
  std::optional<double> speedup() const;
  /// How the search ended: its stop reason, or "failed: why".
  std::string outcome() const;
};

/// Tuning `t` with its kernel and its roof on `device` (statuses not counted).
TunedKernel tuned_kernel(db::Database& db, const db::Tuning& t,
                         const std::optional<db::Device>& device);

/// A network timed by beamlab-bench's BM_Model (`plans`: heuristic or cache) beside ONNX
/// Runtime on the same model in the same run (BM_Model/NAME/ort).
struct AgainstOrt {
  std::string model, plans;
  SampleStats beamlab, ort;
  double ratio() const { return ort.median > 0 ? beamlab.median / ort.median : 0; }
};

struct RunSummary {
  RunData data; ///< the run, its device and (for a benchmark run) its measurements
  std::vector<TunedKernel> tunings;
  /// A measurement's roof at `ms`, when the device's limits and its cost are known.
  std::optional<Roof> roof(const Measurement& m, double ms) const;
  /// Every figure over its roof with why it can be (Roof::over_note), "NAME: note".
  std::vector<std::string> over_roof_notes() const;
  /// The measurements of `section` a summary lists (a tuning run's kernels are its tunings,
  /// listed apart).
  std::vector<const Measurement*> measured(Section section) const;
  /// Each BM_Model row that has ONNX Runtime's row of its model beside it.
  std::vector<AgainstOrt> against_ort() const;
};

RunSummary summarize_run(db::Database& db, int64_t run_id);

} // namespace beamlab::reports

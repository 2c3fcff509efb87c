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

namespace beamlab::reports {

/// A kernel's tuning in a run as the reports and the GUI show it: the stored outcome and kernel,
/// and what is derived from them.
struct TunedKernel {
  db::Tuning tuning;
  db::Kernel kernel;
  std::optional<double> roofline;          ///< the tuned plan's fraction of the device's roofline
  std::map<std::string, int64_t> statuses; ///< candidates per status (when counted)
  int64_t candidates = 0;
  /// heuristic / tuned time, when both are known.
  std::optional<double> speedup() const;
  /// How the search ended: its stop reason, or "failed: why".
  std::string outcome() const;
};

/// Tuning `t` with its kernel and its roofline fraction on `device` (statuses not counted).
TunedKernel tuned_kernel(db::Database& db, const db::Tuning& t,
                         const std::optional<db::Device>& device);

struct RunSummary {
  RunData data; ///< the run, its device and (for a benchmark run) its measurements
  std::vector<TunedKernel> tunings;
  /// The device's stored peaks (GFLOP/s, GB/s), when measured.
  std::optional<double> peak_gflops, peak_gbps;
  /// A measurement's (or tuned plan's) fraction of the roofline at `ms`, when peaks and its
  /// cost are known.
  std::optional<double> roofline(int64_t flops, int64_t bytes, double ms) const;
  /// The measurements of `section` a summary lists (a tuning run's kernels are its tunings,
  /// listed apart).
  std::vector<const Measurement*> measured(Section section) const;
};

RunSummary summarize_run(db::Database& db, int64_t run_id);

} // namespace beamlab::reports

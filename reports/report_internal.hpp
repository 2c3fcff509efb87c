// What the three renderers share: number formats, verdict names and colours, and the one-line
// descriptions of runs and devices, so the formats say the same things the same way.
#pragma once

#include <optional>
#include <string>

#include "reports/compare.hpp"
#include "reports/summary.hpp"

namespace beamlab::reports::detail {

/// A time in ms with three significant digits or so ("0.0123", "1.23", "123.4").
std::string format_ms(double ms);
/// "+20.3%"
std::string format_change(double change);
/// "±1.2%"
std::string format_noise(double noise);
/// "1.2%"
std::string format_spread(double spread);
/// A row's floor and where it came from: "5.0%" (the rule's), "2.1% (12 runs)" (its drift).
std::string format_floor(const Delta& d);
/// "0.0002", "<1e-6"
std::string format_p(double p);
/// "2.31x" or "-"
std::string format_speedup(std::optional<double> x);
/// A tuning's speedup as the search decided it: "1.47x (1.40-1.55)", "tie (0.97-1.04)" (the
/// paired interval includes 1: never printed as a speedup), "1.40x" (no interval stored), "-".
std::string format_tuned_speedup(const TunedKernel& k);
/// "41%" or "-"
std::string format_fraction(std::optional<double> f);
/// "41% L2", "63% compute", "112% DRAM !" (over the roof: RunSummary::over_roof_notes says
/// why), or "-".
std::string format_roof(const std::optional<Roof>& r);
/// "FMA 420 GFLOP/s · L1 …": the device's limits, or that they were never measured.
std::string describe_limits(const RunData& r);

/// A chart and table colour per verdict.
const char* verdict_color(Verdict v);
/// A one-character marker per verdict for tables ("▲" regression, "▼" improvement, ...).
const char* verdict_mark(Verdict v);

/// "bench · a1b2c3d · 2026-11-21 10:00 · host · AMD EPYC 7B13 (2 cores)": what a run was.
std::string describe_run(const RunData& r);
/// "matmul M=256 …" (the first few workloads of a kernel).
std::string workloads_text(const Measurement& m);
/// A kernel's plan and where it came from: "UPCAST(1,4) THREAD(0,2) (cache)", "no Opts
/// (heuristic)"; a suite entry's label as it is.
std::string plan_text(const Measurement& m);
/// The plan a compared kernel ran with: the candidate's, or "A -> B" when the plans differ.
std::string plan_change_text(const Measurement& baseline, const Measurement& candidate);
/// "ok 120, slow 40" (a tuning's candidates by status, most common first).
std::string statuses_text(const TunedKernel& k);

/// The report's title.
std::string title(const Comparison& c);
std::string title(const RunSummary& s);

} // namespace beamlab::reports::detail

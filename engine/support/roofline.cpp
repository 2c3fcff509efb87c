// The cache-aware roofline; see roofline.hpp.
#include "engine/support/roofline.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace beamlab {

double MemoryLevel::bandwidth_for(double write_share) const {
  if (read_gbps <= 0) return triad_gbps;
  if (triad_gbps <= 0) return read_gbps;
  write_share = std::clamp(write_share, 0.0, 1.0);
  // Seconds per GB written; a triad measured faster than its reads imply (streaming stores)
  // leaves writes at no less than a quarter of the read rate's cost.
  double write_cost = std::max(3 / triad_gbps - 2 / read_gbps, 0.25 / read_gbps);
  return 1 / ((1 - write_share) / read_gbps + write_share * write_cost);
}

const MemoryLevel& MachineLimits::level_for(int64_t bytes) const {
  for (const MemoryLevel& l : levels)
    if (l.capacity_bytes > 0 && bytes <= l.capacity_bytes) return l;
  return levels.back();
}

std::string Roof::over_note() const {
  if (fraction <= 1.05) return "";
  return fmt::format("{:.0f}% of the {} roof: faster than the measured limit (data reused from a "
                     "closer level than its size suggests, or limits measured under load: "
                     "`beamlab device --measure` re-measures)",
                     100 * fraction, bound);
}

std::string describe(const MachineLimits& limits) {
  std::string out = limits.fma_f32_gflops > 0
                        ? fmt::format("FMA {:.0f} GFLOP/s f32", limits.fma_f32_gflops)
                        : std::string("FMA unknown (not measurable: `beamlab device --measure` "
                                      "on a quiet machine)");
  for (const MemoryLevel& m : limits.levels)
    out += fmt::format(" · {} {:.0f}/{:.0f}", m.name, m.read_gbps, m.triad_gbps);
  return out + fmt::format(" GB/s read/triad ({} threads)", limits.threads);
}

std::optional<Roof> roofline(const MachineLimits& limits, const KernelTraffic& traffic, double ms) {
  if (!limits.known() || ms <= 0 || (traffic.flops <= 0 && traffic.bytes <= 0)) return std::nullopt;
  const MemoryLevel& level = limits.level_for(traffic.bytes);
  double write_share =
      traffic.written_bytes && traffic.bytes > 0
          ? static_cast<double>(*traffic.written_bytes) / static_cast<double>(traffic.bytes)
          : 1.0 / 3;
  Roof roof;
  roof.level = level.name;
  roof.gflops = limits.fma_f32_gflops;
  roof.gbps = level.bandwidth_for(write_share);
  double compute_ms = static_cast<double>(traffic.flops) / (roof.gflops * 1e6);
  double memory_ms = roof.gbps > 0 ? static_cast<double>(traffic.bytes) / (roof.gbps * 1e6) : 0;
  roof.bound = compute_ms >= memory_ms ? "compute" : level.name;
  roof.fraction = std::max(compute_ms, memory_ms) / ms;
  return roof;
}

} // namespace beamlab

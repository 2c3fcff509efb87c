// The machine's limits; see device.hpp.
#include "tuner/store/device.hpp"

#include <algorithm>
#include <map>

#include <beamlab/beamlab.hpp>

namespace beamlab::tuner {

double roofline_fraction(int64_t flops, int64_t bytes, double ms, double peak_gflops,
                         double peak_gbps) {
  if (ms <= 0) return 0;
  double compute = peak_gflops > 0 ? static_cast<double>(flops) / (ms * 1e6) / peak_gflops : 0;
  double memory = peak_gbps > 0 ? static_cast<double>(bytes) / (ms * 1e6) / peak_gbps : 0;
  return std::max(compute, memory);
}

std::pair<double, double> device_peaks(db::Database& db, int64_t device_id, int threads) {
  std::optional<db::Device> d = db.device(device_id);
  if (d && d->peak_gflops && d->peak_gbps) return {*d->peak_gflops, *d->peak_gbps};
  HeuristicPolicy heuristic;
  auto best = [&](const std::string& workload, const std::map<std::string, int64_t>& params,
                  bool compute) {
    Tensor out = build_workload(workload, params);
    ExecutionPlan plan = ExecutionPlan::prepare(out.schedule(), out.inputs(),
                                                {.threads = threads, .policy = &heuristic});
    double peak = 0;
    for (int i = 0; i < 3; ++i)
      for (const KernelProfile& p : plan.profile(3))
        peak = std::max(peak, compute ? p.gflops : p.gbps);
    return peak;
  };
  double gflops = best("matmul", {{"M", 512}, {"N", 512}, {"K", 512}}, true);
  double gbps = best("elementwise", {{"N", 1 << 24}, {"DEPTH", 1}}, false);
  if (!db.read_only()) db.set_device_peaks(device_id, gflops, gbps);
  return {gflops, gbps};
}

} // namespace beamlab::tuner

// Repeated searches compared; see repeat.hpp.
#include "tuner/batch/repeat.hpp"

#include <algorithm>
#include <map>

#include "tuner/measure/fidelity.hpp"

namespace beamlab::tuner {

RepeatStudy study_repeats(const std::vector<BatchReport>& reports, int threads) {
  RepeatStudy study;
  if (reports.empty()) return study;
  Gate gate; // nothing else runs now: it only keeps the timing's contract
  for (size_t i = 0; i < reports[0].kernels.size(); ++i) {
    RepeatKernel rk;
    const KernelTask& task = reports[0].kernels[i].task;
    rk.name = task.name;
    for (const BatchReport& r : reports) {
      const BatchKernel* k =
          i < r.kernels.size() && r.kernels[i].task.key == task.key ? &r.kernels[i] : nullptr;
      if (!k || k->outcome == BatchKernel::Outcome::failed) {
        rk.error = "failed or missing in a repeat";
        break;
      }
      rk.winners.push_back(k->result.winner_opts);
    }
    auto ast = task_graph(task);
    if (rk.error.empty() && !ast) rk.error = ast.error();
    if (!rk.error.empty()) {
      study.kernels.push_back(rk);
      continue;
    }
    // The distinct plans, each timed once with the others.
    std::vector<std::string> texts = rk.winners;
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    rk.distinct = static_cast<int>(texts.size());
    std::vector<std::vector<Opt>> plans;
    for (const std::string& t : texts) plans.push_back(parse_opts(t).value());
    auto times = time_plans_in_process(task, *ast, plans, threads, gate, 5, 3);
    if (!times) {
      rk.error = times.error();
      study.kernels.push_back(rk);
      continue;
    }
    size_t best = 0;
    for (size_t p = 1; p < plans.size(); ++p)
      if (quantile((*times)[p], 0.5) < quantile((*times)[best], 0.5)) best = p;
    std::map<std::string, PairedRatio> vs_best;
    for (size_t p = 0; p < plans.size(); ++p)
      vs_best[texts[p]] = paired_ratio((*times)[p], (*times)[best]);
    for (const std::string& w : rk.winners) {
      const PairedRatio& r = vs_best[w];
      bool within = !r.significant() || r.estimate < 1.05;
      rk.over_best.push_back(r.estimate);
      rk.within.push_back(within);
      study.within += within;
      ++study.pairs;
    }
    study.kernels.push_back(rk);
  }
  return study;
}

} // namespace beamlab::tuner

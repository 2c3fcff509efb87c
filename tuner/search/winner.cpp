// The one place a kernel's winner is decided; see winner.hpp.
#include "tuner/search/winner.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tuner/measure/fidelity.hpp"

namespace beamlab::tuner {
namespace {

std::vector<double> present(const std::vector<double>& rounds) {
  std::vector<double> out;
  for (double x : rounds)
    if (x > 0) out.push_back(x);
  return out;
}

} // namespace

void decide_by_rounds(TuneResult& r, const std::map<int, std::vector<double>>& kept_rounds,
                      std::vector<int> measured) {
  auto rounds = [&](int id) {
    auto it = kept_rounds.find(id);
    return it == kept_rounds.end() ? std::vector<double>{} : it->second;
  };
  auto median = [&](int id) { return quantile(present(rounds(id)), 0.5); };
  std::sort(measured.begin(), measured.end(), [&](int a, int b) {
    return median(a) < median(b) || (median(a) == median(b) && a < b);
  });
  r.finalists = measured;
  r.winner = measured.front();
  r.winner_ms = median(r.winner);
  const std::vector<double> winner = rounds(r.winner);
  if (measured.size() > 1) {
    r.runner_up = paired_ratio(rounds(measured[1]), winner);
    r.tie = !r.runner_up.significant();
    r.noise = r.runner_up.hi / r.runner_up.estimate - 1;
  }
  if (!present(rounds(r.heuristic)).empty()) {
    r.heuristic_ms = median(r.heuristic);
    r.speedup = paired_ratio(rounds(r.heuristic), winner);
    r.tie_with_heuristic = r.heuristic != r.winner && !r.speedup.significant();
  }
}

void confirm_in_process(TuneResult& r, const KernelTask& task, const UOpPtr& ast, int threads,
                        WorkerPool& pool) {
  if (r.winner < 0 || r.heuristic < 0 || r.winner == r.heuristic ||
      r.candidates.at(static_cast<size_t>(r.heuristic)).status != Status::ok ||
      r.speedup.rounds == 0 || r.heuristic_ms <= 0)
    return;
  auto confirm = [&](const KernelTask& at) {
    return check_in_process(
        at, ast, r.best().opts, r.candidates.at(static_cast<size_t>(r.heuristic)).opts, threads,
        pool.gate(), std::max(2, r.settings.final_rounds), std::max(1, r.settings.final_runs));
  };
  Fidelity f = confirm(task);
  if (!f.checked()) {
    r.fidelity = "unchecked: " + f.error;
    return;
  }
  // A kernel over symbolic variables serves every value in their ranges: the winner must not
  // lose to the heuristic at any value it was tuned at, whatever it gains at the others.
  std::string where;
  if (f.in_process.hi >= 1 && task.tune_at.size() > 1)
    for (const VarValues& vars : task.tune_at) {
      KernelTask one = task;
      one.tune_at = {vars};
      Fidelity at = confirm(one);
      if (at.checked() && at.in_process.hi < 1) {
        f = at;
        where = " at " + bindings_str({vars});
        break;
      }
    }
  r.in_process = f.in_process;
  if (f.in_process.hi < 1) {
    r.fidelity = fmt::format("overruled: the winner ran {:.2f}x the heuristic's time in process{} "
                             "({:.4f} vs {:.4f} ms); the heuristic's plan is kept",
                             1 / f.in_process.estimate, where, f.winner_ms, f.heuristic_ms);
    r.winner = r.heuristic;
    r.winner_ms = r.heuristic_ms;
    r.speedup = PairedRatio{1, 1, 1, r.speedup.rounds};
    r.tie_with_heuristic = false;
    // The runner-up comparison was the old winner's.
    r.runner_up = {};
    r.tie = false;
    r.noise = 0;
    return;
  }
  double gap = f.in_process.estimate / r.speedup.estimate - 1;
  r.fidelity = std::abs(gap) <= 0.05 ? "agrees" : fmt::format("differs by {:+.0f}%", 100 * gap);
}

std::optional<size_t> best_tried_by_hand(const std::vector<Candidate>& tried) {
  std::optional<size_t> best;
  double best_ms = 0;
  for (size_t i = 0; i < tried.size(); ++i) {
    const Candidate& c = tried[i];
    if (c.status != Status::ok || c.samples_ms.empty() || c.id == 0) continue;
    double median = c.median_ms();
    if (!best || median < best_ms) best = i, best_ms = median;
  }
  return best;
}

} // namespace beamlab::tuner

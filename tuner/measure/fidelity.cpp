// The in-process check of a search's verdict; see fidelity.hpp.
#include "tuner/measure/fidelity.hpp"

#include <chrono>
#include <memory>
#include <optional>

#include "tuner/measure/check.hpp"

namespace beamlab::tuner {
namespace {

// Holds the gate for the scope.
struct Hold {
  Gate& gate;
  Access access;
  Hold(Gate& g, Access a) : gate(g), access(a) { gate.lock(access); }
  ~Hold() { gate.unlock(access); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
};

} // namespace

Expected<std::vector<std::vector<double>>>
time_plans_in_process(const KernelTask& task, const UOpPtr& ast,
                      const std::vector<std::vector<Opt>>& plans, int threads, Gate& gate,
                      int rounds, int runs) {
  // Compiling and filling the inputs enter the gate shared (not preemptible: nothing here can
  // be stopped), so they never run beside another pool's timing; the timing then holds it
  // alone, stopping the pools' compiles meanwhile.
  std::optional<Hold> building(std::in_place, gate, Access::shared);
  std::vector<KernelCandidate> built;
  for (size_t i = 0; i < plans.size(); ++i) {
    auto c = KernelCandidate::build(ast, plans[i], task.name);
    if (!c)
      return make_unexpected("could not build " + to_string(plans[i]) +
                             " in process: " + c.error().message);
    built.push_back(std::move(*c));
  }
  // As realize allocates: one zeroed, aligned Buffer per slot; inputs the checks' random ones.
  DivisionDomain domain = division_domain(ast, task.buffers.size());
  std::vector<std::unique_ptr<Buffer>> storage;
  std::vector<void*> buffers;
  for (size_t s = 0; s < task.buffers.size(); ++s) {
    const KernelBufferSpec& spec = task.buffers[s];
    storage.push_back(std::make_unique<Buffer>(static_cast<size_t>(spec.bytes())));
    if (s > 0) {
      fill_input(spec.dtype, InputKind::random, 1000 + s, storage.back()->data(), spec.count);
      if (domain.divides)
        keep_in_domain(spec.dtype, storage.back()->data(), spec.count, domain.divisor[s]);
    }
    buffers.push_back(storage.back()->data());
  }
  // A kernel over symbolic variables: a run is a launch at each of the task's tune_at.
  const std::vector<VarValues> at = task.tune_at.empty() ? std::vector<VarValues>(1) : task.tune_at;
  auto launch = [&](const KernelCandidate& c) {
    for (const VarValues& vars : at) c.run(buffers, threads, vars);
  };
  auto median_ms = [&](const KernelCandidate& c) {
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      evict_constants(task.buffers, buffers); // as the worker times them
      auto t0 = std::chrono::steady_clock::now();
      launch(c);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return quantile(ms, 0.5);
  };
  std::vector<std::vector<double>> out(built.size());
  building.reset();
  Hold alone(gate, Access::exclusive);
  for (const KernelCandidate& c : built) launch(c); // warm-up: first touch
  for (int r = 0; r < rounds; ++r)
    // A rotating order, so no plan always runs on another's warm caches.
    for (size_t k = 0; k < built.size(); ++k) {
      size_t i = (k + static_cast<size_t>(r)) % built.size();
      out[i].push_back(median_ms(built[i]));
    }
  return out;
}

Fidelity check_in_process(const KernelTask& task, const UOpPtr& ast, const std::vector<Opt>& winner,
                          const std::vector<Opt>& heuristic, int threads, Gate& gate, int rounds,
                          int runs) {
  Fidelity f;
  auto times = time_plans_in_process(task, ast, {winner, heuristic}, threads, gate, rounds, runs);
  if (!times) {
    f.error = times.error();
    return f;
  }
  const std::vector<double>&w = (*times)[0], &h = (*times)[1];
  f.in_process = paired_ratio(h, w);
  f.winner_ms = quantile(w, 0.5);
  f.heuristic_ms = quantile(h, 0.5);
  return f;
}

} // namespace beamlab::tuner

// The sandbox's verdict checked against the real engine. A search times its candidates in a
// sandboxed worker (its own allocation, a confined process, OpenMP threads that sleep between
// runs); a plan goes into the tuning cache to run in the user's process. Before it does, the
// winner and the heuristic are built again here and timed in this process, on buffers
// allocated as realize allocates them, in paired rounds (each round runs both back to back,
// in alternating order), while the pool's gate is held exclusively so no compile or timing
// runs beside them.
#pragma once

#include <string>
#include <vector>

#include <beamlab/tuning.hpp>

#include "tuner/measure/pool.hpp"

namespace beamlab::tuner {

struct Fidelity {
  /// The heuristic's time over the winner's in this process, paired by round.
  PairedRatio in_process;
  double winner_ms = 0, heuristic_ms = 0; ///< medians of the rounds' medians
  std::string error;                      ///< why it couldn't be checked (empty: it was)
  bool checked() const { return error.empty(); }
};

/// Times each of `plans` of `task` (its AST `ast`) here with `threads` threads, holding `gate`
/// exclusively: `rounds` rounds, each running every plan `runs` times back to back (the order
/// rotating by round). Per plan, its median in each round; or why a plan couldn't be built.
Expected<std::vector<std::vector<double>>>
time_plans_in_process(const KernelTask& task, const UOpPtr& ast,
                      const std::vector<std::vector<Opt>>& plans, int threads, Gate& gate,
                      int rounds, int runs);

/// Times `winner` and `heuristic` of `task` (its AST `ast`) here with `threads` threads:
/// `rounds` rounds of `runs` runs each. Inputs are the checks' random inputs, kept in the
/// kernel's division domain.
Fidelity check_in_process(const KernelTask& task, const UOpPtr& ast, const std::vector<Opt>& winner,
                          const std::vector<Opt>& heuristic, int threads, Gate& gate,
                          int rounds = 5, int runs = 3);

} // namespace beamlab::tuner

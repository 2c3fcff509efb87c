// BEAM as the engine's optimization policy: each kernel is tuned on its first realize, the
// winner remembered for the rest of the process (the SQLite cache will keep it across runs).
//
//   tuner::BeamPolicy beam({.beam = 4});
//   c.realize({.policy = &beam});           // or: tuner::install_beam_from_env() with BEAM=4
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tuner/search.hpp"

namespace beamlab::tuner {

class BeamPolicy : public OptPolicy {
public:
  explicit BeamPolicy(SearchSettings settings, PoolOptions pool = {}, EventSink sink = {});
  ~BeamPolicy() override;

  /// The tuned Opts (tuning now if this kernel hasn't been). A kernel whose search can't run
  /// (its unoptimized form fails in the sandbox) gets the heuristic's, with a warning.
  std::vector<Opt> opts_for(const ScheduleItem& kernel, int threads) const override;

  /// Every search so far, in order.
  std::vector<TuneResult> results() const;

private:
  SearchSettings settings_;
  PoolOptions pool_options_;
  EventSink sink_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<WorkerPool> pool_;
  mutable std::unordered_map<uint64_t, std::vector<Opt>> tuned_;
  mutable std::vector<TuneResult> results_;
};

/// BEAM=W in the environment (W >= 1): a BeamPolicy of width W, installed as the engine's
/// default policy for the rest of the process; returned so the caller can read its results.
/// Unset or 0: null, nothing changes. Any other value is a UserError naming it.
std::shared_ptr<BeamPolicy> install_beam_from_env();

} // namespace beamlab::tuner

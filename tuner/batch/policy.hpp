// BEAM as the engine's optimization policy: each kernel's plan is looked up in the tuning cache
// first (a hit costs no search: the plan is replayed and validated), otherwise tuned on its
// first realize and stored; the winner is remembered for the rest of the process. CachePolicy
// only reads: a hit's plan, else another policy's (the heuristic's).
//
//   tuner::BeamPolicy beam({.beam = 4});
//   beam.use_cache(db::Database::default_path(), tuner::CacheMode::use);
//   c.realize({.policy = &beam});           // or: tuner::install_beam_from_env() with BEAM=4
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tuner/search/search.hpp"
#include "tuner/store/journal.hpp"

namespace beamlab::tuner {

class BeamPolicy : public OptPolicy {
public:
  explicit BeamPolicy(SearchSettings settings, PoolOptions pool = {}, EventSink sink = {});
  ~BeamPolicy() override;

  /// The tuned Opts (tuning now if this kernel hasn't been). A kernel whose search can't run
  /// (its unoptimized form fails in the sandbox) gets the heuristic's, with a warning.
  std::vector<Opt> opts_for(const ScheduleItem& kernel, int threads) const override;
  /// A kernel of constants: its cached plan or the heuristic's, never a search.
  std::vector<Opt> opts_for_once(const ScheduleItem& kernel, int threads) const override;

  /// Every search so far, in order.
  std::vector<TuneResult> results() const;

  /// Looks plans up in (and, as `mode` allows, stores winners in) the database at `path`.
  void use_cache(const std::string& path, CacheMode mode);
  int cache_hits() const;

private:
  SearchSettings settings_;
  mutable std::unique_ptr<db::Database> db_;
  mutable CacheContext cache_;
  PoolOptions pool_options_;
  EventSink sink_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<WorkerPool> pool_;
  mutable std::unordered_map<uint64_t, std::vector<Opt>> tuned_;
  mutable std::unordered_map<uint64_t, std::vector<Opt>> once_; ///< opts_for_once's answers
  mutable std::vector<TuneResult> results_;
};

/// The tuning cache's plans where it has one, `fallback`'s elsewhere.
class CachePolicy : public OptPolicy {
public:
  CachePolicy(const std::string& path, CacheMode mode, const OptPolicy& fallback);
  ~CachePolicy() override;
  std::vector<Opt> opts_for(const ScheduleItem& kernel, int threads) const override;
  std::vector<Opt> opts_for_once(const ScheduleItem& kernel, int threads) const override;
  /// The cache's plan for `kernel`, if it has one (what opts_for serves before the fallback).
  std::optional<std::vector<Opt>> cached(const ScheduleItem& kernel, int threads) const;
  int hits() const;

private:
  const OptPolicy& fallback_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<db::Database> db_;
  mutable CacheContext cache_;
};

/// BEAM=W in the environment: W (0 when unset: no search). Any value other than an integer from
/// 0 to 1024 is a UserError naming it.
int beam_width_from_env();

/// BEAM=W in the environment (W >= 1): a BeamPolicy of width W, installed as the engine's
/// default policy for the rest of the process; returned so the caller can read its results.
/// Unset or 0: null, nothing changes. Any other value is a UserError naming it.
std::shared_ptr<BeamPolicy> install_beam_from_env();

} // namespace beamlab::tuner

// Warm starts across shapes: a kernel the cache has no plan for is searched with the plans
// that won for the nearest tuned kernels of its structure as seeds.
//
// The reuse rule. A cache entry lends its plan to kernel K when it is not stale, was tuned on
// K's device, with K's compiler and at K's thread count (in any search settings), and its
// kernel (stored in the kernels table, so its AST is known) is another kernel of K's structure
// (tuner/search/structure.hpp: the same AST up to sizes). The entries are ranked by the
// distance of their kernel's sizes from K's (size_distance: log2 steps summed over the axes),
// then by time; each plan is legalized for K (tuner/search/legalize.hpp: the same axes by
// lineage, an amount that doesn't apply replaced by the nearest one that does, or the Opt
// dropped), and the first `count` distinct non-empty results are the seeds. A seed is only a
// candidate: it is compiled, checked and timed like any other, and the search goes on from
// whatever wins.
//
// Kernels stored before schema 4 (or under another structure recipe) get their structure
// computed from their AST here, and stored when the database is writable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/store/cache.hpp"

namespace beamlab::tuner {

/// One seed of a warm start and where it came from.
struct WarmSeed {
  std::vector<Opt> opts;   ///< the plan, legalized for the kernel searched
  int64_t entry_id = 0;    ///< the cache entry it came from
  std::string kernel_hash; ///< that entry's kernel
  std::string kernel_name;
  std::string plan;    ///< that entry's plan, as cached
  double ms = 0;       ///< its time on its own kernel
  double distance = 0; ///< size_distance between the two kernels
  int changed = 0;     ///< Opts that took another amount
  int dropped = 0;     ///< Opts legalization dropped
};

/// How many seeds a warm start takes at most.
inline constexpr int kWarmSeeds = 3;

/// The seeds for kernel `task` (AST `ast`) at `threads` from the cache in `ctx` (its device
/// and compiler), legalized within the caps of `settings`, nearest first (see the file
/// comment). Empty when the cache has none, or `ctx` has no database.
std::vector<WarmSeed> warm_start_seeds(const CacheContext& ctx, const KernelTask& task,
                                       const UOpPtr& ast, int threads,
                                       const SearchSettings& settings, int count = kWarmSeeds);

/// The plans alone, for SearchSettings::seeds.
std::vector<std::vector<Opt>> seed_plans(const std::vector<WarmSeed>& seeds);

/// The seeds as a tuning's settings record them ("warm_start"): each seed's plan and the
/// cache entry, kernel and plan it came from.
nlohmann::json warm_start_json(const std::vector<WarmSeed>& seeds);

} // namespace beamlab::tuner

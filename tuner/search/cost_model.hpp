// A learned cost model that ranks a kernel's candidate plans before they are measured
// (gradient-boosted trees from Debian's libxgboost, as TVM's Ansor ranks its candidates).
//
// It learns from measured candidates of many kernels: each sample is a candidate's features
// (features.hpp) and its measured time, grouped by kernel, and the model is trained to order
// the candidates of one kernel (XGBoost's rank:pairwise, kernels as its groups), so kernels of
// very different sizes teach it the same thing: which plans are faster than their siblings.
// Only the order of predictions within one kernel means anything.
//
// Why pairwise ranking: cross-validated by kernel (`beamlab model eval`, 5 folds) on a journal
// of 53 kernels and 6,662 measured plans (the quick corpus and mid-size variants, BEAM 3, 2
// threads), it ordered held-out kernels' plans with a median Spearman correlation of 0.68 and
// had the measured best among its predicted fastest quarter for 51% of kernels; regression on
// log(ms / the kernel's best) reached 0.59 and 36%. Trees, depth and learning rate changed
// little (50 to 300 trees, depth 4 to 8: within 0.03); 100 trees of depth 6 train on 5,000 rows
// in 0.2 s on one thread.
//
// Thread-safe: a batch's searches (one per job thread) share one model, adding what they
// measure and refitting as they go; a fit trains on a snapshot, without holding the others up.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tuner/search/features.hpp"

namespace beamlab::tuner {

/// What a model learns to predict.
enum class CostObjective {
  rank,      ///< the order of a kernel's candidates (XGBoost's rank:pairwise, kernels as groups)
  regression ///< log(ms / the kernel's best ms), squared error
};

/// How a model is trained. The defaults are what `beamlab model eval` measured best.
struct CostModelOptions {
  CostObjective objective = CostObjective::rank;
  int trees = 100;   ///< boosting rounds
  int depth = 6;     ///< of each tree
  double eta = 0.3;  ///< the learning rate
  uint64_t seed = 0; ///< training is deterministic for a given seed
};

class CostModel {
public:
  CostModel();
  explicit CostModel(const CostModelOptions& options);
  ~CostModel();
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  /// One measured candidate of the kernel with key `kernel`: its features and time (ms > 0).
  void add(uint64_t kernel, Features x, double ms);
  /// Samples added, and the distinct kernels they belong to.
  size_t size() const;
  int kernels() const;

  /// Trains a fresh model on every sample added so far. False, leaving the model as it was,
  /// when there is nothing to learn (no kernel with two different times).
  bool fit();
  /// A model has been fitted.
  bool trained() const;

  /// The predicted cost of each row (lower: faster); empty when not trained.
  std::vector<double> predict(const std::vector<Features>& rows) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Spearman's rank correlation of two series of equal length (1: the same order, -1: reversed;
/// ties take their mean rank; 0 when either is constant or shorter than 2).
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

} // namespace beamlab::tuner

// A learned cost model that ranks a kernel's candidate plans before they are measured
// (gradient-boosted trees from Debian's libxgboost, as TVM's Ansor ranks its candidates).
//
// It learns from measured candidates of many kernels: each sample is a candidate's features
// (features.hpp) and its measured time, grouped by kernel, and the model is trained to order
// the candidates of one kernel (a pairwise ranking objective), so kernels of very different
// sizes teach it the same thing: which plans are faster than their siblings. Only the order of
// predictions within one kernel means anything.
//
// Thread-safe: a batch's searches (one per job thread) share one model, adding what they
// measure and refitting as they go.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tuner/search/features.hpp"

namespace beamlab::tuner {

class CostModel {
public:
  CostModel();
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

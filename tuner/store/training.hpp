// The journal as training data for the cost model (tuner/search/cost_model.hpp): every plan a
// search measured on a device, with its features and its time.
//
//   CostModel model;
//   TrainingStats s = add_journal(db, this_device().fingerprint(), threads, model);
//   if (model.fit()) ...
//
// A sample is a candidate of a tuning on the device (its run's device) at the thread count,
// with status ok or slow: its features (the kernel's AST from the kernels table, the plan
// applied) and its label, the fastest of its search-time samples (the first `runs`, from the
// tuning's settings). The finalists' re-measurement adds more samples to a few candidates, and a
// minimum over more samples is lower by chance alone: only the search's samples make the
// candidates of one search comparable. A slow candidate's timing stopped early, past
// early_stop x the incumbent: its samples are real runs, and it is what the model most needs
// to see (most of a search's neighbours are slow; some kernels have one ok plan and forty slow
// ones). Plans tried by hand are not searches and are left out.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/search/cost_model.hpp"

namespace beamlab::tuner {

/// What to leave out of the training data (for held-out evaluation).
struct JournalFilter {
  std::set<int64_t> exclude_runs = {};
  std::set<std::string> exclude_kernels = {}; ///< kernel hashes, hex (db::Kernel::hash)
  bool exclude_slow = false;                  ///< only candidates timed to the end (status ok)
};

/// What reading a journal found.
struct TrainingStats {
  int tunings = 0;            ///< tunings read
  int kernels = 0;            ///< distinct kernels with at least one sample
  int64_t samples = 0;        ///< candidates turned into samples
  int64_t unusable = 0;       ///< timed candidates whose plan no longer applies in this build
  int unreadable_kernels = 0; ///< kernels whose stored AST doesn't read back in this build
  double seconds = 0;         ///< wall time, reading and computing features
};

/// One measured plan.
struct JournalSample {
  std::string opts; ///< the plan's text form
  Features x;
  double ms = 0; ///< the fastest search-time sample
  int64_t run_id = 0;
};

/// One kernel's measured plans, over every tuning of it that was read.
struct JournalKernel {
  uint64_t key = 0; ///< the AST's hash (as CostModel::add takes it)
  std::string hash; ///< the same in hex, as the database stores it
  std::string name;
  std::vector<JournalSample> samples; ///< in journal order: runs oldest first, then by seq
};

/// The journal read for training.
struct Journal {
  std::vector<JournalKernel> kernels; ///< in order of their first tuning
  TrainingStats stats;
};

/// Every sample of the tunings on device `device_fingerprint` at `threads` cores, but those
/// `filter` excludes. Reads the database only.
Journal read_journal(db::Database& db, const std::string& device_fingerprint, int threads,
                     const JournalFilter& filter = {});

/// Adds every sample of `kernel` to `model`.
void add_samples(CostModel& model, const JournalKernel& kernel);

/// read_journal, every kernel added to `model`.
TrainingStats add_journal(db::Database& db, const std::string& device_fingerprint, int threads,
                          CostModel& model, const JournalFilter& filter = {});

/// The thread counts the device's tunings ran at, each with its number of tunings (searches,
/// not plans tried by hand).
std::vector<std::pair<int, int>> journal_thread_counts(db::Database& db,
                                                       const std::string& device_fingerprint);

} // namespace beamlab::tuner

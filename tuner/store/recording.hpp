// A journaled search read back as a Recording (tuner/search/recorded.hpp), with what replaying
// it needs: the kernel, the settings it ran with, its seeds, and how many sandboxes it had.
#pragma once

#include <cstdint>

#include "db/database.hpp"
#include "tuner/search/recorded.hpp"

namespace beamlab::tuner {

struct RecordedTuning {
  db::Tuning tuning;
  KernelTask task;
  /// As the search ran: its settings, with the seeds it measured beside the heuristic.
  SearchSettings settings;
  Recording recording;
  /// The search's own winner (its Opts' text): the finalist with the lowest median over its
  /// kept rounds. The tuning's winner differs when the in-process check overruled it.
  std::string search_winner;
};

/// The finished search `tuning_id` of the journal. The reason when it can't be replayed: it
/// isn't finished, was tried by hand, or its kernel doesn't read back in this build.
Expected<RecordedTuning> load_recording(db::Database& db, int64_t tuning_id);

/// A strategy run against a recording.
struct ReplayOutcome {
  TuneResult result; ///< its times are the simulated clock's
  /// The incumbent (its fastest search sample) at each improvement: (simulated s, ms).
  std::vector<std::pair<double, double>> curve;
  int missing = 0; ///< plans it asked for that the recording lacks
};

/// What makes a replay of the recorded search itself take the recorded wall time.
Calibration calibrate(const RecordedTuning& r);

/// Runs `settings` (the recorded ones, or a variant) against the recording on the clock
/// `calibration` sets; `sink` sees its events as a live search's. The reason when the recording has
/// no reference time.
Expected<ReplayOutcome> replay_search(const RecordedTuning& r, const SearchSettings& settings,
                                      Calibration calibration, const EventSink& sink = {});

/// The recorded estimate of a plan's time: the median of its re-measurement rounds if it was a
/// finalist, else of its search samples (0 when it has none).
double recorded_ms(const Recording& rec, const std::vector<Opt>& plan);

} // namespace beamlab::tuner

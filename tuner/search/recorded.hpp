// A finished search played back: the Lab that answers every candidate with what the recorded
// search measured for the same plan, on a simulated clock, so a strategy (pruning, warm
// starts, another beam width) can be run again offline, cheaply and reproducibly, and its
// best-so-far compared against the recorded one's. Nothing is compiled or timed.
//
// How it answers. A plan is looked up by its Opts' text. Its compile succeeds or fails as
// recorded (with its code hash and size, so the search's own dedup and bloat rules apply); its
// timing returns the recorded search samples (the first `runs`; an early stop is decided again
// against the replay's own cutoff); a finalist's re-measurement round returns the recorded
// median of that round, so the same strategy re-measures to the same winner. A plan the
// recording never measured fails with "not in the recording" and is counted: a strategy that
// wanders far from the recorded one is only as well evaluated as its coverage.
//
// The clock. Compiles are spread over `sandboxes` lanes (each lane's compiles in sequence,
// every lane in parallel) and a batch's timings start when its last compile ends; a timing
// costs its check and warm-up runs and its samples; a re-measurement round its runs. A
// Calibration maps that estimate to the machine's time: a replay of the recorded strategy
// itself fixes it so its simulated time matches the recorded wall time (an overhead per request
// for process round trips and output checks when the estimate falls short, a scale when it
// overshoots).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tuner/search/search.hpp"

namespace beamlab::tuner {

/// What a recorded search measured.
struct Recording {
  Replay candidates; ///< by their Opts' text ("" is the unoptimized reference)
  /// A finalist's median in each kept re-measurement round, by its Opts' text.
  std::map<std::string, std::vector<double>> rounds;
  int runs = 3;      ///< timed runs per candidate in the search (the rest re-measurement)
  int checks = 3;    ///< check inputs each candidate ran before its samples
  int warmup = 1;    ///< untimed runs before the samples
  int sandboxes = 1; ///< the compile lanes
  int threads = 1;   ///< the cores each kernel ran on
};

/// Simulated seconds = scale x the estimate + overhead_s per request.
struct Calibration {
  double scale = 1;
  double overhead_s = 0;
};

/// The samples a recorded search ranked `c` by: its first `runs` (the finalists'
/// re-measurement appended more later); the unoptimized kernel's (the reference's), its first
/// only: the fastest of its reference runs.
std::vector<double> search_samples(const Candidate& c, int runs);

class RecordedLab : public Lab {
public:
  explicit RecordedLab(const Recording& recording, Calibration calibration = {});

  int sandboxes() const override { return recording_.sandboxes; }
  int threads() const override { return recording_.threads; }
  int restarts() const override { return 0; }
  double now_s() override;
  Expected<ReferenceRun> reference(int id, double run_timeout_s) override;
  std::future<Compiled> compile(int id, std::vector<Opt> opts) override;
  Timed time(int id, const std::vector<Opt>& opts, Placement& at, const Timing& timing) override;
  void drop(int, std::vector<int>) override {}
  int iterations_late(const std::vector<Opt>& opts) const override;

  /// Plans asked for that the recording doesn't have (or never timed).
  int missing() const { return missing_; }
  /// Requests answered (compiles and timings): what the overhead is charged per.
  int requests() const { return requests_; }
  /// The simulated clock as it stands (compiles in flight not waited for).
  double clock_s() const { return clock_s_; }
  /// The estimate alone, unscaled and without overhead.
  double raw_s() const { return raw_s_; }

private:
  const Candidate* find(const std::vector<Opt>& opts) const;
  void charge(double seconds);

  const Recording& recording_;
  Calibration calibration_;
  double clock_s_ = 0, raw_s_ = 0;
  std::vector<double> lanes_; ///< when each compile lane is next free
  std::map<int, size_t> rounds_taken_;
  int missing_ = 0, requests_ = 0;
};

} // namespace beamlab::tuner

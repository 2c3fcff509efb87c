// BEAM search over a kernel's Opt lists, every candidate compiled, checked and timed in the
// worker pool's sandboxes.
//
// The search starts from the heuristic plan (the empty plan is the reference every candidate
// is checked against, and is itself a candidate). Each iteration takes the beam's W plans and
// their neighbours: each plan with one more Opt, with one Opt's amount changed, or with one Opt
// removed; so the search can undo a heuristic choice, not only add to it. Neighbours are
// dropped before compiling when invalid, over the lane or size caps, or equal (by the hash of
// the optimized AST) to one seen; compiled in parallel; deduplicated by machine code; dropped
// when bloated; then timed one at a time with an early stop at `early_stop` x the incumbent.
// The beam becomes the W fastest plans so far. The search stops after `patience` iterations in
// a row that improve the best by less than `min_improvement`, or when a budget ends; then the best
// few and the heuristic are re-measured interleaved, and the fastest median wins.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tuner/measure/check.hpp"
#include "tuner/measure/measurer.hpp"
#include "tuner/search/control.hpp"
#include "tuner/search/cost_model.hpp"
#include <beamlab/tuning.hpp>

namespace beamlab::tuner {

/// Every limit of a search; recorded with its result.
struct SearchSettings {
  int beam = 4;                  ///< W: plans kept per iteration (1: greedy)
  int max_iterations = 16;       ///< iterations after the heuristic's
  double min_improvement = 0.01; ///< an iteration gaining less (relative) is flat
  int patience = 2;              ///< stop after this many flat iterations in a row
  double early_stop = 3.0;       ///< stop timing a candidate this many times the incumbent
  int64_t max_lanes = 512;       ///< the widest vector (stacked upcasts and unrolls multiply)
  int64_t max_ops = 1 << 16;     ///< optimized AST nodes times lanes, before compiling
  double bloat = 1000;           ///< drop code larger than this times the leanest candidate's
  double time_budget_s = 300;    ///< per kernel; the best so far is returned when it ends
  int candidate_budget = 5000;   ///< compiled candidates per kernel
  int warmup = 1;                ///< untimed runs before the samples (the check run is one of
                                 ///< a fixed-shape kernel's)
  int runs = 3;                  ///< timed runs per candidate during the search
  int finalists = 3;             ///< best candidates re-measured at the end (plus the heuristic)
  int final_rounds = 5;          ///< interleaved rounds of the re-measurement
  int final_runs = 3;            ///< timed runs per finalist per round
  double compile_timeout_s = 60; ///< a compile taking longer is a timeout
  double run_timeout_s = 10;     ///< at least; more for slow kernels (20 x the reference)
  int threads = 0;               ///< cores a kernel runs on; 0: the pool's sandbox setting
  std::vector<InputKind> checks = {InputKind::random, InputKind::small_ints, InputKind::special};
  /// Tests only (workers started with allow_faults): a fault planted in the candidate whose
  /// Opts print as the key.
  std::map<std::string, std::string> faults;
  /// Plans measured with the heuristic's before the search's first iteration, exempt from the
  /// caps (a plan tried by hand: with max_iterations 0, only these, the heuristic and the
  /// reference are measured).
  std::vector<std::vector<Opt>> seeds;
  /// Time the winner and the heuristic again in this process before the verdict stands
  /// (winner.hpp); off for plans tried by hand, which claim no winner.
  bool confirm_in_process = true;
  /// Leave a few slow compiles running into the next iteration rather than wait for them with
  /// the other cores idle (search.cpp's collect_compiles; a timing stops them meanwhile). The
  /// search then depends on how long compiles took, so a replay of its journal can't retrace it
  /// exactly: off where one must (the replay tests).
  bool detach_stragglers = true;
  /// Pauses or cancels the search from another thread (null: none).
  const SearchControl* control = nullptr;
  /// Cost-model pruning (0: off). Each iteration compiles and times only this fraction of its
  /// new plans (at least `beam`): those `model` ranks fastest, and one in eight of them picked
  /// from the rest, so the model keeps seeing what it would not pick. The heuristic, the seeds
  /// and the beam are never pruned (they are measured before any ranking), and the search ends
  /// with full-neighbourhood passes around its best until one finds nothing faster: the model
  /// can save time, but the winner is still a local optimum of the whole neighbourhood.
  double prune = 0;
  /// The model pruning ranks by, shared by a batch's searches (null: no pruning). The search
  /// adds every candidate it times to it and refits it after each iteration.
  CostModel* model = nullptr;
};

enum class Status {
  ok,            ///< checked and timed
  slow,          ///< checked on the inputs it ran; stopped early (past early_stop x incumbent)
  wrong_result,  ///< differs from the unoptimized kernel
  rejected,      ///< the Opts don't apply
  compile_error, ///< LLVM or lowering failed
  crashed,       ///< the worker died (the signal is in error)
  timeout,       ///< no answer in time
  limit,         ///< a resource limit (CPU time, memory)
  violation,     ///< a syscall the sandbox denies
  duplicate,     ///< the same machine code as an earlier candidate (shares its time)
  bloated,       ///< code larger than bloat x the leanest
  skipped,       ///< not timed: a budget ended
  error,         ///< anything else the worker reported
};
inline constexpr int kStatusCount = 13;
const char* to_string(Status s);

struct Candidate {
  int id = 0;
  std::vector<Opt> opts;
  int parent = -1; ///< the beam plan it was derived from (-1: a seed)
  int iteration = 0;
  Status status = Status::ok;
  std::string error;
  double compile_ms = 0;
  std::vector<double> samples_ms; ///< every timed run (search and re-measurement)
  uint64_t code_hash = 0;
  int64_t code_bytes = 0;
  double max_error = 0;
  int slot = -1;         ///< the sandbox that compiled it
  int duplicate_of = -1; ///< for status duplicate
  /// The iteration that settled it: later than `iteration` when its compile was left running
  /// or its sandbox was busy (-1: not settled, or journaled before this was recorded).
  int settled_in = -1;
  /// The search's ranking time: the fastest sample (least disturbed by noise).
  double best_ms() const;
  double median_ms() const;
};

/// What a search reports as it goes (all from the thread that called tune_kernel).
struct Event {
  /// settled: a candidate's result is final for the search (journal it now); the finalists'
  /// re-measurement adds samples later, and `finished` carries the whole result. The
  /// reference is reported when measured (reference) and settles once ranked against the
  /// heuristic (ok, or slow).
  enum class Kind {
    reference,
    queued,
    compiled,
    timed,
    iteration,
    best,
    restarted,
    settled,
    finished
  };
  Kind kind = Kind::queued;
  const Candidate* candidate = nullptr; ///< queued, compiled, timed, best
  int iteration = 0;
  double best_ms = 0; ///< the incumbent's time
  int done = 0;       ///< candidates timed or settled so far
  int total = 0;      ///< candidates generated so far
  std::string detail; ///< restarted: the slot and reason; iteration: its summary
};
using EventSink = std::function<void(const Event&)>;
const char* to_string(Event::Kind k);

struct TuneResult {
  std::string kernel;
  uint64_t key = 0;
  SearchSettings settings;
  int threads = 1;
  std::vector<Candidate> candidates; ///< by id
  int empty = -1, heuristic = -1, winner = -1;
  std::vector<int> finalists; ///< re-measured, fastest median first
  double winner_ms = 0;       ///< median of the re-measurement
  double heuristic_ms = 0;    ///< median of the re-measurement
  /// The heuristic's and the runner-up's time over the winner's, paired by round, with 95%
  /// confidence intervals (statistics.hpp); a tie is an interval that includes 1.
  PairedRatio speedup, runner_up;
  double noise = 0; ///< the runner-up comparison's relative half-width (hi / estimate - 1)
  bool tie = false; ///< the winner is not faster than the runner-up beyond noise
  bool tie_with_heuristic = false; ///< nor than the heuristic
  int rounds_disturbed = 0;        ///< re-measurement rounds dropped (outside load) and run again
  /// The verdict checked in the tuner's own process (tuner/measure/fidelity.hpp): the
  /// heuristic's time over the winner's there, and what the check found: "" (not checked: the
  /// winner is the heuristic), "agrees" (within 5% of the sandbox's speedup), "differs by N%",
  /// "overruled: ..." (the winner was slower in process; the heuristic's plan is kept), or
  /// "unchecked: why".
  PairedRatio in_process;
  std::string fidelity;
  /// Per finalist, its median in each undisturbed round (0: failed that round), in round order:
  /// what the paired verdict is computed from.
  std::map<int, std::vector<double>> round_ms;
  int iterations = 0;
  std::string stop_reason;
  /// Where the search's wall time went: running the reference, waiting for its compile phases
  /// (compiles spread over the sandboxes), timing (alone on the machine: the search's timing
  /// and the finalists' rounds), and the rest (proposing and screening plans, the cost model,
  /// journaling). compile_s sums the candidates' own compile times (CPU, in parallel).
  double wall_s = 0, reference_s = 0, compiling_s = 0, timing_s = 0, compile_s = 0;
  int restarts = 0;
  int replayed = 0; ///< candidates taken from an interrupted search (see Replay)
  /// Plans dropped before compiling: invalid, seen (same optimized AST), over a cap, or ranked
  /// out by the cost model (a pruned plan may come back in a later iteration).
  int dropped_invalid = 0, dropped_seen = 0, dropped_caps = 0, pruned = 0;
  /// Candidates measured by the closing full-neighbourhood passes (pruning only).
  int full_pass = 0;

  const Candidate& best() const { return candidates.at(static_cast<size_t>(winner)); }
  int count(Status s) const;
  /// "ok 120, slow 40, wrong_result 1": the statuses that occurred.
  std::string status_counts() const;
  double candidates_per_s() const;
};

/// Candidates an interrupted search of the same kernel already settled, by their Opts' text
/// form: a resumed search takes their status and samples instead of compiling and timing them
/// again, so it retraces the interrupted search's steps and goes on from where it stopped. The
/// unoptimized reference ("") is run again for its outputs, but keeps its recorded time.
using Replay = std::unordered_map<std::string, Candidate>;

/// Tunes one kernel: the search, then its winner confirmed in this process (winner.hpp), unless
/// cancelled. Fails (a UserError's message) only when the unoptimized kernel itself can't run
/// in the sandbox: nothing could be checked against it.
Expected<TuneResult> tune_kernel(const KernelTask& task, WorkerPool& pool,
                                 const SearchSettings& settings, const EventSink& sink = {},
                                 const Replay* replay = nullptr);

/// The same search, measuring through `lab`: the sandboxes (what tune_kernel uses) or a
/// recorded search played back (recorded.hpp), on the lab's clock.
Expected<TuneResult> search_kernel(const KernelTask& task, Lab& lab, const SearchSettings& settings,
                                   const EventSink& sink = {}, const Replay* replay = nullptr);

/// The hash of `plan` applied to `ast` (over every optimized stage): equal hashes compile to
/// the same code. The reason when the plan doesn't apply.
Expected<uint64_t> plan_hash(const UOpPtr& ast, const std::vector<Opt>& plan);

/// The plans one step from `plan`: one more Opt, one Opt's amount changed, one Opt removed.
/// Not yet checked for validity.
std::vector<std::vector<Opt>> neighbours(const UOpPtr& ast, const std::vector<Opt>& plan,
                                         int threads);

} // namespace beamlab::tuner

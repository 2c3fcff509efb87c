// The BEAM search; see search.hpp.
#include "tuner/search/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace beamlab::tuner {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Status status_of(Verdict v) {
  switch (v) {
  case Verdict::ok: return Status::ok;
  case Verdict::wrong_result: return Status::wrong_result;
  case Verdict::rejected: return Status::rejected;
  case Verdict::compile_error: return Status::compile_error;
  case Verdict::crashed: return Status::crashed;
  case Verdict::timeout: return Status::timeout;
  case Verdict::limit: return Status::limit;
  case Verdict::violation: return Status::violation;
  case Verdict::error: return Status::error;
  }
  return Status::error;
}

/// Waits for the compiles still pending when a frame unwinds (an event sink that throws, say):
/// their jobs use the measurer, which goes with the search.
struct WaitForAll {
  std::vector<std::future<Compiled>>& futures;
  ~WaitForAll() {
    for (auto& f : futures)
      if (f.valid()) f.wait();
  }
};

/// An optimized kernel before compiling: its identity and size.
struct PlanShape {
  uint64_t hash = 0; ///< over every stage's AST: equal plans compile to the same code
  int64_t lanes = 1; ///< the widest vector: the lane axes a node varies with, multiplied
  int64_t ops = 0;   ///< AST nodes times lanes: a bound on the code's size
};

PlanShape shape_of(const OptimizedKernel& k) {
  PlanShape s;
  s.hash = 0xcbf29ce484222325ull;
  int64_t nodes = 0;
  for (const UOpPtr& stage : k.stages) {
    s.hash = (s.hash ^ stage->hash()) * 0x100000001b3ull;
    nodes += static_cast<int64_t>(toposort(stage).size());
  }
  s.lanes = k.lanes;
  s.ops = nodes * s.lanes;
  return s;
}

} // namespace

const char* to_string(Status s) {
  static const char* const kNames[kStatusCount] = {
      "ok",    "slow",      "wrong_result", "rejected", "compile_error", "crashed", "timeout",
      "limit", "violation", "duplicate",    "bloated",  "skipped",       "error"};
  return kNames[static_cast<int>(s)];
}

const char* to_string(Event::Kind k) {
  static const char* const kNames[] = {"reference", "queued",    "compiled", "timed",   "iteration",
                                       "best",      "restarted", "settled",  "finished"};
  return kNames[static_cast<int>(k)];
}

double Candidate::best_ms() const {
  return samples_ms.empty() ? 0 : *std::min_element(samples_ms.begin(), samples_ms.end());
}
double Candidate::median_ms() const { return quantile(samples_ms, 0.5); }

int TuneResult::count(Status s) const {
  return static_cast<int>(std::count_if(candidates.begin(), candidates.end(),
                                        [&](const Candidate& c) { return c.status == s; }));
}

std::string TuneResult::status_counts() const {
  std::string out;
  for (int i = 0; i < kStatusCount; ++i)
    if (int n = count(static_cast<Status>(i)); n > 0)
      out += (out.empty() ? "" : ", ") + std::string(to_string(static_cast<Status>(i))) + " " +
             std::to_string(n);
  return out;
}

double TuneResult::candidates_per_s() const {
  return wall_s > 0 ? static_cast<double>(candidates.size()) / wall_s : 0;
}

Expected<uint64_t> plan_hash(const UOpPtr& ast, const std::vector<Opt>& plan) {
  auto optimized = apply_opts(ast, plan);
  if (!optimized) return make_unexpected(optimized.error());
  return shape_of(*optimized).hash;
}

std::vector<std::vector<Opt>> neighbours(const UOpPtr& ast, const std::vector<Opt>& plan,
                                         int threads) {
  std::vector<std::vector<Opt>> out;
  for (const Opt& a : candidate_actions(ast, plan, threads)) {
    out.push_back(plan);
    out.back().push_back(a);
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    for (int64_t amount : opt_amounts(plan[i].op, threads)) {
      if (amount == plan[i].arg) continue;
      out.push_back(plan);
      out.back()[i].arg = amount;
    }
    out.push_back(plan);
    out.back().erase(out.back().begin() + static_cast<std::ptrdiff_t>(i));
  }
  return out;
}

namespace {

class Search {
public:
  Search(const KernelTask& task, WorkerPool& pool, const SearchSettings& settings,
         const EventSink& sink, const Replay* replay)
      : task_(task), settings_(settings), sink_(sink), replay_(replay),
        measurer_(task, pool, settings.checks, settings.compile_timeout_s, settings.faults) {
    threads_ = settings.threads > 0 ? settings.threads : measurer_.threads();
    result_.kernel = task.name;
    result_.key = task.key;
    result_.settings = settings;
    result_.threads = threads_;
  }

  Expected<TuneResult> run() {
    start_ = Clock::now();
    auto ast = task_graph(task_);
    if (!ast) return make_unexpected(ast.error());
    ast_ = *ast;
    if (auto r = reference(); !r) return make_unexpected(r.error());
    search();
    remeasure();
    result_.wall_s = seconds_since(start_);
    result_.restarts = measurer_.restarts() - restarts_at_start_;
    emit(Event::Kind::finished);
    return std::move(result_);
  }

private:
  // --- candidates and events -------------------------------------------------------------

  Candidate& add(std::vector<Opt> opts, int parent, int iteration) {
    Candidate& c = result_.candidates.emplace_back();
    c.id = static_cast<int>(result_.candidates.size()) - 1;
    c.opts = std::move(opts);
    c.parent = parent;
    c.iteration = iteration;
    return c;
  }
  Candidate& at(int id) { return result_.candidates[static_cast<size_t>(id)]; }

  void emit(Event::Kind kind, const Candidate* c = nullptr, std::string detail = "") {
    if (!sink_) return;
    Event e;
    e.kind = kind;
    e.candidate = c;
    e.iteration = iteration_;
    e.detail = std::move(detail);
    e.best_ms = incumbent_ms_;
    e.done = done_;
    e.total = static_cast<int>(result_.candidates.size());
    sink_(e);
  }

  void settle(Candidate& c, Status s, std::string error = "") {
    c.status = s;
    if (!error.empty()) c.error = std::move(error);
    ++done_;
    emit(Event::Kind::settled, &c);
  }

  // Takes an interrupted search's result for `c`, if it settled one: true when it did.
  bool replayed(Candidate& c) {
    if (!replay_) return false;
    auto it = replay_->find(beamlab::to_string(c.opts));
    if (it == replay_->end() || it->second.status == Status::skipped) return false;
    const Candidate& r = it->second;
    c.compile_ms = r.compile_ms;
    c.code_hash = r.code_hash;
    c.code_bytes = r.code_bytes;
    c.samples_ms = r.samples_ms;
    c.max_error = r.max_error;
    c.duplicate_of = r.duplicate_of;
    if (r.code_hash != 0) {
      seen_code_.emplace(r.code_hash, c.id);
      leanest_ = std::min(leanest_, std::max<int64_t>(r.code_bytes, 1));
    }
    settle(c, r.status, r.error);
    ++result_.replayed;
    return true;
  }

  // A failed call: the worker is gone (restarted on its next request).
  void note_restart(const Answer& a) {
    if (!a.restart.empty()) emit(Event::Kind::restarted, nullptr, a.restart);
  }

  bool cancelled() const { return settings_.control && settings_.control->cancelled(); }
  bool out_of_time() const {
    return cancelled() || seconds_since(start_) > settings_.time_budget_s;
  }
  // The user's pause button: waits here, between compiles and timings. Paused time doesn't
  // count against the budget.
  void wait_while_paused() {
    if (!settings_.control) return;
    auto t0 = Clock::now();
    settings_.control->wait_while_paused();
    start_ += Clock::now() - t0;
  }

  // --- the reference ---------------------------------------------------------------------

  // The unoptimized kernel's outputs on every check, the checks spread over the sandboxes.
  Expected<void> reference() {
    auto t0 = Clock::now();
    restarts_at_start_ = measurer_.restarts();
    Candidate& empty = add({}, -1, 0);
    result_.empty = empty.id;
    auto ref = measurer_.reference(empty.id, settings_.run_timeout_s);
    if (!ref) return make_unexpected(ref.error());
    empty.compile_ms = ref->compile_ms;
    // The unoptimized kernel's time: its reference runs (a candidate like any other, but
    // measured beside the other reference runs, so only indicative).
    empty.samples_ms = {*std::min_element(ref->check_ms.begin(), ref->check_ms.end())};
    // A resumed search keeps the interrupted one's time for it, so it ranks the same.
    if (replay_)
      if (auto it = replay_->find(""); it != replay_->end() && !it->second.samples_ms.empty())
        empty.samples_ms = it->second.samples_ms;
    result_.reference_s = seconds_since(t0);
    auto optimized = apply_opts(ast_, {});
    if (optimized) seen_ast_.emplace(shape_of(*optimized).hash, empty.id);
    seen_plans_.insert("");
    ++done_;
    emit(Event::Kind::reference, &empty);
    return {};
  }

  // --- one batch: compile in parallel, dedup, time one at a time ---------------------------

  // Admits a plan for compiling unless it is invalid, seen, or over a cap (exempt: the seeds).
  bool admit(const std::vector<Opt>& plan, int parent, bool exempt_from_caps) {
    if (!seen_plans_.insert(beamlab::to_string(plan)).second) return false;
    auto optimized = apply_opts(ast_, plan);
    if (!optimized) {
      ++result_.dropped_invalid;
      return false;
    }
    PlanShape shape = shape_of(*optimized);
    if (seen_ast_.count(shape.hash)) {
      ++result_.dropped_seen;
      return false;
    }
    if (!exempt_from_caps && (shape.lanes > settings_.max_lanes || shape.ops > settings_.max_ops)) {
      ++result_.dropped_caps;
      return false;
    }
    int id = add(plan, parent, iteration_).id;
    seen_ast_.emplace(shape.hash, id);
    batch_.push_back(id);
    emit(Event::Kind::queued, &at(id));
    return true;
  }

  int compiled_count() const {
    return static_cast<int>(result_.candidates.size()) - 1; // all but the reference
  }

  void evaluate() {
    std::vector<int> batch;
    for (int id : batch_) {
      Candidate& c = at(id);
      if (!replayed(c)) {
        batch.push_back(id);
        continue;
      }
      emit(Event::Kind::compiled, &c);
      if (!c.samples_ms.empty()) timed(c);
    }
    batch_.clear();
    wait_while_paused();
    // Compile, in parallel over the sandboxes.
    std::vector<std::future<Compiled>> compiles;
    WaitForAll pending{compiles};
    for (int id : batch) compiles.push_back(measurer_.compile(id, at(id).opts));
    std::vector<Placement> placed(batch.size());
    std::vector<int> to_time;
    for (size_t i = 0; i < batch.size(); ++i) {
      Compiled o = compiles[i].get();
      Candidate& c = at(batch[i]);
      c.slot = o.at.slot;
      placed[i] = o.at;
      if (!o.ok()) {
        settle(c, status_of(o.verdict), o.reason);
        note_restart(o);
      } else {
        c.compile_ms = o.compile_ms;
        c.code_bytes = o.code_bytes;
        c.code_hash = o.code_hash;
        result_.compile_s += c.compile_ms / 1000;
        auto [first, fresh] = seen_code_.emplace(c.code_hash, c.id);
        leanest_ = std::min(leanest_, c.code_bytes);
        if (!fresh) {
          c.duplicate_of = first->second;
          settle(c, Status::duplicate,
                 "the same machine code as candidate " + std::to_string(first->second));
        } else if (static_cast<double>(c.code_bytes) >
                   settings_.bloat * static_cast<double>(std::max<int64_t>(leanest_, 1))) {
          settle(c, Status::bloated,
                 std::to_string(c.code_bytes) + " bytes of code, over " +
                     std::to_string(settings_.bloat) + " x the leanest");
        } else {
          to_time.push_back(static_cast<int>(i));
        }
      }
      emit(Event::Kind::compiled, &c);
    }
    // Time, one candidate at a time on the machine, each on the sandbox that compiled it.
    std::vector<std::vector<int>> untimed(static_cast<size_t>(measurer_.sandboxes()));
    Timing timing{all_checks(), settings_.warmup, settings_.runs, 0, true};
    for (int i : to_time) {
      Candidate& c = at(batch[static_cast<size_t>(i)]);
      wait_while_paused();
      // The heuristic's plan is timed even past the budget (not past a cancel): a search
      // with no time left must still not answer with the unoptimized kernel.
      bool baseline = c.id == result_.heuristic;
      if (cancelled() || (out_of_time() && !baseline)) {
        settle(c, Status::skipped, cancelled() ? "cancelled" : "the time budget ended");
        untimed[static_cast<size_t>(c.slot)].push_back(c.id);
        continue;
      }
      timing.cutoff_ms = incumbent_ms_ > 0 ? settings_.early_stop * incumbent_ms_ : 0.0;
      Timed o = measurer_.time(c.id, c.opts, placed[static_cast<size_t>(i)], timing);
      result_.timing_s += o.seconds;
      record_run(c, o);
      timed(c);
    }
    // Duplicates share the time of the code they duplicate.
    for (int id : batch)
      if (Candidate& c = at(id); c.status == Status::duplicate)
        c.samples_ms = at(c.duplicate_of).samples_ms;
    // Compiled but never run (duplicates, bloated, skipped): free them in the workers.
    for (int id : batch)
      if (Status s = at(id).status;
          (s == Status::duplicate || s == Status::bloated) && at(id).slot >= 0)
        untimed[static_cast<size_t>(at(id).slot)].push_back(id);
    for (size_t s = 0; s < untimed.size(); ++s)
      if (!untimed[s].empty()) measurer_.drop(static_cast<int>(s), std::move(untimed[s]));
  }

  // A candidate's timing is in: it may be the new incumbent.
  void timed(const Candidate& c) {
    emit(Event::Kind::timed, &c);
    if (c.status == Status::ok && (incumbent_ms_ <= 0 || c.best_ms() < incumbent_ms_)) {
      incumbent_ms_ = c.best_ms();
      emit(Event::Kind::best, &c);
    }
  }

  std::vector<size_t> all_checks() const {
    std::vector<size_t> c(settings_.checks.size());
    for (size_t i = 0; i < c.size(); ++i) c[i] = i;
    return c;
  }

  void record_run(Candidate& c, const Timed& o) {
    note_restart(o);
    c.samples_ms = o.samples_ms;
    c.max_error = o.max_error;
    Status s = status_of(o.verdict);
    if (s == Status::ok && o.early_stop) {
      return settle(c, Status::slow,
                    fmt::format("stopped at {:.3f} ms, over {:g} x the best ({:.3f} ms)",
                                c.samples_ms.empty() ? 0.0 : c.samples_ms.back(),
                                settings_.early_stop, incumbent_ms_));
    }
    if (s == Status::ok && c.samples_ms.empty())
      return settle(c, Status::error, "no timing samples");
    settle(c, s, o.reason);
  }

  // --- the search --------------------------------------------------------------------------

  std::vector<int> ranked() const {
    std::vector<int> ok;
    for (const Candidate& c : result_.candidates)
      if (c.status == Status::ok && !c.samples_ms.empty()) ok.push_back(c.id);
    std::sort(ok.begin(), ok.end(), [&](int a, int b) {
      double ta = result_.candidates[size_t(a)].best_ms(),
             tb = result_.candidates[size_t(b)].best_ms();
      return ta < tb || (ta == tb && a < b);
    });
    return ok;
  }

  void search() {
    // The heuristic's plan first: the incumbent every other candidate races.
    std::vector<Opt> heuristic = heuristic_opts(ast_, threads_);
    iteration_ = 0;
    result_.heuristic = result_.empty;
    if (!heuristic.empty() && admit(heuristic, -1, true)) result_.heuristic = batch_.front();
    for (const std::vector<Opt>& seed : settings_.seeds)
      if (!seed.empty()) admit(seed, -1, true); // the empty plan is the reference
    if (!batch_.empty()) evaluate();
    Candidate& empty = at(result_.empty);
    incumbent_ms_ = 0;
    for (int id : {result_.heuristic, result_.empty})
      if (const Candidate& c = at(id); c.status == Status::ok && !c.samples_ms.empty())
        if (incumbent_ms_ <= 0 || c.best_ms() < incumbent_ms_) incumbent_ms_ = c.best_ms();
    if (empty.best_ms() > settings_.early_stop * incumbent_ms_) {
      empty.status = Status::slow;
      empty.error = fmt::format("the unoptimized kernel (the reference), over {:g} x the best",
                                settings_.early_stop);
    }
    // The reference settles here, once it is ranked against the heuristic: its status is final.
    emit(Event::Kind::settled, &empty);
    std::vector<int> beam = ranked();
    beam.resize(std::min(beam.size(), size_t(std::max(1, settings_.beam))));
    double best = incumbent_ms_;
    int flat = 0;
    result_.stop_reason = "the iteration limit";
    for (iteration_ = 1; iteration_ <= settings_.max_iterations; ++iteration_) {
      if (out_of_time()) {
        result_.stop_reason = cancelled() ? "cancelled" : "the time budget";
        break;
      }
      for (int parent : beam)
        for (std::vector<Opt>& plan : neighbours(ast_, at(parent).opts, threads_)) {
          if (compiled_count() >= settings_.candidate_budget) break;
          admit(plan, parent, false);
        }
      if (batch_.empty()) {
        result_.stop_reason = compiled_count() >= settings_.candidate_budget
                                  ? "the candidate budget"
                                  : "no new plans near the beam";
        break;
      }
      evaluate();
      result_.iterations = iteration_;
      beam = ranked();
      beam.resize(std::min(beam.size(), size_t(std::max(1, settings_.beam))));
      double now = beam.empty() ? best : at(beam.front()).best_ms();
      double gain = best > 0 ? (best - now) / best : 0;
      emit(Event::Kind::iteration, nullptr,
           fmt::format("best {:.4f} ms, {:+.1f}% this iteration", now, -100 * gain));
      best = std::min(best, now);
      flat = gain < settings_.min_improvement ? flat + 1 : 0;
      if (flat >= std::max(1, settings_.patience)) {
        result_.stop_reason = fmt::format("convergence ({} iteration(s) gaining under {:g}%)", flat,
                                          100 * settings_.min_improvement);
        break;
      }
    }
  }

  // The best few and the heuristic, compiled again and timed in interleaved rounds: each
  // round times every finalist back to back, so the verdict between two of them comes from
  // per-round paired ratios. A round outside load slowed for most finalists is dropped and run
  // again (at most `final_rounds` times more).
  void remeasure() {
    std::vector<int> finalists = ranked();
    finalists.resize(std::min(finalists.size(), size_t(std::max(1, settings_.finalists))));
    if (at(result_.heuristic).status == Status::ok &&
        std::find(finalists.begin(), finalists.end(), result_.heuristic) == finalists.end())
      finalists.push_back(result_.heuristic);
    if (finalists.empty()) finalists.push_back(result_.empty); // nothing else ran correctly
    // Each finalist stays compiled in one sandbox for the rounds.
    std::vector<std::future<Compiled>> jobs;
    WaitForAll pending{jobs};
    for (int id : finalists) jobs.push_back(measurer_.compile(id, at(id).opts));
    std::vector<Compiled> placed;
    for (auto& j : jobs) placed.push_back(j.get());
    // rounds[i][r]: finalist i's median in round r (0: it failed or was out).
    std::vector<std::vector<double>> rounds(finalists.size());
    std::unordered_map<int, std::vector<double>> samples;
    auto run_round = [&] {
      for (size_t i = 0; i < finalists.size(); ++i) {
        Candidate& c = at(finalists[i]);
        rounds[i].push_back(0);
        if (c.status != Status::ok || !placed[i].ok()) continue;
        Timing timing{{0}, settings_.warmup, settings_.final_runs, 0, false};
        // Compiled again there if the worker had restarted.
        Timed o = measurer_.time(c.id, c.opts, placed[i].at, timing);
        result_.timing_s += o.seconds;
        if (!o.ok()) {
          // A finalist that fails on a second look (a flaky candidate) is out.
          note_restart(o);
          c.status = status_of(o.verdict);
          c.error = "on re-measurement: " + o.reason;
          continue;
        }
        rounds[i].back() = quantile(o.samples_ms, 0.5);
        samples[c.id].insert(samples[c.id].end(), o.samples_ms.begin(), o.samples_ms.end());
      }
    };
    const int wanted = std::max(2, settings_.final_rounds); // an interval needs two
    for (int r = 0; r < wanted; ++r) run_round();
    std::vector<bool> disturbed = disturbed_rounds(rounds);
    for (int extra = 0; extra < wanted; ++extra) {
      int kept = static_cast<int>(std::count(disturbed.begin(), disturbed.end(), false));
      if (kept >= wanted) break;
      run_round();
      disturbed = disturbed_rounds(rounds);
    }
    for (size_t i = 0; i < finalists.size(); ++i)
      if (placed[i].ok()) measurer_.drop(placed[i].at.slot, {finalists[i]});
    result_.rounds_disturbed =
        static_cast<int>(std::count(disturbed.begin(), disturbed.end(), true));
    // Only the undisturbed rounds count.
    std::unordered_map<int, std::vector<double>> kept_rounds;
    for (size_t i = 0; i < finalists.size(); ++i)
      for (size_t r = 0; r < rounds[i].size(); ++r)
        if (!disturbed[r]) kept_rounds[finalists[i]].push_back(rounds[i][r]);
    auto present = [](const std::vector<double>& v) {
      std::vector<double> out;
      for (double x : v)
        if (x > 0) out.push_back(x);
      return out;
    };
    std::vector<int> measured;
    for (int id : finalists)
      if (at(id).status == Status::ok && !present(kept_rounds[id]).empty()) measured.push_back(id);
    if (measured.empty()) {
      // Only the reference ran correctly: it is the answer.
      result_.winner = result_.empty;
      result_.winner_ms = result_.heuristic_ms = at(result_.empty).best_ms();
      result_.finalists = {result_.empty};
      return;
    }
    auto median = [&](int id) { return quantile(present(kept_rounds[id]), 0.5); };
    std::sort(measured.begin(), measured.end(), [&](int a, int b) {
      return median(a) < median(b) || (median(a) == median(b) && a < b);
    });
    result_.finalists = measured;
    result_.winner = measured.front();
    result_.winner_ms = median(result_.winner);
    for (int id : measured) {
      Candidate& c = at(id);
      c.samples_ms.insert(c.samples_ms.end(), samples[id].begin(), samples[id].end());
      result_.round_ms[id] = kept_rounds[id];
    }
    const std::vector<double>& winner = kept_rounds[result_.winner];
    if (measured.size() > 1) {
      result_.runner_up = paired_ratio(kept_rounds[measured[1]], winner);
      result_.tie = !result_.runner_up.significant();
      result_.noise = result_.runner_up.hi / result_.runner_up.estimate - 1;
    }
    if (!present(kept_rounds[result_.heuristic]).empty()) {
      result_.heuristic_ms = median(result_.heuristic);
      result_.speedup = paired_ratio(kept_rounds[result_.heuristic], winner);
      result_.tie_with_heuristic =
          result_.heuristic != result_.winner && !result_.speedup.significant();
    }
    emit(Event::Kind::best, &at(result_.winner));
  }

  const KernelTask& task_;
  SearchSettings settings_;
  const EventSink& sink_;
  const Replay* replay_;
  Measurer measurer_;
  int threads_ = 1;
  UOpPtr ast_;
  TuneResult result_;
  Clock::time_point start_;
  double incumbent_ms_ = 0;
  int64_t leanest_ = INT64_MAX;
  int iteration_ = 0, done_ = 0, restarts_at_start_ = 0;
  std::vector<int> batch_;
  std::unordered_set<std::string> seen_plans_;
  std::unordered_map<uint64_t, int> seen_ast_, seen_code_;
};

} // namespace

Expected<TuneResult> tune_kernel(const KernelTask& task, WorkerPool& pool,
                                 const SearchSettings& settings, const EventSink& sink,
                                 const Replay* replay) {
  return Search(task, pool, settings, sink, replay).run();
}

} // namespace beamlab::tuner

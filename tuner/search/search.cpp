// The BEAM search; see search.hpp.
#include "tuner/search/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <future>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "tuner/search/winner.hpp"

namespace beamlab::tuner {

namespace {

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
  Search(const KernelTask& task, Lab& lab, const SearchSettings& settings, const EventSink& sink,
         const Replay* replay)
      : task_(task), settings_(settings), sink_(sink), replay_(replay), lab_(lab) {
    threads_ = settings.threads > 0 ? settings.threads : lab_.threads();
    result_.kernel = task.name;
    result_.key = task.key;
    result_.settings = settings;
    result_.threads = threads_;
  }
  ~Search() { // the compiles left in flight use the lab
    for (auto& [id, compiled] : compiling_)
      if (compiled.valid()) compiled.wait();
  }
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  Expected<TuneResult> run() {
    start_ = lab_.now_s();
    auto ast = task_graph(task_);
    if (!ast) return make_unexpected(ast.error());
    ast_ = *ast;
    if (auto r = reference(); !r) return make_unexpected(r.error());
    search();
    // What is still compiling or waiting for its sandbox, in an iteration of its own: a replay
    // must not take it in before the last iteration's verdict.
    if (pending()) {
      ++iteration_;
      evaluate(true);
      learn();
    }
    full_passes();
    remeasure();
    result_.wall_s = elapsed_s();
    result_.restarts = lab_.restarts() - restarts_at_start_;
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
    c.settled_in = iteration_;
    if (!error.empty()) c.error = std::move(error);
    ++done_;
    emit(Event::Kind::settled, &c);
  }

  // The iteration an interrupted search settled `c` in, if it settled it (-1: it didn't; a
  // journal from before settled_in was recorded: the iteration that proposed it).
  int replayed_in(const Candidate& c) const {
    if (!replay_) return -1;
    auto it = replay_->find(beamlab::to_string(c.opts));
    if (it == replay_->end() || it->second.status == Status::skipped) return -1;
    return std::max(it->second.settled_in, c.iteration);
  }

  // Takes an interrupted search's result for `c` (replayed_in(c) >= 0).
  void replayed(Candidate& c) {
    const Candidate& r = replay_->at(beamlab::to_string(c.opts));
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
  }

  // A failed call: the worker is gone (restarted on its next request).
  void note_restart(const Answer& a) {
    if (!a.restart.empty()) emit(Event::Kind::restarted, nullptr, a.restart);
  }

  bool cancelled() const { return settings_.control && settings_.control->cancelled(); }
  double elapsed_s() const { return lab_.now_s() - start_; }
  bool out_of_time() const { return cancelled() || elapsed_s() > settings_.time_budget_s; }
  // The user's pause button: waits here, between compiles and timings. Paused time doesn't
  // count against the budget.
  void wait_while_paused() {
    if (!settings_.control) return;
    double t0 = lab_.now_s();
    settings_.control->wait_while_paused();
    start_ += lab_.now_s() - t0;
  }

  // --- the reference ---------------------------------------------------------------------

  // The unoptimized kernel's outputs on every check, the checks spread over the sandboxes.
  Expected<void> reference() {
    double t0 = lab_.now_s();
    restarts_at_start_ = lab_.restarts();
    Candidate& empty = add({}, -1, 0);
    result_.empty = empty.id;
    auto ref = lab_.reference(empty.id, settings_.run_timeout_s);
    if (!ref) return make_unexpected(ref.error());
    empty.compile_ms = ref->compile_ms;
    // The unoptimized kernel's time: its reference runs (a candidate like any other, but
    // measured beside the other reference runs, so only indicative).
    empty.samples_ms = {reference_ms(task_, checks_of(task_, settings_.checks), ref->check_ms)};
    // A resumed search keeps the interrupted one's time for it, so it ranks the same.
    if (replay_)
      if (auto it = replay_->find(""); it != replay_->end() && !it->second.samples_ms.empty())
        empty.samples_ms = it->second.samples_ms;
    result_.reference_s = lab_.now_s() - t0;
    auto optimized = apply_opts(ast_, {});
    if (optimized) seen_ast_.emplace(shape_of(*optimized).hash, empty.id);
    seen_plans_.insert("");
    ++done_;
    emit(Event::Kind::reference, &empty);
    return {};
  }

  // --- one batch: compile in parallel, dedup, time one at a time ---------------------------

  // A plan that passed screening, not yet a candidate.
  struct Proposal {
    std::vector<Opt> plan;
    int parent = -1;
    uint64_t hash = 0; ///< of its optimized AST
    Features x;        ///< for the model (pruning only)
  };

  // A plan worth compiling: not seen (by its text or its optimized AST), valid, within the
  // caps (exempt: the seeds). Marks its text seen.
  std::optional<Proposal> screen(const std::vector<Opt>& plan, int parent, bool exempt_from_caps) {
    if (!seen_plans_.insert(beamlab::to_string(plan)).second) return std::nullopt;
    auto optimized = apply_opts(ast_, plan);
    if (!optimized) {
      ++result_.dropped_invalid;
      return std::nullopt;
    }
    PlanShape shape = shape_of(*optimized);
    if (seen_ast_.count(shape.hash)) {
      ++result_.dropped_seen;
      return std::nullopt;
    }
    if (!exempt_from_caps && (shape.lanes > settings_.max_lanes || shape.ops > settings_.max_ops)) {
      ++result_.dropped_caps;
      return std::nullopt;
    }
    Proposal p{plan, parent, shape.hash, {}};
    // The features come from the kernel applied here, so pruning never applies a plan twice.
    if (pruning()) p.x = plan_features(*optimized, kernel_features_of(), plan, threads_);
    return p;
  }

  // Makes a screened plan a candidate of this iteration's batch.
  void enqueue(Proposal p) {
    int id = add(std::move(p.plan), p.parent, iteration_).id;
    if (!p.x.empty()) features_[id] = std::move(p.x);
    seen_ast_.emplace(p.hash, id);
    batch_.push_back(id);
    emit(Event::Kind::queued, &at(id));
  }

  // Admits a plan for compiling unless screening drops it.
  bool admit(const std::vector<Opt>& plan, int parent, bool exempt_from_caps) {
    auto p = screen(plan, parent, exempt_from_caps);
    if (!p) return false;
    enqueue(std::move(*p));
    return true;
  }

  int compiled_count() const {
    return static_cast<int>(result_.candidates.size()) - 1; // all but the reference
  }

  // Compiles this iteration's batch, then times what compiled, one candidate at a time. With
  // `drain`, waits for every compile; otherwise a few stragglers may be left compiling for a
  // later call (collect_compiles), and so may the candidates waiting for their sandboxes.
  void evaluate(bool drain = false) {
    // An interrupted search's candidates settle in the iteration they settled in then (one
    // left compiling then is held back as long), the others are compiled.
    std::vector<int> batch, replay_now, held;
    for (int id : held_replays_)
      (drain || replayed_in(at(id)) <= iteration_ ? replay_now : held).push_back(id);
    for (int id : batch_) {
      int in = replayed_in(at(id));
      (in < 0 ? batch : !drain && in > iteration_ ? held : replay_now).push_back(id);
    }
    held_replays_ = std::move(held);
    for (int id : replay_now) {
      Candidate& c = at(id);
      replayed(c);
      emit(Event::Kind::compiled, &c);
      if (!c.samples_ms.empty()) timed(c);
    }
    batch_.clear();
    wait_while_paused();
    // Compile, in parallel over the sandboxes.
    double compiling_from = lab_.now_s();
    for (int id : batch) compiling_.emplace_back(id, lab_.compile(id, at(id).opts));
    std::vector<std::pair<int, Compiled>> done = collect_compiles(compiling_from, drain);
    result_.compiling_s += lab_.now_s() - compiling_from;
    // One compiled on a sandbox that now compiles a straggler can't be timed there yet: it is
    // taken in (checked for duplicates, timed) in a later call, as a whole.
    std::vector<bool> busy =
        drain || !settings_.detach_stragglers ? std::vector<bool>() : lab_.busy_sandboxes();
    std::vector<std::vector<int>> untimed(static_cast<size_t>(lab_.sandboxes()));
    std::vector<std::pair<int, Placement>> to_time;
    for (auto& [id, o] : done) {
      if (size_t s = static_cast<size_t>(o.at.slot); o.ok() && s < busy.size() && busy[s]) {
        late_.emplace_back(id, std::move(o));
        continue;
      }
      Candidate& c = at(id);
      c.slot = o.at.slot;
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
          to_time.emplace_back(id, o.at);
        }
      }
      emit(Event::Kind::compiled, &c);
      // Compiled but never run (duplicates, bloated): freed in the workers.
      if ((c.status == Status::duplicate || c.status == Status::bloated) && c.slot >= 0)
        untimed[static_cast<size_t>(c.slot)].push_back(id);
    }
    // Time, one candidate at a time on the machine, each on the sandbox that compiled it.
    Timing timing{all_checks(), settings_.warmup, settings_.runs, 0, true};
    for (auto& [id, placed] : to_time) {
      Candidate& c = at(id);
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
      Timed o = lab_.time(c.id, c.opts, placed, timing);
      result_.timing_s += o.seconds;
      record_run(c, o);
      timed(c);
    }
    // Duplicates share the time of the code they duplicate (timed now or earlier).
    for (Candidate& c : result_.candidates)
      if (c.status == Status::duplicate && c.samples_ms.empty())
        c.samples_ms = at(c.duplicate_of).samples_ms;
    for (size_t s = 0; s < untimed.size(); ++s)
      if (!untimed[s].empty()) lab_.drop(static_cast<int>(s), std::move(untimed[s]));
  }

  // Candidates proposed but not yet taken in: still compiling, waiting for their sandbox, or
  // held back as an interrupted search took them in.
  bool pending() const { return !compiling_.empty() || !late_.empty() || !held_replays_.empty(); }

  // The iteration a played-back search takes `c` in (measurer.hpp's Lab::iterations_late).
  int due(const Candidate& c) const { return c.iteration + lab_.iterations_late(c.opts); }

  // The compiles in flight, collected as they finish: with `drain`, all of them. Otherwise the
  // last few are left compiling (for the next call) once at least half are in, at most a
  // quarter of the sandboxes still work, and those have taken 3 x the median compile so far
  // since `from`: the other cores move on to the next iteration instead of idling behind one
  // slow compile (a timing stops it meanwhile: pool.hpp's preemptible access).
  std::vector<std::pair<int, Compiled>> collect_compiles(double from, bool drain) {
    std::vector<std::pair<int, Compiled>> done, late;
    // What a played-back search took in later, it takes in later here too; what waited for a
    // busy sandbox is looked at again.
    for (auto& [id, compiled] : late_)
      (drain || due(at(id)) <= iteration_ ? done : late).emplace_back(id, std::move(compiled));
    late_ = std::move(late);
    std::vector<double> seconds;
    size_t few = static_cast<size_t>(std::max(1, lab_.sandboxes() / 4));
    for (;;) {
      for (auto it = compiling_.begin(); it != compiling_.end();) {
        if (it->second.wait_for(std::chrono::seconds(0)) == std::future_status::timeout) {
          ++it;
          continue;
        }
        int id = it->first;
        Compiled compiled = it->second.get();
        it = compiling_.erase(it);
        if (!drain && due(at(id)) > iteration_) {
          late_.emplace_back(id, std::move(compiled));
          continue;
        }
        seconds.push_back(compiled.seconds);
        done.emplace_back(id, std::move(compiled));
      }
      if (compiling_.empty()) break;
      if (!drain && settings_.detach_stragglers && !seconds.empty() &&
          done.size() >= compiling_.size() && compiling_.size() <= few &&
          lab_.now_s() - from > 3 * quantile(seconds, 0.5))
        break;
      compiling_.front().second.wait_for(std::chrono::milliseconds(2));
    }
    // In the order they were proposed, not as they happened to finish: which of two equal
    // codes is the duplicate, and who races whom, must not depend on the clock.
    std::sort(done.begin(), done.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return done;
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
    std::vector<size_t> c(checks_of(task_, settings_.checks).size());
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

  // --- the cost model ----------------------------------------------------------------------

  bool pruning() const { return settings_.model && settings_.prune > 0 && settings_.prune < 1; }

  // The model's pick of this iteration's plans: the fraction `prune` of them it ranks fastest
  // (at least the beam's width), one in eight of those taken instead from the rest in an order
  // fixed by the plans' hashes. The others are forgotten, so a later iteration may propose them
  // again. All of them while the model has learnt nothing.
  std::vector<Proposal> prune(std::vector<Proposal> proposals) {
    size_t n = proposals.size();
    size_t keep = std::max<size_t>(static_cast<size_t>(std::ceil(settings_.prune * double(n))),
                                   static_cast<size_t>(std::max(1, settings_.beam)));
    if (!pruning() || keep >= n || !settings_.model->trained()) return proposals;
    std::vector<Features> rows;
    rows.reserve(n);
    for (const Proposal& p : proposals) rows.push_back(p.x);
    std::vector<double> cost = settings_.model->predict(rows);
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return cost[a] < cost[b] || (cost[a] == cost[b] && a < b);
    });
    size_t explore = keep / 8, exploit = keep - explore;
    std::vector<size_t> rest(order.begin() + static_cast<std::ptrdiff_t>(exploit), order.end());
    std::sort(rest.begin(), rest.end(), [&](size_t a, size_t b) {
      return proposals[a].hash < proposals[b].hash ||
             (proposals[a].hash == proposals[b].hash && a < b);
    });
    std::vector<bool> kept(n, false);
    for (size_t i = 0; i < exploit; ++i) kept[order[i]] = true;
    for (size_t i = 0; i < explore; ++i) kept[rest[i]] = true;
    std::vector<Proposal> out;
    for (size_t i = 0; i < n; ++i) {
      if (kept[i]) {
        out.push_back(std::move(proposals[i]));
        continue;
      }
      seen_plans_.erase(beamlab::to_string(proposals[i].plan));
      ++result_.pruned;
    }
    return out;
  }

  const Features& kernel_features_of() {
    if (kernel_features_.empty()) kernel_features_ = kernel_features(ast_);
    return kernel_features_;
  }

  // A candidate's features: kept from its screening, else (the heuristic, the seeds, a full
  // pass's plans) computed now.
  Features features_of(const Candidate& c) {
    if (auto it = features_.find(c.id); it != features_.end()) return std::move(it->second);
    auto f = plan_features(ast_, kernel_features_of(), c.opts, threads_);
    return f ? *f : Features(feature_names().size(), 0.0f);
  }

  // Teaches the model every candidate timed since the last call, and refits it.
  void learn() {
    if (!pruning()) return;
    for (; learnt_ < result_.candidates.size(); ++learnt_) {
      const Candidate& c = result_.candidates[learnt_];
      bool timed = (c.status == Status::ok || c.status == Status::slow) && !c.samples_ms.empty();
      if (timed && c.id != result_.empty)
        settings_.model->add(task_.key, features_of(c), c.best_ms());
    }
    features_.clear(); // every candidate so far is taught
    settings_.model->fit();
  }

  // Closing passes with no pruning: every neighbour of the best plan, until a pass finds
  // nothing faster (or a budget ends).
  void full_passes() {
    if (!pruning() || result_.pruned == 0) return;
    while (!out_of_time()) {
      std::vector<int> best = ranked();
      if (best.empty()) return;
      int top = best.front();
      ++iteration_;
      for (std::vector<Opt>& plan : neighbours(ast_, at(top).opts, threads_)) {
        if (compiled_count() >= settings_.candidate_budget) break;
        admit(plan, top, false);
      }
      if (batch_.empty()) return;
      result_.full_pass += static_cast<int>(batch_.size());
      evaluate(true); // the whole neighbourhood, before it is judged
      learn();
      result_.iterations = iteration_;
      emit(Event::Kind::iteration, nullptr,
           fmt::format("full pass around the best: {} candidates", result_.full_pass));
      if (ranked().front() == top) return;
    }
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

  // This iteration's plans: every neighbour of the beam that passes screening, up to the
  // candidate budget, as the model prunes them.
  void propose(const std::vector<int>& beam) {
    std::vector<Proposal> proposals;
    std::unordered_set<uint64_t> hashes;
    for (int parent : beam)
      for (std::vector<Opt>& plan : neighbours(ast_, at(parent).opts, threads_)) {
        if (compiled_count() + static_cast<int>(proposals.size()) >= settings_.candidate_budget)
          break;
        auto p = screen(plan, parent, false);
        if (!p) continue;
        if (!hashes.insert(p->hash).second) {
          ++result_.dropped_seen;
          continue;
        }
        proposals.push_back(std::move(*p));
      }
    for (Proposal& p : prune(std::move(proposals))) enqueue(std::move(p));
  }

  void search() {
    // The heuristic's plan first: the incumbent every other candidate races.
    std::vector<Opt> heuristic = heuristic_opts(ast_, threads_);
    iteration_ = 0;
    result_.heuristic = result_.empty;
    if (!heuristic.empty() && admit(heuristic, -1, true)) result_.heuristic = batch_.front();
    for (const std::vector<Opt>& seed : settings_.seeds)
      if (!seed.empty()) admit(seed, -1, true); // the empty plan is the reference
    if (!batch_.empty()) evaluate(true);        // the incumbent, before any race against it
    learn();
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
    empty.settled_in = iteration_;
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
      propose(beam);
      bool spent = compiled_count() >= settings_.candidate_budget;
      if (batch_.empty() && (spent || !pending())) {
        result_.stop_reason = spent ? "the candidate budget" : "no new plans near the beam";
        break;
      }
      // Nothing new near the beam, but candidates still compiling may move it: take them in.
      evaluate(batch_.empty());
      learn();
      if (cancelled()) { // during this iteration: that, not its gain, is why the search ends
        result_.iterations = iteration_;
        result_.stop_reason = "cancelled";
        break;
      }
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
    double compiling_from = lab_.now_s();
    for (int id : finalists) jobs.push_back(lab_.compile(id, at(id).opts));
    std::vector<Compiled> placed;
    for (auto& j : jobs) placed.push_back(j.get());
    result_.compiling_s += lab_.now_s() - compiling_from;
    // rounds[i][r]: finalist i's median in round r (0: it failed or was out).
    std::vector<std::vector<double>> rounds(finalists.size());
    std::unordered_map<int, std::vector<double>> samples;
    auto run_round = [&] {
      for (size_t i = 0; i < finalists.size(); ++i) {
        Candidate& c = at(finalists[i]);
        rounds[i].push_back(0);
        if (c.status != Status::ok || !placed[i].ok()) continue;
        Timing timing{{0}, settings_.warmup, settings_.final_runs, 0, false, true};
        // Compiled again there if the worker had restarted.
        Timed o = lab_.time(c.id, c.opts, placed[i].at, timing);
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
      if (placed[i].ok()) lab_.drop(placed[i].at.slot, {finalists[i]});
    result_.rounds_disturbed =
        static_cast<int>(std::count(disturbed.begin(), disturbed.end(), true));
    // Only the undisturbed rounds count.
    std::map<int, std::vector<double>> kept_rounds;
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
    for (int id : measured) {
      Candidate& c = at(id);
      c.samples_ms.insert(c.samples_ms.end(), samples[id].begin(), samples[id].end());
      result_.round_ms[id] = kept_rounds[id];
    }
    decide_by_rounds(result_, kept_rounds, measured);
    emit(Event::Kind::best, &at(result_.winner));
  }

  const KernelTask& task_;
  SearchSettings settings_;
  const EventSink& sink_;
  const Replay* replay_;
  Lab& lab_;
  int threads_ = 1;
  UOpPtr ast_;
  TuneResult result_;
  double start_ = 0;
  double incumbent_ms_ = 0;
  int64_t leanest_ = INT64_MAX;
  int iteration_ = 0, done_ = 0, restarts_at_start_ = 0;
  std::vector<int> batch_;
  /// Candidates still compiling from an earlier evaluate(), and compiled ones it did not take
  /// in (their sandbox was busy, or a played-back lab took them in later).
  std::deque<std::pair<int, std::future<Compiled>>> compiling_;
  std::vector<std::pair<int, Compiled>> late_;
  std::vector<int> held_replays_; ///< an interrupted search's candidates, settled later then
  std::unordered_set<std::string> seen_plans_;
  std::unordered_map<uint64_t, int> seen_ast_, seen_code_;
  Features kernel_features_;                   ///< computed on first use
  std::unordered_map<int, Features> features_; ///< by candidate id, until taught
  size_t learnt_ = 0;                          ///< candidates taught to the model so far
};

} // namespace

Expected<TuneResult> tune_kernel(const KernelTask& task, WorkerPool& pool,
                                 const SearchSettings& settings, const EventSink& sink,
                                 const Replay* replay) {
  Measurer measurer(task, pool, settings.checks, settings.compile_timeout_s, settings.faults);
  Expected<TuneResult> r = search_kernel(task, measurer, settings, sink, replay);
  if (!r || !settings.confirm_in_process || (settings.control && settings.control->cancelled()))
    return r;
  if (auto ast = task_graph(task)) confirm_in_process(*r, task, *ast, r->threads, pool);
  return r;
}

Expected<TuneResult> search_kernel(const KernelTask& task, Lab& lab, const SearchSettings& settings,
                                   const EventSink& sink, const Replay* replay) {
  return Search(task, lab, settings, sink, replay).run();
}

} // namespace beamlab::tuner

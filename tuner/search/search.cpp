// The BEAM search; see search.hpp.
#include "tuner/search/search.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace beamlab::tuner {

using json = nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Status status_of(CallStatus c) {
  switch (c) {
  case CallStatus::ok: return Status::ok;
  case CallStatus::timeout: return Status::timeout;
  case CallStatus::limit: return Status::limit;
  case CallStatus::violation: return Status::violation;
  case CallStatus::crashed:
  case CallStatus::lost: return Status::crashed;
  case CallStatus::malformed: return Status::error;
  }
  return Status::error;
}

Status status_of(const std::string& reply) {
  static const std::unordered_map<std::string, Status> kByName = {
      {"ok", Status::ok},
      {"wrong_result", Status::wrong_result},
      {"rejected", Status::rejected},
      {"compile_error", Status::compile_error},
      {"limit", Status::limit}};
  auto it = kByName.find(reply);
  return it == kByName.end() ? Status::error : it->second;
}

/// An optimized kernel before compiling: its identity and size.
struct PlanShape {
  uint64_t hash = 0; ///< over every stage's AST: equal plans compile to the same code
  int64_t lanes = 1; ///< upcast amounts times the largest unroll
  int64_t ops = 0;   ///< AST nodes times lanes: a bound on the code's size
};

PlanShape shape_of(const OptimizedKernel& k) {
  PlanShape s;
  s.hash = 0xcbf29ce484222325ull;
  int64_t nodes = 0, upcast = 1, unroll = 1;
  for (const UOpPtr& stage : k.stages) {
    s.hash = (s.hash ^ stage->hash()) * 0x100000001b3ull;
    nodes += static_cast<int64_t>(toposort(stage).size());
  }
  for (const Axis& a : k.axes) {
    if (a.kind == AxisKind::Upcast) upcast *= a.extent;
    if (a.kind == AxisKind::Unroll) unroll = std::max(unroll, a.extent);
  }
  s.lanes = upcast * unroll;
  s.ops = nodes * s.lanes;
  return s;
}

/// A worker's answer, or how the call failed.
struct Outcome {
  CallResult call;
  int slot = -1;
  int generation = -1;
  double seconds = 0;
  bool ok() const { return call.status == CallStatus::ok; }
  /// The worker's status ("" when the call failed; "ok" for a request not needed).
  std::string status() const {
    return call.reply.header.is_object() ? call.reply.header.value("status", "") : "ok";
  }
  /// The call went through and the worker says ok.
  bool succeeded() const { return ok() && status() == "ok"; }
  /// For a failed outcome: its status and the reason (the signal, or the worker's error).
  Status failure() const { return ok() ? status_of(status()) : status_of(call.status); }
  std::string reason() const { return ok() ? call.reply.header.value("error", "") : call.detail; }
};

std::atomic<int> g_search_serial{0};

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

void SearchControl::pause() {
  std::lock_guard lock(mutex_);
  paused_ = true;
}

void SearchControl::resume() {
  {
    std::lock_guard lock(mutex_);
    paused_ = false;
  }
  changed_.notify_all();
}

void SearchControl::cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  changed_.notify_all();
}

bool SearchControl::paused() const {
  std::lock_guard lock(mutex_);
  return paused_;
}

bool SearchControl::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

void SearchControl::wait_while_paused() const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !paused_ || cancelled_; });
}

double Candidate::best_ms() const {
  return samples_ms.empty() ? 0 : *std::min_element(samples_ms.begin(), samples_ms.end());
}
double Candidate::median_ms() const { return quantile(samples_ms, 0.5); }

json SearchSettings::to_json() const {
  json checks_json = json::array();
  for (InputKind k : checks) checks_json.push_back(std::string(to_string(k)));
  return {{"beam", beam},
          {"max_iterations", max_iterations},
          {"min_improvement", min_improvement},
          {"patience", patience},
          {"early_stop", early_stop},
          {"max_lanes", max_lanes},
          {"max_ops", max_ops},
          {"bloat", bloat},
          {"time_budget_s", time_budget_s},
          {"candidate_budget", candidate_budget},
          {"warmup", warmup},
          {"runs", runs},
          {"finalists", finalists},
          {"final_rounds", final_rounds},
          {"final_runs", final_runs},
          {"compile_timeout_s", compile_timeout_s},
          {"run_timeout_s", run_timeout_s},
          {"threads", threads},
          {"checks", checks_json}};
}

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

json TuneResult::to_json() const {
  json cands = json::array();
  for (const Candidate& c : candidates) {
    json j = {{"id", c.id},
              {"opts", beamlab::to_string(c.opts)},
              {"parent", c.parent},
              {"iteration", c.iteration},
              {"status", to_string(c.status)},
              {"compile_ms", c.compile_ms},
              {"samples_ms", c.samples_ms},
              {"code_hash", hash_hex(c.code_hash)},
              {"code_bytes", c.code_bytes}};
    if (!c.error.empty()) j["error"] = c.error;
    if (c.duplicate_of >= 0) j["duplicate_of"] = c.duplicate_of;
    cands.push_back(std::move(j));
  }
  return {
      {"kernel", kernel},
      {"key", hash_hex(key)},
      {"settings", settings.to_json()},
      {"threads", threads},
      {"winner", winner},
      {"winner_opts", winner >= 0 ? beamlab::to_string(best().opts) : ""},
      {"winner_ms", winner_ms},
      {"heuristic", heuristic},
      {"heuristic_ms", heuristic_ms},
      {"empty", empty},
      {"finalists", finalists},
      {"noise", noise},
      {"tie", tie},
      {"tie_with_heuristic", tie_with_heuristic},
      {"iterations", iterations},
      {"stop_reason", stop_reason},
      {"wall_s", wall_s},
      {"reference_s", reference_s},
      {"compile_s", compile_s},
      {"timing_s", timing_s},
      {"restarts", restarts},
      {"replayed", replayed},
      {"dropped", {{"invalid", dropped_invalid}, {"seen", dropped_seen}, {"caps", dropped_caps}}},
      {"candidates", cands}};
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
      : task_(task), pool_(pool), settings_(settings), sink_(sink), replay_(replay),
        task_id_("search-" + std::to_string(++g_search_serial)) {
    threads_ = settings.threads > 0 ? settings.threads : pool.sandbox_options().threads;
    result_.kernel = task.name;
    result_.key = task.key;
    result_.settings = settings;
    result_.threads = threads_;
  }

  Expected<TuneResult> run() {
    start_ = Clock::now();
    auto ast = parse_graph(task_.ast);
    if (!ast) return make_unexpected("kernel " + task_.name + ": " + ast.error().str("ast"));
    ast_ = *ast;
    if (auto r = reference(); !r) return make_unexpected(r.error());
    search();
    remeasure();
    result_.wall_s = seconds_since(start_);
    result_.restarts = pool_.restarts() - restarts_at_start_;
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
  void note_restart(const Outcome& o) {
    if (o.ok()) return;
    emit(Event::Kind::restarted, nullptr,
         "sandbox " + std::to_string(o.slot) + ": " + to_string(o.call.status) + " (" +
             o.call.detail + ")");
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

  // --- worker requests -------------------------------------------------------------------

  Message compile_request(const Candidate& c) const {
    Message m;
    m.header = {{"op", "compile"},
                {"id", c.id},
                {"ast", task_.ast},
                {"name", task_.name},
                {"opts", beamlab::to_string(c.opts)}};
    if (auto f = settings_.faults.find(beamlab::to_string(c.opts)); f != settings_.faults.end())
      m.header["fault"] = f->second;
    return m;
  }

  Message task_request(bool with_expected) const {
    Message m;
    json buffers = json::array(), checks = json::array();
    for (const KernelBufferSpec& b : task_.buffers)
      buffers.push_back({{"dtype", b.dtype.str()}, {"count", b.count}});
    for (size_t i = 0; i < settings_.checks.size(); ++i) {
      // Huge values make a reduction's result depend on its order: not a candidate's fault.
      InputKind k = settings_.checks[i];
      if (k == InputKind::special && task_.reduce_length > 1) k = InputKind::special_finite;
      checks.push_back({{"kind", std::string(to_string(k))}, {"seed", i + 1}});
    }
    m.header = {{"op", "task"},
                {"buffers", buffers},
                {"checks", checks},
                {"reduce_length", task_.reduce_length}};
    if (with_expected) m.payload = expected_;
    return m;
  }

  // Sends the task to the slot's worker unless it holds it already.
  CallResult ensure_task(Slot& slot, const std::string& key, bool with_expected) {
    if (slot.holds(key)) return {};
    CallResult r = slot.sandbox.call(task_request(with_expected), run_timeout_s_);
    if (r.status == CallStatus::ok && r.reply.header.value("status", "") == "ok") {
      slot.task = key;
      slot.task_generation = slot.sandbox.generation();
    }
    return r;
  }

  Outcome compile_on(Slot& slot, const Message& request) {
    auto t0 = Clock::now();
    Outcome o{slot.sandbox.call(request, settings_.compile_timeout_s), slot.index, 0, 0};
    o.generation = slot.sandbox.generation();
    o.seconds = seconds_since(t0);
    return o;
  }

  // Compiles (again, if the worker restarted since) and runs candidate `c` on its slot.
  Outcome run_on(Slot& slot, const Message& compile, int generation, const json& run) {
    auto t0 = Clock::now();
    Outcome o{{}, slot.index, generation, 0};
    if (!slot.sandbox.running() || slot.sandbox.generation() != generation) {
      o = compile_on(slot, compile);
      if (!o.succeeded()) return o;
    }
    o.call = ensure_task(slot, task_id_, true);
    if (o.succeeded()) {
      Message m;
      m.header = run;
      o.call = slot.sandbox.call(m, run_timeout_s_);
    }
    o.seconds = seconds_since(t0);
    return o;
  }

  // --- the reference ---------------------------------------------------------------------

  // The unoptimized kernel's outputs on every check, the checks spread over the sandboxes.
  Expected<void> reference() {
    auto t0 = Clock::now();
    restarts_at_start_ = pool_.restarts();
    Candidate& empty = add({}, -1, 0);
    result_.empty = empty.id;
    size_t n_checks = settings_.checks.size();
    if (n_checks == 0) return make_unexpected("a search needs at least one check");
    Message compile = compile_request(empty);
    // The worker keeps a task's inputs when the same task comes again with expected outputs.
    std::string ref_key = task_id_ + "/reference";
    std::vector<std::vector<size_t>> share(std::min<size_t>(n_checks, size_t(pool_.size())));
    for (size_t c = 0; c < n_checks; ++c) share[c % share.size()].push_back(c);
    std::vector<std::future<Outcome>> jobs;
    for (size_t s = 0; s < share.size(); ++s)
      jobs.push_back(pool_.submit(
          Access::shared,
          [&, checks = share[s]](Slot& slot) {
            Outcome o = compile_on(slot, compile);
            if (!o.succeeded()) return o;
            double compile_ms = o.call.reply.header.value("compile_ms", 0.0);
            o.call = ensure_task(slot, ref_key, false);
            if (!o.succeeded()) return o;
            Message run;
            run.header = {{"op", "run"}, {"id", empty.id},         {"checks", checks},
                          {"warmup", 0}, {"return_outputs", true}, {"drop", true}};
            // The reference can be slow: no per-request limit beyond the sandbox's CPU time.
            o.call = slot.sandbox.call(
                run, 1e9, checks.size() * static_cast<uint64_t>(task_.buffers.at(0).bytes()));
            if (o.ok()) o.call.reply.header["compile_ms"] = compile_ms;
            return o;
          },
          static_cast<int>(s)));
    // Every job finishes before any is looked at: they use this frame's locals.
    std::vector<Outcome> outcomes;
    for (auto& j : jobs) outcomes.push_back(j.get());
    std::vector<std::string> outputs(n_checks);
    std::vector<double> first_ms;
    for (size_t s = 0; s < share.size(); ++s) {
      Outcome& o = outcomes[s];
      if (!o.succeeded())
        return make_unexpected(
            "kernel " + task_.name + ": the unoptimized kernel failed in the sandbox (" +
            (o.ok() ? o.status() + ": " + o.call.reply.header.value("error", "")
                    : std::string(to_string(o.call.status)) + ", " + o.call.detail) +
            "), so no candidate can be checked against it");
      const json& h = o.call.reply.header;
      empty.compile_ms = std::max(empty.compile_ms, h.value("compile_ms", 0.0));
      size_t bytes = o.call.reply.payload.size() / share[s].size();
      for (size_t i = 0; i < share[s].size(); ++i)
        outputs[share[s][i]] = o.call.reply.payload.substr(i * bytes, bytes);
      auto ms = h.value("check_ms", std::vector<double>{});
      first_ms.insert(first_ms.end(), ms.begin(), ms.end());
    }
    for (const std::string& o : outputs) expected_ += o;
    // The unoptimized kernel's time: its reference runs (a candidate like any other, but
    // measured beside the other reference runs, so only indicative).
    empty.samples_ms = {*std::min_element(first_ms.begin(), first_ms.end())};
    // A resumed search keeps the interrupted one's time for it, so it ranks the same.
    if (replay_)
      if (auto it = replay_->find(""); it != replay_->end() && !it->second.samples_ms.empty())
        empty.samples_ms = it->second.samples_ms;
    double slowest_s = *std::max_element(first_ms.begin(), first_ms.end()) / 1000;
    run_timeout_s_ = std::max(settings_.run_timeout_s, 20 * slowest_s);
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
    std::vector<std::future<Outcome>> compiles;
    std::vector<Message> requests;
    for (int id : batch) requests.push_back(compile_request(at(id)));
    for (size_t i = 0; i < batch.size(); ++i)
      compiles.push_back(pool_.submit(Access::shared, [this, &requests, i](Slot& slot) {
        return compile_on(slot, requests[i]);
      }));
    std::vector<int> generation(batch.size());
    std::vector<int> to_time;
    for (size_t i = 0; i < batch.size(); ++i) {
      Outcome o = compiles[i].get();
      Candidate& c = at(batch[i]);
      c.slot = o.slot;
      generation[i] = o.generation;
      if (!o.succeeded()) {
        settle(c, o.failure(), o.reason());
        note_restart(o);
      } else {
        const json& h = o.call.reply.header;
        c.compile_ms = h.value("compile_ms", 0.0);
        c.code_bytes = h.value("code_bytes", int64_t{0});
        c.code_hash = std::stoull(h.value("code_hash", "0"), nullptr, 16);
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
    std::vector<std::vector<int>> untimed(static_cast<size_t>(pool_.size()));
    for (int i : to_time) {
      Candidate& c = at(batch[static_cast<size_t>(i)]);
      wait_while_paused();
      if (out_of_time()) {
        settle(c, Status::skipped, cancelled() ? "cancelled" : "the time budget ended");
        untimed[static_cast<size_t>(c.slot)].push_back(c.id);
        continue;
      }
      json run = {{"op", "run"},
                  {"id", c.id},
                  {"checks", all_checks()},
                  {"warmup", settings_.warmup},
                  {"runs", settings_.runs},
                  {"cutoff_ms", incumbent_ms_ > 0 ? settings_.early_stop * incumbent_ms_ : 0.0},
                  {"drop", true}};
      const Message& compile = requests[static_cast<size_t>(i)];
      int gen = generation[static_cast<size_t>(i)];
      Outcome o = pool_
                      .submit(
                          Access::exclusive,
                          [&, gen](Slot& slot) { return run_on(slot, compile, gen, run); }, c.slot)
                      .get();
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
      if (!untimed[s].empty())
        pool_.submit(
            Access::shared,
            [ids = untimed[s]](Slot& slot) {
              Message m;
              m.header = {{"op", "drop"}, {"ids", ids}};
              if (slot.sandbox.running()) slot.sandbox.call(m, 10);
            },
            static_cast<int>(s));
  }

  // A candidate's timing is in: it may be the new incumbent.
  void timed(const Candidate& c) {
    emit(Event::Kind::timed, &c);
    if (c.status == Status::ok && (incumbent_ms_ <= 0 || c.best_ms() < incumbent_ms_)) {
      incumbent_ms_ = c.best_ms();
      emit(Event::Kind::best, &c);
    }
  }

  json all_checks() const {
    json c = json::array();
    for (size_t i = 0; i < settings_.checks.size(); ++i) c.push_back(i);
    return c;
  }

  void record_run(Candidate& c, const Outcome& o) {
    if (!o.ok()) {
      note_restart(o);
      return settle(c, status_of(o.call.status), o.call.detail);
    }
    const json& h = o.call.reply.header;
    c.samples_ms = h.value("samples_ms", std::vector<double>{});
    c.max_error = h.value("max_error", 0.0);
    Status s = status_of(o.status());
    if (s == Status::ok && h.value("early_stop", false)) {
      return settle(c, Status::slow,
                    fmt::format("stopped at {:.3f} ms, over {:g} x the best ({:.3f} ms)",
                                c.samples_ms.empty() ? 0.0 : c.samples_ms.back(),
                                settings_.early_stop, incumbent_ms_));
    }
    if (s == Status::ok && c.samples_ms.empty()) s = Status::error;
    settle(c, s, h.value("error", s == Status::error ? "no timing samples" : ""));
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

  // The best few and the heuristic, compiled again and timed in interleaved rounds.
  void remeasure() {
    std::vector<int> finalists = ranked();
    finalists.resize(std::min(finalists.size(), size_t(std::max(1, settings_.finalists))));
    if (at(result_.heuristic).status == Status::ok &&
        std::find(finalists.begin(), finalists.end(), result_.heuristic) == finalists.end())
      finalists.push_back(result_.heuristic);
    if (finalists.empty()) finalists.push_back(result_.empty); // nothing else ran correctly
    // Each finalist stays compiled in one sandbox for the rounds.
    std::vector<Message> compiles;
    for (int id : finalists) compiles.push_back(compile_request(at(id)));
    std::vector<std::future<Outcome>> jobs;
    for (size_t i = 0; i < finalists.size(); ++i)
      jobs.push_back(pool_.submit(Access::shared, [this, &compiles, i](Slot& slot) {
        return compile_on(slot, compiles[i]);
      }));
    std::vector<Outcome> placed;
    for (auto& j : jobs) placed.push_back(j.get());
    std::unordered_map<int, std::vector<double>> samples;
    for (int round = 0; round < std::max(1, settings_.final_rounds); ++round)
      for (size_t i = 0; i < finalists.size(); ++i) {
        Candidate& c = at(finalists[i]);
        if (c.status != Status::ok || !placed[i].ok()) continue;
        json run = {{"op", "run"},
                    {"id", c.id},
                    {"checks", {0}},
                    {"warmup", settings_.warmup},
                    {"runs", settings_.final_runs},
                    {"drop", round + 1 == settings_.final_rounds}};
        Outcome o = pool_
                        .submit(
                            Access::exclusive,
                            [&, i](Slot& slot) {
                              return run_on(slot, compiles[i], placed[i].generation, run);
                            },
                            placed[i].slot)
                        .get();
        result_.timing_s += o.seconds;
        placed[i].generation = o.generation; // recompiled there if the worker had restarted
        if (!o.succeeded()) {
          // A finalist that fails on a second look (a flaky candidate) is out.
          note_restart(o);
          c.status = o.failure() == Status::ok ? Status::error : o.failure();
          c.error = "on re-measurement: " + o.reason();
          continue;
        }
        auto s = o.call.reply.header.value("samples_ms", std::vector<double>{});
        samples[c.id].insert(samples[c.id].end(), s.begin(), s.end());
      }
    std::vector<int> measured;
    for (int id : finalists)
      if (at(id).status == Status::ok && !samples[id].empty()) measured.push_back(id);
    if (measured.empty()) {
      // Only the reference ran correctly: it is the answer.
      result_.winner = result_.empty;
      result_.winner_ms = result_.heuristic_ms = at(result_.empty).best_ms();
      result_.finalists = {result_.empty};
      return;
    }
    auto median = [&](int id) { return quantile(samples[id], 0.5); };
    std::sort(measured.begin(), measured.end(), [&](int a, int b) {
      return median(a) < median(b) || (median(a) == median(b) && a < b);
    });
    result_.finalists = measured;
    result_.winner = measured.front();
    result_.winner_ms = median(result_.winner);
    for (int id : measured) {
      Candidate& c = at(id);
      c.samples_ms.insert(c.samples_ms.end(), samples[id].begin(), samples[id].end());
    }
    auto tie_with = [&](int other, double& noise) {
      noise = std::max(relative_spread(samples[result_.winner]), relative_spread(samples[other]));
      return (median(other) - result_.winner_ms) <= noise * result_.winner_ms;
    };
    if (measured.size() > 1) result_.tie = tie_with(measured[1], result_.noise);
    if (samples.count(result_.heuristic) && !samples[result_.heuristic].empty()) {
      result_.heuristic_ms = median(result_.heuristic);
      double noise = 0;
      result_.tie_with_heuristic =
          result_.heuristic != result_.winner && tie_with(result_.heuristic, noise);
    }
    emit(Event::Kind::best, &at(result_.winner));
  }

  const KernelTask& task_;
  WorkerPool& pool_;
  SearchSettings settings_;
  const EventSink& sink_;
  const Replay* replay_;
  std::string task_id_;
  int threads_ = 1;
  UOpPtr ast_;
  TuneResult result_;
  Clock::time_point start_;
  std::string expected_;
  double run_timeout_s_ = 10;
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

// Typed measurement over the wire format; see measurer.hpp.
#include "tuner/measure/measurer.hpp"

#include "tuner/measure/pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

namespace beamlab::tuner {

using json = nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_task_serial{0};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Verdict verdict_of(CallStatus c) {
  switch (c) {
  case CallStatus::ok: return Verdict::ok;
  case CallStatus::timeout: return Verdict::timeout;
  case CallStatus::limit: return Verdict::limit;
  case CallStatus::violation: return Verdict::violation;
  case CallStatus::crashed:
  case CallStatus::lost: return Verdict::crashed;
  case CallStatus::malformed: return Verdict::error;
  }
  return Verdict::error;
}

Verdict verdict_of(const std::string& reply) {
  static const std::map<std::string, Verdict> kByName = {{"ok", Verdict::ok},
                                                         {"wrong_result", Verdict::wrong_result},
                                                         {"rejected", Verdict::rejected},
                                                         {"compile_error", Verdict::compile_error},
                                                         {"limit", Verdict::limit}};
  auto it = kByName.find(reply);
  return it == kByName.end() ? Verdict::error : it->second;
}

// The answer to one call on `slot`: the worker's verdict, or how the call failed.
Answer answer_of(const CallResult& r, const Slot& slot) {
  Answer a;
  a.at = {slot.index, slot.sandbox.generation()};
  if (r.status != CallStatus::ok) {
    a.verdict = verdict_of(r.status);
    a.reason = r.detail;
    a.restart = "sandbox " + std::to_string(slot.index) + ": " + to_string(r.status) + " (" +
                r.detail + ")";
    return a;
  }
  a.verdict = verdict_of(r.reply.header.value("status", ""));
  a.reason = r.reply.header.value("error", "");
  return a;
}

json run_request(int id, const Timing& timing, bool return_outputs) {
  json checks = json::array();
  for (size_t c : timing.checks) checks.push_back(c);
  return {{"op", "run"},
          {"id", id},
          {"checks", checks},
          {"warmup", timing.warmup},
          {"runs", timing.runs},
          {"cutoff_ms", timing.cutoff_ms},
          {"return_outputs", return_outputs},
          {"drop", timing.drop}};
}

} // namespace

const char* to_string(Verdict v) {
  static const char* const kNames[] = {"ok",      "wrong_result", "rejected", "compile_error",
                                       "crashed", "timeout",      "limit",    "violation",
                                       "error"};
  return kNames[static_cast<int>(v)];
}

double reference_ms(const KernelTask& task, const std::vector<Check>& checks,
                    const std::vector<double>& check_ms) {
  std::map<InputKind, double> by_kind; // a timed run's time, from the runs at its bindings
  for (size_t i = 0; i < checks.size() && i < check_ms.size(); ++i)
    if (task.tune_at.empty() ||
        std::find(task.tune_at.begin(), task.tune_at.end(), checks[i].vars) != task.tune_at.end())
      by_kind[checks[i].kind] += check_ms[i];
  double fastest = 0;
  for (const auto& [kind, ms] : by_kind) fastest = fastest > 0 ? std::min(fastest, ms) : ms;
  return fastest;
}

std::vector<Check> checks_of(const KernelTask& task, const std::vector<InputKind>& kinds) {
  std::vector<Check> out;
  for (InputKind k : kinds) {
    if (task.check_at.empty()) out.push_back({k, {}});
    for (const VarValues& at : task.check_at) out.push_back({k, at});
  }
  return out;
}

Measurer::Measurer(const KernelTask& task, WorkerPool& pool, std::vector<InputKind> checks,
                   double compile_timeout_s, std::map<std::string, std::string> faults)
    : task_(task), pool_(pool), checks_(checks_of(task, checks)),
      compile_timeout_s_(compile_timeout_s), faults_(std::move(faults)),
      key_("measure-" + std::to_string(++g_task_serial) + "-ref") {}

int Measurer::sandboxes() const { return pool_.size(); }
int Measurer::threads() const { return pool_.sandbox_options().threads; }
int Measurer::restarts() const { return pool_.restarts(); }
double Measurer::now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Answer Measurer::ensure_task(Slot& slot) {
  if (slot.holds(key_)) return {};
  Message m;
  json buffers = json::array(), checks = json::array();
  for (const KernelBufferSpec& b : task_.buffers) buffers.push_back(buffer_json(b));
  for (size_t i = 0; i < checks_.size(); ++i) {
    // Huge values make a reduction's result depend on its order: not a candidate's fault.
    InputKind k = checks_[i].kind;
    if (k == InputKind::special && task_.reduce_length > 1) k = InputKind::special_finite;
    checks.push_back(
        {{"kind", std::string(to_string(k))}, {"seed", i + 1}, {"vars", json(checks_[i].vars)}});
  }
  json time_at = json::array();
  for (const VarValues& at : task_.tune_at) time_at.push_back(json(at));
  m.header = {{"op", "task"},       {"ast", task_.ast}, {"name", task_.name},
              {"buffers", buffers}, {"checks", checks}, {"reduce_length", task_.reduce_length},
              {"time_at", time_at}};
  m.payload = expected_;
  CallResult r = slot.sandbox.call(m, run_timeout_s_);
  Answer a = answer_of(r, slot);
  if (a.ok()) {
    slot.task = key_;
    slot.task_generation = slot.sandbox.generation();
  }
  return a;
}

Compiled Measurer::compile_on(Slot& slot, int id, const std::vector<Opt>& opts) {
  auto t0 = Clock::now();
  Compiled c;
  // A worker that retires with its answer (its lifetime CPU limit) takes the task and the
  // candidate with it: then both go again, once, to the fresh worker.
  for (int attempt = 0; attempt < 2; ++attempt) {
    c = {};
    static_cast<Answer&>(c) = ensure_task(slot);
    if (c.ok() && !slot.sandbox.running()) continue;
    if (!c.ok()) break;
    std::string text = beamlab::to_string(opts);
    Message m;
    m.header = {{"op", "compile"}, {"id", id}, {"opts", text}};
    if (auto f = faults_.find(text); f != faults_.end()) m.header["fault"] = f->second;
    CallResult r = slot.sandbox.call(m, compile_timeout_s_);
    static_cast<Answer&>(c) = answer_of(r, slot);
    if (c.ok()) {
      const json& h = r.reply.header;
      // The worker's clock ran on while a timing had it stopped.
      c.compile_ms = std::max(0.0, h.value("compile_ms", 0.0) - r.stopped_ms);
      c.code_bytes = h.value("code_bytes", int64_t{0});
      c.code_hash = std::stoull(h.value("code_hash", "0"), nullptr, 16); // checked: hex
    }
    if (!c.ok() || slot.sandbox.running()) break;
  }
  c.seconds = seconds_since(t0);
  return c;
}

std::future<Compiled> Measurer::compile(int id, std::vector<Opt> opts) {
  return pool_.submit(Access::preemptible, [this, id, opts = std::move(opts)](Slot& slot) {
    return compile_on(slot, id, opts);
  });
}

std::vector<bool> Measurer::busy_sandboxes() const {
  std::vector<bool> busy;
  for (const SlotActivity& a : pool_.activity()) busy.push_back(a.state != SlotState::idle);
  return busy;
}

Expected<ReferenceRun> Measurer::reference(int id, double run_timeout_s) {
  size_t n = checks_.size();
  if (n == 0) return make_unexpected("a search needs at least one check");
  run_timeout_s_ = run_timeout_s;
  std::vector<std::vector<size_t>> share(std::min<size_t>(n, size_t(pool_.size())));
  for (size_t c = 0; c < n; ++c) share[c % share.size()].push_back(c);
  struct Part {
    Answer answer;
    double compile_ms = 0;
    std::vector<double> check_ms;
    std::string outputs;
  };
  uint64_t out_bytes = static_cast<uint64_t>(task_.buffers.at(0).bytes());
  std::vector<std::future<Part>> jobs;
  for (size_t s = 0; s < share.size(); ++s)
    jobs.push_back(pool_.submit(
        Access::shared,
        [&, checks = share[s]](Slot& slot) {
          Part p;
          Compiled c = compile_on(slot, id, {});
          p.answer = c;
          if (!c.ok()) return p;
          p.compile_ms = c.compile_ms;
          Message m;
          m.header = run_request(id, {checks, 0, 0, 0, true}, true);
          // The reference can be slow: no per-request limit beyond the sandbox's CPU time.
          CallResult r = slot.sandbox.call(m, 1e9, checks.size() * out_bytes);
          p.answer = answer_of(r, slot);
          if (r.status == CallStatus::ok) {
            p.check_ms = r.reply.header.value("check_ms", std::vector<double>{});
            p.outputs = std::move(r.reply.payload);
          }
          return p;
        },
        static_cast<int>(s)));
  // Every job finishes before any is looked at: they use this frame's locals.
  for (auto& j : jobs) j.wait(); // before any get() may throw: the jobs use this frame
  std::vector<Part> parts;
  for (auto& j : jobs) parts.push_back(j.get());
  ReferenceRun ref;
  ref.check_ms.resize(n);
  std::vector<std::string> outputs(n);
  for (size_t s = 0; s < share.size(); ++s) {
    const Part& p = parts[s];
    if (!p.answer.ok())
      return make_unexpected("kernel " + task_.name +
                             ": the unoptimized kernel failed in the sandbox (" +
                             to_string(p.answer.verdict) + ", " + p.answer.reason +
                             "), so no candidate can be checked against it");
    ref.compile_ms = std::max(ref.compile_ms, p.compile_ms);
    for (size_t i = 0; i < share[s].size(); ++i) {
      outputs[share[s][i]] = p.outputs.substr(i * out_bytes, out_bytes);
      ref.check_ms[share[s][i]] = p.check_ms.at(i); // checked: one per check
    }
  }
  expected_.clear();
  for (const std::string& o : outputs) expected_ += o;
  key_.resize(key_.size() - 4); // the task with its expected outputs from now on
  // A request of a kernel over symbolic variables runs a check per binding, and launches at
  // each tuned one per timed run: its limit grows with their number.
  double slowest_s = *std::max_element(ref.check_ms.begin(), ref.check_ms.end()) / 1000;
  double launches = static_cast<double>(std::max<size_t>(1, task_.check_at.size()));
  run_timeout_s_ = std::max(run_timeout_s, 20 * launches * slowest_s);
  return ref;
}

Timed Measurer::time(int id, const std::vector<Opt>& opts, Placement& at, const Timing& timing) {
  return pool_
      .submit(
          Access::exclusive,
          [&](Slot& slot) {
            auto t0 = Clock::now();
            Timed t;
            if (!slot.sandbox.running() || slot.sandbox.generation() != at.generation)
              static_cast<Answer&>(t) = compile_on(slot, id, opts);
            if (t.ok()) static_cast<Answer&>(t) = ensure_task(slot);
            if (t.ok()) {
              Message m;
              m.header = run_request(id, timing, false);
              CallResult r = slot.sandbox.call(m, run_timeout_s_);
              static_cast<Answer&>(t) = answer_of(r, slot);
              if (r.status == CallStatus::ok) {
                const json& h = r.reply.header;
                t.samples_ms = h.value("samples_ms", std::vector<double>{});
                t.early_stop = h.value("early_stop", false);
                const json& e = h.contains("max_error") ? h["max_error"] : json();
                t.max_error = e.is_number() ? e.get<double>() : 0.0;
              }
            }
            at = t.at;
            t.seconds = seconds_since(t0);
            return t;
          },
          at.slot)
      .get();
}

void Measurer::drop(int slot, std::vector<int> ids) {
  pool_.submit(
      Access::shared,
      [ids = std::move(ids)](Slot& s) {
        Message m;
        m.header = {{"op", "drop"}, {"ids", ids}};
        if (s.sandbox.running()) s.sandbox.call(m, 10);
      },
      slot);
}

} // namespace beamlab::tuner

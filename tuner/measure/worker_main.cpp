// beamlab-worker: the sandboxed process a tuner thread drives. It reads candidates from stdin,
// compiles and runs them on buffers of its own, and answers on stdout (protocol.hpp).
//
//   beamlab-worker [--threads N] [--memory-mb M] [--cpu-seconds S] [--lifetime-cpu-seconds L]
//                  [--allow-faults] [--no-seccomp] [--keep-stderr]
//
// Start-up: new namespaces and no inherited fds, a warm-up compile and parallel run (LLVM and
// OpenMP set themselves up, reading what files they need), then the rest of the confinement
// (confine.hpp): an empty root, no privileges, hard limits, an allow-list seccomp filter.
// Then requests, one at a time (a reply with "retiring":true is the worker's last: its
// lifetime CPU limit is near, and the tuner starts a fresh one):
//   {"op":"task","ast":TEXT,"name":N,"buffers":[{"dtype":"float32","count":N},...],
//    "checks":[{"kind":K,"seed":S,"vars":{NAME:V,...}}],"reduce_length":L,
//    "time_at":[{NAME:V,...},...]}
//    (a buffer with "constant":true holds a model's weights in a real run: every run, warm-up
//    and timed, starts with it evicted from the caches, as a real run finds it; a kernel over
//    symbolic variables runs each check at the check's "vars", and each warm-up and timed run
//    is one launch at each binding of "time_at", back to back)
//    payload: every check's expected output, concatenated (or nothing)
//       -> {"status":"ok"}                        (the kernel every later request is about;
//                                                  fills each check's inputs once: slot s of
//                                                  check (K, S) gets seed S*1000+s)
//   {"op":"compile","id":I,"opts":"UPCAST(1,8) ..."}
//       -> {"status":"ok"|"rejected"|"compile_error","code_hash":HEX,"code_bytes":B,
//           "compile_ms":T,"error":...}           (the worker keeps candidate I until dropped
//                                                  or another kernel's task comes)
//   {"op":"run","id":I,"checks":[0,1,...],"warmup":W,"runs":R,"cutoff_ms":C,
//    "return_outputs":BOOL,"drop":BOOL}
//       -> {"status":"ok"|"wrong_result","samples_ms":[...],"check_ms":[...],
//           "early_stop":BOOL,"max_error":E,"error":...}
//          payload: the output of every check run (when "return_outputs")
//   {"op":"drop","ids":[...]}
//   {"op":"confinement"} -> {"status":"ok","layers":[...],"missing":[...]}   (confine.hpp)
// With --allow-faults (tests only) a compile request's "fault" plants a failure in that
// candidate: "abort_in_compile", "slow_compile" (1.5 s of work before it compiles), and while
// running "open_file" (a syscall the filter denies),
// "write_out_of_bounds", "endless_loop", "miscompile" (a wrong first element), "runs_to_bound"
// (a kernel over symbolic variables run at their upper bounds, whatever the values),
// "slow_first_run" (a request's first run 50 ms late), "slow_runs" (every run 50 ms late); or a
// hostile reply (reply.hpp must refuse each): to its compile "reply_bad_hash", "reply_wrong_type",
// "reply_negative_code_bytes", "reply_bad_hash_then_exit" (and the worker exits); to its runs
// "reply_negative_samples", "reply_many_samples", "reply_no_check_ms", "reply_short_payload",
// "reply_huge_payload" (a 4 GiB length, no bytes); or "probe:ACTION": the run tries a forbidden
// action (probe.hpp) and answers {"probe": ...}.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <new>
#include <optional>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include "tuner/measure/check.hpp"
#include "tuner/measure/confine.hpp"
#include "tuner/measure/probe.hpp"
#include "tuner/measure/protocol.hpp"

namespace beamlab::tuner {
namespace {

struct Options {
  int threads = 1;
  bool allow_faults = false;
  ConfineOptions confine;
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "beamlab-worker: error: %s\n", why.c_str());
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> int64_t {
      if (i + 1 >= argc) die(a + " needs a value");
      char* end = nullptr;
      long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v < 0) die(a + " needs a non-negative integer, not '" + argv[i] + "'");
      return v;
    };
    if (a == "--threads")
      o.threads = static_cast<int>(std::max<int64_t>(1, value()));
    else if (a == "--memory-mb")
      o.confine.memory_mb = value();
    else if (a == "--cpu-seconds")
      o.confine.cpu_seconds = value();
    else if (a == "--lifetime-cpu-seconds")
      o.confine.lifetime_cpu_seconds = value();
    else if (a == "--allow-faults")
      o.allow_faults = true;
    else if (a == "--no-seccomp")
      o.confine.seccomp = false;
    else if (a == "--keep-stderr")
      o.confine.keep_stderr = true;
    else
      die("unknown argument '" + a + "' (see the comment at the top of tuner/worker_main.cpp)");
  }
  return o;
}

// One compile and one parallel run, so LLVM and OpenMP (its threads started) are set up before
// the filter. The THREAD is explicit: the heuristic runs a kernel this small on one core.
void warm_up(int threads) {
  Schedule s = (Tensor::rand({int64_t{threads} * 1024}, 1) + 1.0f).schedule();
  const ScheduleItem& item = s.items.at(0);
  std::vector<Opt> opts;
  if (threads > 1) opts.push_back({OptOp::Thread, 0, threads});
  auto c = KernelCandidate::build(item.ast, opts, item.name);
  if (!c) die("warm-up compile failed: " + c.error().message);
  std::vector<Buffer> bufs;
  std::vector<void*> ptrs;
  for (const UOpPtr& b : item.buffers) bufs.emplace_back(static_cast<size_t>(buffer_size(*b)) * 4);
  for (Buffer& b : bufs) ptrs.push_back(b.data());
  c->run(ptrs, threads);
}

// A buffer with a PROT_NONE guard page on each side, its end placed against the trailing guard
// (to the 64-byte alignment kernels assume): a candidate that writes past its output, or into
// an input (made read-only once filled), faults at once and is recorded as crashed, instead of
// corrupting the worker's state or the inputs of the candidates after it.
class GuardedBuffer {
public:
  explicit GuardedBuffer(size_t bytes) : bytes_(bytes) {
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    span_ = std::max(page, (bytes + page - 1) / page * page);
    void* base = ::mmap(nullptr, span_ + 2 * page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char*>(base);
    ::mprotect(base_, page, PROT_NONE);
    ::mprotect(base_ + page + span_, page, PROT_NONE);
    data_ = base_ + page + (span_ - (bytes + 63) / 64 * 64);
  }
  GuardedBuffer(GuardedBuffer&& o) noexcept
      : base_(std::exchange(o.base_, nullptr)), data_(o.data_), bytes_(o.bytes_), span_(o.span_) {}
  GuardedBuffer& operator=(GuardedBuffer&&) = delete;
  ~GuardedBuffer() {
    if (base_) ::munmap(base_, span_ + 2 * static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
  }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  void make_read_only() { ::mprotect(base_ + ::sysconf(_SC_PAGESIZE), span_, PROT_READ); }

private:
  char* base_ = nullptr;
  char* data_ = nullptr;
  size_t bytes_ = 0, span_ = 0;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The kernel the requests are about, parsed once per task.
struct Kernel {
  std::string ast_text; ///< as sent
  UOpPtr ast;
  std::string name;
  DivisionDomain domain; ///< what its integer divisions ask of the inputs
};

// The kernel's buffers and check inputs, set once per kernel ("task") and shared by every
// candidate of it: inputs are filled once per check and read in place (read-only).
struct Task {
  nlohmann::json shape; ///< buffers, checks, reduce length: what the inputs depend on
  std::vector<KernelBufferSpec> specs;
  std::vector<std::pair<InputKind, uint64_t>> checks;
  std::vector<VarValues> check_vars; ///< per check: the symbolic variables' values
  std::vector<VarValues> time_at;    ///< a timed run: a launch at each (none: one, no values)
  int64_t reduce_length = 1;
  std::vector<std::vector<GuardedBuffer>> inputs; ///< [check][slot - 1], filled lazily
  std::optional<GuardedBuffer> output;
  std::string expected; ///< every check's expected output, concatenated; empty: no comparison
};

class Worker {
public:
  Worker(const Options& o, Confinement c) : opts_(o), confinement_(std::move(c)) {}

  Message handle(Message req) {
    const nlohmann::json& h = req.header;
    std::string op = h.value("op", "");
    budget_cpu(opts_.confine.cpu_seconds);
    try {
      if (op == "compile") return compile(h);
      if (op == "task") return task(h, std::move(req.payload));
      if (op == "run") return run(h);
      if (op == "confinement") {
        Message m = reply("ok");
        m.header["layers"] = confinement_.layers;
        m.header["missing"] = confinement_.missing;
        return m;
      }
      if (op == "drop") {
        for (const auto& id : h.value("ids", nlohmann::json::array()))
          candidates_.erase(id.get<int64_t>());
        return reply("ok");
      }
      return reply("bad_request", "unknown op '" + op + "'");
    } catch (const std::bad_alloc&) {
      return reply("limit", "out of memory (the sandbox's address-space limit)");
    } catch (const std::exception& e) {
      return reply("error", e.what());
    }
  }

private:
  struct Compiled {
    KernelCandidate kernel;
    std::string fault;
  };

  static Message reply(const std::string& status, const std::string& error = "") {
    Message m;
    m.header["status"] = status;
    if (!error.empty()) m.header["error"] = error;
    return m;
  }

  Message compile(const nlohmann::json& h) {
    int64_t id = h.value("id", int64_t{0});
    candidates_.erase(id);
    std::string fault = opts_.allow_faults ? h.value("fault", "") : "";
    if (!task_) return reply("bad_request", "compile before a task");
    auto opts = parse_opts(h.value("opts", ""));
    if (!opts) return reply("bad_request", "opts: " + opts.error());
    if (fault == "abort_in_compile") std::abort();
    if (fault == "slow_compile") // busy, not asleep: a compile's kind of slow
      for (auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
           std::chrono::steady_clock::now() < end;) {
      }
    auto c = KernelCandidate::build(kernel_.ast, *opts, kernel_.name);
    if (!c) return reply(c.error().rejected ? "rejected" : "compile_error", c.error().message);
    Message m = reply("ok");
    m.header["code_hash"] = hash_hex(c->code_hash());
    m.header["code_bytes"] = c->code_bytes();
    m.header["compile_ms"] = c->compile_ms();
    if (fault == "reply_bad_hash") m.header["code_hash"] = "not-hex";
    if (fault == "reply_wrong_type") m.header["compile_ms"] = "fast";
    if (fault == "reply_negative_code_bytes") m.header["code_bytes"] = -1;
    if (fault == "reply_bad_hash_then_exit") { // refused, though its worker is gone by then
      m.header["code_hash"] = "not-hex";
      (void)write_message(STDOUT_FILENO, m);
      std::_Exit(0);
    }
    candidates_.emplace(id, Compiled{std::move(*c), fault});
    return m;
  }

  Message task(const nlohmann::json& h, std::string payload) {
    // Another kernel: parse it, and forget the candidates compiled from the last one.
    std::string ast_text = h.value("ast", "");
    if (!kernel_.ast || kernel_.ast_text != ast_text) {
      auto ast = parse_graph(ast_text);
      if (!ast) return reply("bad_request", "kernel AST: " + ast.error().str("ast"));
      candidates_.clear();
      kernel_ = {std::move(ast_text), *ast, h.value("name", "kernel"),
                 division_domain(*ast, h.at("buffers").size())};
    }
    // The same buffers, checks and input domain again (say, now with expected outputs): keep
    // the inputs.
    nlohmann::json shape = {h.at("buffers"), h.at("checks"), h.value("reduce_length", 1),
                            kernel_.domain.divides, kernel_.domain.divisor};
    if (!task_ || task_->shape != shape) {
      task_.reset();
      auto t = inputs_of(h, shape);
      if (!t) return reply("bad_request", t.error());
      task_.emplace(std::move(*t));
    }
    auto time_at = bindings_of(h.value("time_at", nlohmann::json::array()));
    if (!time_at) return reply("bad_request", "time_at: " + time_at.error());
    task_->time_at = std::move(*time_at);
    size_t want = task_->checks.size() * task_->output->bytes();
    if (!payload.empty() && payload.size() != want)
      return reply("bad_request", "the expected outputs are " + std::to_string(payload.size()) +
                                      " bytes, not " + std::to_string(want));
    task_->expected = std::move(payload);
    return reply("ok");
  }

  Expected<Task> inputs_of(const nlohmann::json& h, nlohmann::json shape) {
    Task t;
    t.shape = std::move(shape);
    for (const auto& b : h.at("buffers")) {
      auto dt = parse_dtype(b.at("dtype").get<std::string>());
      if (!dt) return make_unexpected("unknown dtype " + b.at("dtype").dump());
      int64_t count = b.at("count").get<int64_t>();
      if (count <= 0) return make_unexpected("a buffer of " + std::to_string(count));
      t.specs.push_back({*dt, count, b.value("constant", false)});
    }
    if (t.specs.empty()) return make_unexpected("no buffers");
    for (const auto& chk : h.at("checks")) {
      auto kind = parse_input_kind(chk.at("kind").get<std::string>());
      if (!kind) return make_unexpected("unknown input kind " + chk.at("kind").dump());
      t.checks.emplace_back(*kind, chk.value("seed", uint64_t{1}));
      auto vars = bindings_of(nlohmann::json::array({chk.value("vars", nlohmann::json::object())}));
      if (!vars) return make_unexpected("check vars: " + vars.error());
      t.check_vars.push_back(vars->front());
    }
    if (t.checks.empty()) return make_unexpected("no checks");
    t.reduce_length = h.value("reduce_length", int64_t{1});
    t.output.emplace(static_cast<size_t>(t.specs[0].bytes()));
    t.inputs.resize(t.checks.size()); // filled when a run first needs them
    return t;
  }

  // Bindings of the kernel's variables, each complete and within the variables' ranges (a
  // value outside would index outside the buffers).
  Expected<std::vector<VarValues>> bindings_of(const nlohmann::json& list) const {
    if (!list.is_array()) return make_unexpected("not a list of bindings");
    std::vector<Variable> vars = kernel_variables(kernel_.ast);
    std::vector<VarValues> out;
    for (const auto& b : list) {
      if (!b.is_object()) return make_unexpected("a binding is not an object: " + b.dump());
      VarValues& at = out.emplace_back();
      for (const Variable& v : vars) {
        if (!b.contains(v.name) || !b[v.name].is_number_integer())
          return make_unexpected(b.dump() + " has no integer value for " + v.name);
        int64_t value = b[v.name].get<int64_t>();
        if (value < v.lo || value > v.hi)
          return make_unexpected(v.name + "=" + std::to_string(value) + " is outside [" +
                                 std::to_string(v.lo) + ", " + std::to_string(v.hi) + "]");
        at[v.name] = value;
      }
      if (at.size() != b.size())
        return make_unexpected(b.dump() + " names a variable the kernel doesn't have");
    }
    return out;
  }

  VarValues upper_bounds() const {
    VarValues hi;
    for (const Variable& v : kernel_variables(kernel_.ast)) hi[v.name] = v.hi;
    return hi;
  }

  // Check c's inputs, filled on first use and read-only from then on.
  const std::vector<GuardedBuffer>& inputs(Task& t, size_t c) {
    std::vector<GuardedBuffer>& in = t.inputs[c];
    if (!in.empty() || t.specs.size() == 1) return in;
    auto [kind, seed] = t.checks[c];
    for (size_t s = 1; s < t.specs.size(); ++s) {
      GuardedBuffer& b = in.emplace_back(static_cast<size_t>(t.specs[s].bytes()));
      fill_input(t.specs[s].dtype, kind, seed * 1000 + s, b.data(), t.specs[s].count);
      if (kernel_.domain.divides)
        keep_in_domain(t.specs[s].dtype, b.data(), t.specs[s].count, kernel_.domain.divisor[s]);
      b.make_read_only();
    }
    return in;
  }

  // Runs candidate `id` once per requested check on sentinel-filled output; the first check's
  // run also starts the timing (it is the first warm-up run, unless it ran at other values of
  // symbolic variables than the timed runs), and a run slower than the cutoff stops the
  // candidate early: it can't win, so its other checks are skipped.
  Message run(const nlohmann::json& h) {
    auto it = candidates_.find(h.value("id", int64_t{0}));
    if (it == candidates_.end()) return reply("bad_request", "run of a candidate not compiled");
    if (!task_) return reply("bad_request", "run before a task");
    const KernelCandidate& kernel = it->second.kernel;
    const std::string& fault = it->second.fault;
    Task& t = *task_;
    std::vector<size_t> checks;
    for (const auto& c : h.value("checks", nlohmann::json::array())) {
      auto i = c.get<size_t>();
      if (i >= t.checks.size()) return reply("bad_request", "no check " + std::to_string(i));
      checks.push_back(i);
    }
    if (checks.empty()) checks.push_back(0);
    int warmup = h.value("warmup", 1), runs = h.value("runs", 0);
    double cutoff = h.value("cutoff_ms", 0.0);
    bool return_outputs = h.value("return_outputs", false);
    const KernelBufferSpec& out = t.specs[0];
    size_t out_bytes = t.output->bytes();
    std::vector<void*> ptrs = {t.output->data()};
    int run_count = 0;
    // One launch at each binding (a kernel of fixed shape: one launch), timed together.
    static const std::vector<VarValues> kNoVariables(1);
    auto run_once = [&](const std::vector<VarValues>& at) {
      evict_constants(t.specs, ptrs);
      auto t0 = std::chrono::steady_clock::now();
      // Test faults: the first run of each request 50 ms late (what waking the threads costs
      // a small kernel on a VM, magnified), or every run.
      if ((fault == "slow_first_run" && run_count == 0) || fault == "slow_runs")
        for (auto end = t0 + std::chrono::milliseconds(50);
             std::chrono::steady_clock::now() < end;) {
        }
      ++run_count;
      for (const VarValues& vars : at.empty() ? kNoVariables : at)
        kernel.run(ptrs, opts_.threads, fault == "runs_to_bound" ? upper_bounds() : vars);
      if (fault == "endless_loop")
        for (volatile unsigned spin = 0;; spin = spin + 1) {
        }
      if (fault == "write_out_of_bounds") static_cast<char*>(ptrs[0])[out_bytes + 64] = 1;
      if (fault == "miscompile") std::memset(ptrs[0], 0, std::min<size_t>(out_bytes, 4));
      return ms_since(t0);
    };
    Message m = reply("ok");
    std::vector<double> samples, check_ms;
    bool early = false;
    for (size_t n = 0; n < checks.size() && !early; ++n) {
      size_t c = checks[n];
      ptrs.resize(1);
      for (const GuardedBuffer& b : inputs(t, c)) ptrs.push_back(b.data());
      fill_sentinel(out.dtype, ptrs[0], out.count);
      if (fault == "open_file") ::open("/etc/hostname", O_RDONLY); // denied: the filter kills
      if (fault.starts_with("probe:")) m.header["probe"] = probe_forbidden(fault.substr(6));
      check_ms.push_back(run_once({t.check_vars[c]}));
      if (n == 0 && runs > 0) {
        // One run past the cutoff is no verdict: the first of a request pays for waking the
        // worker's threads, asleep since its last request (35-65 us on a 2-core VM, more than
        // a small kernel's whole time: BEAM stopped 3.5x "slow" variants of a 0.02 ms plan).
        // The run after it must be past the cutoff too.
        if (cutoff > 0 && check_ms.back() > cutoff) {
          double again = run_once(t.time_at);
          early = again > cutoff;
          // (A symbolic kernel's check ran at the check's values, not the timed ones.)
          if (early)
            samples.push_back(t.time_at.empty() ? std::min(check_ms.back(), again) : again);
        }
        // The check's run is the first warm-up, unless it ran at other values than are timed.
        for (int i = t.time_at.empty() ? 1 : 0; i < warmup && !early; ++i)
          if (double ms = run_once(t.time_at); cutoff > 0 && ms > cutoff)
            early = true, samples.push_back(ms);
        for (int i = 0; i < runs && !early; ++i) {
          samples.push_back(run_once(t.time_at));
          early = cutoff > 0 && samples.back() > cutoff;
        }
      }
      if (n == 0 && runs > 0 && !t.time_at.empty()) {
        // The timed runs left the output of the last binding timed: the check's own, again.
        fill_sentinel(out.dtype, ptrs[0], out.count);
        run_once({t.check_vars[c]});
      }
      if (return_outputs) m.payload.append(static_cast<const char*>(ptrs[0]), out_bytes);
      if (t.expected.empty()) continue;
      Comparison cmp = compare_outputs(out.dtype, ptrs[0], t.expected.data() + c * out_bytes,
                                       out.count, t.reduce_length);
      if (cmp.mismatches > 0) {
        m.header["status"] = "wrong_result";
        m.header["error"] =
            std::to_string(cmp.mismatches) + " of " + std::to_string(out.count) +
            " elements differ on " + std::string(to_string(t.checks[c].first)) + " inputs" +
            (t.check_vars[c].empty() ? "" : " at " + bindings_str({t.check_vars[c]})) +
            "; first at " + std::to_string(cmp.first) + ": got " + std::to_string(cmp.got) +
            ", want " + std::to_string(cmp.want);
        m.header["mismatches"] = cmp.mismatches;
        break;
      }
      m.header["max_error"] = std::max(m.header.value("max_error", 0.0), cmp.max_error);
    }
    m.header["samples_ms"] = samples;
    m.header["check_ms"] = check_ms;
    m.header["early_stop"] = early;
    hostile_reply(fault, m);
    if (h.value("drop", false)) candidates_.erase(it);
    return m;
  }

  // Test-only faults: a run's reply as a hostile worker would write it.
  static void hostile_reply(const std::string& fault, Message& m) {
    if (fault == "reply_negative_samples") m.header["samples_ms"] = {-5.0};
    if (fault == "reply_many_samples")
      m.header["samples_ms"] = std::vector<double>(2'000'000, 0.01);
    if (fault == "reply_no_check_ms") m.header.erase("check_ms");
    if (fault == "reply_short_payload") m.payload.resize(std::min<size_t>(m.payload.size(), 1));
    if (fault == "reply_huge_payload") {
      // A frame that announces 4 GiB and sends nothing: the tuner must refuse the length
      // without allocating it (and then kills this process).
      std::string header = m.header.dump();
      auto hn = static_cast<uint32_t>(header.size());
      uint64_t pn = uint64_t{4} << 30;
      std::string frame(reinterpret_cast<const char*>(&hn), sizeof hn);
      frame += header;
      frame.append(reinterpret_cast<const char*>(&pn), sizeof pn);
      if (::write(STDOUT_FILENO, frame.data(), frame.size()) < 0) std::_Exit(1);
      for (;;) ::pause();
    }
  }

  Options opts_;
  Confinement confinement_;
  std::map<int64_t, Compiled> candidates_;
  Kernel kernel_;
  std::optional<Task> task_;
};

} // namespace
} // namespace beamlab::tuner

// Under AddressSanitizer a fault must still end the worker by its signal (the tuner classifies
// by it), and the sanitizer must not spawn a symbolizer the seccomp filter would refuse.
extern "C" const char* __asan_default_options() {
  return "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigill=0:handle_sigfpe=0:"
         "detect_leaks=0:symbolize=0";
}

int main(int argc, char** argv) {
  using namespace beamlab::tuner;
  Options o = parse_args(argc, argv);
  // OpenMP threads spin for a while after each parallel region (200 ms by default). Between
  // requests that would steal the cores from the sandbox being timed next: spin 1 ms at most
  // (back-to-back runs of one timing request still find them awake).
  ::setenv("KMP_BLOCKTIME", "1", 1);
  Confinement confinement = enter_namespaces();
  warm_up(o.threads);
  beamlab::release_openmp_registration(); // before the filter, which refuses libomp's exit handler
  shut_in(o.confine, confinement);
  Worker w(o, confinement);
  Message req;
  // Ends with _exit: the exit handlers (libomp's opens a file) are not on the filter's list.
  for (;;) {
    if (read_message(STDIN_FILENO, req) != Transfer::ok) std::_Exit(0); // the tuner closed it
    Message reply = w.handle(std::move(req));
    bool retire = cpu_runs_low(o.confine.cpu_seconds);
    if (retire) reply.header["retiring"] = true;
    if (write_message(STDOUT_FILENO, reply) != Transfer::ok || retire) std::_Exit(0);
  }
}

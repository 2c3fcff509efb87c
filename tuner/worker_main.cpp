// beamlab-worker: the sandboxed process a tuner thread drives. It reads candidates from stdin,
// compiles and runs them on buffers of its own, and answers on stdout (protocol.hpp).
//
//   beamlab-worker [--threads N] [--memory-mb M] [--cpu-seconds S] [--allow-faults] [--no-seccomp]
//
// Start-up: resource limits (address space, CPU time per request, no core files), a warm-up
// compile and parallel run (LLVM and OpenMP set themselves up, reading what files they need),
// then a
// seccomp filter that kills the process on any syscall a kernel never needs: opening or
// creating files, sockets, exec, fork, ptrace. Then requests, one at a time:
//   {"op":"compile","ast":TEXT,"name":N,"opts":"UPCAST(1,8) ..."}
//       -> {"status":"ok"|"rejected"|"compile_error","code_hash":HEX,"code_bytes":B,
//           "compile_ms":T,"error":...}
//   {"op":"run","buffers":[{"dtype":"float32","count":N},...],"checks":[{"kind":K,"seed":S}],
//    "expected":BOOL,"return_outputs":BOOL,"reduce_length":L,"warmup":W,"runs":R,"cutoff_ms":C}
//       payload: the expected outputs of every check, concatenated (when "expected")
//       -> {"status":"ok"|"wrong_result","samples_ms":[...],"early_stop":BOOL,...}
//          payload: the outputs of every check (when "return_outputs")
// With --allow-faults (tests only) a request's "fault" plants a failure: "abort_in_compile",
// "open_file" (a syscall the filter denies, made while running).
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <optional>
#include <sched.h>
#include <seccomp.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

#include "tuner/check.hpp"
#include "tuner/protocol.hpp"

namespace beamlab::tuner {
namespace {

struct Options {
  int threads = 1;
  int64_t memory_mb = 0;
  int64_t cpu_seconds = 0;
  bool allow_faults = false;
  bool seccomp = true;
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
      o.memory_mb = value();
    else if (a == "--cpu-seconds")
      o.cpu_seconds = value();
    else if (a == "--allow-faults")
      o.allow_faults = true;
    else if (a == "--no-seccomp")
      o.seccomp = false;
    else
      die("unknown argument '" + a + "' (see the comment at the top of tuner/worker_main.cpp)");
  }
  return o;
}

void set_limit(int resource, rlim_t value) {
  rlimit r{value, value};
  if (::setrlimit(resource, &r) != 0) die(std::string("setrlimit: ") + std::strerror(errno));
}

// The CPU-time limit is per request: the soft limit moves to what the process has used so
// far plus the budget (SIGXCPU past it), so a long-lived worker never hits it by accumulation.
void budget_cpu(int64_t seconds) {
  if (seconds <= 0) return;
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto used = static_cast<rlim_t>(u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1);
  rlimit r{used + static_cast<rlim_t>(seconds), RLIM_INFINITY};
  if (::setrlimit(RLIMIT_CPU, &r) != 0) die(std::string("setrlimit: ") + std::strerror(errno));
}

void apply_limits(const Options& o) {
  set_limit(RLIMIT_CORE, 0);
#if !defined(__SANITIZE_ADDRESS__) && !__has_feature(address_sanitizer)
  // (AddressSanitizer reserves terabytes of shadow address space up front.)
  if (o.memory_mb > 0) set_limit(RLIMIT_AS, static_cast<rlim_t>(o.memory_mb) << 20);
#endif
  budget_cpu(o.cpu_seconds);
}

void install_seccomp() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) die("seccomp_init failed");
  const int denied[] = {
      SCMP_SYS(open),      SCMP_SYS(openat),     SCMP_SYS(openat2), SCMP_SYS(creat),
      SCMP_SYS(socket),    SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind),
      SCMP_SYS(listen),    SCMP_SYS(accept),     SCMP_SYS(accept4), SCMP_SYS(execve),
      SCMP_SYS(execveat),  SCMP_SYS(fork),       SCMP_SYS(vfork),   SCMP_SYS(ptrace),
      SCMP_SYS(unlink),    SCMP_SYS(unlinkat),   SCMP_SYS(rename),  SCMP_SYS(renameat),
      SCMP_SYS(renameat2), SCMP_SYS(mkdir),      SCMP_SYS(mkdirat)};
  int rc = 0;
  for (int sc : denied) rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, sc, 0);
  // New threads (OpenMP's) are fine; a new process is not. clone3's flags sit behind a
  // pointer the filter can't read: make glibc fall back to clone.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc99-extensions" // libseccomp's SCMP_A0 macro
  rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
#pragma clang diagnostic pop
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (rc != 0 || seccomp_load(ctx) != 0) die("installing the seccomp filter failed");
  seccomp_release(ctx);
}

// One compile and one parallel run, so LLVM and OpenMP are set up before the filter.
void warm_up(int threads) {
  Schedule s = (Tensor::rand({4096}, 1) + 1.0f).schedule();
  const ScheduleItem& item = s.items.at(0);
  auto c = KernelCandidate::build(item.ast, heuristic_opts(item.ast, threads), item.name);
  if (!c) die("warm-up compile failed: " + c.error().message);
  std::vector<Buffer> bufs;
  std::vector<void*> ptrs;
  for (const UOpPtr& b : item.buffers) bufs.emplace_back(static_cast<size_t>(buffer_size(*b)) * 4);
  for (Buffer& b : bufs) ptrs.push_back(b.data());
  c->run(ptrs, threads);
}

class Worker {
public:
  explicit Worker(const Options& o) : opts_(o) {}

  Message handle(const Message& req) {
    const nlohmann::json& h = req.header;
    std::string op = h.value("op", "");
    std::string fault = opts_.allow_faults ? h.value("fault", "") : "";
    budget_cpu(opts_.cpu_seconds);
    try {
      if (op == "compile") return compile(h, fault);
      if (op == "run") return run(h, req.payload, fault);
      return reply("bad_request", "unknown op '" + op + "'");
    } catch (const std::bad_alloc&) {
      return reply("limit", "out of memory (the sandbox's address-space limit)");
    } catch (const std::exception& e) {
      return reply("error", e.what());
    }
  }

private:
  static Message reply(const std::string& status, const std::string& error = "") {
    Message m;
    m.header["status"] = status;
    if (!error.empty()) m.header["error"] = error;
    return m;
  }

  Message compile(const nlohmann::json& h, const std::string& fault) {
    candidate_.reset();
    auto ast = parse_graph(h.value("ast", ""));
    if (!ast) return reply("bad_request", "kernel AST: " + ast.error().str("ast"));
    auto opts = parse_opts(h.value("opts", ""));
    if (!opts) return reply("bad_request", "opts: " + opts.error());
    if (fault == "abort_in_compile") std::abort();
    auto c = KernelCandidate::build(*ast, *opts, h.value("name", "kernel"));
    if (!c) return reply(c.error().rejected ? "rejected" : "compile_error", c.error().message);
    Message m = reply("ok");
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(c->code_hash()));
    m.header["code_hash"] = hash;
    m.header["code_bytes"] = c->code_bytes();
    m.header["compile_ms"] = c->compile_ms();
    candidate_ = std::move(*c);
    return m;
  }

  Message run(const nlohmann::json& h, const std::string& payload, const std::string& fault) {
    if (!candidate_) return reply("bad_request", "run before a successful compile");
    std::vector<KernelBufferSpec> specs;
    for (const auto& b : h.at("buffers")) {
      auto dt = parse_dtype(b.at("dtype").get<std::string>());
      if (!dt) return reply("bad_request", "unknown dtype " + b.at("dtype").dump());
      specs.push_back({*dt, b.at("count").get<int64_t>()});
    }
    if (specs.empty()) return reply("bad_request", "no buffers");
    std::vector<Buffer> bufs;
    std::vector<void*> ptrs;
    for (const auto& s : specs)
      bufs.emplace_back(static_cast<size_t>(s.count) * static_cast<size_t>(s.dtype.itemsize()));
    for (Buffer& b : bufs) ptrs.push_back(b.data());
    const KernelBufferSpec& out = specs[0];
    size_t out_bytes = bufs[0].bytes();
    bool expected = h.value("expected", false), return_outputs = h.value("return_outputs", false);
    int64_t reduce_len = h.value("reduce_length", int64_t{1});
    Message m = reply("ok");
    size_t check_index = 0;
    for (const auto& chk : h.value("checks", nlohmann::json::array())) {
      auto kind = parse_input_kind(chk.at("kind").get<std::string>());
      if (!kind) return reply("bad_request", "unknown input kind " + chk.at("kind").dump());
      uint64_t seed = chk.value("seed", uint64_t{1});
      for (size_t s = 1; s < specs.size(); ++s)
        fill_input(specs[s].dtype, *kind, seed * 1000 + s, ptrs[s], specs[s].count);
      fill_sentinel(out.dtype, ptrs[0], out.count);
      if (fault == "open_file") ::open("/etc/hostname", O_RDONLY); // denied: the filter kills
      candidate_->run(ptrs, opts_.threads);
      if (return_outputs) m.payload.append(static_cast<const char*>(ptrs[0]), out_bytes);
      if (expected) {
        if (payload.size() < (check_index + 1) * out_bytes)
          return reply("bad_request", "the expected outputs are shorter than the checks");
        Comparison c = compare_outputs(out.dtype, ptrs[0], payload.data() + check_index * out_bytes,
                                       out.count, reduce_len);
        if (c.mismatches > 0) {
          Message w = reply("wrong_result");
          w.header["error"] = std::to_string(c.mismatches) + " of " + std::to_string(out.count) +
                              " elements differ on " + std::string(to_string(*kind)) +
                              " inputs; first at " + std::to_string(c.first) + ": got " +
                              std::to_string(c.got) + ", want " + std::to_string(c.want);
          w.header["mismatches"] = c.mismatches;
          return w;
        }
        m.header["max_error"] = std::max(m.header.value("max_error", 0.0), c.max_error);
      }
      ++check_index;
    }
    // Timing: warm-up runs, then samples; stop early past the cutoff (a slow candidate).
    int warmup = h.value("warmup", 1), runs = h.value("runs", 0);
    double cutoff = h.value("cutoff_ms", 0.0);
    for (int i = 0; i < warmup; ++i) candidate_->run(ptrs, opts_.threads);
    std::vector<double> samples;
    bool early = false;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      candidate_->run(ptrs, opts_.threads);
      samples.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (cutoff > 0 && samples.back() > cutoff) {
        early = true;
        break;
      }
    }
    m.header["samples_ms"] = samples;
    m.header["early_stop"] = early;
    return m;
  }

  Options opts_;
  std::optional<KernelCandidate> candidate_;
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
  apply_limits(o);
  warm_up(o.threads);
  if (o.seccomp) install_seccomp();
  Worker w(o);
  Message req;
  for (;;) {
    Transfer t = read_message(STDIN_FILENO, req);
    if (t != Transfer::ok) return 0; // the tuner closed the pipe
    if (write_message(STDOUT_FILENO, w.handle(req)) != Transfer::ok) return 0;
  }
}

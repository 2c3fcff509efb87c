// The sandboxed worker, end to end: real beamlab-worker processes. A candidate compiles, runs,
// and is checked against the unoptimized kernel's output; planted faults (an out-of-bounds
// write, an endless loop, an abort while compiling, a denied syscall) each get their status,
// and the sandbox restarts and measures the next candidate correctly.
#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <thread>
#include <unistd.h>

#include "engine/ir/kernel_ops.hpp"
#include "tests/tuner/symbolic_task.hpp"
#include "tuner/measure/check.hpp"
#include "tuner/measure/pool.hpp"
#include "tuner/measure/probe.hpp"
#include "tuner/measure/sandbox.hpp"

namespace beamlab::tuner {
namespace {

using nlohmann::json;

KernelTask task_of(const Tensor& t) { return kernel_task(t.schedule().items.at(0)); }

json buffers_of(const KernelTask& t) {
  json b = json::array();
  for (const KernelBufferSpec& s : t.buffers) b.push_back(buffer_json(s));
  return b;
}

// Compiles `opts` for the kernel of the worker's task.
Message compile_request(const std::string& opts, const std::string& fault = "") {
  Message m;
  m.header = {{"op", "compile"}, {"opts", opts}};
  if (!fault.empty()) m.header["fault"] = fault;
  return m;
}

const json kChecks = json::array({{{"kind", "random"}, {"seed", 1}},
                                  {{"kind", "small_ints"}, {"seed", 2}},
                                  {{"kind", "special"}, {"seed", 3}}});

// The kernel, its buffers and checks, with the expected outputs (or none: no comparison).
Message task_request(const KernelTask& t, const std::string* expected) {
  Message m;
  m.header = {{"op", "task"},      {"ast", t.ast},
              {"name", t.name},    {"buffers", buffers_of(t)},
              {"checks", kChecks}, {"reduce_length", t.reduce_length}};
  if (expected) m.payload = *expected;
  return m;
}

// Runs the compiled candidate on every check, then `runs` timed runs.
Message run_request(int runs, bool return_outputs = false) {
  Message m;
  m.header = {{"op", "run"},
              {"checks", {0, 1, 2}},
              {"return_outputs", return_outputs},
              {"warmup", 1},
              {"runs", runs}};
  return m;
}

// A kernel that never ends: a float sum of 2^50 loads (no reassociation, so LLVM keeps the loop).
KernelTask endless_task() {
  DType f32(Scalar::Float32);
  UOpPtr r = kernel_range(int64_t{1} << 50, 0, LoopKind::Reduce);
  UOpPtr zero = UOp::const_int(Scalar::Index, 0);
  UOpPtr sum = reduce_over(load(index(buffer_param(1, f32), zero), f32), {r}, Op::Add);
  UOpPtr endless = sink({store(index(buffer_param(0, f32), zero), sum)});
  return {"r_endless", 0, print_graph(endless), {{f32, 1}, {f32, 1}}, 1};
}

// What one check's output takes: a run that returns outputs carries this per check.
uint64_t output_bytes(const KernelTask& t) { return static_cast<uint64_t>(t.buffers[0].bytes()); }

SandboxOptions test_options() {
  SandboxOptions o;
  o.threads = 2;
  o.allow_faults = true;
  return o;
}

// Compiles `opts` and runs it against `expected`; the worker's reply.
json measure(Sandbox& box, const KernelTask& t, const std::string& opts,
             const std::string& expected) {
  EXPECT_EQ(box.call(task_request(t, &expected), 30).reply.header.value("status", ""), "ok");
  CallResult c = box.call(compile_request(opts), 30);
  EXPECT_EQ(c.status, CallStatus::ok) << c.detail;
  EXPECT_EQ(c.reply.header.value("status", ""), "ok") << c.reply.header.dump();
  CallResult r = box.call(run_request(3), 30);
  EXPECT_EQ(r.status, CallStatus::ok) << r.detail;
  return r.reply.header;
}

class SandboxTest : public ::testing::Test {
protected:
  KernelTask matmul = task_of(Tensor::rand({32, 48}, 1).matmul(Tensor::rand({48, 64}, 2)));
  Sandbox box{test_options()};

  // The unoptimized kernel's outputs for the three checks.
  std::string reference() {
    EXPECT_EQ(box.call(task_request(matmul, nullptr), 30).status, CallStatus::ok);
    EXPECT_EQ(box.call(compile_request(""), 30).reply.header.value("status", ""), "ok");
    CallResult r = box.call(run_request(0, true), 30, 3 * output_bytes(matmul));
    EXPECT_EQ(r.status, CallStatus::ok) << r.detail;
    return r.reply.payload;
  }
};

TEST_F(SandboxTest, ReferenceOutputIsTheMatmulOfTheDocumentedInputs) {
  std::string ref = reference();
  ASSERT_EQ(ref.size(), 3u * 32 * 64 * 4);
  // The worker's inputs for the first check, made here the same way: slot s gets seed*1000+s.
  std::vector<float> a(32 * 48), b(48 * 64);
  fill_input(DType(Scalar::Float32), InputKind::random, 1000 + 1, a.data(), 32 * 48);
  fill_input(DType(Scalar::Float32), InputKind::random, 1000 + 2, b.data(), 48 * 64);
  // Slot 1 is A (first used), slot 2 is B.
  const float* out = reinterpret_cast<const float*>(ref.data());
  double ab = 0;
  for (int k = 0; k < 48; ++k)
    ab += double{a[static_cast<size_t>(k)]} * b[static_cast<size_t>(k * 64)];
  EXPECT_NEAR(out[0], ab, 1e-4);
}

TEST_F(SandboxTest, CandidatesAreTimedAndCheckedAgainstTheReference) {
  std::string ref = reference();
  json h = measure(box, matmul, "UPCAST(1,16) UPCAST(0,8) THREAD(0,2)", ref);
  EXPECT_EQ(h.value("status", ""), "ok") << h.dump();
  EXPECT_EQ(h.at("samples_ms").size(), 3u);
  EXPECT_GT(h.at("samples_ms")[0].get<double>(), 0.0);
  EXPECT_LT(h.value("max_error", 1.0), 1e-3);
  // Different Opts, different machine code.
  CallResult a = box.call(compile_request(""), 30);
  CallResult b = box.call(compile_request("UPCAST(1,4)"), 30);
  EXPECT_NE(a.reply.header.at("code_hash"), b.reply.header.at("code_hash"));
  EXPECT_GT(b.reply.header.value("compile_ms", 0.0), 0.0);
}

// A weight (a constant in a real run) is evicted from the caches before every run: the same
// inputs, so the same outputs, each timed.
TEST_F(SandboxTest, AConstantInputIsTimedColdAndChecked) {
  std::string ref = reference();
  KernelTask cold = matmul;
  cold.buffers.at(2).constant = true;
  json h = measure(box, cold, "UPCAST(1,16) UPCAST(0,8) THREAD(0,2)", ref);
  EXPECT_EQ(h.value("status", ""), "ok") << h.dump();
  EXPECT_EQ(h.at("samples_ms").size(), 3u);
  EXPECT_LT(h.value("max_error", 1.0), 1e-3);
}

// A worker stopped mid-request (a timing elsewhere has the machine) answers once it goes on:
// the time it spent stopped moves the call's deadline, and the call says how long that was.
TEST_F(SandboxTest, APausedWorkerAnswersAfterItsDeadlineMovedByThePause) {
  std::string ref = reference();
  box.pause();
  EXPECT_TRUE(box.paused());
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    box.resume();
  });
  auto t0 = std::chrono::steady_clock::now();
  CallResult c = box.call(compile_request("UPCAST(1,4)"), 1.0); // under the pause's length
  double waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  later.join();
  EXPECT_EQ(c.status, CallStatus::ok) << c.detail;
  EXPECT_EQ(c.reply.header.value("status", ""), "ok") << c.reply.header.dump();
  EXPECT_GE(waited_ms, 1400); // it did not answer while stopped
  EXPECT_GE(c.stopped_ms, 1000);
  EXPECT_FALSE(box.paused());
  // A worker started while paused starts stopped, and goes on when resumed.
  Sandbox fresh(test_options());
  fresh.pause();
  std::thread go([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fresh.resume();
  });
  CallResult t = fresh.call(task_request(matmul, &ref), 30);
  go.join();
  EXPECT_EQ(t.status, CallStatus::ok) << t.detail;
  EXPECT_GE(t.stopped_ms, 200);
}

// A deadline moves by the stops after it was made, not by the worker's earlier ones (else
// every call on a long-paused sandbox would get that long again before it timed out).
TEST(Deadline, MovesOnlyByTheStopsSinceItWasMade) {
  using namespace std::chrono;
  StoppedClock clock;
  clock.stopped();
  std::this_thread::sleep_for(milliseconds(50));
  clock.continued();
  auto at = steady_clock::now() + seconds(1);
  Deadline d(at, &clock);
  EXPECT_EQ(d.when(), at);
  clock.stopped();
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_GE(d.when() - at, milliseconds(30)); // while stopped, it keeps moving
  clock.continued();
  auto moved = d.when() - at;
  EXPECT_GE(moved, milliseconds(30));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(d.when() - at, moved); // and stays put once the worker runs again
}

// Timing (exclusive) doesn't wait for a compile (preemptible) to end: it stops the compile's
// sandbox while it holds the machine and lets it go on after. Other shared work is waited for.
TEST(Gate, AnExclusiveHolderStopsPreemptibleHoldersAndWaitsForTheRest) {
  Gate gate;
  Sandbox compiling(test_options()), other(test_options());
  gate.lock(Access::preemptible, &compiling);
  gate.lock(Access::exclusive); // would block before: a compile held the gate shared
  EXPECT_TRUE(compiling.paused());
  gate.unlock(Access::exclusive);
  EXPECT_FALSE(compiling.paused());
  // A compile that ends while stopped goes on running for its next request.
  gate.lock(Access::exclusive);
  EXPECT_TRUE(compiling.paused());
  gate.unlock(Access::preemptible, &compiling);
  EXPECT_FALSE(compiling.paused());
  gate.unlock(Access::exclusive);
  // Plain shared work is not stopped: the exclusive holder waits for it.
  gate.lock(Access::shared, &other);
  std::atomic<bool> got{false};
  std::thread timing([&] {
    gate.lock(Access::exclusive);
    got = true;
    gate.unlock(Access::exclusive);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(got);
  EXPECT_FALSE(other.paused());
  gate.unlock(Access::shared, &other);
  timing.join();
  EXPECT_TRUE(got);
}

TEST_F(SandboxTest, AWrongElementIsAWrongResult) {
  std::string ref = reference();
  float bad = 1234.5f;
  std::memcpy(ref.data() + 4 * 100, &bad, 4); // element 100 of the first check
  json h = measure(box, matmul, "UPCAST(1,8)", ref);
  EXPECT_EQ(h.value("status", ""), "wrong_result");
  EXPECT_NE(h.value("error", "").find("first at 100"), std::string::npos) << h.dump();
}

TEST_F(SandboxTest, AnUnwrittenElementFailsThroughTheSentinel) {
  // A copy kernel that writes only the first half of its output.
  DType f32(Scalar::Float32);
  UOpPtr r = kernel_range(32, 0, LoopKind::Loop);
  UOpPtr half =
      sink({store(index(buffer_param(0, f32), r), load(index(buffer_param(1, f32), r), f32))});
  KernelTask t{"E_half", 0, print_graph(half), {{f32, 64}, {f32, 64}}, 1};
  ASSERT_EQ(box.call(task_request(t, nullptr), 30).status, CallStatus::ok);
  ASSERT_EQ(box.call(compile_request(""), 30).reply.header.value("status", ""), "ok");
  std::string out = box.call(run_request(0, true), 30, 3 * output_bytes(t)).reply.payload;
  // The expected output: the whole input copied (what a correct kernel would write).
  std::string want(out.size(), '\0');
  for (int c = 0; c < 3; ++c)
    fill_input(f32, *parse_input_kind(kChecks[static_cast<size_t>(c)]["kind"].get<std::string>()),
               kChecks[static_cast<size_t>(c)]["seed"].get<uint64_t>() * 1000 + 1,
               want.data() + c * 256, 64);
  ASSERT_EQ(box.call(task_request(t, &want), 30).status, CallStatus::ok);
  json h = box.call(run_request(1), 30).reply.header;
  EXPECT_EQ(h.value("status", ""), "wrong_result");
  EXPECT_NE(h.value("error", "").find("32 of 64 elements differ"), std::string::npos) << h.dump();
}

// The first run of a request can pay for waking the worker's threads; a run past the cutoff
// stops the candidate only when the run after it is past it too. A candidate whose first run
// alone is 50 ms late is timed in full; one whose every run is, is stopped, its faster run kept.
TEST_F(SandboxTest, OneRunPastTheCutoffIsNoVerdictTwoAre) {
  std::string ref = reference();
  auto timed = [&](const std::string& fault) {
    EXPECT_EQ(box.call(task_request(matmul, &ref), 30).reply.header.value("status", ""), "ok");
    CallResult c = box.call(compile_request("UPCAST(1,16) THREAD(0,2)", fault), 30);
    EXPECT_EQ(c.reply.header.value("status", ""), "ok") << c.reply.header.dump();
    Message run = run_request(3);
    run.header["cutoff_ms"] =
        20.0; // the matmul runs in microseconds; a loaded machine leaves margin
    CallResult r = box.call(run, 30);
    EXPECT_EQ(r.status, CallStatus::ok) << r.detail;
    return r.reply.header;
  };
  json first = timed("slow_first_run");
  EXPECT_EQ(first.value("status", ""), "ok") << first.dump();
  EXPECT_FALSE(first.value("early_stop", true)) << first.dump();
  ASSERT_EQ(first.at("samples_ms").size(), 3u) << first.dump();
  for (double ms : first.at("samples_ms")) EXPECT_LT(ms, 20.0) << first.dump();
  EXPECT_GE(first.at("check_ms")[0].get<double>(), 50.0) << first.dump();
  json every = timed("slow_runs");
  EXPECT_TRUE(every.value("early_stop", false)) << every.dump();
  ASSERT_EQ(every.at("samples_ms").size(), 1u) << every.dump();
  EXPECT_GE(every.at("samples_ms")[0].get<double>(), 50.0) << every.dump();
}

TEST_F(SandboxTest, FaultsAreClassifiedAndTheNextCandidateStillMeasures) {
  std::string ref = reference();
  DType f32(Scalar::Float32);
  // An out-of-bounds write, far past the output.
  UOpPtr oob =
      sink({store(index(buffer_param(0, f32), UOp::const_int(Scalar::Index, int64_t{1} << 40)),
                  UOp::const_float(f32, 1.0))});
  KernelTask oob_task{"E_oob", 0, print_graph(oob), {{f32, 16}}, 1};
  KernelTask endless = endless_task();

  // A kernel that writes its input (made read-only in the worker) instead of its output.
  UOpPtr into_input = sink({store(index(buffer_param(1, f32), UOp::const_int(Scalar::Index, 0)),
                                  UOp::const_float(f32, 1.0))});
  KernelTask into_input_task{"E_into_input", 0, print_graph(into_input), {{f32, 16}, {f32, 16}}, 1};

  struct Case {
    const char* what;
    CallResult result;
    CallStatus want;
    const char* detail;
  };
  std::vector<Case> cases;
  // Sets the task, compiles (with a planted fault) and runs it once.
  auto attempt = [&](const char* what, const KernelTask& t, const std::string& opts,
                     const std::string& fault, double timeout, CallStatus want,
                     const char* detail) {
    CallResult c = box.call(task_request(t, nullptr), 30);
    if (c.status == CallStatus::ok) c = box.call(compile_request(opts, fault), 30);
    if (c.status == CallStatus::ok) c = box.call(run_request(1), timeout);
    cases.push_back({what, c, want, detail});
  };
  attempt("out-of-bounds write", oob_task, "", "", 30, CallStatus::crashed, "SIGSEGV");
  attempt("a write into an input", into_input_task, "", "", 30, CallStatus::crashed, "SIGSEGV");
  attempt("a write just past the output", matmul, "UPCAST(1,8)", "write_out_of_bounds", 30,
          CallStatus::crashed, "SIGSEGV");
  attempt("endless loop", endless, "", "", 1.0, CallStatus::timeout, "no answer within 1.0 s");
  attempt("abort while compiling", matmul, "UPCAST(1,8)", "abort_in_compile", 30,
          CallStatus::crashed, "SIGABRT");
  attempt("opening a file", matmul, "", "open_file", 30, CallStatus::violation, "SIGSYS");
  for (const Case& c : cases) {
    EXPECT_EQ(c.result.status, c.want)
        << c.what << ": " << to_string(c.result.status) << " " << c.result.detail;
    EXPECT_NE(c.result.detail.find(c.detail), std::string::npos)
        << c.what << ": " << c.result.detail;
  }
  // Six faults, six fresh workers; and the next candidate measures and checks out.
  json h = measure(box, matmul, "UPCAST(1,16) THREAD(0,2)", ref);
  EXPECT_EQ(h.value("status", ""), "ok") << h.dump();
  EXPECT_EQ(box.restarts(), 6);
}

TEST_F(SandboxTest, HostileRepliesAreRefusedAndCostTheWorkerItsLife) {
  struct Case {
    const char* fault;
    bool at_compile;     // the compile reply is the hostile one; else the run's
    bool return_outputs; // the run is a reference run
    const char* detail;
  };
  const Case cases[] = {
      {"reply_bad_hash", true, false, "code_hash is not 1 to 16 hex digits"},
      {"reply_wrong_type", true, false, "compile_ms is not a number"},
      {"reply_negative_code_bytes", true, false, "code_bytes is not a non-negative integer"},
      // A worker that exits once it has replied is refused for its reply, not its exit.
      {"reply_bad_hash_then_exit", true, false, "code_hash is not 1 to 16 hex digits"},
      {"reply_negative_samples", false, false, "samples_ms[0] is -5"},
      {"reply_many_samples", false, false, "its framing is over the limits"},
      {"reply_no_check_ms", false, true, "check_ms has 0 entries for 3 checks"},
      {"reply_short_payload", false, true, "a payload of 1 bytes where 24576 are expected"},
      {"reply_huge_payload", false, true, "its framing is over the limits"},
  };
  int restarts = 0;
  for (const Case& c : cases) {
    ASSERT_EQ(box.call(task_request(matmul, nullptr), 30).status, CallStatus::ok);
    CallResult r = box.call(compile_request("", c.fault), 30);
    if (!c.at_compile) {
      ASSERT_EQ(r.status, CallStatus::ok) << c.fault << ": " << r.detail;
      r = box.call(run_request(c.return_outputs ? 0 : 3, c.return_outputs), 30,
                   c.return_outputs ? 3 * output_bytes(matmul) : 0);
    }
    EXPECT_EQ(r.status, CallStatus::malformed) << c.fault << ": " << to_string(r.status);
    EXPECT_NE(r.detail.find(c.detail), std::string::npos) << c.fault << ": " << r.detail;
    EXPECT_FALSE(box.running()) << c.fault; // killed: whatever else it holds is not trusted
    EXPECT_EQ(box.restarts(), restarts) << c.fault;
    ++restarts; // the next call starts a fresh worker
  }
  // And a fresh worker measures the next candidate as usual.
  std::string ref = reference();
  json h = measure(box, matmul, "UPCAST(1,8)", ref);
  EXPECT_EQ(h.value("status", ""), "ok") << h.dump();
}

TEST(SandboxLimits, ACandidatePastItsCpuTimeIsStoppedByTheLimit) {
  SandboxOptions o = test_options();
  o.cpu_seconds = 1;
  Sandbox box(o);
  KernelTask t = endless_task();
  ASSERT_EQ(box.call(task_request(t, nullptr), 30).status, CallStatus::ok);
  ASSERT_EQ(box.call(compile_request(""), 30).status, CallStatus::ok);
  CallResult c = box.call(run_request(1), 60); // the wall clock would wait
  EXPECT_EQ(c.status, CallStatus::limit) << to_string(c.status) << " " << c.detail;
  EXPECT_NE(c.detail.find("SIGXCPU"), std::string::npos) << c.detail;
}

// A worker near its lifetime CPU limit answers, says it is retiring and ends; the next call
// starts a fresh one, which is not counted as a restart. (Here its life, shorter than one
// request's budget, ends after each answer.)
TEST(SandboxLimits, AWorkerRetiresAtItsLifetimeLimitAndAFreshOneTakesOver) {
  SandboxOptions o = test_options();
  o.cpu_seconds = 2;
  o.lifetime_cpu_seconds = 1;
  Sandbox box(o);
  KernelTask t = task_of(Tensor::rand({64}, 1) + 1.0f);
  for (int i = 1; i <= 3; ++i) {
    CallResult c = box.call(task_request(t, nullptr), 30);
    ASSERT_EQ(c.status, CallStatus::ok) << c.detail;
    EXPECT_EQ(c.reply.header.value("status", ""), "ok");
    EXPECT_TRUE(c.reply.header.value("retiring", false));
    EXPECT_FALSE(box.running());
    EXPECT_EQ(box.retirements(), i);
    EXPECT_EQ(box.restarts(), 0);
  }
}

TEST_F(SandboxTest, MalformedRequestsAreAnsweredNotFatal) {
  Message m = task_request(matmul, nullptr);
  m.header["ast"] = "%0 = MULL index";
  CallResult r = box.call(m, 30);
  ASSERT_EQ(r.status, CallStatus::ok);
  EXPECT_EQ(r.reply.header.value("status", ""), "bad_request");
  EXPECT_NE(r.reply.header.value("error", "").find("unknown op 'MULL'"), std::string::npos);
  CallResult c = box.call(compile_request(""), 30);
  EXPECT_EQ(c.reply.header.value("status", ""), "bad_request");
  EXPECT_EQ(c.reply.header.value("error", ""), "compile before a task");
  ASSERT_EQ(box.call(task_request(matmul, nullptr), 30).status, CallStatus::ok);
  CallResult o = box.call(compile_request("UPCAST(7,8)"), 30);
  EXPECT_EQ(o.reply.header.value("status", ""), "rejected");
  EXPECT_NE(o.reply.header.value("error", "").find("axis 7 is out of range"), std::string::npos);
  EXPECT_EQ(box.restarts(), 0);
}

// A kernel over symbolic variables: a check's or a timed run's values must name each of its
// variables, within its range (a value past it would index past the buffers).
TEST_F(SandboxTest, ValuesOutsideAVariablesRangeAreRefused) {
  KernelTask t = test_support::symbolic_matmul_task();
  auto answer = [&](const nlohmann::json& check_vars, const nlohmann::json& time_at) {
    Message m = task_request(t, nullptr);
    for (auto& c : m.header["checks"]) c["vars"] = check_vars;
    m.header["time_at"] = time_at;
    CallResult r = box.call(m, 30);
    EXPECT_EQ(r.status, CallStatus::ok);
    return r.reply.header.value("status", "") + ": " + r.reply.header.value("error", "");
  };
  EXPECT_EQ(answer({{"seq", 96}}, {{{"seq", 12}}}), "ok: ");
  EXPECT_EQ(answer({{"seq", 97}}, {{{"seq", 12}}}),
            "bad_request: check vars: seq=97 is outside [1, 96]");
  EXPECT_EQ(answer({{"seq", 1}}, {{{"seq", 0}}}), "bad_request: time_at: seq=0 is outside [1, 96]");
  EXPECT_EQ(answer(nlohmann::json::object(), {{{"seq", 12}}}),
            "bad_request: check vars: {} has no integer value for seq");
  EXPECT_EQ(
      answer({{"seq", 5}, {"len", 2}}, {{{"seq", 12}}}),
      "bad_request: check vars: {\"len\":2,\"seq\":5} names a variable the kernel doesn't have");
  EXPECT_EQ(box.restarts(), 0);
}

// Every forbidden action, each from inside a real shut-in worker (probe.hpp): each must kill
// the worker (the filter) or come back refused. An fd the tuner leaves open without CLOEXEC
// must not reach the worker. CI runs this as root and, through setpriv, as nobody.
TEST(SandboxProbe, EveryForbiddenActionIsRefused) {
  int leaked = ::open("/dev/null", O_WRONLY); // no O_CLOEXEC: posix_spawn would pass it on
  ASSERT_GE(leaked, 3);
  Sandbox box(test_options());
  KernelTask t = task_of(Tensor::rand({64}, 1) + 1.0f);
  std::vector<std::string> holes;
  for (const std::string& action : probe_actions()) {
    ASSERT_EQ(box.call(task_request(t, nullptr), 30).status, CallStatus::ok) << action;
    CallResult c = box.call(compile_request("", "probe:" + action), 30);
    ASSERT_EQ(c.status, CallStatus::ok) << action << ": " << c.detail;
    CallResult r = box.call(run_request(1), 30);
    std::string result =
        r.status == CallStatus::violation
            ? "killed (" + r.detail + ")"
            : r.reply.header.value("probe", json::object()).value("result", to_string(r.status));
    std::printf("  %-22s %s\n", action.c_str(), result.c_str());
    EXPECT_TRUE(r.status == CallStatus::violation || result.starts_with("refused"))
        << action << ": " << result;
    if (result == "succeeded") holes.push_back(action);
  }
  EXPECT_TRUE(holes.empty()) << holes.size() << " forbidden actions succeeded";
  ::close(leaked);
}

// The layers a worker reports: the filter, the limits and the dropped privileges always; the
// namespaces and the empty root where the kernel allows them (named when it does not).
TEST(SandboxProbe, TheWorkerReportsItsLayers) {
  Sandbox box(test_options());
  Message m;
  m.header = {{"op", "confinement"}};
  CallResult r = box.call(m, 30);
  ASSERT_EQ(r.status, CallStatus::ok) << r.detail;
  auto layers = r.reply.header.value("layers", std::vector<std::string>{});
  auto missing = r.reply.header.value("missing", std::vector<std::string>{});
  for (const std::string& l : layers) std::printf("  layer:   %s\n", l.c_str());
  for (const std::string& l : missing) std::printf("  missing: %s\n", l.c_str());
  auto has = [&](const std::string& l) {
    return std::find(layers.begin(), layers.end(), l) != layers.end();
  };
  EXPECT_TRUE(has("allow-list seccomp filter"));
  EXPECT_TRUE(has("no capabilities"));
  EXPECT_TRUE(has("inherited fds closed"));
  EXPECT_TRUE(has("no_new_privs, not dumpable"));
  if (::geteuid() == 0) EXPECT_TRUE(has("uid and gid nobody"));
  EXPECT_TRUE(has("hard limits (core, file size, memlock, fds, address space, CPU)"));
  // The namespaces and the empty root: in place, or named with the kernel's reason.
  for (const char* optional : {"namespaces", "empty"}) {
    auto named = [&](const std::vector<std::string>& v) {
      return std::any_of(v.begin(), v.end(), [&](const std::string& l) {
        return l.find(optional) != std::string::npos;
      });
    };
    EXPECT_TRUE(named(layers) || named(missing)) << optional;
  }
}

// libomp registers each process in /dev/shm; a worker, however it ends (answering, crashing,
// killed for a hang), leaves nothing there.
TEST(SandboxProbe, WorkersLeaveNothingInDevShm) {
  std::set<pid_t> workers;
  {
    Sandbox box(test_options());
    auto call = [&](const Message& m, double timeout) {
      CallResult r = box.call(m, timeout);
      if (box.running()) workers.insert(box.pid());
      return r;
    };
    KernelTask t = task_of(Tensor::rand({64}, 1) + 1.0f);
    KernelTask endless = endless_task();
    for (const char* fault : {"", "write_out_of_bounds", "open_file"}) {
      ASSERT_EQ(call(task_request(t, nullptr), 30).status, CallStatus::ok);
      ASSERT_EQ(call(compile_request("", fault), 30).status, CallStatus::ok);
      call(run_request(1), 30);
    }
    ASSERT_EQ(call(task_request(endless, nullptr), 30).status, CallStatus::ok);
    ASSERT_EQ(call(compile_request(""), 30).status, CallStatus::ok);
    EXPECT_EQ(call(run_request(1), 0.5).status, CallStatus::timeout);
    ASSERT_EQ(call(task_request(t, nullptr), 30).status, CallStatus::ok);
  }                              // and the last one ends when its pipes close
  EXPECT_EQ(workers.size(), 4u); // the first, and one after each crash, violation and hang
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec))
    for (pid_t pid : workers)
      EXPECT_FALSE(e.path().filename().string().starts_with("__KMP_REGISTERED_LIB_" +
                                                            std::to_string(pid) + "_"))
          << "left behind: " << e.path();
}

TEST(SandboxStart, AMissingWorkerIsAClearError) {
  SandboxOptions o;
  o.worker = "/nonexistent/beamlab-worker";
  Sandbox box(o);
  try {
    box.call(Message{}, 1);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start the worker '/nonexistent/beamlab-worker'"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace beamlab::tuner

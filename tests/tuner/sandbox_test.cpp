// The sandboxed worker, end to end: real beamlab-worker processes. A candidate compiles, runs,
// and is checked against the unoptimized kernel's output; planted faults (an out-of-bounds
// write, an endless loop, an abort while compiling, a denied syscall) each get their status,
// and the sandbox restarts and measures the next candidate correctly.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/ir/kernel_ops.hpp"
#include "tuner/check.hpp"
#include "tuner/sandbox.hpp"

namespace beamlab::tuner {
namespace {

using nlohmann::json;

KernelTask task_of(const Tensor& t) { return kernel_task(t.schedule().items.at(0)); }

json buffers_of(const KernelTask& t) {
  json b = json::array();
  for (const KernelBufferSpec& s : t.buffers)
    b.push_back({{"dtype", s.dtype.str()}, {"count", s.count}});
  return b;
}

Message compile_request(const KernelTask& t, const std::string& opts,
                        const std::string& fault = "") {
  Message m;
  m.header = {{"op", "compile"}, {"ast", t.ast}, {"name", t.name}, {"opts", opts}};
  if (!fault.empty()) m.header["fault"] = fault;
  return m;
}

const json kChecks = json::array({{{"kind", "random"}, {"seed", 1}},
                                  {{"kind", "small_ints"}, {"seed", 2}},
                                  {{"kind", "special"}, {"seed", 3}}});

// The kernel's buffers and checks, with the expected outputs (or none: no comparison).
Message task_request(const KernelTask& t, const std::string* expected) {
  Message m;
  m.header = {{"op", "task"},
              {"buffers", buffers_of(t)},
              {"checks", kChecks},
              {"reduce_length", t.reduce_length}};
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
  UOpPtr r = kernel_range(int64_t{1} << 50, 0, "reduce");
  UOpPtr zero = UOp::const_int(Scalar::Index, 0);
  UOpPtr sum = reduce_over(load(index(buffer_param(1, f32), zero), f32), {r}, Op::Add);
  UOpPtr endless = sink({store(index(buffer_param(0, f32), zero), sum)});
  return {"r_endless", 0, print_graph(endless), {{f32, 1}, {f32, 1}}, 1};
}

SandboxOptions test_options() {
  SandboxOptions o;
  o.threads = 2;
  o.allow_faults = true;
  return o;
}

// Compiles `opts` and runs it against `expected`; the worker's reply.
json measure(Sandbox& box, const KernelTask& t, const std::string& opts,
             const std::string& expected) {
  CallResult c = box.call(compile_request(t, opts), 30);
  EXPECT_EQ(c.status, CallStatus::ok) << c.detail;
  EXPECT_EQ(c.reply.header.value("status", ""), "ok") << c.reply.header.dump();
  EXPECT_EQ(box.call(task_request(t, &expected), 30).reply.header.value("status", ""), "ok");
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
    EXPECT_EQ(box.call(compile_request(matmul, ""), 30).reply.header.value("status", ""), "ok");
    EXPECT_EQ(box.call(task_request(matmul, nullptr), 30).status, CallStatus::ok);
    CallResult r = box.call(run_request(0, true), 30);
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
  CallResult a = box.call(compile_request(matmul, ""), 30);
  CallResult b = box.call(compile_request(matmul, "UPCAST(1,4)"), 30);
  EXPECT_NE(a.reply.header.at("code_hash"), b.reply.header.at("code_hash"));
  EXPECT_GT(b.reply.header.value("compile_ms", 0.0), 0.0);
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
  UOpPtr r = kernel_range(32, 0, "loop");
  UOpPtr half =
      sink({store(index(buffer_param(0, f32), r), load(index(buffer_param(1, f32), r), f32))});
  KernelTask t{"E_half", 0, print_graph(half), {{f32, 64}, {f32, 64}}, 1};
  ASSERT_EQ(box.call(compile_request(t, ""), 30).reply.header.value("status", ""), "ok");
  ASSERT_EQ(box.call(task_request(t, nullptr), 30).status, CallStatus::ok);
  std::string out = box.call(run_request(0, true), 30).reply.payload;
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
  // Compiles (with a planted fault), sets the task and runs it once.
  auto attempt = [&](const char* what, const KernelTask& t, const std::string& opts,
                     const std::string& fault, double timeout, CallStatus want,
                     const char* detail) {
    CallResult c = box.call(compile_request(t, opts, fault), 30);
    if (c.status == CallStatus::ok) c = box.call(task_request(t, nullptr), 30);
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

TEST(SandboxLimits, ACandidatePastItsCpuTimeIsStoppedByTheLimit) {
  SandboxOptions o = test_options();
  o.cpu_seconds = 1;
  Sandbox box(o);
  KernelTask t = endless_task();
  ASSERT_EQ(box.call(compile_request(t, ""), 30).status, CallStatus::ok);
  ASSERT_EQ(box.call(task_request(t, nullptr), 30).status, CallStatus::ok);
  CallResult c = box.call(run_request(1), 60); // the wall clock would wait
  EXPECT_EQ(c.status, CallStatus::limit) << to_string(c.status) << " " << c.detail;
  EXPECT_NE(c.detail.find("SIGXCPU"), std::string::npos) << c.detail;
}

TEST_F(SandboxTest, MalformedRequestsAreAnsweredNotFatal) {
  Message m;
  m.header = {{"op", "compile"}, {"ast", "%0 = MULL index"}, {"opts", ""}};
  CallResult r = box.call(m, 30);
  ASSERT_EQ(r.status, CallStatus::ok);
  EXPECT_EQ(r.reply.header.value("status", ""), "bad_request");
  EXPECT_NE(r.reply.header.value("error", "").find("unknown op 'MULL'"), std::string::npos);
  CallResult o = box.call(compile_request(matmul, "UPCAST(7,8)"), 30);
  EXPECT_EQ(o.reply.header.value("status", ""), "rejected");
  EXPECT_NE(o.reply.header.value("error", "").find("axis 7 is out of range"), std::string::npos);
  EXPECT_EQ(box.restarts(), 0);
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

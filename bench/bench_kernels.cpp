// The engine's kernels against references measured in the same run: a STREAM-style triad
// (memory bandwidth, through the same OpenMP launcher) and OpenBLAS sgemm (FLOP/s). Each
// benchmark runs a Tensor program with the heuristic Opts (/heuristic) or with the Opts a
// BEAM search of width 4 found first (/beam4; the search runs before timing, once per kernel
// in the process). Counters: gbps or gflops, ratio (over the reference measured just before),
// compile_ms; the label is the Opts. BM_Search times the search itself (BEAM 2 on matmul).
// BM_Model runs the real networks scripts/export_models.py writes, whole.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <vector>

#include <cblas.h>

#include <beamlab/beamlab.hpp>

#include "db/database.hpp"
#include "engine/runtime/launch.hpp"
#include "tuner/batch/corpus.hpp"
#include "tuner/batch/policy.hpp"

namespace beamlab {
namespace {

constexpr int64_t kElements = int64_t{1} << 24; // 16M float32: 64 MiB a buffer

// The triad a[i] = b[i] + 3 * c[i], compiled by the host compiler, launched like a kernel.
void triad(void* const* bufs, const int64_t*, int64_t begin, int64_t end) {
  auto* __restrict a = static_cast<float*>(bufs[0]);
  const auto* __restrict b = static_cast<const float*>(bufs[1]);
  const auto* __restrict c = static_cast<const float*>(bufs[2]);
  for (int64_t i = begin; i < end; ++i) a[i] = b[i] + 3.0f * c[i];
}

struct Buffers {
  Buffer out{kElements * 4}, a{kElements * 4}, b{kElements * 4}, c{kElements * 4};
};

Buffers& buffers() {
  static Buffers bufs;
  return bufs;
}

// The triad's bandwidth over 10 calls (after a warm-up), measured now: the reference.
double triad_gbps() {
  Buffers& m = buffers();
  void* ptrs[] = {m.out.data(), m.a.data(), m.b.data()};
  launch(triad, ptrs, nullptr, kElements);
  constexpr int kRuns = 10;
  auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < kRuns; ++rep) launch(triad, ptrs, nullptr, kElements);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kRuns;
  return 3.0 * 4 * kElements / s / 1e9;
}

void BM_Triad(benchmark::State& state) {
  Buffers& m = buffers();
  void* ptrs[] = {m.out.data(), m.a.data(), m.b.data()};
  for (auto _ : state) launch(triad, ptrs, nullptr, kElements);
  state.counters["gbps"] =
      benchmark::Counter(3.0 * 4 * kElements / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Triad)->Unit(benchmark::kMillisecond)->UseRealTime();

// The engine end to end: a Tensor program scheduled, optimized with the heuristic Opts,
// compiled and run as an ExecutionPlan; each benchmark iteration runs the whole plan.
struct Measured {
  double seconds = 0; // mean per plan run
  double compile_ms = 0;
  std::string opts;
};

// One BEAM policy for the process: each kernel is searched once, on its first realize.
const OptPolicy* policy(bool tuned) {
  if (!tuned) return nullptr;
  static tuner::BeamPolicy beam([] {
    tuner::SearchSettings s;
    s.beam = 4;
    return s;
  }());
  return &beam;
}

Measured run_plan(benchmark::State& state, const Program& program, const OptPolicy* policy) {
  ExecutionPlan plan =
      ExecutionPlan::prepare(program.schedule(), program.inputs(), {.policy = policy});
  Measured m;
  for (const PlannedKernel& k : plan.kernels()) {
    for (const auto& stage : k.stages) m.compile_ms += stage->kernel.compile_ms;
    m.opts += (m.opts.empty() ? "" : " | ") + to_string(k.opts);
  }
  plan.run(); // warm-up: first touch of the outputs
  auto t0 = std::chrono::steady_clock::now();
  int64_t runs = 0;
  for (auto _ : state) {
    plan.run();
    ++runs;
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
              static_cast<double>(std::max<int64_t>(runs, 1));
  state.SetLabel(m.opts);
  state.counters["compile_ms"] = m.compile_ms;
  return m;
}

Measured run_plan(benchmark::State& state, const Tensor& out, bool tuned) {
  Program p;
  p.outputs.push_back(out);
  return run_plan(state, p, policy(tuned));
}

void report_bandwidth(benchmark::State& state, double bytes, const Measured& m) {
  double gbps = bytes / m.seconds / 1e9;
  state.counters["gbps"] = gbps;
  state.counters["ratio"] = gbps / triad_gbps();
}

// out = a * b + c over 16M float32: 16 bytes an element.
void BM_Elementwise(benchmark::State& state, bool tuned) {
  Tensor a = Tensor::rand({kElements}, 1), b = Tensor::rand({kElements}, 2),
         c = Tensor::rand({kElements}, 3);
  Tensor out = a * b + c;
  report_bandwidth(state, 16.0 * kElements, run_plan(state, out, tuned));
}
BENCHMARK_CAPTURE(BM_Elementwise, heuristic, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Elementwise, beam4, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// The sum of 16M float32: 4 bytes an element.
void BM_Sum(benchmark::State& state, bool tuned) {
  Tensor out = Tensor::rand({kElements}, 1).sum();
  report_bandwidth(state, 4.0 * kElements, run_plan(state, out, tuned));
}
BENCHMARK_CAPTURE(BM_Sum, heuristic, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Sum, beam4, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// Softmax over the rows of 4096 x 1024 float32: read once, written once.
void BM_Softmax(benchmark::State& state, bool tuned) {
  Tensor out = Tensor::randn({4096, 1024}, 1).softmax(-1);
  report_bandwidth(state, 8.0 * 4096 * 1024, run_plan(state, out, tuned));
}
BENCHMARK_CAPTURE(BM_Softmax, heuristic, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Softmax, beam4, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// OpenBLAS sgemm's GFLOP/s for row-major (m x k) @ (k x n), measured now (median call): the
// reference.
double sgemm_gflops(int64_t m, int64_t n, int64_t k) {
  Buffer C(m * n * 4), A(m * k * 4), B(k * n * 4);
  for (float& x : A.as<float>()) x = 0.5f;
  for (float& x : B.as<float>()) x = 0.25f;
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, A.as<float>().data(), static_cast<int>(k),
                B.as<float>().data(), static_cast<int>(n), 0.0f, C.as<float>().data(),
                static_cast<int>(n));
  };
  call();
  std::vector<double> times; // seconds per call; the median resists a noisy neighbour
  double total = 0;
  while (times.size() < 5 || total < 0.2) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    total += times.back();
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2),
                   times.end());
  return 2.0 * static_cast<double>(m * n * k) / times[times.size() / 2] / 1e9;
}

void report_flops(benchmark::State& state, double flops, const Measured& m, double reference) {
  double gflops = flops / m.seconds / 1e9;
  state.counters["gflops"] = gflops;
  state.counters["blas_gflops"] = reference;
  state.counters["ratio"] = gflops / reference;
}

void BM_Sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  double g = 0;
  for (auto _ : state) g = sgemm_gflops(n, n, n);
  state.counters["gflops"] = g;
}
BENCHMARK(BM_Sgemm)
    ->Arg(512)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

// C = A @ B, float32 n x n x n, against OpenBLAS sgemm of the same size.
void BM_Matmul(benchmark::State& state, bool tuned) {
  const int64_t n = state.range(0);
  Tensor out = Tensor::rand({n, n}, 1).matmul(Tensor::rand({n, n}, 2));
  double flops = 2.0 * static_cast<double>(n * n * n);
  report_flops(state, flops, run_plan(state, out, tuned), sgemm_gflops(n, n, n));
}
BENCHMARK_CAPTURE(BM_Matmul, heuristic, false)
    ->Arg(512)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, beam4, true)
    ->Arg(512)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// conv2d 1x64x56x56, 64 filters of 3x3, padding 1, against sgemm at the same im2col shape
// (64 x 3136 x 576).
void BM_Conv2d(benchmark::State& state, bool tuned) {
  Tensor x = Tensor::rand({1, 64, 56, 56}, 1), w = Tensor::rand({64, 64, 3, 3}, 2);
  Tensor out = x.conv2d(w, std::nullopt, 1, 1);
  double flops = 2.0 * 64 * 56 * 56 * 64 * 9;
  report_flops(state, flops, run_plan(state, out, tuned), sgemm_gflops(64, 56 * 56, 64 * 9));
}
BENCHMARK_CAPTURE(BM_Conv2d, heuristic, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv2d, beam4, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// A real network at batch 1, one forward pass an iteration, with the heuristic's plans or the
// tuning cache's (/cache: the default database, e.g. after `beamlab tune corpora/models.json`).
// The models come from scripts/export_models.py, in BEAMLAB_MODELS (default corpora/models);
// a missing one is skipped with the command that makes it. Not in `beamlab bench`'s default
// suite (a few seconds each); its PyTorch reference is the export script's --latency.
void BM_Model(benchmark::State& state, const char* name, bool cached) {
  const char* dir = std::getenv("BEAMLAB_MODELS");
  std::string path = std::string(dir ? dir : "corpora/models") + "/" + name + "/model.onnx";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError((path + " is missing: /usr/bin/python3 scripts/export_models.py " +
                         (dir ? dir : "corpora/models"))
                            .c_str());
    return;
  }
  Program p = tuner::build_entry(tuner::model_entry(path, {}));
  HeuristicPolicy heuristic;
  std::unique_ptr<tuner::CachePolicy> cache;
  if (cached)
    cache = std::make_unique<tuner::CachePolicy>(db::Database::default_path(),
                                                 tuner::CacheMode::read_only, heuristic);
  Measured m = run_plan(state, p, cache ? static_cast<const OptPolicy*>(cache.get()) : &heuristic);
  state.SetLabel(""); // a model's Opts, kernel by kernel, are `beamlab run MODEL`'s table
  state.counters["ms"] = m.seconds * 1e3;
  state.counters["kernels"] = static_cast<double>(p.schedule().items.size());
  if (cache) state.counters["cache_hits"] = cache->hits();
}
[[maybe_unused]] const bool model_benchmarks = [] {
  for (const char* name : {"resnet18", "mobilenet_v2", "bert_layer"})
    for (bool cached : {false, true})
      benchmark::RegisterBenchmark(
          (std::string("BM_Model/") + name + (cached ? "/cache" : "/heuristic")).c_str(), BM_Model,
          name, cached)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  return true;
}();

// The search itself: BEAM 2 on matmul n x n x n in a pool of one sandbox per core, from
// nothing (a fresh pool, no cache). Counters: the search's wall time, candidates and their
// rate, and where the time went (the reference, compiling summed over sandboxes, timing).
void BM_Search(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor out = Tensor::rand({n, n}, 1).matmul(Tensor::rand({n, n}, 2));
  KernelTask task = kernel_task(out.schedule().items.at(0));
  tuner::SearchSettings s;
  s.beam = 2;
  for (auto _ : state) {
    tuner::PoolOptions o;
    o.sandbox.threads = default_threads();
    tuner::WorkerPool pool(o);
    auto r = tuner::tune_kernel(task, pool, s);
    if (!r) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    state.counters["wall_s"] = r->wall_s;
    state.counters["candidates"] = static_cast<double>(r->candidates.size());
    state.counters["cand_per_s"] = r->candidates_per_s();
    state.counters["reference_s"] = r->reference_s;
    state.counters["compile_cpu_s"] = r->compile_s;
    state.counters["timing_s"] = r->timing_s;
    state.counters["speedup"] = r->heuristic_ms / r->winner_ms;
    state.SetLabel(to_string(r->best().opts));
  }
}
BENCHMARK(BM_Search)->Arg(512)->Arg(1024)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

} // namespace
} // namespace beamlab

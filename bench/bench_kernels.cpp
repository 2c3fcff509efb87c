// The engine's kernels against references measured in the same run (bench/references.hpp):
// the machine's limits (every figure's `limit_frac` is its roofline fraction: the share of the
// roof of the memory level its data fits in, or of the FMA peak), oneDNN (matmul, conv2d) and
// OpenBLAS sgemm. Each benchmark runs a Tensor program with the heuristic Opts (/heuristic) or
// with the Opts a BEAM search of width 4 found first (/beam4; the search runs before timing,
// once per kernel in the process). Counters: gbps or gflops, limit_frac, ratio (over oneDNN
// where it has the op), compile_ms; the label is the Opts and the roof that bounds the kernel.
// BM_Limits shows the limits; BM_Search times the search itself (BEAM 2 on matmul). BM_Model
// runs the real networks scripts/export_models.py writes, whole.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>
#include <unordered_map>

#include <vector>

#include <beamlab/beamlab.hpp>

#include "bench/references.hpp"
#include "db/database.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/launch.hpp"
#include "engine/support/statistics.hpp"
#include "tuner/batch/corpus.hpp"
#include "tuner/batch/policy.hpp"

namespace beamlab {
namespace {

constexpr int64_t kElements = int64_t{1} << 24; // 16M float32: 64 MiB a buffer

// The limits as counters: the FMA peaks, and each level's read and triad GB/s.
void BM_Limits(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(bench::limits());
  const MachineLimits& l = bench::limits();
  state.counters["fma_f32_gflops"] = l.fma_f32_gflops;
  state.counters["fma_f64_gflops"] = l.fma_f64_gflops;
  for (const MemoryLevel& m : l.levels) {
    state.counters[m.name + "_read_gbps"] = m.read_gbps;
    state.counters[m.name + "_triad_gbps"] = m.triad_gbps;
  }
  state.SetLabel(describe(l));
}
BENCHMARK(BM_Limits)->Iterations(1);

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

Measured run_plan(benchmark::State& state, const Program& program, const OptPolicy* policy,
                  const std::function<void(ExecutionPlan&, double ms)>& after = {}) {
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
  state.counters["compile_ms"] = m.compile_ms;
  if (after) after(plan, m.seconds * 1e3);
  return m;
}

Measured run_plan(benchmark::State& state, const Tensor& out, bool tuned) {
  Program p;
  p.outputs.push_back(out);
  return run_plan(state, p, policy(tuned));
}

// Counters for a kernel of `bytes` (`written` of them its output) and `flops`: its rate, its
// fraction of the limits; the label: its Opts and the roof that bounds it.
void report(benchmark::State& state, double flops, double bytes, double written,
            const Measured& m) {
  if (flops > 0)
    state.counters["gflops"] = flops / m.seconds / 1e9;
  else
    state.counters["gbps"] = bytes / m.seconds / 1e9;
  state.counters["limit_frac"] = bench::limit_fraction(flops, bytes, written, m.seconds);
  state.SetLabel(m.opts + " · " + bench::roof_bound(flops, bytes, written, m.seconds));
}

// out = a * b + c over 16M float32: 16 bytes an element.
void BM_Elementwise(benchmark::State& state, bool tuned) {
  Tensor a = Tensor::rand({kElements}, 1), b = Tensor::rand({kElements}, 2),
         c = Tensor::rand({kElements}, 3);
  Tensor out = a * b + c;
  report(state, 0, 16.0 * kElements, 4.0 * kElements, run_plan(state, out, tuned));
}
BENCHMARK_CAPTURE(BM_Elementwise, heuristic, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Elementwise, beam4, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// The sum of 16M float32: 4 bytes an element.
void BM_Sum(benchmark::State& state, bool tuned) {
  Tensor out = Tensor::rand({kElements}, 1).sum();
  report(state, 0, 4.0 * kElements, 4, run_plan(state, out, tuned));
}
BENCHMARK_CAPTURE(BM_Sum, heuristic, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Sum, beam4, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// Softmax over the rows of 4096 x 1024 float32: read once, written once.
void BM_Softmax(benchmark::State& state, bool tuned) {
  Tensor out = Tensor::randn({4096, 1024}, 1).softmax(-1);
  report(state, 0, 8.0 * 4096 * 1024, 4.0 * 4096 * 1024, run_plan(state, out, tuned));
}
BENCHMARK_CAPTURE(BM_Softmax, heuristic, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Softmax, beam4, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// A compute-bound kernel's counters, with oneDNN's figure as the reference (ratio).
void report_flops(benchmark::State& state, double flops, double bytes, double written,
                  const Measured& m, double onednn) {
  report(state, flops, bytes, written, m);
  state.counters["onednn_gflops"] = onednn;
  state.counters["ratio"] = flops / m.seconds / 1e9 / onednn;
}

// A reference library's n x n x n matmul: its GFLOP/s and fraction of the FMA peak.
void BM_Reference(benchmark::State& state, double (*gflops)(int64_t, int64_t, int64_t),
                  std::string (*label)()) {
  const int64_t n = state.range(0);
  double g = 0;
  for (auto _ : state) g = gflops(n, n, n);
  state.counters["gflops"] = g;
  state.counters["limit_frac"] = g / bench::limits().fma_f32_gflops;
  state.SetLabel(label());
}
std::string onednn_label() { return "oneDNN matmul"; }
std::string openblas_label() { return "OpenBLAS sgemm, core " + bench::openblas_core(); }
// The reference matmuls' sizes, each measured once (a median of its own calls).
void reference_sizes(benchmark::internal::Benchmark* b) {
  b->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
}
BENCHMARK_CAPTURE(BM_Reference, onednn_matmul, bench::onednn_matmul_gflops, onednn_label)
    ->Apply(reference_sizes);
BENCHMARK_CAPTURE(BM_Reference, openblas_sgemm, bench::openblas_sgemm_gflops, openblas_label)
    ->Apply(reference_sizes);

// C = A @ B, float32 n x n x n, against oneDNN's matmul of the same size.
void BM_Matmul(benchmark::State& state, bool tuned) {
  const int64_t n = state.range(0);
  Tensor out = Tensor::rand({n, n}, 1).matmul(Tensor::rand({n, n}, 2));
  double flops = 2.0 * static_cast<double>(n * n * n), matrix = 4.0 * static_cast<double>(n * n);
  report_flops(state, flops, 3 * matrix, matrix, run_plan(state, out, tuned),
               bench::onednn_matmul_gflops(n, n, n));
}
BENCHMARK_CAPTURE(BM_Matmul, heuristic, false)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, beam4, true)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A weight of `shape`: standard normal values times `scale`, in a buffer marked constant (as a
// model's initializers are; with `constant`), so a plan computes what only they feed once.
Tensor constant_weight(const Shape& shape, uint64_t seed, double scale, bool constant = true) {
  std::vector<float> v = (Tensor::randn(shape, seed) * scale).to_vector<float>();
  auto storage = std::make_shared<Buffer>(v.size() * sizeof(float));
  std::copy(v.begin(), v.end(), storage->as<float>().data());
  if (constant) storage->mark_constant();
  return Tensor::from_storage(std::move(storage), shape, Scalar::Float32);
}

// The GEMMs of the real networks as they run there: activations (m x k) times a constant
// weight stored (n x k) and read transposed (`x @ W.T`, ONNX's Gemm with transB and MatMul
// after a transposed initializer): the BERT layer's projections at sequence 128 (each must
// reach 0.8 of the FMA peak, the target: limit_frac) and a batch-1 classifier (m = 1, bound by
// reading its weights). oneDNN's matmul of the same size, its weights packed as it prefers, is
// `ratio`.
struct GemmShape {
  const char* name;
  int64_t m, n, k;
};
constexpr GemmShape kNetworkGemms[] = {
    {"bert_768x768", 128, 768, 768},
    {"bert_up_3072x768", 128, 3072, 768},
    {"bert_down_768x3072", 128, 768, 3072},
    {"classifier_1000x1280", 1, 1000, 1280},
};

void BM_NetworkGemm(benchmark::State& state, const GemmShape& g, bool tuned) {
  // The weight is a model's: constant, so a plan packs it once, before its first run.
  Tensor w = constant_weight({g.n, g.k}, 2, 1 / std::sqrt(static_cast<double>(g.k)));
  Tensor out = Tensor::rand({g.m, g.k}, 1).matmul(w.transpose());
  double flops = 2.0 * static_cast<double>(g.m * g.n * g.k);
  double bytes = 4.0 * static_cast<double>(g.m * g.k + g.n * g.k + g.m * g.n),
         written = 4.0 * static_cast<double>(g.m * g.n);
  report_flops(state, flops, bytes, written, run_plan(state, out, tuned),
               bench::onednn_matmul_gflops(g.m, g.n, g.k));
}

[[maybe_unused]] const bool network_gemm_benchmarks = [] {
  for (const GemmShape& g : kNetworkGemms)
    for (bool tuned : {false, true})
      benchmark::RegisterBenchmark(
          (std::string("BM_NetworkGemm/") + g.name + (tuned ? "/beam4" : "/heuristic")).c_str(),
          BM_NetworkGemm, g, tuned)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  return true;
}();

// Batch-1 convolutions of the real networks: ResNet-18's 3x3 at 56 and 28 wide and its
// stride-2 downsampling, MobileNetV2's 1x1 expansion and 3x3 depthwise.
constexpr bench::ConvShape kConvs[] = {
    {"resnet_3x3", 64, 56, 64, 3, 1, 1, 1},       {"resnet_3x3_28", 128, 28, 128, 3, 1, 1, 1},
    {"resnet_3x3_s2", 64, 56, 128, 3, 2, 1, 1},   {"mobilenet_1x1", 24, 56, 144, 1, 1, 0, 1},
    {"mobilenet_dw", 144, 56, 144, 3, 1, 1, 144},
};

void BM_OneDnnConv2d(benchmark::State& state, const bench::ConvShape& conv, bool blocked) {
  double g = 0;
  for (auto _ : state) g = bench::onednn_conv2d_gflops(conv, blocked);
  state.counters["gflops"] = g;
  state.counters["limit_frac"] = g / bench::limits().fma_f32_gflops;
}

// The conv2d in beamlab (NCHW), against oneDNN's blocked layout (its best).
void BM_Conv2d(benchmark::State& state, const bench::ConvShape& conv, bool tuned) {
  Tensor x = Tensor::rand({1, conv.c, conv.hw, conv.hw}, 1),
         w = Tensor::rand({conv.cout, conv.c / conv.groups, conv.k, conv.k}, 2);
  Tensor out = x.conv2d(w, std::nullopt, conv.stride, conv.pad, 1, conv.groups);
  double in = 4.0 * static_cast<double>(conv.c * conv.hw * conv.hw),
         act = 4.0 * static_cast<double>(conv.cout * conv.out() * conv.out()),
         weights = 4.0 * static_cast<double>(conv.cout * (conv.c / conv.groups) * conv.k * conv.k);
  report_flops(state, conv.flops(), in + act + weights, act, run_plan(state, out, tuned),
               bench::onednn_conv2d_gflops(conv, true));
}

[[maybe_unused]] const bool conv_benchmarks = [] {
  for (const bench::ConvShape& conv : kConvs) {
    std::string name = conv.name;
    for (bool blocked : {true, false})
      benchmark::RegisterBenchmark(
          ("BM_OneDnnConv2d/" + name + (blocked ? "/blocked" : "/nchw")).c_str(), BM_OneDnnConv2d,
          conv, blocked)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(1);
    for (bool tuned : {false, true})
      benchmark::RegisterBenchmark(
          ("BM_Conv2d/" + name + (tuned ? "/beam4" : "/heuristic")).c_str(), BM_Conv2d, conv, tuned)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  }
  return true;
}();

// A real network at batch 1, one forward pass an iteration, with the heuristic's plans or the
// tuning cache's (/cache: the default database, e.g. after `beamlab tune corpora/models.json`),
// and ONNX Runtime 1.30 on the same model and thread count (/ort, its own runs timed in its
// process: bench/references.hpp). The beamlab rows carry ORT's median as `ort_ms` and their
// ratio to it as `vs_ort` (below 1: faster than ONNX Runtime), and the ratio measured paired,
// the two in turn (`paired_vs_ort`, its range over 9 pairs `paired_lo`-`paired_hi`, ORT's
// median then `paired_ort_ms`): on a machine whose speed drifts, the figure to quote. The models
// come from scripts/export_models.py, in BEAMLAB_MODELS (default corpora/models); a missing model
// or a missing ONNX Runtime is a skipped row with the command that fixes it. Not in `beamlab
// bench`'s default suite (a few seconds each).
std::string model_path(benchmark::State& state, const char* name) {
  const char* dir = std::getenv("BEAMLAB_MODELS");
  std::string path = std::string(dir ? dir : "corpora/models") + "/" + name + "/model.onnx";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError((path + " is missing: /usr/bin/python3 scripts/export_models.py " +
                         (dir ? dir : "corpora/models"))
                            .c_str());
    return "";
  }
  return path;
}

// The plan and ONNX Runtime in turn: `rounds` pairs of blocks of runs (about kBlockMs each),
// each block's median over the other's in the pair, with a pause before each block longer than
// either's threads spin after their last run (OpenMP's KMP_BLOCKTIME: 200 ms), so neither runs
// beside the other's spinning threads. A drift of the machine's speed between pairs cancels in
// each pair's ratio; their median is the figure, their range its spread.
struct PairedRatio {
  double median = 0, lo = 0, hi = 0; ///< the plan's time over ORT's
  double ort_ms = 0;                 ///< ORT's median over its blocks
};

Expected<PairedRatio> paired_with_ort(ExecutionPlan& plan, double plan_ms, bench::OrtSession& ort,
                                      int rounds = 9) {
  constexpr double kBlockMs = 150;
  const int runs = std::clamp(static_cast<int>(kBlockMs / std::max(plan_ms, 1e-3)), 3, 500);
  std::vector<double> ratios, ort_ms;
  for (int r = 0; r < rounds; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    Expected<std::vector<double>> theirs = ort.time_ms(runs);
    if (!theirs) return make_unexpected(theirs.error());
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    std::vector<double> mine;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      plan.run();
      mine.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    ort_ms.push_back(quantile(*theirs, 0.5));
    ratios.push_back(quantile(mine, 0.5) / ort_ms.back());
  }
  return PairedRatio{quantile(ratios, 0.5), *std::min_element(ratios.begin(), ratios.end()),
                     *std::max_element(ratios.begin(), ratios.end()), quantile(ort_ms, 0.5)};
}

void BM_Model(benchmark::State& state, const char* name, bool cached) {
  std::string path = model_path(state, name);
  if (path.empty()) return;
  // ORT first (measured once per process): this process's threads are then asleep.
  Expected<double> ort = bench::ort_median_ms(path, default_threads());
  Program p = tuner::build_entry(tuner::model_entry(path, {}));
  HeuristicPolicy heuristic;
  std::unique_ptr<tuner::CachePolicy> cache;
  if (cached)
    cache = std::make_unique<tuner::CachePolicy>(db::Database::default_path(),
                                                 tuner::CacheMode::read_only, heuristic);
  Expected<PairedRatio> paired = make_unexpected(std::string("no ONNX Runtime"));
  auto pair_up = [&](ExecutionPlan& plan, double ms) {
    if (!ort) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(250)); // before ORT's start-up
    if (auto session = bench::OrtSession::open(path, default_threads()))
      paired = paired_with_ort(plan, ms, **session);
    else
      paired = make_unexpected(session.error());
  };
  Measured m =
      run_plan(state, p, cache ? static_cast<const OptPolicy*>(cache.get()) : &heuristic, pair_up);
  state.SetLabel(""); // a model's Opts, kernel by kernel, are `beamlab run MODEL`'s table
  state.counters["ms"] = m.seconds * 1e3;
  state.counters["kernels"] = static_cast<double>(p.schedule().items.size());
  if (cache) state.counters["cache_hits"] = cache->hits();
  if (ort) {
    state.counters["ort_ms"] = *ort;
    state.counters["vs_ort"] = m.seconds * 1e3 / *ort;
  }
  if (paired) {
    state.counters["paired_vs_ort"] = paired->median;
    state.counters["paired_lo"] = paired->lo;
    state.counters["paired_hi"] = paired->hi;
    state.counters["paired_ort_ms"] = paired->ort_ms;
  } else if (ort) {
    state.SetLabel("no paired ratio: " + paired.error());
  }
}

void BM_OrtModel(benchmark::State& state, const char* name) {
  std::string path = model_path(state, name);
  if (path.empty()) return;
  auto session = bench::OrtSession::open(path, default_threads());
  if (!session) {
    state.SkipWithError(("ONNX Runtime: " + session.error()).c_str());
    return;
  }
  for (auto _ : state) {
    auto ms = (*session)->time_ms(1);
    if (!ms) {
      state.SkipWithError(("ONNX Runtime: " + ms.error()).c_str());
      return;
    }
    state.SetIterationTime(ms->at(0) / 1e3);
  }
  state.SetLabel("ONNX Runtime " + (*session)->version());
}

[[maybe_unused]] const bool model_benchmarks = [] {
  for (const char* name : {"resnet18", "mobilenet_v2", "bert_layer"}) {
    for (bool cached : {false, true})
      benchmark::RegisterBenchmark(
          (std::string("BM_Model/") + name + (cached ? "/cache" : "/heuristic")).c_str(), BM_Model,
          name, cached)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("BM_Model/") + name + "/ort").c_str(), BM_OrtModel,
                                 name)
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
  }
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
  s.confirm_in_process = false; // the search alone, as journaled searches time it
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

// A matmul over a symbolic number of rows (seq in [1, 512]; 768 x 768 weights, as a BERT
// layer's projections), compiled once with the heuristic's plan, run at one length, against the
// fixed-shape program of that length (compiled for it) in the same run: 9 pairs of ~20 ms
// blocks in turn, `vs_fixed` the median of the pairs' ratios (symbolic over fixed) and
// `vs_fixed_lo`-`vs_fixed_hi` their range. The figure symbolic shapes must keep near 1.
void BM_SymbolicMatmul(benchmark::State& state) {
  constexpr int64_t kMaxRows = 512, kDim = 768;
  const int64_t rows = state.range(0);
  const int threads = default_threads();
  auto matmul_item = [&](int64_t m) {
    Schedule s = Tensor::rand({m, kDim}, 1).matmul(Tensor::rand({kDim, kDim}, 2)).schedule();
    return s.items.at(0);
  };
  ScheduleItem widest = matmul_item(kMaxRows);
  std::unordered_map<const UOp*, UOpPtr> to_var;
  for (const UOpPtr& u : toposort(widest.ast))
    if (u->op() == Op::Range && u->src(0)->is_const() && u->src(0)->const_value() == kMaxRows)
      to_var.emplace(u.get(), kernel_range(UOp::variable("seq", 1, kMaxRows),
                                           u->arg().items()[0].as_int(), loop_kind(*u)));
  UOpPtr symbolic_ast = substitute(widest.ast, to_var);
  ScheduleItem fixed = matmul_item(rows);
  std::vector<Opt> symbolic_opts = heuristic_opts(symbolic_ast, threads),
                   fixed_opts = heuristic_opts(fixed.ast, threads);
  auto symbolic = KernelCandidate::build(symbolic_ast, symbolic_opts, "symbolic");
  auto exact = KernelCandidate::build(fixed.ast, fixed_opts, fixed.name);
  if (!symbolic || !exact) {
    state.SkipWithError((!symbolic ? symbolic.error() : exact.error()).message.c_str());
    return;
  }
  std::vector<float> out(kMaxRows * kDim), a(kMaxRows * kDim, 0.5f), w(kDim * kDim, 0.25f);
  std::vector<void*> buffers = {out.data(), a.data(), w.data()};
  const VarValues at = {{"seq", rows}};
  for (auto _ : state) symbolic->run(buffers, threads, at);
  auto block_ms = [&](const KernelCandidate& k, const VarValues& vars, int runs) {
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      k.run(buffers, threads, vars);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return quantile(ms, 0.5);
  };
  const int runs =
      std::clamp(static_cast<int>(20 / std::max(block_ms(*exact, {}, 3), 1e-3)), 3, 2000);
  std::vector<double> ratios;
  for (int pair = 0; pair < 9; ++pair) {
    double theirs = block_ms(*exact, {}, runs);
    ratios.push_back(block_ms(*symbolic, at, runs) / theirs);
  }
  state.counters["gflops"] =
      benchmark::Counter(2.0 * rows * kDim * kDim, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["vs_fixed"] = quantile(ratios, 0.5);
  state.counters["vs_fixed_lo"] = *std::min_element(ratios.begin(), ratios.end());
  state.counters["vs_fixed_hi"] = *std::max_element(ratios.begin(), ratios.end());
  state.SetLabel(to_string(symbolic_opts) + " · fixed: " + to_string(fixed_opts));
}
BENCHMARK(BM_SymbolicMatmul)
    ->Arg(16)
    ->Arg(77)
    ->Arg(128)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A BERT-base encoder layer (post-norm: 12 heads of 64, a 3072-wide GELU MLP) over the rows of
// `x`, (rows, 768), its weights fixed by their seeds.
Tensor bert_layer(const Tensor& x) {
  constexpr int64_t kDim = 768, kHeads = 12, kFf = 3072;
  auto linear = [](const Tensor& in, int64_t n_in, int64_t n_out, uint64_t seed) {
    return in.linear(constant_weight({n_out, n_in}, seed, 1 / std::sqrt(double(n_in))),
                     constant_weight({n_out}, seed + 1, 0.1));
  };
  auto layernorm = [](const Tensor& in, uint64_t seed) {
    return in.layernorm(constant_weight({kDim}, seed, 0.1) + 1,
                        constant_weight({kDim}, seed + 1, 0.1));
  };
  Dim rows = x.shape()[0];
  auto heads = [&](const Tensor& t) {
    return t.reshape({rows, kHeads, kDim / kHeads}).transpose(0, 1);
  };
  Tensor q = heads(linear(x, kDim, kDim, 10)), k = heads(linear(x, kDim, kDim, 12)),
         v = heads(linear(x, kDim, kDim, 14));
  Tensor a = q.scaled_dot_product_attention(k, v).transpose(0, 1).reshape({rows, kDim});
  Tensor h = layernorm(x + linear(a, kDim, kDim, 16), 18);
  return layernorm(h + linear(linear(h, kDim, kFf, 20).gelu(), kFf, kDim, 22), 24);
}

// The BERT encoder layer over a symbolic sequence length (seq in [1, 512]) compiled once, for
// every length the benchmark runs, against the fixed-shape layer compiled for that length, in
// the same run: 7 pairs of ~50 ms blocks of whole-layer runs in turn. `vs_fixed` is the median
// of the pairs' ratios (symbolic over fixed), `vs_fixed_lo`-`vs_fixed_hi` their range;
// `kernels` is the symbolic plan's kernel count, also its number of compiles (one plan serves
// every length).
void BM_SymbolicEncoderLayer(benchmark::State& state) {
  constexpr int64_t kMaxSeq = 512, kDim = 768;
  const int64_t len = state.range(0);
  static Tensor input = constant_weight({kMaxSeq, kDim}, 1, 1, false); // the request's rows
  static Dim seq = Variable{"seq", 1, kMaxSeq};
  static Tensor symbolic_out = bert_layer(input.shrink({{0, seq}, {0, kDim}}));
  static ExecutionPlan symbolic =
      ExecutionPlan::prepare(symbolic_out.schedule(), symbolic_out.inputs());
  Tensor fixed_out = bert_layer(input.slice(0, 0, len));
  ExecutionPlan fixed = ExecutionPlan::prepare(fixed_out.schedule(), fixed_out.inputs());
  const VarValues at = {{"seq", len}};
  for (auto _ : state) symbolic.run(at);
  auto block_ms = [&](const std::function<void()>& run, int runs) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
               .count() /
           runs;
  };
  auto run_fixed = [&] { fixed.run(); };
  auto run_symbolic = [&] { symbolic.run(at); };
  const int runs =
      std::clamp(static_cast<int>(50 / std::max(block_ms(run_fixed, 2), 1e-3)), 2, 500);
  std::vector<double> ratios;
  for (int pair = 0; pair < 7; ++pair) {
    double theirs = block_ms(run_fixed, runs);
    ratios.push_back(block_ms(run_symbolic, runs) / theirs);
  }
  state.counters["kernels"] = static_cast<double>(symbolic.kernels().size());
  state.counters["fixed_kernels"] = static_cast<double>(fixed.kernels().size());
  state.counters["vs_fixed"] = quantile(ratios, 0.5);
  state.counters["vs_fixed_lo"] = *std::min_element(ratios.begin(), ratios.end());
  state.counters["vs_fixed_hi"] = *std::max_element(ratios.begin(), ratios.end());
}
BENCHMARK(BM_SymbolicEncoderLayer)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The BERT layer exported by PyTorch with a symbolic sequence length (scripts/export_models.py's
// bert_layer_dynamic), imported once with seq in [1, 512] and compiled once, run at each length
// against the same model imported with that length fixed (--input input=1xLENx768), both with
// the heuristic's plans, in 7 pairs of ~50 ms blocks (vs_fixed: the median ratio, symbolic over
// fixed; vs_fixed_lo-hi its range); and against ONNX Runtime 1.30 at that length, paired the
// same way as BM_Model (paired_vs_ort). `kernels` is the symbolic plan's kernel count, its
// number of compiles for every length.
void BM_SymbolicModel(benchmark::State& state) {
  const int64_t len = state.range(0);
  std::string path = model_path(state, "bert_layer_dynamic");
  if (path.empty()) return;
  static std::string built; // one symbolic plan per process, for every length
  static std::unique_ptr<ExecutionPlan> symbolic;
  if (built != path) {
    tuner::CorpusEntry e = tuner::model_entry(path, {}, {"seq=1..512"});
    Program p = tuner::build_entry(e);
    symbolic = std::make_unique<ExecutionPlan>(ExecutionPlan::prepare(p.schedule(), p.inputs()));
    built = path;
  }
  std::string shape = "input=1x" + std::to_string(len) + "x768";
  Program fixed_program = tuner::build_entry(tuner::model_entry(path, {shape}));
  ExecutionPlan fixed = ExecutionPlan::prepare(fixed_program.schedule(), fixed_program.inputs());
  symbolic->bind({{"seq", len}});
  auto block_ms = [&](ExecutionPlan& plan, int runs) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) plan.run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
               .count() /
           runs;
  };
  double ms = block_ms(*symbolic, 3); // warm: the timed runs don't pay the first touches
  for (auto _ : state) symbolic->run();
  const int runs = std::clamp(static_cast<int>(50 / std::max(block_ms(fixed, 2), 1e-3)), 2, 500);
  std::vector<double> ratios;
  for (int pair = 0; pair < 7; ++pair) {
    double theirs = block_ms(fixed, runs);
    ratios.push_back(block_ms(*symbolic, runs) / theirs);
  }
  state.counters["kernels"] = static_cast<double>(symbolic->kernels().size());
  state.counters["vs_fixed"] = quantile(ratios, 0.5);
  state.counters["vs_fixed_lo"] = *std::min_element(ratios.begin(), ratios.end());
  state.counters["vs_fixed_hi"] = *std::max_element(ratios.begin(), ratios.end());
  std::this_thread::sleep_for(std::chrono::milliseconds(250)); // before ORT's start-up
  auto session = bench::OrtSession::open(path, default_threads(), {shape});
  Expected<PairedRatio> paired =
      session ? paired_with_ort(*symbolic, ms, **session, 5) : make_unexpected(session.error());
  if (!paired) {
    state.SetLabel("no ONNX Runtime ratio: " + paired.error());
    return;
  }
  state.counters["paired_vs_ort"] = paired->median;
  state.counters["paired_lo"] = paired->lo;
  state.counters["paired_hi"] = paired->hi;
  state.counters["ort_ms"] = paired->ort_ms;
}
BENCHMARK(BM_SymbolicModel)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Arg(77)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);

} // namespace
} // namespace beamlab

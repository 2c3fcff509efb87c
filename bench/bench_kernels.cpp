// Kernels from the code generator against references measured in the same run: a
// STREAM-style triad (memory bandwidth) run through the same OpenMP launcher. Counters:
// gbps (bytes moved / mean time) and ratio (gbps over the triad's, measured the same way
// just before the kernel).
//
// The kernels are hand-built kernel graphs until the scheduler exists (issue 3); they show
// what the back end and runtime reach on their own.
#include <benchmark/benchmark.h>

#include <chrono>

#include <cblas.h>

#include "engine/codegen/compile.hpp"
#include "engine/codegen/lower.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"

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

// out[i] = a[i] * b[i] + c[i] over 16M float32, as the code generator compiles it.
void BM_ElementwiseMulAdd(benchmark::State& state) {
  UOpPtr i = kernel_range(kElements, 0, "parallel");
  auto in = [&](int64_t slot) {
    return load(index(buffer_param(slot, Scalar::Float32), i), Scalar::Float32);
  };
  UOpPtr kernel = sink(
      {end_loop({store(index(buffer_param(0, Scalar::Float32), i), in(1) * in(2) + in(3))}, i)});
  Expected<CompiledKernel> k = compile_kernel(kernel, {.name = "E_16M"});
  if (!k) return state.SkipWithError(k.error().c_str());
  auto entry = JitLoader::instance().load(k->object, k->name);
  if (!entry) return state.SkipWithError(entry.error().c_str());
  Buffers& m = buffers();
  void* ptrs[] = {m.out.data(), m.a.data(), m.b.data(), m.c.data()};
  double reference = triad_gbps();
  launch((*entry)->entry(), ptrs, nullptr, kElements); // warm-up: first touch, page faults
  auto t0 = std::chrono::steady_clock::now();
  int64_t runs = 0;
  for (auto _ : state) {
    launch((*entry)->entry(), ptrs, nullptr, kElements);
    ++runs;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
             static_cast<double>(runs);
  double gbps = 4.0 * 4 * kElements / s / 1e9;
  state.counters["gbps"] = gbps;
  state.counters["ratio"] = gbps / reference;
  state.counters["compile_ms"] = k->compile_ms;
}
BENCHMARK(BM_ElementwiseMulAdd)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace
} // namespace beamlab

namespace beamlab {
namespace {

// C = A * B, float32 n x n x n, from a kernel AST with the default (unoptimized) schedule:
// a parallel row loop, a column loop and a reduce loop. The reference is OpenBLAS sgemm on
// the same buffers in the same run; ratio = our GFLOP/s over its.
void BM_MatmulNaive(benchmark::State& state) {
  const int64_t n = state.range(0);
  UOpPtr i = kernel_range(n, 0, "parallel"), j = kernel_range(n, 1, "loop"),
         k = kernel_range(n, 2, "reduce");
  auto in = [](int64_t slot, const UOpPtr& at) {
    return load(index(buffer_param(slot, Scalar::Float32), at), Scalar::Float32);
  };
  UOpPtr ast = sink({store(index(buffer_param(0, Scalar::Float32), i * n + j),
                           reduce_over(in(1, i * n + k) * in(2, k * n + j), {k}, Op::Add))});
  Expected<CompiledKernel> kern = compile_kernel(lower_kernel(ast), {.name = "matmul"});
  if (!kern) return state.SkipWithError(kern.error().c_str());
  auto entry = JitLoader::instance().load(kern->object, kern->name);
  if (!entry) return state.SkipWithError(entry.error().c_str());
  Buffer C(n * n * 4), A(n * n * 4), B(n * n * 4);
  for (int64_t x = 0; x < n * n; ++x)
    A.as<float>()[x] = B.as<float>()[x] = static_cast<float>(x % 7) * 0.25f;
  double flops = 2.0 * static_cast<double>(n * n * n);
  auto seconds = [](auto&& fn, int runs) {
    fn();
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < runs; ++r) fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / runs;
  };
  double blas =
      flops /
      seconds(
          [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                        static_cast<int>(n), static_cast<int>(n), 1.0f, A.as<float>().data(),
                        static_cast<int>(n), B.as<float>().data(), static_cast<int>(n), 0.0f,
                        C.as<float>().data(), static_cast<int>(n));
          },
          3) /
      1e9;
  void* ptrs[] = {C.data(), A.data(), B.data()};
  launch((*entry)->entry(), ptrs, nullptr, kern->parallel_extent);
  auto t0 = std::chrono::steady_clock::now();
  int64_t runs = 0;
  for (auto _ : state) {
    launch((*entry)->entry(), ptrs, nullptr, kern->parallel_extent);
    ++runs;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
             static_cast<double>(runs);
  state.counters["gflops"] = flops / s / 1e9;
  state.counters["blas_gflops"] = blas;
  state.counters["ratio"] = flops / s / 1e9 / blas;
  state.counters["compile_ms"] = kern->compile_ms;
}
BENCHMARK(BM_MatmulNaive)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace
} // namespace beamlab

// Benchmarks of the IR core: interning, the symbolic simplifier, and the text round trip.
// The index expressions are the kind a 4-D tensor's reshape/permute produces: a flat index
// split into coordinates and recombined under other strides.
#include <benchmark/benchmark.h>

#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

// A permuted 4-D index: unflatten r (shape d0..d3), transpose axes 1 and 2, flatten again.
UOpPtr permuted_index(int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  UOpPtr r0 = UOp::range(UOp::const_int(Scalar::Index, d0), 0);
  UOpPtr r1 = UOp::range(UOp::const_int(Scalar::Index, d1), 1);
  UOpPtr r2 = UOp::range(UOp::const_int(Scalar::Index, d2), 2);
  UOpPtr r3 = UOp::range(UOp::const_int(Scalar::Index, d3), 3);
  UOpPtr flat = ((r0 * d1 + r1) * d2 + r2) * d3 + r3;
  UOpPtr c3 = flat % d3, c2 = (flat / d3) % d2, c1 = (flat / (d3 * d2)) % d1,
         c0 = flat / (d3 * d2 * d1);
  return ((c0 * d2 + c2) * d1 + c1) * d3 + c3;
}

void BM_SimplifyPermutedIndex(benchmark::State& state) {
  int64_t d = state.range(0);
  for (auto _ : state) {
    UOpPtr e = permuted_index(d, d + 1, d + 2, d + 3);
    benchmark::DoNotOptimize(simplify(e));
  }
}
BENCHMARK(BM_SimplifyPermutedIndex)->Arg(4)->Arg(64);

void BM_InternExistingNode(benchmark::State& state) {
  UOpPtr x = UOp::variable("x", 0, 100);
  UOpPtr keep = x * 4 + 3;
  for (auto _ : state) benchmark::DoNotOptimize(x * 4 + 3);
}
BENCHMARK(BM_InternExistingNode);

void BM_PrintParseRoundTrip(benchmark::State& state) {
  std::vector<UOpPtr> parts;
  for (int64_t i = 0; i < state.range(0); ++i) parts.push_back(permuted_index(2 + i, 3, 4, 5));
  UOpPtr g = sink(parts);
  std::string text = print_graph(g);
  for (auto _ : state) benchmark::DoNotOptimize(parse_graph(print_graph(g)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["nodes"] = static_cast<double>(toposort(g).size());
}
BENCHMARK(BM_PrintParseRoundTrip)->Arg(16);

} // namespace
} // namespace beamlab

// The machine-measuring kernels (engine/codegen/limit_kernels.hpp): each computes exactly what
// its ABI says, part by part, and the FMA kernel's loop is full-width vector FMAs.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "engine/codegen/limit_kernels.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"

namespace beamlab {
namespace {

std::shared_ptr<const LoadedKernel> load(LimitKernel kind, CompiledKernel* keep = nullptr) {
  Expected<CompiledKernel> c = emit_limit_kernel(kind, {.keep_assembly = keep != nullptr});
  EXPECT_TRUE(c) << c.error();
  if (keep) *keep = *c;
  return *JitLoader::instance().load(c->object, c->name);
}

TEST(LimitKernels, TheFmaLoopIsIndependentFullWidthVectorFmas) {
  CompiledKernel c;
  load(LimitKernel::fma_f32, &c);
  std::string reg = host_vector_bytes() == 64 ? "zmm" : host_vector_bytes() == 32 ? "ymm" : "xmm";
  std::regex fma("vfmadd[0-9]+ps\\s+%" + reg + "([0-9]+), %" + reg + "([0-9]+), %" + reg +
                 "([0-9]+)");
  std::set<std::string> accumulators;
  int count = 0;
  for (std::sregex_iterator it(c.assembly.begin(), c.assembly.end(), fma), end; it != end; ++it) {
    ++count;
    accumulators.insert((*it)[3]);
  }
  EXPECT_GE(count, kFmaAccumulators) << c.assembly;
  EXPECT_GE(accumulators.size(), size_t{kFmaAccumulators}) << c.assembly;
  EXPECT_EQ(fma_flops_per_iteration(LimitKernel::fma_f32),
            2 * host_vector_bytes() / 4 * kFmaAccumulators);
  EXPECT_EQ(fma_flops_per_iteration(LimitKernel::fma_f64),
            2 * host_vector_bytes() / 8 * kFmaAccumulators);
}

TEST(LimitKernels, FmaChainsComputeWhatTheyShould) {
  auto k = load(LimitKernel::fma_f32);
  std::vector<float> seeds = {1.0f, 2.0f};
  void* buffers[] = {seeds.data()};
  int64_t vars[] = {10};
  launch(k->entry(), buffers, vars, 2, 2);
  int lanes = host_vector_bytes() / 4;
  for (int p = 0; p < 2; ++p) {
    float lane = 0;
    for (int a = 0; a < kFmaAccumulators; ++a) {
      float acc = (p + 1.0f) + 0.01f * a;
      for (int i = 0; i < 10; ++i) acc = std::fma(acc, 0.999999f, 1e-7f);
      lane += acc;
    }
    EXPECT_NEAR(seeds[p], lane * lanes, 1e-4 * lane * lanes) << "part " << p;
  }
}

TEST(LimitKernels, FillReadAndTriadWorkOnTheirPartsSlices) {
  const int64_t n = 2 * limit_block_elements(); // per part
  const int parts = 3;
  Buffer data = Buffer::untouched(sizeof(float) * n * parts);
  void* fill_buffers[] = {data.data()};
  int64_t fill_vars[] = {n};
  launch(load(LimitKernel::fill)->entry(), fill_buffers, fill_vars, parts, 2);
  for (float x : data.as<float>()) ASSERT_EQ(x, 1.0f);

  std::vector<float> sums(parts, -1);
  void* read_buffers[] = {data.data(), sums.data()};
  int64_t read_vars[] = {n, 3};
  launch(load(LimitKernel::read)->entry(), read_buffers, read_vars, parts, 2);
  for (float s : sums) EXPECT_EQ(s, 3.0f * static_cast<float>(n));

  for (LimitKernel kind : {LimitKernel::triad, LimitKernel::triad_nontemporal}) {
    std::vector<Buffer> abc;
    for (int i = 0; i < 3; ++i) abc.emplace_back(sizeof(float) * n * parts);
    std::span<float> a = abc[0].as<float>(), b = abc[1].as<float>(), c = abc[2].as<float>();
    for (int64_t i = 0; i < n * parts; ++i) b[i] = static_cast<float>(i), c[i] = 2.0f * i + 1;
    void* triad_buffers[] = {abc[0].data(), abc[1].data(), abc[2].data()};
    int64_t triad_vars[] = {n, 2};
    launch(load(kind)->entry(), triad_buffers, triad_vars, parts, 2);
    for (int64_t i = 0; i < n * parts; ++i) ASSERT_EQ(a[i], b[i] + 0.5f * c[i]) << i;
  }
}

} // namespace
} // namespace beamlab

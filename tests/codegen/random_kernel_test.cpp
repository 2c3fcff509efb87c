// Randomized differential test of lowering, linearization and the LLVM back end: random
// kernel ASTs (nested and sibling reductions, one or two outputs, strided and wrapped
// indexing, int32 and float32) compiled and run, against the plain-loop AST interpreter.
// Knobs: BEAMLAB_KERNEL_CASES (default 150), BEAMLAB_KERNEL_SEED, BEAMLAB_KERNEL_CASE=i.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/codegen/compile.hpp"
#include "engine/codegen/lower.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"
#include "engine/support/knobs.hpp"
#include "tests/codegen/ast_interpreter.hpp"
#include "tests/codegen/run_kernel.hpp"

namespace beamlab {
namespace {

constexpr int64_t kInputSize = 997; // inputs are indexed modulo this

class KernelGen {
public:
  KernelGen(uint64_t seed, DType dt) : rng_(seed), dt_(dt) {}

  // A SINK of one or two STOREs over a parallel loop and maybe a second loop.
  UOpPtr kernel(int64_t& out_elements) {
    UOpPtr r0 = kernel_range(pick(1, 9), next_axis_++, LoopKind::Parallel);
    std::vector<UOpPtr> outer = {r0};
    int64_t inner = 1;
    UOpPtr flat = r0;
    if (pick(0, 1)) {
      inner = pick(1, 7);
      UOpPtr r1 = kernel_range(inner, next_axis_++, LoopKind::Loop);
      outer.push_back(r1);
      flat = r0 * inner + r1;
    }
    out_elements = r0->src(0)->const_value() * inner;
    std::vector<UOpPtr> stores = {store(index(buffer_param(0, dt_), flat), value(3, outer))};
    if (pick(0, 2) == 0) {
      // A second output over all the outer loops, or over only the last one (then the loops
      // it shares with the first output sit in different nests).
      if (outer.size() == 2 && pick(0, 1)) {
        std::vector<UOpPtr> last = {outer[1]};
        stores.push_back(store(index(buffer_param(3, dt_), outer[1]), value(2, last)));
      } else {
        stores.push_back(store(index(buffer_param(3, dt_), flat), value(2, outer)));
      }
    }
    return sink(stores);
  }

private:
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  UOpPtr constant() {
    if (dt_.is_float()) return UOp::const_float(dt_, static_cast<double>(pick(-8, 8)) / 4);
    return UOp::const_int(dt_, pick(-9, 9));
  }

  // (sum of range * stride + offset) % kInputSize: strided, broadcast (stride 0) and wrapped.
  UOpPtr address(const std::vector<UOpPtr>& ranges) {
    UOpPtr at = UOp::const_int(Scalar::Index, pick(0, 50));
    for (const UOpPtr& r : ranges) at = at + r * pick(0, 5);
    return at % kInputSize;
  }

  // A load whose address may run past the buffer's end, gated to stay inside it (0 outside),
  // as padding will be: exercises gates that really are off.
  UOpPtr gated_load(const std::vector<UOpPtr>& ranges) {
    UOpPtr at = UOp::const_int(Scalar::Index, pick(kInputSize - 40, kInputSize + 5));
    for (const UOpPtr& r : ranges) at = at + r * pick(0, 5);
    UOpPtr gate = lt(at, UOp::const_int(Scalar::Index, kInputSize));
    return load(index(buffer_param(pick(1, 2), dt_), at, gate), dt_);
  }

  UOpPtr value(int depth, const std::vector<UOpPtr>& ranges) {
    if (depth == 0 || pick(0, 5) == 0) {
      if (pick(0, 4) == 0) return constant();
      if (pick(0, 3) == 0) return gated_load(ranges);
      return load(index(buffer_param(pick(1, 2), dt_), address(ranges)), dt_);
    }
    switch (pick(0, 7)) {
    case 0: return value(depth - 1, ranges) + value(depth - 1, ranges);
    case 1: return value(depth - 1, ranges) * value(depth - 1, ranges);
    case 2: return value(depth - 1, ranges) - value(depth - 1, ranges);
    case 3: return maximum(value(depth - 1, ranges), value(depth - 1, ranges));
    case 4:
      if (dt_.is_float()) return value(depth - 1, ranges) * constant();
      return value(depth - 1, ranges) % UOp::const_int(dt_, pick(1, 7));
    default: {
      // A reduction over one or two fresh loops, or over the loops of an earlier reduction
      // that is not in scope here (so two REDUCEs share RANGE nodes); the body may use the
      // outer loops too.
      std::vector<UOpPtr> loops;
      for (const auto& earlier : reduce_loops_) {
        bool in_scope = std::any_of(earlier.begin(), earlier.end(), [&](const UOpPtr& r) {
          return std::find(ranges.begin(), ranges.end(), r) != ranges.end();
        });
        if (!in_scope && pick(0, 2) == 0) loops = earlier;
      }
      if (loops.empty()) {
        loops.push_back(kernel_range(pick(1, 6), next_axis_++, LoopKind::Reduce));
        if (pick(0, 3) == 0)
          loops.push_back(kernel_range(pick(1, 4), next_axis_++, LoopKind::Reduce));
        reduce_loops_.push_back(loops);
      }
      std::vector<UOpPtr> inside = ranges;
      inside.insert(inside.end(), loops.begin(), loops.end());
      Op op = pick(0, 2) == 0 ? Op::Max : Op::Add;
      return reduce_over(value(depth - 1, inside), loops, op);
    }
    }
  }

  std::mt19937_64 rng_;
  DType dt_;
  int64_t next_axis_ = 0;
  std::vector<std::vector<UOpPtr>> reduce_loops_;
};

TEST(RandomKernels, CompiledKernelsMatchTheInterpreter) {
  int64_t cases = knob_int("BEAMLAB_KERNEL_CASES", 150);
  int64_t seed = knob_int("BEAMLAB_KERNEL_SEED", 1);
  int64_t only = knob_int("BEAMLAB_KERNEL_CASE", -1);
  int64_t failures = 0;
  for (int64_t c = 0; c < cases && failures < 3; ++c) {
    if (only >= 0 && c != only) continue;
    DType dt = c % 2 ? DType(Scalar::Float32) : DType(Scalar::Int32);
    std::mt19937_64 data_rng(static_cast<uint64_t>(seed * 7919 + c));
    KernelGen gen(static_cast<uint64_t>(seed) * 1000003 + static_cast<uint64_t>(c), dt);
    int64_t n = 0;
    UOpPtr ast = gen.kernel(n);
    std::string rerun = "rerun with BEAMLAB_KERNEL_SEED=" + std::to_string(seed) +
                        " BEAMLAB_KERNEL_CASE=" + std::to_string(c);
    // Reference buffers: 0 and 3 outputs, 1 and 2 inputs.
    std::vector<testing::RefBuffer> ref(4);
    for (int slot : {1, 2})
      for (int64_t k = 0; k < kInputSize; ++k) {
        int64_t v = std::uniform_int_distribution<int64_t>(-20, 20)(data_rng);
        ref[slot].ints.push_back(v);
        ref[slot].floats.push_back(static_cast<double>(v) / 8);
      }
    for (int slot : {0, 3}) ref[slot] = {std::vector<int64_t>(n), std::vector<double>(n)};
    std::vector<Buffer> bufs;
    for (const testing::RefBuffer& r : ref) {
      Buffer b(r.ints.size() * 4);
      for (size_t k = 0; k < r.ints.size(); ++k) {
        if (dt.is_float())
          b.as<float>()[k] = static_cast<float>(r.floats[k]);
        else
          b.as<int32_t>()[k] = static_cast<int32_t>(r.ints[k]);
      }
      bufs.push_back(std::move(b));
    }
    testing::interpret_kernel(ast, ref);
    std::vector<Buffer*> ptrs;
    for (Buffer& b : bufs) ptrs.push_back(&b);
    auto k = testing::compile_and_run(lower_kernel(ast), ptrs, {}, 0, "random");
    ASSERT_TRUE(k) << k.error() << "\n" << rerun;
    for (int slot : {0, 3}) {
      for (int64_t e = 0; e < n; ++e) {
        bool ok = dt.is_float() ? std::fabs(bufs[slot].as<float>()[e] - ref[slot].floats[e]) <=
                                      1e-3 * (1 + std::fabs(ref[slot].floats[e]))
                                : bufs[slot].as<int32_t>()[e] == ref[slot].ints[e];
        if (ok) continue;
        ADD_FAILURE() << "case " << c << ", output " << slot << "[" << e << "]: compiled "
                      << (dt.is_float() ? double(bufs[slot].as<float>()[e])
                                        : double(bufs[slot].as<int32_t>()[e]))
                      << ", interpreter "
                      << (dt.is_float() ? ref[slot].floats[e] : double(ref[slot].ints[e])) << "\n"
                      << rerun << "\n"
                      << print_graph(ast);
        ++failures;
        break;
      }
    }
  }
}

} // namespace
} // namespace beamlab

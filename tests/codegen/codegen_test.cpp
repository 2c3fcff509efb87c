// The LLVM back end and the runtime: kernel graphs compiled, linked with the JIT and run with
// OpenMP, checked against values computed by plain C++ or the reference interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "engine/codegen/compile.hpp"
#include "engine/codegen/linearize.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/symbolic.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"
#include "tests/codegen/run_kernel.hpp"
#include "tests/ir/eval_reference.hpp"
#include "tests/ir/expr_gen.hpp"

namespace beamlab {
namespace {

UOpPtr f32(double v) { return UOp::const_float(Scalar::Float32, v); }
UOpPtr idx(int64_t v) { return UOp::const_int(Scalar::Index, v); }

// Compiles, links and runs `kernel` on `buffers`; fails the test on any error.
CompiledKernel run(const UOpPtr& kernel, std::vector<Buffer*> buffers,
                   std::vector<int64_t> vars = {}, int threads = 0) {
  Expected<CompiledKernel> k = testing::compile_and_run(kernel, buffers, vars, threads);
  EXPECT_TRUE(k) << (k ? "" : k.error());
  return k ? *k : CompiledKernel{};
}

Buffer floats(const std::vector<float>& values) {
  Buffer b(values.size() * sizeof(float));
  std::copy(values.begin(), values.end(), b.as<float>().begin());
  return b;
}

std::vector<float> iota_floats(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

TEST(Codegen, ElementwiseMulAddAcrossThreads) {
  const int64_t n = 1003; // not a multiple of the thread count or any vector width
  UOpPtr a = buffer_param(1, Scalar::Float32), b = buffer_param(2, Scalar::Float32);
  UOpPtr c = buffer_param(0, Scalar::Float32);
  UOpPtr i = kernel_range(n, 0, LoopKind::Parallel);
  UOpPtr value = load(index(a, i), Scalar::Float32) * load(index(b, i), Scalar::Float32) + f32(1.0);
  UOpPtr kernel = sink({end_loop({store(index(c, i), value)}, i)});
  std::vector<float> av = iota_floats(n, -3.0f, 0.25f), bv = iota_floats(n, 2.0f, -0.5f);
  Buffer A = floats(av), B = floats(bv), C(n * sizeof(float));
  CompiledKernel k = run(kernel, {&C, &A, &B});
  EXPECT_EQ(k.parallel_extent, n);
  EXPECT_EQ(k.buffer_count, 3);
  for (int64_t j = 0; j < n; ++j) {
    float want = std::fma(av[j], bv[j], 1.0f); // contraction may fuse; both operands are exact
    ASSERT_NEAR(C.as<float>()[j], want, 1e-5f * std::max(1.0f, std::fabs(want))) << "element " << j;
  }
}

TEST(Codegen, VectorLoadsAndStoresTouchConsecutiveElements) {
  const int64_t n = 256;
  UOpPtr a = buffer_param(1, Scalar::Float32), c = buffer_param(0, Scalar::Float32);
  UOpPtr i = kernel_range(n / 4, 0, LoopKind::Parallel);
  DType f32x4 = DType(Scalar::Float32).vec(4);
  UOpPtr two = UOp::make(Op::Vectorize, f32x4, {f32(2), f32(2), f32(2), f32(2)});
  UOpPtr x = load(index(a, i * 4), f32x4);
  // Lanes reversed through GEP, then doubled: c[4i+k] = 2*a[4i+3-k].
  UOpPtr reversed = UOp::make(Op::Gep, f32x4, {x}, Arg{3, 2, 1, 0});
  UOpPtr kernel = sink({end_loop({store(index(c, i * 4), reversed * two)}, i)});
  std::vector<float> av = iota_floats(n, 0.0f, 1.0f);
  Buffer A = floats(av), C(n * sizeof(float));
  CompiledKernel k = run(kernel, {&C, &A});
  for (int64_t j = 0; j < n; ++j) ASSERT_EQ(C.as<float>()[j], 2 * av[j / 4 * 4 + 3 - j % 4]) << j;
}

// out[i] = sum_j A[i*m + j] * x[j], the inner loop accumulating in a register.
UOpPtr matvec_kernel(int64_t n, int64_t m) {
  UOpPtr out = buffer_param(0, Scalar::Float32), A = buffer_param(1, Scalar::Float32);
  UOpPtr x = buffer_param(2, Scalar::Float32), acc = define_reg(Scalar::Float32, 1);
  UOpPtr i = kernel_range(n, 0, LoopKind::Parallel), j = kernel_range(m, 1, LoopKind::Reduce);
  UOpPtr slot = index(acc, idx(0));
  UOpPtr init = store(slot, f32(0), {i});
  UOpPtr partial = load(slot, Scalar::Float32, {init, j});
  UOpPtr term = load(index(A, i * m + j), Scalar::Float32) * load(index(x, j), Scalar::Float32);
  UOpPtr inner = end_loop({store(slot, partial + term)}, j);
  UOpPtr result = store(index(out, i), load(slot, Scalar::Float32, {inner}));
  return sink({end_loop({result}, i)});
}

TEST(Codegen, MatVecWithARegisterAccumulator) {
  const int64_t n = 37, m = 53;
  std::vector<float> a = iota_floats(n * m, -1.0f, 0.01f), x = iota_floats(m, 0.5f, 0.125f);
  Buffer A = floats(a), X = floats(x), Out(n * sizeof(float));
  run(matvec_kernel(n, m), {&Out, &A, &X});
  for (int64_t r = 0; r < n; ++r) {
    float want = 0;
    for (int64_t c = 0; c < m; ++c) want = std::fma(a[r * m + c], x[c], want);
    ASSERT_NEAR(Out.as<float>()[r], want, 1e-4f) << "row " << r;
  }
}

TEST(Codegen, LinearizePlacesWorkInTheInnermostLoopItNeeds) {
  std::vector<UOpPtr> order = linearize(matvec_kernel(4, 5));
  auto pos = [&](auto pred) {
    return std::find_if(order.begin(), order.end(), pred) - order.begin();
  };
  auto range_pos = [&](int64_t axis) {
    return pos([&](const UOpPtr& u) {
      return u->op() == Op::Range && u->arg().items()[0].as_int() == axis;
    });
  };
  auto init_pos =
      pos([](const UOpPtr& u) { return u->op() == Op::Store && u->src(1)->is_const(); });
  EXPECT_LT(range_pos(0), init_pos); // the accumulator resets in every row...
  EXPECT_LT(init_pos, range_pos(1)); // ...before the reduction loop starts
}

TEST(Codegen, SerialKernelWithoutParallelRangeRunsOnce) {
  const int64_t n = 1000;
  UOpPtr out = buffer_param(0, Scalar::Int64), acc = define_reg(Scalar::Int64, 1);
  UOpPtr j = kernel_range(n, 0, LoopKind::Reduce);
  UOpPtr slot = index(acc, idx(0));
  UOpPtr init = store(slot, UOp::const_int(Scalar::Int64, 0));
  UOpPtr partial = load(slot, Scalar::Int64, {init, j});
  UOpPtr loop = end_loop({store(slot, partial + cast(j, Scalar::Int64) * 3)}, j);
  UOpPtr kernel = sink({store(index(out, idx(0)), load(slot, Scalar::Int64, {loop}))});
  Buffer Out(sizeof(int64_t));
  CompiledKernel k = run(kernel, {&Out});
  EXPECT_EQ(k.parallel_extent, -1);
  EXPECT_EQ(Out.as<int64_t>()[0], 3 * n * (n - 1) / 2);
}

TEST(Codegen, VariablesComeFromTheVarsArray) {
  UOpPtr out = buffer_param(0, Scalar::Int32);
  UOpPtr scale = UOp::variable("scale", 0, 100, Scalar::Int32),
         shift = UOp::variable("shift", -5, 5, Scalar::Int32);
  UOpPtr i = kernel_range(8, 0, LoopKind::Parallel);
  UOpPtr kernel =
      sink({end_loop({store(index(out, i), cast(i, Scalar::Int32) * scale + shift)}, i)});
  Buffer Out(8 * sizeof(int32_t));
  CompiledKernel k = run(kernel, {&Out}, {/*scale*/ 7, /*shift*/ -2});
  EXPECT_EQ(k.vars, (std::vector<std::string>{"scale", "shift"}));
  for (int j = 0; j < 8; ++j) EXPECT_EQ(Out.as<int32_t>()[j], 7 * j - 2);
}

TEST(Codegen, SameKernelSameCodeHashOtherKernelOtherHash) {
  Expected<CompiledKernel> a = compile_kernel(matvec_kernel(8, 8));
  Expected<CompiledKernel> b = compile_kernel(matvec_kernel(8, 8));
  Expected<CompiledKernel> c = compile_kernel(matvec_kernel(8, 9));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->code_hash, b->code_hash);
  EXPECT_NE(a->code_hash, c->code_hash);
  EXPECT_GT(a->compile_ms, 0.0);
}

TEST(Codegen, KeepsLlvmIrAndAssemblyOnRequest) {
  Expected<CompiledKernel> k = compile_kernel(
      matvec_kernel(8, 8), {.name = "mv", .keep_llvm_ir = true, .keep_assembly = true});
  ASSERT_TRUE(k) << k.error();
  EXPECT_NE(k->llvm_ir.find("define void @beamlab_kernel"), std::string::npos);
  EXPECT_NE(k->assembly.find("beamlab_kernel:"), std::string::npos);
}

TEST(Codegen, UnsupportedNodesAreAnErrorNotACrash) {
  UOpPtr out = buffer_param(0, Scalar::Float32);
  UOpPtr weird = UOp::make(Op::Copy, Scalar::Float32, {f32(1)});
  Expected<CompiledKernel> k =
      compile_kernel(sink({store(index(out, idx(0)), weird)}), {.name = "weird"});
  ASSERT_FALSE(k);
  EXPECT_EQ(
      k.error(),
      "cannot compile kernel 'weird': COPY float32: the LLVM back end has no lowering for this op");
}

// Integer semantics of the back end against the reference interpreter: random expressions
// over x, y, z and r0 (wrapping int32 and 64-bit index math, truncating division), the
// leaves loaded per element from buffers of values within their bounds.
TEST(Codegen, RandomIntegerExpressionsMatchTheInterpreter) {
  const int64_t n = 64, cases = 60;
  for (int64_t c = 0; c < cases; ++c) {
    DType dt = c % 2 ? DType(Scalar::Int32) : DType(Scalar::Index);
    testing::ExprGen gen(0xC0DE + static_cast<uint64_t>(c), dt);
    UOpPtr e = gen.expr(4);
    std::vector<Buffer> inputs;
    std::vector<testing::Point> points(n);
    for (int64_t k = 0; k < n; ++k) points[k] = gen.point();
    UOpPtr i = kernel_range(n, 1, LoopKind::Parallel);
    // Leaves become loads from buffers 1.. (x, y, z, r0 in order).
    std::vector<UOpPtr> leaves;
    for (size_t l = 0; l < gen.leaves().size(); ++l) {
      const auto& leaf = gen.leaves()[l].node;
      Buffer b(n * 8);
      for (int64_t k = 0; k < n; ++k) {
        int64_t value = leaf->op() == Op::Range
                            ? points[k].ranges.at(0)
                            : points[k].vars.at(leaf->arg().items()[0].as_str());
        if (dt.scalar() == Scalar::Int32)
          b.as<int32_t>()[k] = static_cast<int32_t>(value);
        else
          b.as<int64_t>()[k] = value;
      }
      inputs.push_back(std::move(b));
      leaves.push_back(load(index(buffer_param(static_cast<int64_t>(l) + 1, dt), i), dt));
    }
    PatternMatcher to_loads({
        {UPat::ops({Op::DefineVar, Op::Range}),
         [&](const Match& m) -> UOpPtr {
           for (size_t l = 0; l < gen.leaves().size(); ++l)
             if (gen.leaves()[l].node == m.root) return leaves[l];
           return nullptr;
         }},
    });
    for (const UOpPtr& expr : {e, simplify(e)}) {
      UOpPtr body = graph_rewrite(expr, to_loads, {}, {.name = "leaves_to_loads"});
      Buffer out(n * 8);
      std::vector<Buffer*> bufs = {&out};
      for (Buffer& b : inputs) bufs.push_back(&b);
      run(sink({end_loop({store(index(buffer_param(0, body->dtype()), i), body)}, i)}), bufs);
      for (int64_t k = 0; k < n; ++k) {
        int64_t want = testing::Evaluator(points[k]).eval(expr);
        int64_t got = dt.scalar() == Scalar::Int32 ? out.as<int32_t>()[k] : out.as<int64_t>()[k];
        ASSERT_EQ(got, want) << "case " << c << ", element " << k << ": " << to_expr(expr);
      }
    }
  }
}

} // namespace
} // namespace beamlab

namespace beamlab {
namespace {

TEST(Codegen, GatedStoresWriteOnlyWhereTheGateHolds) {
  // out[i] = 7 for even i; odd elements keep their old value.
  const int64_t n = 10;
  UOpPtr out = buffer_param(0, Scalar::Int32);
  UOpPtr i = kernel_range(n, 0, LoopKind::Parallel);
  UOpPtr even = eq(i % 2, idx(0));
  UOpPtr kernel =
      sink({end_loop({store(index(out, i, even), UOp::const_int(Scalar::Int32, 7))}, i)});
  Buffer Out(n * 4);
  for (int64_t j = 0; j < n; ++j) Out.as<int32_t>()[j] = -1;
  run(kernel, {&Out});
  for (int64_t j = 0; j < n; ++j) EXPECT_EQ(Out.as<int32_t>()[j], j % 2 == 0 ? 7 : -1) << j;
}

} // namespace
} // namespace beamlab

namespace beamlab {
namespace {

TEST(Runtime, KernelsAreUnlinkedWhenTheLastHandleGoes) {
  Expected<CompiledKernel> k = compile_kernel(matvec_kernel(4, 4));
  ASSERT_TRUE(k) << k.error();
  JitLoader loader; // a private loader, so other tests' kernels don't count
  auto first = loader.load(k->object, "a");
  ASSERT_TRUE(first) << first.error();
  {
    auto second = loader.load(k->object, "b"); // the same code may be linked twice
    ASSERT_TRUE(second) << second.error();
    EXPECT_EQ(loader.loaded_count(), 2u);
  }
  EXPECT_EQ(loader.loaded_count(), 1u);
  // The remaining kernel still runs.
  Buffer Out(4 * 4), A(16 * 4), X(4 * 4);
  for (int j = 0; j < 16; ++j) A.as<float>()[j] = 1;
  for (int j = 0; j < 4; ++j) X.as<float>()[j] = 2;
  void* ptrs[] = {Out.data(), A.data(), X.data()};
  launch((*first)->entry(), ptrs, nullptr, k->parallel_extent);
  EXPECT_EQ(Out.as<float>()[3], 8.0f);
  first->reset();
  EXPECT_EQ(loader.loaded_count(), 0u);
}

TEST(Runtime, GarbageObjectsAreALinkErrorNotACrash) {
  JitLoader loader;
  std::string junk = "this is not an ELF object";
  auto k = loader.load(std::span<const char>(junk.data(), junk.size()), "junk");
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().find("cannot link kernel 'junk'"), std::string::npos) << k.error();
  EXPECT_EQ(loader.loaded_count(), 0u);
}

} // namespace
} // namespace beamlab

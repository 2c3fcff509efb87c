// Kernel ASTs with REDUCE, lowered to loops and accumulators, compiled and run.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/codegen/compile.hpp"
#include "engine/codegen/linearize.hpp"
#include "engine/codegen/lower.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/rewrite/verify.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"
#include "tests/codegen/run_kernel.hpp"

namespace beamlab {
namespace {

UOpPtr in(int64_t slot, const UOpPtr& i) {
  return load(index(buffer_param(slot, Scalar::Float32), i), Scalar::Float32);
}
UOpPtr out(int64_t slot) { return buffer_param(slot, Scalar::Float32); }

void run_ast(const UOpPtr& ast, std::vector<Buffer*> buffers) {
  auto k = testing::compile_and_run(lower_kernel(ast), buffers, {}, 0, "ast");
  ASSERT_TRUE(k) << k.error();
}

Buffer filled(size_t n, float start, float step) {
  Buffer b(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) b.as<float>()[i] = start + step * static_cast<float>(i % 97);
  return b;
}

TEST(Lower, MatmulFromAFiveLineAst) {
  const int64_t M = 33, N = 17, K = 29;
  UOpPtr i = kernel_range(M, 0, LoopKind::Parallel), j = kernel_range(N, 1, LoopKind::Loop),
         k = kernel_range(K, 2, LoopKind::Reduce);
  UOpPtr ast = sink({store(index(out(0), i * N + j),
                           reduce_over(in(1, i * K + k) * in(2, k * N + j), {k}, Op::Add))});
  Buffer C(M * N * 4), A = filled(M * K, -1.0f, 0.03f), B = filled(K * N, 0.5f, -0.02f);
  run_ast(ast, {&C, &A, &B});
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < N; ++c) {
      float want = 0;
      for (int64_t x = 0; x < K; ++x) want += A.as<float>()[r * K + x] * B.as<float>()[x * N + c];
      ASSERT_NEAR(C.as<float>()[r * N + c], want, 1e-4f) << r << "," << c;
    }
}

TEST(Lower, FullReductionWithoutOuterLoops) {
  const int64_t n = 1000;
  UOpPtr r = kernel_range(n, 0, LoopKind::Reduce);
  UOpPtr ast = sink({store(index(out(0), UOp::const_int(Scalar::Index, 0)),
                           reduce_over(in(1, r), {r}, Op::Add))});
  Buffer S(4), A = filled(n, 1.0f, 1.0f);
  run_ast(ast, {&S, &A});
  float want = 0;
  for (int64_t x = 0; x < n; ++x) want += A.as<float>()[x];
  EXPECT_EQ(S.as<float>()[0], want); // same order of additions: bit-exact
}

TEST(Lower, RowMaxStartsFromMinusInfinity) {
  const int64_t rows = 8, cols = 13;
  UOpPtr i = kernel_range(rows, 0, LoopKind::Parallel), j = kernel_range(cols, 1, LoopKind::Reduce);
  UOpPtr ast = sink({store(index(out(0), i), reduce_over(in(1, i * cols + j), {j}, Op::Max))});
  Buffer Out(rows * 4), A = filled(rows * cols, -50.0f, -0.5f); // all negative
  run_ast(ast, {&Out, &A});
  for (int64_t r = 0; r < rows; ++r) {
    float want = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) want = std::max(want, A.as<float>()[r * cols + c]);
    EXPECT_EQ(Out.as<float>()[r], want) << r;
  }
}

TEST(Lower, TwoReductionsAndTwoOutputsInOneKernel) {
  // out0[i] = max_j a[i,j] - sum_k a[i,k];  out1[i] = a[i,0] * 2, sharing the parallel loop.
  const int64_t rows = 16, cols = 9;
  UOpPtr i = kernel_range(rows, 0, LoopKind::Parallel), j = kernel_range(cols, 1, LoopKind::Reduce),
         k = kernel_range(cols, 2, LoopKind::Reduce);
  UOpPtr mx = reduce_over(in(2, i * cols + j), {j}, Op::Max),
         sum = reduce_over(in(2, i * cols + k), {k}, Op::Add);
  UOpPtr two = UOp::const_float(Scalar::Float32, 2.0);
  UOpPtr ast =
      sink({store(index(out(0), i), mx - sum), store(index(out(1), i), in(2, i * cols) * two)});
  UOpPtr lowered = lower_kernel(ast);
  size_t ends_of_i = 0;
  for (const UOpPtr& u : linearize(lowered))
    ends_of_i += u->op() == Op::End && u->src().back() == i;
  EXPECT_EQ(ends_of_i, 1u); // both stores sit in the one parallel loop
  Buffer O0(rows * 4), O1(rows * 4), A = filled(rows * cols, -3.0f, 0.75f);
  run_ast(ast, {&O0, &O1, &A});
  for (int64_t r = 0; r < rows; ++r) {
    float m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) {
      m = std::max(m, A.as<float>()[r * cols + c]);
      s += A.as<float>()[r * cols + c];
    }
    EXPECT_NEAR(O0.as<float>()[r], m - s, 1e-4f) << r;
    EXPECT_EQ(O1.as<float>()[r], A.as<float>()[r * cols] * 2) << r;
  }
}

TEST(Lower, KernelSpecRejectsMalformedKernels) {
  UOpPtr i = kernel_range(4, 0, LoopKind::Parallel);
  UOpPtr ints = buffer_param(1, Scalar::Int32);
  auto only_error = [](const UOpPtr& g) {
    std::vector<std::string> errors = verify(g, spec_kernel());
    return errors.size() == 1 ? errors[0] : "<" + std::to_string(errors.size()) + " errors>";
  };
  // A float load through an int pointer.
  EXPECT_EQ(only_error(sink({store(index(out(0), i), load(index(ints, i), Scalar::Float32))})),
            "%6 = LOAD float32: LOAD of float32 through a pointer to int32");
  // A REDUCE over something that is not a loop.
  UOpPtr not_a_range = UOp::variable("n", 0, 3);
  UOpPtr bad_reduce = UOp::make(Op::Reduce, Scalar::Float32, {in(1, i), not_a_range}, Arg(Op::Add));
  EXPECT_EQ(only_error(sink({store(index(out(0), i), bad_reduce)})),
            "%8 = REDUCE float32: source 1 must be a RANGE");
  // Bools only reduce with MAX.
  UOpPtr flag = lt(load(index(buffer_param(1, Scalar::Int32), i), Scalar::Int32),
                   UOp::const_int(Scalar::Int32, 0));
  EXPECT_NE(
      only_error(sink({store(index(buffer_param(2, Scalar::Bool), UOp::const_int(Scalar::Index, 0)),
                             reduce_over(flag, {i}, Op::Add))}))
          .find("bools reduce with MAX (any); sum them as integers"),
      std::string::npos);
  // A range kind the code generator doesn't know.
  UOpPtr odd = UOp::make(Op::Range, Scalar::Index, {UOp::const_int(Scalar::Index, 4)},
                         Arg{Arg(0), Arg("sideways")});
  EXPECT_NE(
      only_error(sink({store(index(out(0), odd), in(1, odd))})).find("arg must be the axis id"),
      std::string::npos);
  // lower_kernel refuses such input, naming where it was caught.
  try {
    lower_kernel(sink({store(index(out(0), i), bad_reduce)}));
    ADD_FAILURE() << "expected lower_kernel to reject the AST";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "step 'lower_kernel's input' produced IR that violates spec 'kernel'"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace beamlab

// Kernels at the edges of the code generator: each case once produced wrong code, an
// out-of-bounds write or a crash (found by review), and must now be right or a clean error.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "engine/codegen/compile.hpp"
#include "engine/codegen/lower.hpp"
#include "engine/ir/const_eval.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/rewrite/verify.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/float_helpers.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"
#include "tests/codegen/run_kernel.hpp"

namespace beamlab {
namespace {

UOpPtr idx(int64_t v) { return UOp::const_int(Scalar::Index, v); }
UOpPtr i32(int64_t v) { return UOp::const_int(Scalar::Int32, v); }

// Compiles (lowering first if `lower`), links and runs; returns the compile error if any.
std::string run(const UOpPtr& kernel, std::vector<Buffer*> buffers, bool lower = true) {
  auto k = testing::compile_and_run(lower ? lower_kernel(kernel) : kernel, buffers, {}, 0, "edge");
  return k ? "" : k.error();
}

Buffer ints(std::vector<int32_t> v) {
  Buffer b(v.size() * 4);
  std::copy(v.begin(), v.end(), b.as<int32_t>().begin());
  return b;
}

TEST(EdgeCases, OuterLoopsOpenAfterReductionsTheirBodiesNeed) {
  // out[i*3+k] = x[i] + y[k] * sum_j z[j]: the reduction depends on no loop, but is used
  // inside i and k; i must not open before it has run.
  UOpPtr i = kernel_range(2, 0, LoopKind::Parallel), k = kernel_range(3, 1, LoopKind::Loop),
         j = kernel_range(4, 2, LoopKind::Reduce);
  auto at = [](int64_t slot, const UOpPtr& e) {
    return load(index(buffer_param(slot, Scalar::Int32), e), Scalar::Int32);
  };
  UOpPtr s = reduce_over(at(3, j), {j}, Op::Add);
  UOpPtr ast =
      sink({store(index(buffer_param(0, Scalar::Int32), i * 3 + k), at(1, i) + at(2, k) * s)});
  Buffer out(6 * 4), x = ints({100, 200}), y = ints({1, 2, 3}), z = ints({1, 1, 1, 1});
  ASSERT_EQ(run(ast, {&out, &x, &y, &z}), "");
  std::vector<int32_t> want = {104, 108, 112, 204, 208, 212};
  EXPECT_EQ(std::vector<int32_t>(out.as<int32_t>().begin(), out.as<int32_t>().end()), want);
}

TEST(EdgeCases, ARangeSharedByStoresInDifferentLoopsIsRunTwice) {
  // o1[k] = x[k];  o2[j*4+k] = x[k] * j: k sits inside j for o2 and alone for o1.
  UOpPtr j = kernel_range(3, 0, LoopKind::Loop), k = kernel_range(4, 1, LoopKind::Loop);
  UOpPtr xk = load(index(buffer_param(2, Scalar::Int32), k), Scalar::Int32);
  UOpPtr ast =
      sink({store(index(buffer_param(0, Scalar::Int32), k), xk),
            store(index(buffer_param(1, Scalar::Int32), j * 4 + k), xk * cast(j, Scalar::Int32))});
  Buffer o1(16), o2(48), x = ints({1, 2, 3, 4});
  ASSERT_EQ(run(ast, {&o1, &o2, &x}), "");
  EXPECT_EQ(std::vector<int32_t>(o1.as<int32_t>().begin(), o1.as<int32_t>().end()),
            (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(std::vector<int32_t>(o2.as<int32_t>().begin(), o2.as<int32_t>().end()),
            (std::vector<int32_t>{0, 0, 0, 0, 1, 2, 3, 4, 2, 4, 6, 8}));
}

TEST(EdgeCases, TwoReductionsOverTheSameRange) {
  // sum_j x[j] + max_j x[j], both over the one RANGE node j.
  UOpPtr j = kernel_range(4, 0, LoopKind::Reduce);
  UOpPtr xj = load(index(buffer_param(1, Scalar::Int32), j), Scalar::Int32);
  UOpPtr ast = sink({store(index(buffer_param(0, Scalar::Int32), idx(0)),
                           reduce_over(xj, {j}, Op::Add) + reduce_over(xj, {j}, Op::Max))});
  Buffer out(4), x = ints({3, 9, 4, 6});
  ASSERT_EQ(run(ast, {&out, &x}), "");
  EXPECT_EQ(out.as<int32_t>()[0], 22 + 9);
}

TEST(EdgeCases, ParallelRangeOfExtentZeroRunsNothing) {
  UOpPtr i = kernel_range(0, 0, LoopKind::Parallel);
  UOpPtr kernel = sink({end_loop({store(index(buffer_param(0, Scalar::Int32), i), i32(7))}, i)});
  Buffer out(4);
  ASSERT_EQ(run(kernel, {&out}, false), "");
  EXPECT_EQ(out.as<int32_t>()[0], 0);
}

TEST(EdgeCases, ASecondParallelRangeIsAnError) {
  UOpPtr i = kernel_range(4, 0, LoopKind::Parallel), m = kernel_range(8, 1, LoopKind::Parallel);
  UOpPtr ast = sink({store(index(buffer_param(0, Scalar::Int32), i), i32(1)),
                     store(index(buffer_param(1, Scalar::Int32), m), i32(2))});
  Buffer o1(16), o2(32);
  EXPECT_EQ(run(ast, {&o1, &o2}),
            "cannot compile kernel 'edge': RANGE index: a kernel has at most one parallel range");
}

TEST(EdgeCases, GepBroadcastsAScalarToEveryLane) {
  DType f32x4 = DType(Scalar::Float32).vec(4);
  UOpPtr x = load(index(buffer_param(1, Scalar::Float32), idx(0)), Scalar::Float32);
  UOpPtr splat = UOp::make(Op::Gep, f32x4, {x}, Arg{0, 0, 0, 0});
  Buffer out(16), in(4);
  in.as<float>()[0] = 5;
  ASSERT_EQ(run(sink({store(index(buffer_param(0, Scalar::Float32), idx(0)), splat)}), {&out, &in},
                false),
            "");
  for (int l = 0; l < 4; ++l) EXPECT_EQ(out.as<float>()[l], 5.0f) << l;
}

TEST(EdgeCases, VectorReductionsStartFromAVectorIdentity) {
  // out[0..4) = sum_j x[4j..4j+4) and the lane-wise max, as float32x4 and int32x4.
  DType f32x4 = DType(Scalar::Float32).vec(4), i32x4 = DType(Scalar::Int32).vec(4);
  UOpPtr j = kernel_range(3, 0, LoopKind::Reduce), k = kernel_range(3, 1, LoopKind::Reduce);
  UOpPtr fs =
      reduce_over(load(index(buffer_param(2, Scalar::Float32), j * 4), f32x4), {j}, Op::Add);
  UOpPtr im = reduce_over(load(index(buffer_param(3, Scalar::Int32), k * 4), i32x4), {k}, Op::Max);
  UOpPtr ast = sink({store(index(buffer_param(0, Scalar::Float32), idx(0)), fs),
                     store(index(buffer_param(1, Scalar::Int32), idx(0)), im)});
  Buffer of(16), oi(16), xf(48), xi(48);
  for (int e = 0; e < 12; ++e) {
    xf.as<float>()[e] = static_cast<float>(e);
    xi.as<int32_t>()[e] = -100 + e * (e % 2 ? 1 : -1);
  }
  ASSERT_EQ(run(ast, {&of, &oi, &xf, &xi}), "");
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(of.as<float>()[l], static_cast<float>(l + (l + 4) + (l + 8))) << l;
    EXPECT_EQ(oi.as<int32_t>()[l],
              std::max({xi.as<int32_t>()[l], xi.as<int32_t>()[l + 4], xi.as<int32_t>()[l + 8]}))
        << l;
  }
}

TEST(EdgeCases, HalfAndBfloatConvertThroughFloat) {
  UOpPtr h = load(index(buffer_param(1, Scalar::Float16), idx(0)), Scalar::Float16);
  UOpPtr kernel =
      sink({store(index(buffer_param(0, Scalar::Float32), idx(0)),
                  cast(cast(cast(h, Scalar::BFloat16), Scalar::Float16), Scalar::Float32))});
  Buffer out(4), in(2);
  in.as<uint16_t>()[0] = 0x3E00; // 1.5 in float16
  ASSERT_EQ(run(kernel, {&out, &in}, false), "");
  EXPECT_EQ(out.as<float>()[0], 1.5f);
}

TEST(EdgeCases, BitcastsOfBoolsAreRejected) {
  UOpPtr b = UOp::make(Op::Bitcast, Scalar::Bool, {UOp::const_int(Scalar::UInt8, 1)});
  std::vector<std::string> errors = verify(b, spec_scalar());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "%1 = BITCAST bool: bools have no bit pattern to cast; compare or CAST instead");
}

TEST(EdgeCases, TwoVariablesWithOneNameAreAnError) {
  UOpPtr a = UOp::variable("n", 0, 4, Scalar::Int32), b = UOp::variable("n", 0, 9, Scalar::Int32);
  UOpPtr kernel = sink({store(index(buffer_param(0, Scalar::Int32), idx(0)), a + b)});
  Buffer out(4);
  std::string err = run(kernel, {&out}, false);
  EXPECT_NE(err.find("two variables are named 'n' with different bounds"), std::string::npos)
      << err;
}

TEST(EdgeCases, ImpossibleBufferSizesAreARuntimeFailure) {
  EXPECT_THROW(Buffer(SIZE_MAX - 10), RuntimeFailure);
}

} // namespace
} // namespace beamlab

namespace beamlab {
namespace {

TEST(EdgeCases, ConversionsToBfloat16RoundOnce) {
  // int32 2^24 + 2^16 + 1: through float it would round to 2^24 (0x4b80); correctly 0x4b81.
  // float64 1 + 2^-8 + 2^-30: through float it would tie to 1.0 (0x3f80); correctly 0x3f81.
  UOpPtr i = load(index(buffer_param(1, Scalar::Int32), idx(0)), Scalar::Int32);
  UOpPtr d = load(index(buffer_param(2, Scalar::Float64), idx(0)), Scalar::Float64);
  UOpPtr out = buffer_param(0, Scalar::BFloat16);
  UOpPtr kernel = sink({store(index(out, idx(0)), cast(i, Scalar::BFloat16)),
                        store(index(out, idx(1)), cast(d, Scalar::BFloat16))});
  Buffer o(4), in_i = ints({(1 << 24) + (1 << 16) + 1}), in_d(8);
  in_d.as<double>()[0] = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  ASSERT_EQ(run(kernel, {&o, &in_i, &in_d}, false), "");
  EXPECT_EQ(o.as<uint16_t>()[0], 0x4b81);
  EXPECT_EQ(o.as<uint16_t>()[1], 0x3f81);
}

} // namespace
} // namespace beamlab

namespace beamlab {
namespace {

TEST(EdgeCases, RuntimeBfloat16HelpersRoundLikeTheConstantFolder) {
  // The helpers serve hosts without native bf16 instructions; this one may have them, so
  // they are checked directly, against const_eval's rounding, on random and special values.
  auto value_of = [](uint16_t bits) {
    return static_cast<double>(std::bit_cast<float>(uint32_t{bits} << 16));
  };
  auto returned_bits = [](float r) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(r)); };
  std::mt19937_64 rng(7);
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                65504.0,
                                3.3895313892515355e38,
                                3.4e38,
                                1e-40,
                                1.0 + std::ldexp(1.0, -8),
                                1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30),
                                INFINITY,
                                -INFINITY};
  for (int k = 0; k < 20000; ++k)
    values.push_back(
        std::ldexp(std::uniform_real_distribution<double>(-2, 2)(rng),
                   static_cast<int>(std::uniform_int_distribution<int>(-140, 130)(rng))));
  for (double v : values) {
    ASSERT_EQ(value_of(double_to_bfloat16_bits(v)), round_float(v, Scalar::BFloat16))
        << "double " << v;
    auto f = static_cast<float>(v);
    ASSERT_EQ(value_of(float_to_bfloat16_bits(f)),
              round_float(static_cast<double>(f), Scalar::BFloat16))
        << "float " << f;
    ASSERT_EQ(returned_bits(beamlab_truncdfbf2(v)), double_to_bfloat16_bits(v)); // the ABI shape
  }
  EXPECT_TRUE(std::isnan(value_of(float_to_bfloat16_bits(NAN))));
}

} // namespace
} // namespace beamlab

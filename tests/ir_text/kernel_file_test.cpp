// Kernels given as IR text (frontends/ir_text): a scheduled kernel read back is the same
// kernel (same key, same buffer sizes) and computes what the Tensor API computes on the same
// inputs; text that is not a runnable kernel is a one-line error naming the file.
#include "frontends/ir_text/kernel_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"

namespace beamlab::ir_text {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::string& text) {
  try {
    parse_kernel(text, "k.ir");
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<float> input_values(const Program& p, size_t slot) {
  const UOpPtr& b = p.kernels->items.at(0).buffers.at(slot);
  std::span<const float> v = p.kernel_inputs.at(buffer_id(*b))->as<float>();
  return {v.begin(), v.end()};
}

TEST(KernelFile, AScheduledKernelReadsBackAsTheSameKernelAndComputesTheSameValues) {
  ScheduleItem item =
      Tensor::rand({8, 16}, 1).matmul(Tensor::rand({16, 4}, 2)).relu().schedule().items.at(0);
  Program p = parse_kernel("# a comment line\n" + print_graph(item.ast), "mm.ir");
  ASSERT_TRUE(p.kernels);
  EXPECT_TRUE(p.outputs.empty());
  Schedule s = p.schedule();
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].key, item.key);
  EXPECT_EQ(s.items[0].name, item.name);
  ASSERT_EQ(s.items[0].buffers.size(), item.buffers.size());
  for (size_t i = 0; i < item.buffers.size(); ++i)
    EXPECT_EQ(buffer_size(*s.items[0].buffers[i]), buffer_size(*item.buffers[i])) << "slot " << i;
  // Which input the kernel reads first decides the slots: find A (8x16) by its size.
  size_t a = buffer_size(*s.items[0].buffers[1]) == 8 * 16 ? 1 : 2;
  Tensor ta(input_values(p, a), {8, 16}), tb(input_values(p, 3 - a), {16, 4});
  std::vector<float> want = ta.matmul(tb).relu().to_vector<float>();
  ExecutionPlan plan = ExecutionPlan::prepare(s, p.inputs());
  plan.run();
  std::span<const float> got = plan.buffer(*s.outputs.at(0))->as<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  EXPECT_GT(*std::max_element(got.begin(), got.end()), 0.5f); // random inputs, not zeros
}

TEST(KernelFile, TextThatIsNotARunnableKernelIsAnErrorNamingTheFile) {
  EXPECT_EQ(error_of("%0 = MULL index\n"), "k.ir:1:6: unknown op 'MULL'");
  EXPECT_EQ(error_of("%0 = CONST index : 3\n"),
            "k.ir: the last node must be a SINK of STOREs (a kernel AST, as 'beamlab run "
            "--save-kernels DIR' writes them), not CONST");
  // out[r] = in[r - 1]: reads before the buffer's start.
  UOpPtr r = kernel_range(16, 0, LoopKind::Loop);
  UOpPtr out = buffer_param(0, Scalar::Float32), in = buffer_param(1, Scalar::Float32);
  auto kernel = [&](const UOpPtr& address, const UOpPtr& read) {
    return print_graph(sink({store(index(address, r), load(read, Scalar::Float32))}));
  };
  EXPECT_THAT(error_of(kernel(out, index(in, r - 1))), HasSubstr("k.ir: buffer 1 is indexed at "));
  EXPECT_THAT(error_of(kernel(out, index(in, r - 1))),
              HasSubstr("which can be negative (-1); gate the access with a valid mask"));
  // Gated, the same read is the kernel's own business (padding reads look like this).
  EXPECT_EQ(
      error_of(kernel(out, index(in, r - 1, alu(Op::CmpLt, UOp::const_int(Scalar::Index, 0), r)))),
      "no error");
  // out[r] = in2[r]: slot 1 is missing.
  UOpPtr in2 = buffer_param(2, Scalar::Float32);
  EXPECT_EQ(error_of(kernel(out, index(in2, r))),
            "k.ir: buffer slots must be numbered 0, 1, 2, ... in order; slot 1 is missing");
  // in[r] = out[r]: a store into an input.
  EXPECT_EQ(error_of(kernel(in, index(out, r))),
            "k.ir: a kernel stores into its output, DEFINE_GLOBAL 0, only");
  // out[r] = in[idx[r]]: an index read from memory has no known range.
  UOpPtr idx = buffer_param(2, Scalar::Int32);
  UOpPtr gathered = cast(load(index(idx, r), Scalar::Int32), Scalar::Index);
  EXPECT_THAT(error_of(kernel(out, index(in, gathered))),
              HasSubstr("which is read from memory, so its range is unknown; an index must be "
                        "built from ranges and constants"));
}

// Only loop and reduce ranges run to a symbolic extent, one built from DEFINE_VARs.
TEST(KernelFile, ASymbolicExtentRunsOnlyAPlainLoopOrAReduction) {
  UOpPtr n = UOp::variable("n", 1, 4);
  UOpPtr out = buffer_param(0, Scalar::Float32), in = buffer_param(1, Scalar::Float32);
  auto kernel = [&](const UOpPtr& r) {
    return print_graph(sink({store(index(out, r), load(index(in, r), Scalar::Float32))}));
  };
  EXPECT_EQ(error_of(kernel(kernel_range(n, 0, LoopKind::Loop))), "no error");
  EXPECT_EQ(error_of(kernel(kernel_range(n * 2, 0, LoopKind::Loop))), "no error");
  EXPECT_THAT(error_of(kernel(kernel_range(n, 0, LoopKind::Parallel))),
              HasSubstr("k.ir: a parallel RANGE runs to n; only loop and reduce ranges may have "
                        "a symbolic extent"));
  EXPECT_THAT(error_of(kernel(kernel_range(n, 0, LoopKind::Upcast))),
              HasSubstr("k.ir: a upcast RANGE runs to n"));
  UOpPtr loaded = cast(
      load(index(buffer_param(2, Scalar::Int32), UOp::const_int(Scalar::Index, 0)), Scalar::Int32),
      Scalar::Index);
  EXPECT_THAT(error_of(kernel(kernel_range(loaded, 0, LoopKind::Loop))),
              HasSubstr("which reads LOAD; a symbolic extent is built from constants and "
                        "DEFINE_VARs"));
}

} // namespace
} // namespace beamlab::ir_text

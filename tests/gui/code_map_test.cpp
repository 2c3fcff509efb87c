// The code view's map between LLVM IR and assembly: a hand-written verbose assembly listing
// with known loops, and a real kernel's code, where every loop's header block exists in the IR
// and the map leads from each to the other.
#include <gtest/gtest.h>

#include "gui/code_map.hpp"
#include "gui/workbench.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::gui {
namespace {

// Two nested loops as LLVM's verbose assembly prints them.
const char* const kListing =
    "beamlab_kernel:                 # @beamlab_kernel\n"
    "# %bb.0:                        # %entry\n"
    "\txorl\t%eax, %eax\n"
    ".LBB0_1:                        # %outer\n"
    "                                # =>This Loop Header: Depth=1\n"
    "                                #     Child Loop BB0_2 Depth 2\n"
    "\tvxorps\t%xmm0, %xmm0, %xmm0\n"
    ".LBB0_2:                        # %inner\n"
    "                                #   Parent Loop BB0_1 Depth=1\n"
    "                                # =>  This Inner Loop Header: Depth=2\n"
    "\tvmovups\t(%rdi,%rcx,4), %zmm1\n"
    "\tvfmadd231ps\t(%rsi,%rcx,4), %zmm1, %zmm0\n"
    "\taddq\t$16, %rcx\n"
    "\tjne\t.LBB0_2\n"
    "# %bb.3:                        # %outer.latch\n"
    "\tincq\t%rdx\n"
    "\tjne\t.LBB0_1\n"
    "# %bb.4:                        # %exit\n"
    "\tretq\n";

TEST(CodeMap, AHandWrittenListingsLoopsAndBlocks) {
  std::vector<AsmLoop> loops = asm_loops(kListing);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].label, ".LBB0_1");
  EXPECT_EQ(loops[0].ir_block, "outer");
  EXPECT_EQ(loops[0].depth, 1);
  EXPECT_FALSE(loops[0].innermost);
  EXPECT_EQ(loops[0].first_line, 3);
  EXPECT_EQ(loops[0].last_line, 16);
  EXPECT_EQ(loops[0].instructions, 7); // vxorps, the inner four, incq, jne
  EXPECT_EQ(loops[1].ir_block, "inner");
  EXPECT_TRUE(loops[1].innermost);
  EXPECT_EQ(loops[1].instructions, 4);
  EXPECT_EQ(loops[1].fmas, 1);
  EXPECT_EQ(loops[1].memory_operands, 2);
  EXPECT_EQ(loops[1].vector_bits, 512);
  EXPECT_EQ(loops[1].summary(), "loop %inner, depth 2, innermost: 4 instructions, 1 FMAs, 2 "
                                "memory operands, 512-bit vectors (16 float lanes)");
  EXPECT_EQ(asm_block_at(kListing, 12), "inner");
  EXPECT_EQ(asm_block_at(kListing, 15), "outer.latch");
  EXPECT_EQ(asm_block_at(kListing, 0), "");
  EXPECT_EQ(asm_block_line(kListing, "exit"), 17);
  EXPECT_EQ(asm_block_line(kListing, "nowhere"), -1);
  const char* ir = "define void @k() {\nentry:\n  br label %outer\n\nouter:  ; preds = %entry\n"
                   "  %x = add i64 0, 1\n}\n";
  EXPECT_EQ(ir_block_at(ir, 5), "outer");
  EXPECT_EQ(ir_block_at(ir, 2), "entry");
  EXPECT_EQ(ir_block_at(ir, 0), "");
  EXPECT_EQ(ir_block_line(ir, "outer"), 4);
}

// A loop whose header LLVM placed below its body: entered by a jump, looped back to by
// falling through from the latch, with no branch back to its label. Its blocks are the ones
// annotated as in it.
TEST(CodeMap, ALoopWithItsHeaderBelowItsBodyCountsItsBlocks) {
  const char* listing = "beamlab_kernel:                 # @beamlab_kernel\n"
                        "# %bb.0:                        # %entry\n"
                        "\txorl\t%eax, %eax\n"
                        "\tjmp\t.LBB0_1\n"
                        ".LBB0_3:                        # %vector.body\n"
                        "                                #   in Loop: Header=BB0_1 Depth=1\n"
                        "\tvmovups\t(%rdi,%rax,4), %zmm0\n"
                        "\tvmaxps\t%zmm1, %zmm0, %zmm0\n"
                        "\tvmovups\t%zmm0, (%rsi,%rax,4)\n"
                        "\taddq\t$16, %rax\n"
                        "\tcmpq\t$1024, %rax\n"
                        "\tje\t.LBB0_4\n"
                        ".LBB0_1:                        # %body\n"
                        "                                # =>This Loop Header: Depth=1\n"
                        "\ttestq\t%rdx, %rdx\n"
                        "\tjne\t.LBB0_3\n"
                        ".LBB0_4:                        # %exit\n"
                        "\tretq\n";
  std::vector<AsmLoop> loops = asm_loops(listing);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].ir_block, "body");
  EXPECT_EQ(loops[0].first_line, 12);
  EXPECT_EQ(loops[0].last_line, 15);
  EXPECT_EQ(loops[0].instructions, 8); // the vector body's six and the header's two
  EXPECT_EQ(loops[0].memory_operands, 2);
  EXPECT_EQ(loops[0].vector_bits, 512);
}

// Two loops nested with the outer header below its body, the inner loop's blocks annotated
// only with the inner header; then a second function (a kernel's next stage, its own module)
// whose loop has the same label. Each loop counts its own blocks and its inner loop's, never
// the other function's.
TEST(CodeMap, NestedLoopsAndSeveralFunctionsKeepTheirOwnBlocks) {
  const char* listing = "beamlab_kernel:                 # @beamlab_kernel\n"
                        "# %bb.0:                        # %entry\n"
                        "\tjmp\t.LBB0_1\n"
                        ".LBB0_2:                        # %inner\n"
                        "                                #   Parent Loop BB0_1 Depth=1\n"
                        "                                # =>  This Inner Loop Header: Depth=2\n"
                        "\tvaddps\t%zmm0, %zmm1, %zmm1\n"
                        "\ttestq\t%rax, %rax\n"
                        "\tje\t.LBB0_5\n"
                        "# %bb.6:                        # %inner.more\n"
                        "                                #   in Loop: Header=BB0_2 Depth=2\n"
                        "\tvmulps\t%zmm0, %zmm1, %zmm1\n"
                        ".LBB0_5:                        # %inner.latch\n"
                        "                                #   in Loop: Header=BB0_2 Depth=2\n"
                        "\tdecq\t%rcx\n"
                        "\tjne\t.LBB0_2\n"
                        "# %bb.3:                        # %outer.latch\n"
                        "                                #   in Loop: Header=BB0_1 Depth=1\n"
                        "\tincq\t%rdx\n"
                        "\tcmpq\t$8, %rdx\n"
                        "\tje\t.LBB0_4\n"
                        ".LBB0_1:                        # %outer\n"
                        "                                # =>This Loop Header: Depth=1\n"
                        "                                #     Child Loop BB0_2 Depth 2\n"
                        "\tmovq\t$16, %rcx\n"
                        "\tjmp\t.LBB0_2\n"
                        ".LBB0_4:                        # %exit\n"
                        "\tretq\n"
                        "\t.cfi_endproc\n"
                        "beamlab_kernel_combine:         # @beamlab_kernel_combine\n"
                        "# %bb.0:                        # %entry\n"
                        ".LBB0_1:                        # %body\n"
                        "                                # =>This Inner Loop Header: Depth=1\n"
                        "\tvmovups\t(%rdi), %zmm0\n"
                        "\taddq\t$64, %rdi\n"
                        "\tjne\t.LBB0_1\n"
                        "# %bb.2:                        # %exit\n"
                        "\tretq\n";
  std::vector<AsmLoop> loops = asm_loops(listing);
  ASSERT_EQ(loops.size(), 3u);
  const AsmLoop &inner = loops[0], &outer = loops[1], &other = loops[2];
  EXPECT_EQ(inner.ir_block, "inner");
  EXPECT_EQ(inner.instructions, 6); // its header's three, inner.more's one, its latch's two
  EXPECT_EQ(outer.ir_block, "outer");
  EXPECT_EQ(outer.instructions, 11); // the inner loop's six, its latch's three, its header's two
  EXPECT_LT(outer.last_line, 29);    // not into the next function
  EXPECT_EQ(other.ir_block, "body");
  EXPECT_EQ(other.instructions, 3);
  EXPECT_EQ(other.memory_operands, 1);
}

// A matmul with 16 lanes: its innermost loop does FMAs on vectors, and every loop's header
// block is a block of the IR, whose assembly starts at that loop.
TEST(CodeMap, ARealKernelsLoopsLeadToTheirIrBlocks) {
  Tensor a = Tensor::rand({64, 64}, 1), b = Tensor::rand({64, 64}, 2);
  KernelTask t = kernel_task(a.matmul(b).schedule().items.at(0));
  auto code = kernel_code(t.ast, *parse_opts("UPCAST(1,16)"), t.name);
  ASSERT_TRUE(code) << code.error();
  std::vector<AsmLoop> loops = asm_loops(code->assembly);
  ASSERT_FALSE(loops.empty()) << code->assembly.substr(0, 2000);
  bool vector_fma = false;
  for (const AsmLoop& l : loops) {
    EXPECT_GE(ir_block_line(code->llvm_ir, l.ir_block), 0) << l.ir_block;
    EXPECT_EQ(asm_block_at(code->assembly, l.first_line), l.ir_block);
    EXPECT_LE(l.first_line, l.last_line);
    vector_fma |= l.innermost && l.fmas > 0 && l.vector_bits >= 128;
  }
  EXPECT_TRUE(vector_fma) << code->assembly.substr(0, 3000);
}

// Issue 40 (low): "Side by side" said "0 instructions, scalar" for every loop of an elementwise
// kernel. Each loop of an elementwise kernel, under plans with and without vectors and threads,
// counts the instructions between its header and its branch back, and the vector plans' inner
// loops compute on vector registers.
TEST(CodeMap, AnElementwiseKernelsLoopsCountTheirInstructions) {
  Tensor a = Tensor::rand({64, 256}, 1), b = Tensor::rand({64, 256}, 2);
  KernelTask t = kernel_task((a + b).relu().schedule().items.at(0));
  for (const char* opts : {"", "UPCAST(1,16)", "UPCAST(1,16) THREAD(0,2)", "THREAD(0,2)"}) {
    auto code = kernel_code(t.ast, *parse_opts(opts), t.name);
    ASSERT_TRUE(code) << code.error();
    std::vector<AsmLoop> loops = asm_loops(code->assembly);
    ASSERT_FALSE(loops.empty()) << opts << "\n" << code->assembly.substr(0, 3000);
    for (const AsmLoop& l : loops) {
      EXPECT_GT(l.instructions, 0) << opts << ": " << l.summary();
      EXPECT_LT(l.first_line, l.last_line) << opts << ": " << l.summary();
    }
    if (std::string_view(opts).find("UPCAST") != std::string_view::npos)
      EXPECT_GE(loops.back().vector_bits, 256) << opts << ": " << loops.back().summary();
  }
}

} // namespace
} // namespace beamlab::gui

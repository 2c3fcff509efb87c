// A kernel's LLVM IR and assembly read side by side: which IR block an assembly line came from
// (LLVM's verbose assembly names it, "# %body10"), and the loops of the assembly with what they
// do per iteration (instructions, FMAs, memory operands, the widest vector register). Plain
// text in, plain values out: the Kernel view draws them, the tests check them.
#pragma once

#include <string>
#include <vector>

namespace beamlab::gui {

/// `text`'s lines, without their line ends.
std::vector<std::string> split_lines(const std::string& text);

/// One loop of the assembly, as LLVM's verbose assembly marks its header.
struct AsmLoop {
  std::string label;    ///< ".LBB0_4"
  std::string ir_block; ///< the IR block of its header: "body10"
  int depth = 1;        ///< 1: outermost
  bool innermost = false;
  /// Its header label's line, and the last line of its blocks (0-based): LLVM may place the
  /// header below the body, so the loop's lines need not all lie between the two.
  int first_line = 0, last_line = 0;
  int instructions = 0; ///< in its blocks, inner loops' included
  int fmas = 0;
  int memory_operands = 0;
  int vector_bits = 0; ///< the widest vector register it names: 512 (zmm), 256, 128; 0 none

  /// "loop %body10, depth 3, innermost: 34 instructions, 16 FMAs, 9 memory operands, 512-bit
  /// vectors (16 float lanes)".
  std::string summary() const;
};

/// The loops of `assembly` (several functions' one after another), in order of their headers.
std::vector<AsmLoop> asm_loops(const std::string& assembly);

/// The IR block assembly line `line` (0-based) belongs to: the nearest block comment above it
/// ("" above the first).
std::string asm_block_at(const std::string& assembly, int line);
/// The line where the assembly of IR block `block` starts, searching from line `from` (-1: none).
int asm_block_line(const std::string& assembly, const std::string& block, int from = 0);

/// The IR block LLVM IR line `line` belongs to (the nearest label above it; "" outside one).
std::string ir_block_at(const std::string& ir, int line);
/// The line of block `block`'s label in `ir`, searching from line `from` (-1: none).
int ir_block_line(const std::string& ir, const std::string& block, int from = 0);

} // namespace beamlab::gui

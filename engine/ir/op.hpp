// The operations a UOp can be, from tensor-level graphs down to linearized kernels.
//
// One enum serves every level (tinygrad's design): passes rewrite between them. The text
// names, not the enum values, enter stable hashes and the printed IR, so ops can be added
// anywhere without changing a hash. Each op has a source-count range (op_arity) that UOp
// construction checks; finer invariants live in the verifier's spec rule sets.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace beamlab {

// clang-format off
#define BEAMLAB_OPS(X)                                                                             \
  /* graph roots, constants, definitions */                                                        \
  X(Sink) X(Noop) X(Const) X(DefineGlobal) X(DefineLocal) X(DefineReg) X(DefineVar) X(Special)    \
  /* loops and control flow */                                                                     \
  X(Range) X(End) X(If) X(EndIf) X(Barrier)                                                        \
  /* memory */                                                                                     \
  X(Index) X(Load) X(Store)                                                                        \
  /* vectors and types */                                                                          \
  X(Vectorize) X(Gep) X(Cast) X(Bitcast)                                                           \
  /* unary ALU */                                                                                  \
  X(Neg) X(Exp2) X(Log2) X(Sin) X(Sqrt) X(Recip) X(Trunc)                                          \
  /* binary ALU */                                                                                 \
  X(Add) X(Sub) X(Mul) X(Idiv) X(Mod) X(Fdiv) X(Max) X(CmpLt) X(CmpNe) X(CmpEq) X(And) X(Or)       \
  X(Xor) X(Shl) X(Shr) X(Pow)                                                                      \
  /* ternary ALU */                                                                                \
  X(Where) X(MulAcc)                                                                               \
  /* reductions: in-kernel over ranges, and tensor-level over axes */                              \
  X(Reduce) X(ReduceAxis)                                                                          \
  /* tensor-level graph */                                                                         \
  X(Buffer) X(Reshape) X(Permute) X(Expand) X(Pad) X(Shrink) X(Flip) X(Contiguous) X(Copy)        \
  X(Assign) X(Kernel)
// clang-format on

enum class Op : uint8_t {
#define BEAMLAB_OP_ENUM(name) name,
  BEAMLAB_OPS(BEAMLAB_OP_ENUM)
#undef BEAMLAB_OP_ENUM
};

inline constexpr int kNumOps = 0
#define BEAMLAB_OP_COUNT(name) +1
    BEAMLAB_OPS(BEAMLAB_OP_COUNT)
#undef BEAMLAB_OP_COUNT
    ;

/// The op's text name: upper snake case, e.g. "DEFINE_GLOBAL", "CMPLT".
std::string_view op_name(Op op);
/// Inverse of op_name.
std::optional<Op> parse_op(std::string_view name);

/// Allowed number of sources: [min, max], max -1 meaning unbounded.
struct Arity {
  int min;
  int max;
};
Arity op_arity(Op op);

bool is_unary_alu(Op op);
bool is_binary_alu(Op op);
bool is_ternary_alu(Op op);
inline bool is_alu(Op op) { return is_unary_alu(op) || is_binary_alu(op) || is_ternary_alu(op); }
/// a op b == b op a.
bool is_commutative(Op op);
/// (a op b) op c == a op (b op c) on integers.
bool is_associative(Op op);
/// Result is bool whatever the operand type.
bool is_comparison(Op op);

/// A set of ops, for patterns. Constexpr-friendly bitset.
class OpSet {
public:
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Op> ops) {
    for (Op op : ops) add(op);
  }
  constexpr void add(Op op) {
    bits_[static_cast<int>(op) / 64] |= uint64_t{1} << (static_cast<int>(op) % 64);
  }
  constexpr bool contains(Op op) const {
    return (bits_[static_cast<int>(op) / 64] >> (static_cast<int>(op) % 64)) & 1;
  }
  constexpr bool empty() const { return bits_[0] == 0 && bits_[1] == 0; }

private:
  static_assert(kNumOps <= 128);
  uint64_t bits_[2] = {0, 0};
};

} // namespace beamlab

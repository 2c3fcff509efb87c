// Op names and properties; see op.hpp.
#include "engine/ir/op.hpp"

#include <array>
#include <string>

namespace beamlab {
namespace {

// "DefineGlobal" -> "DEFINE_GLOBAL"; "CmpLt" -> "CMPLT" (no break between Cmp and Lt).
constexpr std::array<std::string_view, kNumOps> kNames = {
    "SINK",       "NOOP",    "CONST",  "DEFINE_GLOBAL", "DEFINE_LOCAL", "DEFINE_REG",
    "DEFINE_VAR", "SPECIAL", "RANGE",  "END",           "IF",           "ENDIF",
    "BARRIER",    "INDEX",   "LOAD",   "STORE",         "VECTORIZE",    "GEP",
    "CAST",       "BITCAST", "NEG",    "EXP2",          "LOG2",         "SIN",
    "SQRT",       "RECIP",   "TRUNC",  "ADD",           "SUB",          "MUL",
    "IDIV",       "MOD",     "FDIV",   "MAX",           "CMPLT",        "CMPNE",
    "CMPEQ",      "AND",     "OR",     "XOR",           "SHL",          "SHR",
    "POW",        "WHERE",   "MULACC", "REDUCE",        "REDUCE_AXIS",  "BUFFER",
    "RESHAPE",    "PERMUTE", "EXPAND", "PAD",           "SHRINK",       "FLIP",
    "CONTIGUOUS", "COPY",    "ASSIGN", "KERNEL",
};

} // namespace

std::string_view op_name(Op op) { return kNames[static_cast<size_t>(op)]; }

std::optional<Op> parse_op(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Op>(i);
  return std::nullopt;
}

bool is_unary_alu(Op op) { return op >= Op::Neg && op <= Op::Trunc; }
bool is_binary_alu(Op op) { return op >= Op::Add && op <= Op::Pow; }
bool is_ternary_alu(Op op) { return op == Op::Where || op == Op::MulAcc; }

bool is_commutative(Op op) {
  static constexpr OpSet kSet = {Op::Add,   Op::Mul, Op::Max, Op::CmpNe,
                                 Op::CmpEq, Op::And, Op::Or,  Op::Xor};
  return kSet.contains(op);
}

bool is_associative(Op op) {
  static constexpr OpSet kSet = {Op::Add, Op::Mul, Op::Max, Op::And, Op::Or, Op::Xor};
  return kSet.contains(op);
}

bool is_comparison(Op op) { return op == Op::CmpLt || op == Op::CmpNe || op == Op::CmpEq; }

Arity op_arity(Op op) {
  if (is_unary_alu(op)) return {1, 1};
  if (is_binary_alu(op)) return {2, 2};
  if (is_ternary_alu(op)) return {3, 3};
  switch (op) {
  case Op::Const:
  case Op::DefineGlobal:
  case Op::DefineLocal:
  case Op::DefineReg:
  case Op::DefineVar: return {0, 0};
  case Op::Special:
  case Op::Range:
  case Op::EndIf:
  case Op::Gep:
  case Op::Cast:
  case Op::Bitcast:
  case Op::ReduceAxis:
  case Op::Contiguous: return {1, 1};
  case Op::Index: return {2, 3};
  case Op::Store:
  case Op::Assign: return {2, -1};
  case Op::Reshape:
  case Op::Permute:
  case Op::Expand:
  case Op::Pad:
  case Op::Shrink:
  case Op::Flip:
  case Op::Copy: return {1, 2};
  case Op::End:
  case Op::If:
  case Op::Load:
  case Op::Vectorize:
  case Op::Reduce: return {1, -1};
  default: return {0, -1};
  }
}

} // namespace beamlab

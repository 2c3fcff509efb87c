#include "tests/ir/eval_reference.hpp"

#include <gtest/gtest.h>

namespace beamlab::testing {

int64_t Evaluator::wrap(int64_t v, DType dt) {
  switch (dt.scalar()) {
  case Scalar::Bool: return v != 0;
  case Scalar::Int8: return static_cast<int8_t>(static_cast<uint8_t>(v));
  case Scalar::Int16: return static_cast<int16_t>(static_cast<uint16_t>(v));
  case Scalar::Int32: return static_cast<int32_t>(static_cast<uint32_t>(v));
  default: return v;
  }
}

int64_t Evaluator::eval(const UOpPtr& u) {
  if (auto it = memo_.find(u.get()); it != memo_.end()) return it->second;
  auto s = [&](size_t i) { return eval(u->src(i)); };
  auto as_u = [](int64_t v) { return static_cast<uint64_t>(v); };
  int64_t v = 0;
  switch (u->op()) {
  case Op::Const:
    v = u->arg().kind() == Arg::Kind::Bool ? u->arg().as_bool() : u->arg().as_int();
    break;
  case Op::DefineVar: v = point_.vars.at(u->arg().items()[0].as_str()); break;
  case Op::Range: v = point_.ranges.at(u->arg().as_int()); break;
  case Op::Add: v = static_cast<int64_t>(as_u(s(0)) + as_u(s(1))); break;
  case Op::Sub: v = static_cast<int64_t>(as_u(s(0)) - as_u(s(1))); break;
  case Op::Mul: v = static_cast<int64_t>(as_u(s(0)) * as_u(s(1))); break;
  case Op::Neg: v = static_cast<int64_t>(-as_u(s(0))); break;
  case Op::Idiv:
  case Op::Mod: {
    int64_t a = s(0), b = s(1);
    if (b == 0) {
      ADD_FAILURE() << "division by zero in the reference evaluator";
      return 0;
    }
    v = u->op() == Op::Idiv ? a / b : a % b;
    break;
  }
  case Op::Max: v = std::max(s(0), s(1)); break;
  case Op::CmpLt: v = s(0) < s(1); break;
  case Op::CmpNe: v = s(0) != s(1); break;
  case Op::CmpEq: v = s(0) == s(1); break;
  case Op::And: v = s(0) & s(1); break;
  case Op::Or: v = s(0) | s(1); break;
  case Op::Xor: v = s(0) ^ s(1); break;
  case Op::Where: v = s(0) ? s(1) : s(2); break;
  case Op::Cast: v = s(0); break;
  default: ADD_FAILURE() << "reference evaluator has no " << op_name(u->op()); return 0;
  }
  v = wrap(v, u->dtype());
  memo_.emplace(u.get(), v);
  return v;
}

} // namespace beamlab::testing

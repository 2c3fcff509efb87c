// The verifier and the scalar IR spec; see verify.hpp.
#include "engine/rewrite/verify.hpp"

#include <fmt/format.h>

#include "engine/ir/const_eval.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/support/knobs.hpp"

namespace beamlab {

std::vector<std::string> verify(const UOpPtr& root, const Spec& spec) {
  std::vector<std::string> errors;
  std::vector<UOpPtr> nodes = toposort(root);
  for (size_t id = 0; id < nodes.size(); ++id) {
    const UOpPtr& u = nodes[id];
    std::optional<std::string> problem =
        fmt::format("no rule of spec '{}' accepts {} nodes", spec.name(), op_name(u->op()));
    for (uint32_t i : spec.candidates(u->op())) {
      Captures caps;
      if (!spec.rule(i).pat.match(u, caps)) continue;
      problem = spec.rule(i).fn(Match{u, caps, {}});
      break;
    }
    if (problem)
      errors.push_back(
          fmt::format("%{} = {} {}: {}", id, op_name(u->op()), u->dtype().str(), *problem));
  }
  return errors;
}

void verify_or_throw(const UOpPtr& root, const Spec& spec, std::string_view step) {
  std::vector<std::string> errors = verify(root, spec);
  if (errors.empty()) return;
  std::string all;
  for (const std::string& e : errors) all += "\n  " + e;
  internal_error << "step '" << step << "' produced IR that violates spec '" << spec.name()
                 << "':" << all << "\nthe graph:\n"
                 << print_graph(root);
}

bool verification_enabled() {
#ifdef NDEBUG
  constexpr int64_t kDefault = 0;
#else
  constexpr int64_t kDefault = 1;
#endif
  return knob_int("BEAMLAB_VERIFY", kDefault) != 0;
}

namespace {

using Check = std::optional<std::string>;

Check all_sources_are(const Match& m, DType dt) {
  for (size_t i = 0; i < m.root->src().size(); ++i)
    if (m.root->src(i)->dtype() != dt)
      return fmt::format("source {} is {}, expected {}", i, m.root->src(i)->dtype().str(),
                         dt.str());
  return std::nullopt;
}

Check check_const(const Match& m) {
  DType dt = m.root->dtype();
  const Arg& a = m.root->arg();
  if (dt.lanes() != 1 || dt.is_ptr()) return "constants are scalars; use VECTORIZE for vectors";
  if (dt.is_bool())
    return a.kind() == Arg::Kind::Bool ? std::nullopt : Check("a bool constant needs true/false");
  if (dt.is_float())
    return a.is_float() ? std::nullopt : Check("a float constant needs a float arg");
  if (!dt.is_int()) return fmt::format("no constants of type {}", dt.str());
  if (!a.is_int()) return Check("an integer constant needs an int arg");
  if (wrap_int(a.as_int(), dt) != a.as_int())
    return fmt::format("{} does not fit in {}", a.as_int(), dt.str());
  return std::nullopt;
}

Check check_define_var(const Match& m) {
  const Arg& a = m.root->arg();
  if (!m.root->dtype().is_int()) return "variables are integers";
  bool shaped = a.kind() == Arg::Kind::Tuple && a.items().size() == 3 &&
                a.items()[0].kind() == Arg::Kind::Str && a.items()[1].is_int() &&
                a.items()[2].is_int();
  if (!shaped) return "arg must be (name, min, max)";
  int64_t lo = a.items()[1].as_int(), hi = a.items()[2].as_int();
  if (lo > hi) return "min is greater than max";
  DType dt = m.root->dtype();
  if (lo < dt.int_min() || hi > dt.int_max())
    return fmt::format("bounds [{}, {}] don't fit {}", lo, hi, dt.str());
  return std::nullopt;
}

// A RANGE's arg is its axis id, or in kernels (axis id, kind).
bool is_range_arg(const Arg& a) {
  if (a.is_int()) return true;
  if (a.kind() != Arg::Kind::Tuple || a.items().size() != 2 || !a.items()[0].is_int() ||
      a.items()[1].kind() != Arg::Kind::Str)
    return false;
  return parse_loop_kind(a.items()[1].as_str()).has_value();
}

Check check_range(const Match& m) {
  if (!m.root->dtype().is_int() || m.root->dtype().lanes() != 1)
    return "a range is a scalar integer";
  if (!is_range_arg(m.root->arg()))
    return "arg must be the axis id, or (axis id, "
           "\"parallel\"|\"loop\"|\"reduce\"|\"upcast\"|\"unroll\")";
  return all_sources_are(m, m.root->dtype());
}

bool int_only(Op op) {
  static constexpr OpSet kSet = {Op::Idiv, Op::Mod, Op::Shl, Op::Shr};
  return kSet.contains(op);
}
bool float_only(Op op) {
  static constexpr OpSet kSet = {Op::Fdiv, Op::Pow,  Op::Exp2,  Op::Log2,
                                 Op::Sin,  Op::Sqrt, Op::Recip, Op::Trunc};
  return kSet.contains(op);
}
bool bitwise(Op op) { return op == Op::And || op == Op::Or || op == Op::Xor; }

Check check_alu(const Match& m) {
  Op op = m.root->op();
  DType dt = m.root->dtype();
  if (dt.is_ptr() || dt.is_void()) return fmt::format("an ALU op can't produce {}", dt.str());
  if (is_comparison(op)) {
    DType operand = m.root->src(0)->dtype();
    if (dt != DType(Scalar::Bool).vec(operand.lanes())) return "a comparison produces bool";
    return all_sources_are(m, operand);
  }
  if (op == Op::Where) {
    if (m.root->src(0)->dtype() != DType(Scalar::Bool).vec(dt.lanes()))
      return "WHERE's condition must be bool";
    if (m.root->src(1)->dtype() != dt || m.root->src(2)->dtype() != dt)
      return "WHERE's branches must have its dtype";
    return std::nullopt;
  }
  if (int_only(op) && !dt.is_int()) return fmt::format("{} takes integers", op_name(op));
  if (float_only(op) && !dt.is_float()) return fmt::format("{} takes floats", op_name(op));
  if (bitwise(op) && !dt.is_int() && !dt.is_bool())
    return fmt::format("{} takes integers or bools", op_name(op));
  if (!bitwise(op) && dt.is_bool() && op != Op::Max)
    return fmt::format("{} doesn't take bools", op_name(op));
  return all_sources_are(m, dt);
}

Check check_cast(const Match& m) {
  DType to = m.root->dtype(), from = m.root->src(0)->dtype();
  if (to.is_ptr() || from.is_ptr() || to.is_void() || from.is_void())
    return "casts are between value types";
  if (to.lanes() != from.lanes()) return "a cast keeps the lane count";
  if (m.root->op() == Op::Bitcast && to.itemsize() != from.itemsize())
    return "a bitcast keeps the size";
  if (m.root->op() == Op::Bitcast && (to.is_bool() || from.is_bool()))
    return "bools have no bit pattern to cast; compare or CAST instead";
  return std::nullopt;
}

Check check_vectorize(const Match& m) {
  DType dt = m.root->dtype();
  if (dt.is_ptr() || static_cast<size_t>(dt.lanes()) != m.root->src().size())
    return "VECTORIZE of n sources has n lanes";
  return all_sources_are(m, dt.scalar_type());
}

Check check_gep(const Match& m) {
  const Arg& a = m.root->arg();
  DType from = m.root->src(0)->dtype();
  if (a.kind() != Arg::Kind::Tuple || static_cast<int>(a.items().size()) != m.root->dtype().lanes())
    return "arg must be a tuple of one lane index per result lane";
  for (const Arg& lane : a.items())
    if (!lane.is_int() || lane.as_int() < 0 || lane.as_int() >= from.lanes())
      return "lane index out of range";
  return m.root->dtype().scalar() == from.scalar() ? std::nullopt
                                                   : Check("GEP keeps the scalar type");
}

Check check_sink(const Match& m) {
  return m.root->dtype().is_void() ? std::nullopt : Check("SINK is void");
}

OpSet alu_ops() {
  OpSet s;
  for (int i = 0; i < kNumOps; ++i)
    if (is_alu(static_cast<Op>(i))) s.add(static_cast<Op>(i));
  return s;
}

} // namespace

namespace {

std::vector<Rule<CheckFn>> scalar_rules() {
  return {
      {UPat::ops({Op::Const}), check_const},
      {UPat::ops({Op::DefineVar}), check_define_var},
      {UPat::ops({Op::Range}), check_range},
      {UPat::ops(alu_ops()), check_alu},
      {UPat::ops({Op::Cast, Op::Bitcast}), check_cast},
      {UPat::ops({Op::Vectorize}), check_vectorize},
      {UPat::ops({Op::Gep}), check_gep},
      {UPat::ops({Op::Sink}), check_sink},
  };
}

// ---- kernels: buffers, registers, memory, loops, reductions ------------------------------

Check check_define_global(const Match& m) {
  if (!m.root->dtype().is_ptr() || m.root->dtype().addr_space() != AddrSpace::Global)
    return "a buffer parameter is a global pointer";
  if (!m.root->arg().is_int() || m.root->arg().as_int() < 0) return "arg must be the slot, >= 0";
  return std::nullopt;
}

Check check_define_reg(const Match& m) {
  DType dt = m.root->dtype();
  if (!dt.is_ptr() || dt.addr_space() != AddrSpace::Reg || dt.ptr_size() < 1)
    return "a register array is a reg pointer with a size >= 1";
  return std::nullopt;
}

Check check_index(const Match& m) {
  DType buf = m.root->src(0)->dtype(), at = m.root->src(1)->dtype();
  if (!buf.is_ptr()) return "source 0 must be a pointer";
  if (m.root->dtype() != buf) return "INDEX has its buffer's pointer type";
  if (!at.is_int() || at.lanes() != 1) return "the index is a scalar integer";
  if (m.root->src().size() == 3 && m.root->src(2)->dtype().scalar_type() != DType(Scalar::Bool))
    return "the gate is a bool, or a bool per lane of a vector access";
  return std::nullopt;
}

// LOAD(index, after...) and STORE(index, value, after...): the element type must match.
Check check_memory(const Match& m) {
  if (m.root->src(0)->op() != Op::Index) return "the address must be an INDEX";
  DType element = m.root->src(0)->dtype().base().scalar_type();
  DType value = m.root->op() == Op::Load ? m.root->dtype() : m.root->src(1)->dtype();
  if (m.root->op() == Op::Store && !m.root->dtype().is_void()) return "STORE is void";
  if (value.is_ptr() || value.scalar_type() != element)
    return fmt::format("{} of {} through a pointer to {}", op_name(m.root->op()), value.str(),
                       element.str());
  return std::nullopt;
}

Check check_end(const Match& m) {
  if (!m.root->dtype().is_void()) return "END is void";
  if (m.root->src().back()->op() != Op::Range) return "the last source must be the RANGE it closes";
  return std::nullopt;
}

Check check_reduce(const Match& m) {
  const Arg& a = m.root->arg();
  bool known = a.kind() == Arg::Kind::Op &&
               (a.as_op() == Op::Add || a.as_op() == Op::Mul || a.as_op() == Op::Max);
  if (!known) return "arg must be ADD, MUL or MAX";
  if (m.root->dtype() != m.root->src(0)->dtype()) return "REDUCE has its value's dtype";
  if (m.root->dtype().is_bool() && a.as_op() != Op::Max)
    return "bools reduce with MAX (any); sum them as integers";
  for (size_t i = 1; i < m.root->src().size(); ++i)
    if (m.root->src(i)->op() != Op::Range) return fmt::format("source {} must be a RANGE", i);
  return std::nullopt;
}

} // namespace

const Spec& spec_scalar() {
  static const Spec spec("scalar", scalar_rules());
  return spec;
}

const Spec& spec_kernel() {
  static const Spec spec("kernel", [] {
    std::vector<Rule<CheckFn>> rules = scalar_rules();
    std::vector<Rule<CheckFn>> kernel = {
        {UPat::ops({Op::DefineGlobal}), check_define_global},
        {UPat::ops({Op::DefineReg}), check_define_reg},
        {UPat::ops({Op::Index}), check_index},
        {UPat::ops({Op::Load, Op::Store}), check_memory},
        {UPat::ops({Op::End}), check_end},
        {UPat::ops({Op::Reduce}), check_reduce},
    };
    rules.insert(rules.end(), kernel.begin(), kernel.end());
    return rules;
  }());
  return spec;
}

} // namespace beamlab

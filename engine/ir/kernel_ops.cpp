// Kernel graph builders' out-of-line parts; see kernel_ops.hpp.
#include "engine/ir/kernel_ops.hpp"

#include <algorithm>
#include <limits>

#include "engine/ir/printer.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

std::vector<UOpPtr> variables_of(const UOpPtr& root) {
  std::vector<UOpPtr> out;
  for (const UOpPtr& u : toposort(root))
    if (u->op() == Op::DefineVar) out.push_back(u);
  std::sort(out.begin(), out.end(), [](const UOpPtr& a, const UOpPtr& b) {
    return a->arg().items()[0].as_str() < b->arg().items()[0].as_str();
  });
  return out;
}

std::string extent_label(const UOp& range) {
  const UOpPtr& extent = range.src(0);
  if (extent->is_const()) return std::to_string(extent->const_value());
  std::string label;
  for (const UOpPtr& u : toposort(extent)) {
    if (u->op() != Op::DefineVar) continue;
    if (!label.empty()) label += ".";
    label += u->arg().items()[0].as_str();
  }
  return label.empty() ? "sym" : label;
}

UOpPtr reduce_identity(Op op, DType dtype) {
  if (dtype.lanes() > 1) {
    std::vector<UOpPtr> lanes(static_cast<size_t>(dtype.lanes()),
                              reduce_identity(op, dtype.scalar_type()));
    return UOp::make(Op::Vectorize, dtype, std::move(lanes));
  }
  switch (op) {
  case Op::Add: return UOp::const_like(dtype, 0);
  case Op::Mul: return UOp::const_like(dtype, 1);
  case Op::Max:
    if (dtype.is_float()) return UOp::const_float(dtype, -std::numeric_limits<double>::infinity());
    if (dtype.is_bool()) return UOp::const_bool(false);
    return UOp::const_int(dtype, dtype.int_min());
  default: internal_error << "no identity for reduction " << op_name(op);
  }
  return nullptr;
}

} // namespace beamlab

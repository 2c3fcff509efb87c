// Kernel graph builders' out-of-line parts; see kernel_ops.hpp.
#include "engine/ir/kernel_ops.hpp"

#include <algorithm>

#include "engine/ir/printer.hpp"

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

} // namespace beamlab

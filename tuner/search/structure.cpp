// A kernel's structure and sizes; see structure.hpp.
#include "tuner/search/structure.hpp"

#include <cmath>
#include <limits>
#include <unordered_map>

namespace beamlab::tuner {
namespace {

/// A pointer type without its element count; other types as they are.
std::string dtype_without_size(DType d) {
  return d.is_ptr() ? d.base().ptr(d.addr_space()).str() : d.str();
}

/// Whether `u`'s arg is a size: an index constant's value.
bool is_size_constant(const UOp& u) { return u.op() == Op::Const && u.dtype() == Scalar::Index; }

/// The arg as the structure sees it: a variable's bounds are sizes, its name is not.
void hash_arg(const UOp& u, StableHasher& h) {
  if (u.op() != Op::DefineVar) return u.arg().hash_into(h);
  h.add_str(u.arg().items().at(0).as_str());
}

} // namespace

uint64_t structure_key(const UOpPtr& ast) {
  std::unordered_map<const UOp*, uint64_t> key;
  for (const UOpPtr& u : toposort(ast)) {
    StableHasher h;
    h.add_u64(kStructureVersion).add_str(op_name(u->op())).add_str(dtype_without_size(u->dtype()));
    if (is_size_constant(*u))
      h.add_str("size");
    else
      hash_arg(*u, h);
    h.add_u64(u->src().size());
    for (const UOpPtr& s : u->src()) h.add_u64(key.at(s.get()));
    key.emplace(u.get(), h.finish());
  }
  return key.at(ast.get());
}

std::vector<int64_t> size_signature(const UOpPtr& ast) {
  std::vector<int64_t> out;
  for (const Axis& a : kernel_axes(ast)) out.push_back(a.extent);
  return out;
}

double size_distance(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d += std::abs(std::log2(static_cast<double>(std::max<int64_t>(a[i], 1))) -
                  std::log2(static_cast<double>(std::max<int64_t>(b[i], 1))));
  return d;
}

} // namespace beamlab::tuner

// Splitting wide vectors into register-wide pieces; see split_vectors.hpp.
#include "engine/codegen/split_vectors.hpp"

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/support/error.hpp"

namespace beamlab {
namespace {

bool wide(const UOp& u) { return !u.dtype().is_ptr() && u.dtype().lanes() > kRegisterLanes; }

class Splitter {
public:
  UOpPtr run(const UOpPtr& graph) {
    for (const UOpPtr& u : toposort(graph)) pieces_.emplace(u.get(), split(u));
    return of(graph).at(0);
  }

private:
  const std::vector<UOpPtr>& of(const UOpPtr& u) const { return pieces_.at(u.get()); }

  // Piece p of `u`'s value, for a consumer split into as many pieces (a scalar, or a vector no
  // wider than a register, is its own only piece).
  const UOpPtr& piece(const UOpPtr& u, size_t p) const {
    const std::vector<UOpPtr>& all = of(u);
    return all.size() == 1 ? all[0] : all.at(p);
  }

  // Sources that order effects (END's, SINK's, a LOAD's or STORE's `after`): a STORE split into
  // pieces stands for all of them.
  std::vector<UOpPtr> ordering(std::vector<UOpPtr>::const_iterator first,
                               std::vector<UOpPtr>::const_iterator last) const {
    std::vector<UOpPtr> out;
    for (auto it = first; it != last; ++it) out.insert(out.end(), of(*it).begin(), of(*it).end());
    return out;
  }

  static size_t count(int lanes) {
    return static_cast<size_t>((lanes + kRegisterLanes - 1) / kRegisterLanes);
  }
  static int width(int lanes, size_t p) {
    return std::min(kRegisterLanes, lanes - static_cast<int>(p) * kRegisterLanes);
  }

  // The INDEX of piece p of a wide access at `idx` (consecutive elements; a register's are
  // addressed by element too): p registers further, under its gate's piece p.
  UOpPtr address(const UOpPtr& idx, size_t p) const {
    UOpPtr at = of(idx->src(1))[0];
    if (p > 0) at = at + static_cast<int64_t>(p) * kRegisterLanes;
    if (idx->src().size() < 3) return index(of(idx->src(0))[0], at);
    return index(of(idx->src(0))[0], at, piece(idx->src(2), p));
  }

  std::vector<UOpPtr> split(const UOpPtr& u) const {
    const auto& src = u->src();
    switch (u->op()) {
    case Op::Index: // built by the access through it, where its gate is split
      if (src.size() == 3 && of(src[2]).size() > 1) return {};
      break;
    case Op::Gep: return select(u);
    case Op::Sink:
    case Op::End: return {u->replace_src(ordering(src.begin(), src.end()))};
    case Op::Store: {
      std::vector<UOpPtr> after = ordering(src.begin() + 2, src.end());
      const UOpPtr& value = src[1];
      std::vector<UOpPtr> out;
      for (size_t p = 0; p < of(value).size(); ++p)
        out.push_back(store(address(src[0], p), of(value)[p], after));
      return out;
    }
    case Op::Load: {
      std::vector<UOpPtr> after = ordering(src.begin() + 1, src.end());
      int lanes = u->dtype().lanes();
      std::vector<UOpPtr> out;
      for (size_t p = 0; p < (wide(*u) ? count(lanes) : 1); ++p)
        out.push_back(load(address(src[0], p),
                           u->dtype().scalar_type().vec(wide(*u) ? width(lanes, p) : lanes),
                           after));
      return out;
    }
    default: break;
    }
    if (!wide(*u)) {
      std::vector<UOpPtr> narrow;
      for (const UOpPtr& s : src) {
        internal_assert(of(s).size() == 1)
            << "split_wide_vectors: " << op_name(u->op()) << " " << u->dtype().str()
            << " reads a split " << op_name(s->op()) << " " << s->dtype().str();
        narrow.push_back(of(s)[0]);
      }
      return {u->replace_src(std::move(narrow))};
    }
    int lanes = u->dtype().lanes();
    std::vector<UOpPtr> out;
    for (size_t p = 0; p < count(lanes); ++p) {
      DType dt = u->dtype().scalar_type().vec(width(lanes, p));
      if (u->op() == Op::Const) {
        out.push_back(UOp::make(Op::Const, dt, {}, u->arg()));
      } else if (u->op() == Op::Vectorize) {
        auto first = src.begin() + static_cast<std::ptrdiff_t>(p) * kRegisterLanes;
        std::vector<UOpPtr> lanes_of(first, first + width(lanes, p));
        for (UOpPtr& l : lanes_of) l = of(l)[0];
        out.push_back(lanes_of.size() == 1 ? lanes_of[0]
                                           : UOp::make(Op::Vectorize, dt, std::move(lanes_of)));
      } else { // elementwise: ALU ops, CAST, BITCAST
        std::vector<UOpPtr> operands;
        for (const UOpPtr& s : src) operands.push_back(piece(s, p));
        out.push_back(UOp::make(u->op(), dt, std::move(operands), u->arg()));
      }
    }
    return out;
  }

  // A GEP's pieces: each from the piece of the source its lanes come from, or lane by lane
  // where they come from several.
  std::vector<UOpPtr> select(const UOpPtr& u) const {
    const UOpPtr& src = u->src(0);
    const std::vector<UOpPtr>& from = of(src);
    const auto& picks = u->arg().items();
    int lanes = static_cast<int>(picks.size());
    auto gep = [&](const UOpPtr& v, std::vector<Arg> sel) {
      if (sel.size() == 1 && v->dtype().lanes() == 1) return v;
      DType dt = v->dtype().scalar_type().vec(static_cast<int>(sel.size()));
      return UOp::make(Op::Gep, dt, {v}, Arg(std::move(sel)));
    };
    std::vector<UOpPtr> out;
    for (size_t p = 0; p < count(lanes); ++p) {
      std::vector<size_t> part;
      std::vector<Arg> local;
      for (int l = 0; l < width(lanes, p); ++l) {
        int64_t lane = picks[p * kRegisterLanes + static_cast<size_t>(l)].as_int();
        size_t q = from.size() == 1 ? 0 : static_cast<size_t>(lane / kRegisterLanes);
        part.push_back(q);
        local.emplace_back(from.size() == 1 ? lane : lane % kRegisterLanes);
      }
      if (std::all_of(part.begin(), part.end(), [&](size_t q) { return q == part[0]; })) {
        out.push_back(gep(from[part[0]], std::move(local)));
        continue;
      }
      std::vector<UOpPtr> scalars;
      for (size_t l = 0; l < part.size(); ++l) scalars.push_back(gep(from[part[l]], {local[l]}));
      out.push_back(UOp::make(Op::Vectorize, u->dtype().scalar_type().vec(width(lanes, p)),
                              std::move(scalars)));
    }
    return out;
  }

  std::unordered_map<const UOp*, std::vector<UOpPtr>> pieces_;
};

} // namespace

UOpPtr split_wide_vectors(const UOpPtr& graph) {
  bool needed = false;
  for (const UOpPtr& u : toposort(graph))
    needed |= wide(*u) && !std::has_single_bit(static_cast<unsigned>(u->dtype().lanes()));
  return needed ? Splitter().run(graph) : graph;
}

} // namespace beamlab

// Upcast expansion; see expand.hpp.
#include "engine/codegen/expand.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <unordered_map>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

// The longest run of consecutive elements one vector access covers.
constexpr int64_t kMaxRun = 64;
// The widest accumulator a loop reduction keeps unrolled lanes in (four AVX-512 registers of
// float32: four dependency chains).
constexpr int64_t kMaxAccumulatorLanes = 64;

using Layout = std::vector<int>; // lane axes (indices into Expander::axes_), slowest first

struct Value {
  UOpPtr v;
  Layout layout;
};

Layout merge(const Layout& a, const Layout& b) {
  Layout out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class Expander {
public:
  explicit Expander(const UOpPtr& ast) {
    std::vector<UOpPtr> lanes;
    for (const UOpPtr& u : toposort(ast))
      if (u->op() == Op::Range && is_lane(loop_kind(*u))) lanes.push_back(u);
    std::sort(lanes.begin(), lanes.end(), [](const UOpPtr& a, const UOpPtr& b) {
      bool ua = loop_kind(*a) == LoopKind::Unroll;
      bool ub = loop_kind(*b) == LoopKind::Unroll;
      if (ua != ub) return ua;
      return a->arg().items()[0].as_int() < b->arg().items()[0].as_int();
    });
    axes_ = std::move(lanes);
  }

  bool trivial() const { return axes_.empty(); }

  UOpPtr run(const UOpPtr& ast) {
    for (const UOpPtr& u : toposort(ast)) done_.emplace(u.get(), expand(u));
    return done_.at(ast.get()).v;
  }

private:
  int64_t extent(int axis) const { return axes_[static_cast<size_t>(axis)]->src(0)->const_value(); }
  int64_t count(const Layout& l) const {
    int64_t n = 1;
    for (int a : l) n *= extent(a);
    return n;
  }
  // The digit of each axis of `l` in lane `lane`.
  std::map<int, int64_t> digits(const Layout& l, int64_t lane) const {
    std::map<int, int64_t> d;
    for (size_t i = l.size(); i-- > 0;) {
      d[l[i]] = lane % extent(l[i]);
      lane /= extent(l[i]);
    }
    return d;
  }
  int64_t lane_of(const Layout& l, const std::map<int, int64_t>& d) const {
    int64_t lane = 0;
    for (int a : l) lane = lane * extent(a) + d.at(a);
    return lane;
  }

  // `v` (laid out as `from`) as a vector laid out as `to` (a superset).
  UOpPtr convert(const Value& v, const Layout& to) const {
    if (v.layout == to) return v.v;
    std::vector<int64_t> lanes;
    for (int64_t l = 0; l < count(to); ++l) {
      std::map<int, int64_t> d = digits(to, l), from;
      for (int a : v.layout) from[a] = d.at(a);
      lanes.push_back(lane_of(v.layout, from));
    }
    return select(v.v, std::move(lanes));
  }

  // A scalar expression of the original AST at lane `lane` of `l`: lane axes as constants.
  UOpPtr at_lane(const UOpPtr& e, const Layout& l, int64_t lane) const {
    std::unordered_map<const UOp*, UOpPtr> map;
    for (auto [a, d] : digits(l, lane))
      map.emplace(axes_[static_cast<size_t>(a)].get(), UOp::const_int(Scalar::Index, d));
    return simplify_kernel(substitute(e, map));
  }

  const Layout& layout(const UOpPtr& u) const { return done_.at(u.get()).layout; }

  Value expand(const UOpPtr& u) {
    auto lane_axis = std::find(axes_.begin(), axes_.end(), u);
    if (lane_axis != axes_.end()) {
      int a = static_cast<int>(lane_axis - axes_.begin());
      std::vector<UOpPtr> consts;
      for (int64_t i = 0; i < extent(a); ++i) consts.push_back(UOp::const_int(Scalar::Index, i));
      return {UOp::make(Op::Vectorize, DType(Scalar::Index).vec(static_cast<int>(extent(a))),
                        std::move(consts)),
              {a}};
    }
    switch (u->op()) {
    case Op::Index: return {u, {}}; // expanded by the LOAD or STORE that uses it
    case Op::Load: return expand_load(u);
    case Op::Reduce: return expand_reduce(u);
    case Op::Sink: {
      std::vector<UOpPtr> effects;
      for (const UOpPtr& s : u->src()) {
        if (s->op() == Op::Store) {
          std::vector<UOpPtr> stores = expand_store(s);
          effects.insert(effects.end(), stores.begin(), stores.end());
        } else {
          effects.push_back(done_.at(s.get()).v);
        }
      }
      return {sink(std::move(effects)), {}};
    }
    case Op::Store: return {u, {}}; // expanded by the SINK
    default: break;
    }
    Layout l;
    for (const UOpPtr& s : u->src()) l = merge(l, layout(s));
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : u->src()) src.push_back(convert(done_.at(s.get()), l));
    if (l.empty()) return {u->replace_src(std::move(src)), {}};
    DType dt = u->dtype().vec(static_cast<int>(count(l)));
    return {UOp::make(u->op(), dt, std::move(src), u->arg()), l};
  }

  // The lanes of an access through INDEX `idx`: per lane its address and gate.
  struct Lanes {
    Layout layout;
    std::vector<UOpPtr> addr, gate;
    UOpPtr gates; // the gate as one value laid out as `layout` (null: ungated)
  };
  Lanes lanes_of(const UOpPtr& idx) const {
    Lanes out;
    out.layout = layout(idx->src(1));
    if (idx->src().size() == 3) {
      out.layout = merge(out.layout, layout(idx->src(2)));
      out.gates = convert(done_.at(idx->src(2).get()), out.layout);
    }
    for (int64_t l = 0; l < count(out.layout); ++l) {
      UOpPtr gate = idx->src().size() == 3 ? at_lane(idx->src(2), out.layout, l) : nullptr;
      UOpPtr addr = at_lane(idx->src(1), out.layout, l);
      out.addr.push_back(gate ? simplify_given(addr, gate) : addr);
      out.gate.push_back(gate);
    }
    return out;
  }

  // Runs of consecutive addresses: (first lane's offset, length); offsets[l] per lane. Empty
  // when some lane's address is not a constant distance from lane 0's.
  struct Run {
    int64_t start, length;
    size_t lane; // a lane at the run's start
  };
  static std::vector<Run> runs_of(const Lanes& ls, std::vector<int64_t>& offsets) {
    offsets.clear();
    std::map<int64_t, size_t> by_offset; // offset -> a lane with it
    for (size_t l = 0; l < ls.addr.size(); ++l) {
      UOpPtr d = simplify_kernel(ls.addr[l] - ls.addr[0]);
      if (!d->is_const()) return {};
      auto [it, fresh] = by_offset.emplace(d->const_value(), l);
      if (!fresh && ls.gate[it->second] != ls.gate[l]) return {}; // one address, two gates
      offsets.push_back(d->const_value());
    }
    std::vector<Run> runs;
    for (auto [off, lane] : by_offset) {
      if (!runs.empty() && runs.back().start + runs.back().length == off &&
          runs.back().length < kMaxRun)
        ++runs.back().length;
      else
        runs.push_back({off, 1, lane});
    }
    return runs;
  }

  // The gate of a run: the scalar gate if its lanes share one, else a vector of them: the
  // gate's own expansion where every offset is read (`base + lane < n` stays one vector
  // compare), else lane by lane. An offset no lane reads (a covering load's gaps and tail) is
  // off; ungated lanes are on.
  static UOpPtr run_gate(const Lanes& ls, const Run& r, const std::vector<int64_t>& offsets) {
    std::vector<UOpPtr> gates;
    bool gaps = false;
    for (int64_t off = r.start; off < r.start + r.length; ++off) {
      auto l = std::find(offsets.begin(), offsets.end(), off);
      UOpPtr g = l == offsets.end() ? UOp::const_bool(false)
                 : ls.gate[0]       ? ls.gate[static_cast<size_t>(l - offsets.begin())]
                                    : UOp::const_bool(true);
      gaps |= l == offsets.end();
      gates.push_back(std::move(g));
    }
    if (!ls.gate[0] && !gaps) return nullptr;
    bool same =
        std::all_of(gates.begin(), gates.end(), [&](const UOpPtr& g) { return g == gates[0]; });
    if (same || gates.size() == 1) return gates[0];
    if (!gaps) {
      std::vector<int64_t> sel;
      for (int64_t off = r.start; off < r.start + r.length; ++off)
        sel.push_back(std::find(offsets.begin(), offsets.end(), off) - offsets.begin());
      return select(ls.gates, std::move(sel));
    }
    return UOp::make(Op::Vectorize, DType(Scalar::Bool).vec(static_cast<int>(gates.size())),
                     std::move(gates));
  }

  static UOpPtr address(const UOpPtr& buf, const UOpPtr& addr, const UOpPtr& gate) {
    return gate ? index(buf, addr, gate) : index(buf, addr);
  }

  // Runs at a small stride (a stride-2 convolution's or pool's row, a Winograd F(4x4) input
  // transform's patches 4 apart) merged into one covering run while it stays at least a quarter
  // read: one vector load, a power of two long, whose gaps and tail are masked off (run_gate),
  // from which the lanes are picked (a few two-source shuffles), where each lane would be a
  // load of its own and an insert.
  static std::vector<Run> covering_runs(const std::vector<Run>& runs) {
    std::vector<Run> out;
    int64_t read = 0; // offsets the last covering run's lanes read
    for (const Run& r : runs) {
      if (!out.empty()) {
        Run& c = out.back();
        int64_t span = r.start + r.length - c.start;
        auto cover = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(span)));
        if (cover <= kMaxRun && span <= 4 * (read + r.length)) {
          c.length = cover;
          read += r.length;
          continue;
        }
      }
      out.push_back(r);
      read = r.length;
    }
    return out;
  }

  Value expand_load(const UOpPtr& u) {
    const UOpPtr& idx = u->src(0);
    Lanes ls = lanes_of(idx);
    DType dt = u->dtype();
    if (ls.layout.empty()) {
      std::vector<UOpPtr> src;
      for (const UOpPtr& s : idx->src()) src.push_back(done_.at(s.get()).v);
      return {load(idx->replace_src(std::move(src)), dt), {}};
    }
    const UOpPtr& buf = idx->src(0);
    std::vector<int64_t> offsets;
    std::vector<Run> runs = runs_of(ls, offsets);
    auto n = static_cast<int>(ls.addr.size());
    if (runs.empty()) { // a gather of scalar loads
      std::vector<UOpPtr> lanes;
      for (int l = 0; l < n; ++l) lanes.push_back(load(address(buf, ls.addr[l], ls.gate[l]), dt));
      return {UOp::make(Op::Vectorize, dt.vec(n), std::move(lanes)), ls.layout};
    }
    runs = covering_runs(runs);
    std::vector<UOpPtr> pieces;
    for (const Run& r : runs) {
      DType pdt = dt.vec(static_cast<int>(r.length));
      pieces.push_back(load(address(buf, ls.addr[r.lane], run_gate(ls, r, offsets)), pdt));
    }
    auto piece_of = [&](int64_t off) {
      for (size_t i = 0; i < runs.size(); ++i)
        if (off >= runs[i].start && off < runs[i].start + runs[i].length) return i;
      internal_error << "lane offset outside every run";
      return size_t{0};
    };
    if (runs.size() == 1) {
      std::vector<Arg> sel;
      bool identity = static_cast<int64_t>(n) == runs[0].length;
      for (int l = 0; l < n; ++l) {
        sel.emplace_back(offsets[static_cast<size_t>(l)] - runs[0].start);
        identity &= offsets[static_cast<size_t>(l)] - runs[0].start == l;
      }
      if (identity) return {pieces[0], ls.layout};
      return {UOp::make(Op::Gep, dt.vec(n), {pieces[0]}, Arg(std::move(sel))), ls.layout};
    }
    std::vector<UOpPtr> lanes;
    for (int l = 0; l < n; ++l) {
      int64_t off = offsets[static_cast<size_t>(l)];
      size_t p = piece_of(off);
      lanes.push_back(runs[p].length == 1
                          ? pieces[p]
                          : UOp::make(Op::Gep, dt, {pieces[p]},
                                      Arg(std::vector<Arg>{Arg(off - runs[p].start)})));
    }
    return {UOp::make(Op::Vectorize, dt.vec(n), std::move(lanes)), ls.layout};
  }

  std::vector<UOpPtr> expand_store(const UOpPtr& u) {
    const UOpPtr& idx = u->src(0);
    const Value& val = done_.at(u->src(1).get());
    Lanes ls = lanes_of(idx);
    internal_assert(
        std::includes(ls.layout.begin(), ls.layout.end(), val.layout.begin(), val.layout.end()))
        << "a stored value varies with a lane axis its address doesn't";
    if (ls.layout.empty()) {
      std::vector<UOpPtr> src;
      for (const UOpPtr& s : idx->src()) src.push_back(done_.at(s.get()).v);
      return {store(idx->replace_src(std::move(src)), val.v)};
    }
    UOpPtr v = convert(val, ls.layout);
    const UOpPtr& buf = idx->src(0);
    DType dt = u->src(1)->dtype();
    std::vector<int64_t> offsets;
    std::vector<Run> runs = runs_of(ls, offsets);
    std::vector<UOpPtr> out;
    auto lane_value = [&](std::vector<Arg> sel) {
      auto n = static_cast<int>(sel.size());
      return UOp::make(Op::Gep, dt.vec(n), {v}, Arg(std::move(sel)));
    };
    if (runs.empty()) {
      for (size_t l = 0; l < ls.addr.size(); ++l)
        out.push_back(store(address(buf, ls.addr[l], ls.gate[l]),
                            lane_value(std::vector<Arg>{Arg(static_cast<int64_t>(l))})));
      return out;
    }
    for (const Run& r : runs) {
      std::vector<Arg> sel;
      for (int64_t off = r.start; off < r.start + r.length; ++off) {
        size_t last = 0;
        for (size_t l = 0; l < offsets.size(); ++l)
          if (offsets[l] == off) last = l; // lanes storing to one address: the last wins
        sel.emplace_back(static_cast<int64_t>(last));
      }
      bool whole = r.length == static_cast<int64_t>(offsets.size());
      for (size_t i = 0; whole && i < sel.size(); ++i)
        whole = sel[i].as_int() == static_cast<int64_t>(i);
      out.push_back(store(address(buf, ls.addr[r.lane], run_gate(ls, r, offsets)),
                          whole ? v : lane_value(std::move(sel))));
    }
    return out;
  }

  // Lanes `sel` of `w`; a selection from a selection reads the original vector directly.
  static UOpPtr select(const UOpPtr& w, std::vector<int64_t> sel) {
    const UOp* from = w.get();
    if (w->op() == Op::Gep) {
      for (int64_t& l : sel) l = w->arg().items()[static_cast<size_t>(l)].as_int();
      from = w->src(0).get();
    }
    bool identity = static_cast<int>(sel.size()) == from->dtype().lanes();
    for (size_t i = 0; identity && i < sel.size(); ++i)
      identity = sel[i] == static_cast<int64_t>(i);
    if (identity) return from->ptr();
    std::vector<Arg> lanes(sel.begin(), sel.end());
    DType dt = from->dtype().scalar_type().vec(static_cast<int>(sel.size()));
    return UOp::make(Op::Gep, dt, {from->ptr()}, Arg(std::move(lanes)));
  }

  // Reduces `groups` groups of `width` lanes each (w holds them group after group) to at most
  // `keep` groups, halving while the count is even: lane i of group g meets lane i of group
  // g + n/2. An odd count above `keep` == 1 finishes as a pairwise tree of the groups.
  static UOpPtr fold_groups(UOpPtr w, int64_t& groups, int64_t width, Op op, int64_t keep) {
    auto lanes = [&](int64_t first, int64_t count) {
      std::vector<int64_t> sel(static_cast<size_t>(count * width));
      for (size_t i = 0; i < sel.size(); ++i) sel[i] = first * width + static_cast<int64_t>(i);
      return select(w, std::move(sel));
    };
    while (groups > keep && groups % 2 == 0) {
      int64_t half = groups / 2;
      w = UOp::make(op, w->dtype().scalar_type().vec(static_cast<int>(half * width)),
                    {lanes(0, half), lanes(half, half)});
      groups = half;
    }
    if (groups <= keep || keep > 1) return w;
    std::vector<UOpPtr> chunks;
    for (int64_t g = 0; g < groups; ++g) chunks.push_back(lanes(g, 1));
    while (chunks.size() > 1) {
      std::vector<UOpPtr> next;
      for (size_t i = 0; i + 1 < chunks.size(); i += 2)
        next.push_back(UOp::make(op, chunks[i]->dtype(), {chunks[i], chunks[i + 1]}));
      if (chunks.size() % 2) next.push_back(chunks.back());
      chunks = std::move(next);
    }
    groups = 1;
    return chunks[0];
  }

  // REDUCE over unroll axes (folded across lanes) and loop ranges (an accumulator). Inside a
  // loop the unrolled lanes are folded only down to kMaxAccumulatorLanes: the accumulator
  // keeps the rest as independent partial results (no horizontal reduction per iteration, and
  // several dependency chains), folded once after the loop.
  Value expand_reduce(const UOpPtr& u) {
    Op op = u->arg().as_op();
    const Value& val = done_.at(u->src(0).get());
    Layout unrolled, rest;
    std::vector<UOpPtr> loops;
    for (size_t i = 1; i < u->src().size(); ++i) {
      auto it = std::find(axes_.begin(), axes_.end(), u->src(i));
      if (it == axes_.end())
        loops.push_back(u->src(i));
      else
        unrolled.push_back(static_cast<int>(it - axes_.begin()));
    }
    std::sort(unrolled.begin(), unrolled.end());
    Layout all = merge(val.layout, unrolled);
    std::set_difference(all.begin(), all.end(), unrolled.begin(), unrolled.end(),
                        std::back_inserter(rest));
    UOpPtr v = convert(val, all);
    int64_t groups = count(unrolled), width = count(rest);
    std::vector<int64_t> order; // the lanes of `all`, grouped by unrolled lane
    for (int64_t k = 0; k < groups; ++k)
      for (int64_t r = 0; r < width; ++r) {
        std::map<int, int64_t> full = digits(unrolled, k);
        for (auto [a, x] : digits(rest, r)) full[a] = x;
        order.push_back(lane_of(all, full));
      }
    UOpPtr w = select(v, std::move(order));
    if (loops.empty()) return {fold_groups(w, groups, width, op, 1), rest};
    w = fold_groups(w, groups, width, op, std::max<int64_t>(1, kMaxAccumulatorLanes / width));
    return {fold_groups(reduce_over(w, loops, op), groups, width, op, 1), rest};
  }

  std::vector<UOpPtr> axes_;
  std::unordered_map<const UOp*, Value> done_;
};

} // namespace

UOpPtr expand_upcasts(const UOpPtr& ast) {
  Expander e(ast);
  if (e.trivial()) return ast;
  UOpPtr out = e.run(ast);
  print_after_step("expand_upcasts", out);
  return out;
}

} // namespace beamlab

// The scheduler; see schedule.hpp.
#include "engine/schedule/schedule.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

int64_t range_axis_id(const UOp& range) { return range.arg().items().at(0).as_int(); }

// The RANGEs an index expression uses.
std::vector<const UOp*> ranges_in(const std::vector<UOpPtr>& idxs) {
  std::vector<const UOp*> out;
  std::unordered_set<const UOp*> seen;
  std::vector<const UOp*> stack;
  for (const UOpPtr& i : idxs) stack.push_back(i.get());
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second) continue;
    if (u->op() == Op::Range) out.push_back(u);
    for (const UOpPtr& s : u->src()) stack.push_back(s.get());
  }
  return out;
}

UOpPtr index_const(int64_t v) { return UOp::const_int(Scalar::Index, v); }

// How many times a node whose indices use `ranges` is computed: once per value of those loops.
int64_t runs_of(const std::vector<const UOp*>& ranges) {
  int64_t runs = 1;
  for (const UOp* r : ranges) runs *= max_extent(*r);
  return runs;
}

// Row-major linear index of `idxs` in `shape` (symbolic dims give symbolic strides).
UOpPtr linear_index(const std::vector<UOpPtr>& idxs, const Shape& shape) {
  std::vector<Dim> strides = contiguous_strides(shape);
  UOpPtr lin = index_const(0);
  for (size_t i = 0; i < idxs.size(); ++i)
    if (shape[i] != 1)
      lin = lin +
            (strides[i].is_const() ? idxs[i] * strides[i].value() : idxs[i] * strides[i].expr());
  return simplify_kernel(lin);
}

// A reshape's dims in groups of equal element count, in order, as [begin, end) of the
// output's and the input's dims: (seq, 12, 64) and (seq, 768) are {seq} -> {seq} and
// {12, 64} -> {768}, so a dim the reshape keeps passes its index through, and no index is
// divided by a variable where a group doesn't need it. A size-1 dim joins the group it
// starts (the last group takes trailing ones). Fixed shapes are one group: their indices are
// the ones kernels had before symbolic shapes, so their keys (and tuned plans) stay.
struct ReshapeGroup {
  size_t out_begin, out_end, in_begin, in_end;
};
std::vector<ReshapeGroup> reshape_groups(const Shape& out, const Shape& in) {
  if (!is_symbolic(out) && !is_symbolic(in)) return {{0, out.size(), 0, in.size()}};
  std::vector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  while (i < out.size() && j < in.size()) {
    ReshapeGroup g{i, i + 1, j, j + 1};
    Dim po = out[i], pi = in[j];
    while (po != pi) {
      bool grow_out = po.max() < pi.max() ? g.out_end < out.size() : g.in_end >= in.size();
      if (grow_out && g.out_end < out.size()) {
        po = po * out[g.out_end++];
      } else if (g.in_end < in.size()) {
        pi = pi * in[g.in_end++];
      } else {
        break;
      }
    }
    if (po != pi) { // not a grouping: one group of everything left
      g.out_end = out.size();
      g.in_end = in.size();
    }
    groups.push_back(g);
    i = g.out_end;
    j = g.in_end;
  }
  if (groups.empty()) groups.push_back({0, 0, 0, 0});
  groups.back().out_end = out.size(); // trailing size-1 dims
  groups.back().in_end = in.size();
  return groups;
}

class Scheduler;

// Builds one kernel's AST (see schedule.hpp for the fusion rule).
class KernelBuilder {
public:
  KernelBuilder(Scheduler& s, UOpPtr root) : s_(s), root_(std::move(root)) {}

  // The AST; false if a reduction had to be realized after all (build again).
  bool build(ScheduleItem& item, std::vector<UOpPtr>& deps);

private:
  UOpPtr emit(const UOpPtr& node, const std::vector<UOpPtr>& idxs, const UOpPtr& valid);
  UOpPtr emit_uncached(const UOpPtr& node, const std::vector<UOpPtr>& idxs, const UOpPtr& valid);
  UOpPtr emit_reduce(const UOpPtr& node, const std::vector<UOpPtr>& idxs, const UOpPtr& valid);
  UOpPtr emit_load(const UOpPtr& buffer, const UOpPtr& i, const UOpPtr& valid);
  // `node` computed by a kernel of its own (a dependency), read from its buffer.
  UOpPtr load_realized(const UOpPtr& node, const std::vector<UOpPtr>& idxs, const UOpPtr& valid);
  std::vector<UOpPtr> movement_indices(const UOpPtr& node, const std::vector<UOpPtr>& idxs,
                                       UOpPtr& cond);
  bool hoistable(const std::vector<UOpPtr>& idxs, int64_t results) const;
  int64_t computed_times(const std::vector<UOpPtr>& idxs) const;
  std::vector<const UOp*> enclosing_unused(const std::vector<const UOp*>& used) const;
  UOpPtr param(const UOpPtr& buffer);
  void computes(const UOpPtr& node) {
    if (computed_.insert(node.get()).second) nodes_.push_back(node);
  }
  // What computing `node` in this kernel reads: its loads (each node's read of a buffer or of a
  // realized node, once however often the node is used) and whether it fuses a reduction;
  // `known` is false for a graph too large to walk (4096 nodes).
  struct Reads {
    int64_t loads = 0;
    bool reduces = false, known = true;
  };
  Reads reads_of(const UOpPtr& node);
  bool read_from_buffer(const UOp* node) const;

  Scheduler& s_;
  UOpPtr root_;
  std::vector<UOpPtr> slots_;
  std::unordered_map<const UOp*, UOpPtr> params_;
  std::vector<UOpPtr> deps_;
  std::vector<const UOp*> context_; // the loops open where the node being emitted is used
  int64_t next_axis_ = 0;
  std::map<std::vector<const UOp*>, UOpPtr> memo_; // (node, idxs..., valid) -> value
  std::unordered_map<const UOp*, std::vector<const UOp*>> reduce_key_;
  std::vector<UOpPtr> keep_; // the nodes the keys above point to
  std::vector<UOpPtr> nodes_;
  std::unordered_set<const UOp*> computed_;
  std::unordered_map<const UOp*, Reads> reads_;
  bool retry_ = false;
};

class Scheduler {
public:
  // Kernels are built from the outputs down, so a node one kernel fuses may be realized later
  // for another reader; it would then be computed twice. When a pass realizes nodes it did not
  // start with, it runs again with them realized from the start (each node keeps its buffer):
  // every reader loads them. The realized set only grows, so this ends (in two passes, mostly).
  // Placing a realized node inside a padded buffer (place_in_padding) changes how its readers
  // index it, so a pass that places one is followed by another, too.
  Schedule run(const std::vector<UOpPtr>& roots) {
    for (const UOpPtr& r : roots) realize_at(r);
    roots_.insert(roots.begin(), roots.end());
    for (size_t before = 0, placed = 0;
         before != buffer_of_.size() || placed != placed_.size() || again_;) {
      before = buffer_of_.size();
      placed = placed_.size();
      out_ = {};
      done_.clear();
      ++pass_;
      again_ = false;
      for (const UOpPtr& r : roots) {
        schedule(r);
        out_.outputs.push_back(buffer_for(r));
      }
      place_in_padding();
    }
    for (const UOpPtr& x : keep_) // in the order nodes were realized: deterministic
      if (auto it = placed_.find(x.get()); it != placed_.end())
        out_.bordered.push_back(
            {buffer_for(it->second.within), it->second.fill, border_layout(it->second)});
    return std::move(out_);
  }

  ShapeCache shapes;

  // Whether `node` is read from a buffer rather than computed in the kernel that uses it.
  bool realized(const UOp* node) const { return buffer_of_.count(node) != 0; }
  // Whether an earlier pass realized what this one's kernels read: the realized set is then
  // known (nearly) whole, not only what the kernels built so far needed.
  bool later_pass() const { return pass_ > 1; }
  void want_another_pass() { again_ = true; }
  // Whether `node` is computed from a reduction (fused or realized): a reduction's epilogue.
  bool after_reduce(const UOp* node) {
    if (auto it = after_reduce_.find(node); it != after_reduce_.end()) return it->second;
    bool r = node->op() == Op::ReduceAxis;
    for (const UOpPtr& s : node->src())
      if (!r && s->op() != Op::Buffer) r = after_reduce(s.get());
    after_reduce_.emplace(node, r);
    return r;
  }
  void realize_at(const UOpPtr& node) {
    if (node->op() == Op::Buffer) return;
    if (!buffer_of_.count(node.get())) buffer_of_.emplace(node.get(), stored_buffer(node));
  }
  UOpPtr buffer_for(const UOpPtr& node) {
    if (node->op() == Op::Buffer) return node;
    realize_at(node);
    return buffer_of_.at(node.get());
  }
  // Where the element of realized `node` at `idxs` is in its buffer: row-major in its own
  // shape, or, placed inside a padded buffer, shifted past the padding in that buffer's shape.
  UOpPtr stored_index(const UOpPtr& node, const std::vector<UOpPtr>& idxs) {
    auto it = placed_.find(node.get());
    if (it == placed_.end()) return linear_index(idxs, shapes.of(node));
    const Placement& p = it->second;
    // The node's dims of more than one element are the padded shape's, in order.
    const Shape& own = shapes.of(node);
    std::vector<UOpPtr> at;
    for (size_t i = 0; i < own.size(); ++i)
      if (own[i] != 1) at.push_back(idxs[i]);
    std::vector<UOpPtr> in_padded;
    for (size_t i = 0, next = 0; i < p.padded.size(); ++i) {
      UOpPtr v = p.padded[i] == 1 ? index_const(0) : at.at(next++);
      in_padded.push_back(p.lo[i] ? simplify_kernel(v + p.lo[i]) : v);
    }
    return linear_index(in_padded, shapes.of(p.within));
  }

private:
  // A realized node whose kernel stores into the interior of a padded node's buffer.
  struct Placement {
    UOpPtr within;           // the padded node (PAD of it, or its WHERE of a fill value)
    std::vector<int64_t> lo; // the padding before each dim
    UOpPtr fill;             // the padding's value: a CONST, or null for zeros
    Shape padded;            // the shape the padding applies to: the node's, or the node's
                             // with size-1 dims dropped or added (a pooling's kept dims)
  };

  // A node realized only to be padded (a convolution's output, copied into the zero-bordered
  // input of the next convolution or pooling) is stored straight into the padded buffer's
  // interior by its own kernel, and the copy goes: the border is never written, so the plan
  // fills it once (Schedule::bordered). Its other readers index it there (stored_index).
  void place_in_padding() {
    std::vector<UOpPtr> realized_nodes = keep_; // every node stored_buffer() gave a buffer
    for (const UOpPtr& within : realized_nodes) {
      UOpPtr fill;
      UOpPtr pad =
          roots_.count(within) || placed_.count(within.get()) ? nullptr : padding_of(within, fill);
      UOpPtr x = pad ? pad->src(0) : nullptr;
      // A RESHAPE that only drops or adds size-1 dims (a max pool's reduced window dims) is
      // seen through: the node under it is placed.
      Shape padded = x ? shapes.of(x) : Shape{};
      if (x && x->op() == Op::Reshape && squeezed(shapes.of(x)) == squeezed(shapes.of(x->src(0))))
        x = x->src(0);
      if (!x || !realized(x.get()) || roots_.count(x) || placed_.count(x.get()) ||
          placed_in_.count(x.get()) || x->op() == Op::Buffer ||
          (x->op() == Op::Reshape && x->src(0)->op() == Op::Buffer) ||
          x->dtype() != within->dtype())
        continue;
      std::vector<int64_t> a = int_args(*pad), lo;
      for (size_t i = 0; i < a.size(); i += 2) lo.push_back(a[i]);
      placed_.emplace(x.get(), Placement{within, std::move(lo), fill, std::move(padded)});
      placed_in_.emplace(within.get(), x);
    }
    for (const auto& [x, p] : placed_) buffer_of_[x] = buffer_for(p.within);
  }

  // The PAD(x) when `node` is x padded with a constant (PAD, a zero border, or
  // WHERE(PAD(true), PAD(x), c)), maybe made CONTIGUOUS; else null.
  static UOpPtr padding_of(const UOpPtr& node, UOpPtr& fill) {
    UOpPtr v = node->op() == Op::Contiguous ? node->src(0) : node;
    if (v->op() == Op::Pad) return v;
    if (v->op() != Op::Where || v->src(0)->op() != Op::Pad || v->src(1)->op() != Op::Pad ||
        int_args(*v->src(0)) != int_args(*v->src(1)))
      return nullptr;
    const UOp* inside = constant_under(v->src(0)->src(0).get());
    const UOp* value = constant_under(v->src(2).get());
    if (!inside || inside->const_value() == 0 || !value || value->dtype() != v->dtype())
      return nullptr;
    fill = value->ptr();
    return v->src(1);
  }

  static Shape squeezed(const Shape& s) {
    Shape out;
    std::copy_if(s.begin(), s.end(), std::back_inserter(out), [](const Dim& d) { return d != 1; });
    return out;
  }

  // The CONST a node broadcasts (through RESHAPE and EXPAND), or null.
  static const UOp* constant_under(const UOp* u) {
    while (u->op() == Op::Reshape || u->op() == Op::Expand) u = u->src(0).get();
    return u->op() == Op::Const ? u : nullptr;
  }

  // A placement's layout in words: buffers of one layout may share storage (same border).
  std::string border_layout(const Placement& p) {
    std::string s = shape_str(shapes.of(p.within)) + " holding " + shape_str(p.padded) + " at (";
    for (size_t i = 0; i < p.lo.size(); ++i) s += (i ? ", " : "") + std::to_string(p.lo[i]);
    s += ") " + p.within->dtype().str();
    if (!p.fill) return s + " zeros";
    // Exact: fills that print alike at a fixed precision would share storage and borders.
    const Arg& v = p.fill->arg();
    if (!v.is_float()) return s + " fill " + std::to_string(p.fill->const_value());
    char text[32];
    auto end = std::to_chars(text, text + sizeof text, v.as_float()).ptr;
    return s + " fill " + std::string(text, end);
  }

  // A root that is a BUFFER viewed in row-major order needs no kernel.
  UOpPtr stored_buffer(const UOpPtr& node) {
    keep_.push_back(node);
    if (node->op() == Op::Reshape && node->src(0)->op() == Op::Buffer) return node->src(0);
    // A symbolic node's buffer holds it at its largest.
    return tensor_buffer(node->dtype(), shape_numel(shapes.of(node)).max());
  }

  void schedule(const UOpPtr& node) {
    if (node->op() == Op::Buffer || !done_.insert(node.get()).second) return;
    if (node->op() == Op::Reshape && node->src(0)->op() == Op::Buffer) return;
    // A padded node is computed by the kernel that stores its source into it.
    if (auto it = placed_in_.find(node.get()); it != placed_in_.end()) return schedule(it->second);
    ScheduleItem item;
    std::vector<UOpPtr> deps;
    while (!KernelBuilder(*this, node).build(item, deps)) {
      item = {};
      deps.clear();
    }
    for (const UOpPtr& d : deps) schedule(d);
    print_after_step("schedule", item.ast);
    out_.items.push_back(std::move(item));
  }

  std::unordered_map<const UOp*, UOpPtr> buffer_of_;
  int pass_ = 0;
  bool again_ = false; // a kernel asked for a pass that knows the realized set
  std::unordered_map<const UOp*, Placement> placed_; // by the node placed
  std::unordered_map<const UOp*, UOpPtr> placed_in_; // padded node -> the node placed in it
  std::unordered_set<UOpPtr> roots_;
  std::unordered_map<const UOp*, bool> after_reduce_;
  std::unordered_set<const UOp*> done_;
  std::vector<UOpPtr> keep_;
  Schedule out_;
};

bool KernelBuilder::build(ScheduleItem& item, std::vector<UOpPtr>& deps) {
  const Shape& shape = s_.shapes.of(root_);
  std::vector<UOpPtr> idxs;
  for (const Dim& d : shape) {
    if (d == 1) {
      idxs.push_back(index_const(0));
      continue;
    }
    idxs.push_back(kernel_range(d.expr(), next_axis_++, LoopKind::Loop));
    context_.push_back(idxs.back().get());
  }
  UOpPtr out = param(s_.buffer_for(root_));
  computes(root_);
  UOpPtr value = emit(root_->op() == Op::Contiguous ? root_->src(0) : root_, idxs, nullptr);
  if (retry_) return false;
  UOpPtr ast = simplify_kernel(sink({store(index(out, s_.stored_index(root_, idxs)), value)}));
  // Simplification can drop every read of an input (only its padding was used): renumber the
  // slots the AST still has, so slots and buffers match one to one.
  std::vector<UOpPtr> used;
  std::unordered_map<const UOp*, UOpPtr> renumber;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Op::DefineGlobal) used.push_back(u);
  std::sort(used.begin(), used.end(),
            [](const UOpPtr& a, const UOpPtr& b) { return a->arg().as_int() < b->arg().as_int(); });
  item.buffers.clear();
  for (const UOpPtr& g : used) {
    auto slot = static_cast<int64_t>(item.buffers.size());
    item.buffers.push_back(slots_.at(static_cast<size_t>(g->arg().as_int())));
    if (g->arg().as_int() != slot) renumber.emplace(g.get(), buffer_param(slot, g->dtype().base()));
  }
  ast = substitute(ast, renumber);
  item.ast = ast;
  item.name = kernel_name(ast);
  item.key = ast->hash();
  item.nodes = std::move(nodes_);
  deps = deps_;
  return true;
}

UOpPtr KernelBuilder::param(const UOpPtr& buffer) {
  auto [it, fresh] = params_.emplace(buffer.get(), nullptr);
  if (fresh) {
    it->second = buffer_param(static_cast<int64_t>(slots_.size()), buffer->dtype());
    slots_.push_back(buffer);
  }
  return it->second;
}

UOpPtr KernelBuilder::emit_load(const UOpPtr& buffer, const UOpPtr& i, const UOpPtr& valid) {
  UOpPtr p = param(buffer);
  return load(valid ? index(p, i, valid) : index(p, i), buffer->dtype());
}

UOpPtr KernelBuilder::load_realized(const UOpPtr& node, const std::vector<UOpPtr>& idxs,
                                    const UOpPtr& valid) {
  s_.realize_at(node);
  deps_.push_back(node);
  return emit_load(s_.buffer_for(node), s_.stored_index(node, idxs), valid);
}

UOpPtr KernelBuilder::emit(const UOpPtr& node, const std::vector<UOpPtr>& idxs,
                           const UOpPtr& valid) {
  if (node->op() == Op::Const || node->op() == Op::DefineVar) return node;
  std::vector<const UOp*> key = {node.get()};
  for (const UOpPtr& i : idxs) key.push_back(i.get());
  key.push_back(valid.get());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  // The key's nodes stay alive while the key does, so their addresses are not reused.
  keep_.insert(keep_.end(), idxs.begin(), idxs.end());
  keep_.push_back(valid);
  UOpPtr v = emit_uncached(node, idxs, valid);
  memo_.emplace(std::move(key), v);
  return v;
}

UOpPtr KernelBuilder::emit_uncached(const UOpPtr& node, const std::vector<UOpPtr>& idxs,
                                    const UOpPtr& valid) {
  if (node->op() == Op::Buffer) return emit_load(node, idxs.at(0), valid);
  if (node != root_ && (s_.realized(node.get()) || node->op() == Op::Contiguous)) {
    return load_realized(node, idxs, valid);
  }
  // A reduction computed once per step of an enclosing reduction (a convolution summed by the
  // global average pool after it) is its own kernel: nested, neither could be vectorized or
  // tiled well (ResNet-18's last convolution: 18 ms fused, 3.6 ms apart). One that doesn't
  // vary with the enclosing loop (softmax's max inside its sum) stays fused, computed once.
  if (node->op() == Op::ReduceAxis && node != root_) {
    std::vector<const UOp*> used = ranges_in(idxs);
    if (std::any_of(used.begin(), used.end(),
                    [](const UOp* r) { return loop_kind(*r) == LoopKind::Reduce; }))
      return load_realized(node, idxs, valid);
  }
  if (node->op() == Op::ReduceAxis) return emit_reduce(node, idxs, valid);
  // An epilogue that is a large computation of its own, 16 loads or more an element beside a
  // reduction this kernel fuses (a Winograd output transform, 36 reads of its GEMMs' result,
  // added to a downsampling 1x1 convolution), is realized by a kernel of its own: there its
  // lanes fold the constants it selects by row and column, and the reduction keeps its register
  // tile (ResNet-18's layer2.0: fused 0.30-0.37 ms and 12 s to compile).
  // It is decided in a pass after the first, when the realized set is known (a residual read
  // from a buffer is no fused reduction); a first pass that would decide it asks for another.
  // A node realized so stays realized in later passes.
  if (node != root_ && !is_movement(node->op()) && s_.after_reduce(node.get()) &&
      reads_of(root_).reduces) {
    std::vector<const UOp*> used = ranges_in(idxs);
    bool epilogue = std::none_of(used.begin(), used.end(),
                                 [](const UOp* r) { return loop_kind(*r) == LoopKind::Reduce; });
    Reads r = reads_of(node);
    if (epilogue && r.known && !r.reduces && r.loads >= 16) {
      if (s_.later_pass()) return load_realized(node, idxs, valid);
      s_.want_another_pass();
    }
  }
  // A reduction's epilogue (bias, residual add, activation) read through a window would be
  // recomputed, with all its loads, once per tap: computed once where the reduction is, it is
  // one load per tap instead.
  // The same holds for one read inside a loop it doesn't vary with (a LayerNorm or GELU read
  // by the next GEMM, once per output column block: BERT's two big GEMMs ran at a third of the
  // plain one's rate).
  if (node != root_ && !is_movement(node->op()) && s_.after_reduce(node.get()) &&
      computed_times(idxs) > shape_numel(s_.shapes.of(node)).max()) {
    return load_realized(node, idxs, valid);
  }
  computes(node);
  if (is_movement(node->op())) {
    UOpPtr cond;
    std::vector<UOpPtr> inner = movement_indices(node, idxs, cond);
    if (!cond) return emit(node->src(0), inner, valid);
    UOpPtr gate = valid ? simplify_kernel(alu(Op::And, valid, cond)) : cond;
    UOpPtr v = emit(node->src(0), inner, gate);
    return where(cond, v, UOp::const_like(node->dtype(), 0));
  }
  std::vector<UOpPtr> src;
  for (const UOpPtr& s : node->src()) src.push_back(emit(s, idxs, valid));
  return node->replace_src(std::move(src));
}

bool KernelBuilder::read_from_buffer(const UOp* node) const {
  return node->op() == Op::Buffer ||
         (node != root_.get() && (s_.realized(node) || node->op() == Op::Contiguous));
}

KernelBuilder::Reads KernelBuilder::reads_of(const UOpPtr& node) {
  if (auto it = reads_.find(node.get()); it != reads_.end()) return it->second;
  // A load is a read of a buffer or realized node through a chain of movement ops, told apart
  // by the chain's top (the Winograd transform's 36 shrinks of one realized result).
  Reads r;
  std::vector<const UOp*> todo;
  std::unordered_set<const UOp*> seen, sites;
  auto reach = [&](const UOp* top) {
    const UOp* x = top;
    while (x != root_.get() && is_movement(x->op()) && !read_from_buffer(x)) x = x->src(0).get();
    if (read_from_buffer(x))
      r.loads += sites.insert(top).second ? 1 : 0;
    else if (x->op() == Op::ReduceAxis)
      r.reduces = true;
    else if (seen.insert(x).second)
      todo.push_back(x);
  };
  reach(node.get());
  while (!todo.empty() && r.known) {
    const UOp* u = todo.back();
    todo.pop_back();
    for (const UOpPtr& src : u->src()) reach(src.get());
    r.known = seen.size() <= 4096;
  }
  reads_.emplace(node.get(), r);
  return r;
}

// The indices of a movement op's source for the op's output at `idxs`; `cond` is set to where
// a PAD's source is in range (elsewhere the output is 0).
std::vector<UOpPtr> KernelBuilder::movement_indices(const UOpPtr& node,
                                                    const std::vector<UOpPtr>& idxs, UOpPtr& cond) {
  const Shape& in = s_.shapes.of(node->src(0));
  const Shape& out = s_.shapes.of(node);
  std::vector<UOpPtr> res(in.size());
  switch (node->op()) {
  case Op::Reshape:
    for (const ReshapeGroup& g : reshape_groups(out, in)) {
      Shape out_dims(out.begin() + g.out_begin, out.begin() + g.out_end);
      Shape in_dims(in.begin() + g.in_begin, in.begin() + g.in_end);
      UOpPtr lin = linear_index({idxs.begin() + g.out_begin, idxs.begin() + g.out_end}, out_dims);
      std::vector<Dim> strides = contiguous_strides(in_dims);
      // A symbolic group's first dim of size > 1 needs no remainder (its index is below it).
      bool first = is_symbolic(in_dims) || is_symbolic(out_dims);
      for (size_t j = 0; j < in_dims.size(); ++j) {
        UOpPtr& r = res[g.in_begin + j];
        if (in_dims[j] == 1) {
          r = index_const(0);
        } else if (in_dims[j].is_const() && strides[j].is_const() && !first) {
          r = simplify_kernel((lin / strides[j].value()) % in_dims[j].value());
        } else {
          r = strides[j] == 1 ? lin : lin / strides[j].expr();
          r = simplify_kernel(first ? r : r % in_dims[j].expr());
          first = false;
        }
      }
    }
    break;
  case Op::Expand:
    for (size_t i = 0; i < in.size(); ++i)
      res[i] = in[i] == 1 && out[i] != 1 ? index_const(0) : idxs[i];
    break;
  case Op::Permute: {
    std::vector<int64_t> a = int_args(*node);
    for (size_t i = 0; i < a.size(); ++i) res[static_cast<size_t>(a[i])] = idxs[i];
    break;
  }
  case Op::Shrink: {
    std::vector<Dim> a = dim_args(*node);
    for (size_t i = 0; i < in.size(); ++i) res[i] = simplify_kernel(idxs[i] + a[2 * i].expr());
    break;
  }
  case Op::Flip: {
    std::vector<int64_t> a = int_args(*node);
    for (size_t i = 0; i < in.size(); ++i)
      res[i] = !a[i]              ? idxs[i]
               : in[i].is_const() ? simplify_kernel(index_const(in[i].value() - 1) - idxs[i])
                                  : simplify_kernel(in[i].expr() - 1 - idxs[i]);
    break;
  }
  case Op::Pad: {
    std::vector<int64_t> a = int_args(*node);
    for (size_t i = 0; i < in.size(); ++i) {
      res[i] = simplify_kernel(idxs[i] - a[2 * i]);
      if (a[2 * i] == 0 && a[2 * i + 1] == 0) continue;
      UOpPtr c = alu(Op::And, alu(Op::CmpLt, index_const(-1), res[i]), lt(res[i], in[i].expr()));
      cond = cond ? alu(Op::And, cond, c) : c;
    }
    if (cond) {
      cond = simplify_kernel(cond);
      if (cond->is_const() && cond->const_value() == 1) cond = nullptr;
    }
    break;
  }
  default: internal_error << "not a movement op: " << op_name(node->op());
  }
  return res;
}

// The open loops that don't move `used` but enclose one that does: a value computed inside
// them is computed again on each of their steps (the code generator hoists a value only out of
// loops nested inside all it uses).
std::vector<const UOp*> KernelBuilder::enclosing_unused(const std::vector<const UOp*>& used) const {
  int64_t innermost_used = -1;
  for (const UOp* r : used) innermost_used = std::max(innermost_used, range_axis_id(*r));
  std::vector<const UOp*> out;
  for (const UOp* r : context_)
    if (std::find(used.begin(), used.end(), r) == used.end() && range_axis_id(*r) < innermost_used)
      out.push_back(r);
  return out;
}

// A reduction reached with `idxs` runs once per value of the loops it varies with when the
// loops it doesn't vary with nest inside those: the code generator then hoists it. It must
// also not run more often than it has results: read through a sliding window (a depthwise
// convolution's input, h + kh) it would be computed once per tap, so it gets a kernel.
bool KernelBuilder::hoistable(const std::vector<UOpPtr>& idxs, int64_t results) const {
  std::vector<const UOp*> used = ranges_in(idxs);
  return runs_of(used) <= results && enclosing_unused(used).empty();
}

// How often a value reached with `idxs` is computed: once per value of the loops it varies with
// and of each open loop around them it doesn't vary with.
int64_t KernelBuilder::computed_times(const std::vector<UOpPtr>& idxs) const {
  std::vector<const UOp*> used = ranges_in(idxs);
  return runs_of(used) * runs_of(enclosing_unused(used));
}

UOpPtr KernelBuilder::emit_reduce(const UOpPtr& node, const std::vector<UOpPtr>& idxs,
                                  const UOpPtr& valid) {
  std::vector<const UOp*> key;
  for (const UOpPtr& i : idxs) key.push_back(i.get());
  key.push_back(valid.get());
  auto [seen, first] = reduce_key_.emplace(node.get(), key);
  bool fuse = node == root_ || hoistable(idxs, shape_numel(s_.shapes.of(node)).max());
  if (!fuse || (!first && seen->second != key)) {
    // Realized by a kernel of its own; if it was already fused here, build this one again.
    if (!first) retry_ = true;
    return load_realized(node, idxs, valid);
  }
  computes(node);
  const Shape& in = s_.shapes.of(node->src(0));
  std::vector<UOpPtr> inner = idxs, ranges;
  for (int64_t ax : reduce_axes(*node)) {
    auto a = static_cast<size_t>(ax);
    if (in[a] == 1) continue;
    inner[a] = kernel_range(in[a].expr(), next_axis_++, LoopKind::Reduce);
    ranges.push_back(inner[a]);
  }
  // Fused below the root it is hoisted out of the loops it doesn't vary with: inside it, only
  // the loops it uses and its own are open.
  std::vector<const UOp*> outside = context_;
  if (node != root_) context_ = ranges_in(idxs);
  for (const UOpPtr& r : ranges) context_.push_back(r.get());
  UOpPtr v = emit(node->src(0), inner, valid);
  context_ = std::move(outside);
  return ranges.empty() ? v : reduce_over(v, ranges, reduce_op(*node));
}

} // namespace

Schedule create_schedule(const std::vector<UOpPtr>& roots) { return Scheduler().run(roots); }

std::string kernel_name(const UOpPtr& ast) {
  std::vector<const UOp*> ranges;
  bool reduces = false;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() == Op::Range) ranges.push_back(u.get());
    reduces |= u->op() == Op::Reduce;
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const UOp* a, const UOp* b) { return range_axis_id(*a) < range_axis_id(*b); });
  std::string name = reduces ? "r" : "E";
  for (const UOp* r : ranges) name += "_" + extent_label(*r);
  return name;
}

} // namespace beamlab

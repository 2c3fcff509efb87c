// Kernels from IR text; see kernel_file.hpp.
#include "frontends/ir_text/kernel_file.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/verify.hpp"

namespace beamlab::ir_text {
namespace {

struct Slot {
  UOpPtr global;     // its DEFINE_GLOBAL
  int64_t count = 0; // elements: the largest reachable index + 1
};

// Each DEFINE_GLOBAL slot with the elements the kernel can reach through it.
std::map<int64_t, Slot> slots_of(const UOpPtr& ast, const std::string& source) {
  std::map<int64_t, Slot> slots;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() == Op::DefineGlobal) slots[u->arg().as_int()].global = u;
    if (u->op() != Op::Index || u->src(0)->op() != Op::DefineGlobal) continue;
    int64_t slot = u->src(0)->arg().as_int();
    const UOpPtr& i = u->src(1);
    bool gated = u->src().size() > 2, loaded = false;
    for (const UOpPtr& v : toposort(i)) loaded |= v->op() == Op::Load;
    user_assert(!loaded) << source << ": buffer " << slot << " is indexed at " << to_expr(i)
                         << ", which is read from memory, so its range is unknown; an index "
                         << "must be built from ranges and constants";
    user_assert(gated || i->vmin() >= 0)
        << source << ": buffer " << slot << " is indexed at " << to_expr(i)
        << ", which can be negative (" << i->vmin() << "); gate the access with a valid mask";
    slots[slot].count = std::max(slots[slot].count, i->vmax() + 1);
  }
  return slots;
}

// A symbolic extent (kernel_ops.hpp) runs a plain loop or a reduction, and is built from
// constants and DEFINE_VARs only, so its value is known when the kernel starts.
void check_extents(const UOpPtr& ast, const std::string& source) {
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Op::Range || !symbolic_extent(*u)) continue;
    LoopKind kind = loop_kind(*u);
    user_assert(kind == LoopKind::Loop || kind == LoopKind::Reduce)
        << source << ": a " << to_string(kind) << " RANGE runs to " << to_expr(u->src(0))
        << "; only loop and reduce ranges may have a symbolic extent (Opts make the others)";
    std::vector<UOpPtr> nodes = toposort(u->src(0)); // the extent last: its nearest node first
    for (auto v = nodes.rbegin(); v != nodes.rend(); ++v)
      user_assert((*v)->op() == Op::Const || (*v)->op() == Op::DefineVar ||
                  (*v)->op() == Op::Cast || is_alu((*v)->op()))
          << source << ": a RANGE runs to " << to_expr(u->src(0)) << ", which reads "
          << op_name((*v)->op()) << "; a symbolic extent is built from constants and DEFINE_VARs";
  }
}

} // namespace

Program parse_kernel(const std::string& text, const std::string& source) {
  Expected<UOpPtr, ParseError> parsed = parse_graph(text);
  user_assert(parsed) << parsed.error().str(source);
  UOpPtr ast = *parsed;
  bool stores = ast->op() == Op::Sink && !ast->src().empty();
  for (const UOpPtr& s : ast->src()) stores &= s->op() == Op::Store;
  user_assert(stores) << source << ": the last node must be a SINK of STOREs (a kernel AST, as "
                      << "'beamlab run --save-kernels DIR' writes them), not "
                      << op_name(ast->op());
  for (const UOpPtr& s : ast->src())
    user_assert(s->src(0)->op() == Op::Index && s->src(0)->src(0)->op() == Op::DefineGlobal &&
                s->src(0)->src(0)->arg().as_int() == 0)
        << source << ": a kernel stores into its output, DEFINE_GLOBAL 0, only";
  std::vector<std::string> errors = verify(ast, spec_kernel());
  user_assert(errors.empty()) << source << ": " << errors.front();
  check_extents(ast, source);
  std::map<int64_t, Slot> slots = slots_of(ast, source);
  ScheduleItem item;
  item.ast = ast;
  item.name = kernel_name(ast);
  item.key = ast->hash();
  Program p;
  double bytes = 0;
  for (const auto& [slot, s] : slots) {
    user_assert(slot == static_cast<int64_t>(item.buffers.size()))
        << source << ": buffer slots must be numbered 0, 1, 2, ... in order; slot "
        << item.buffers.size() << " is missing";
    user_assert(s.count > 0) << source << ": buffer " << slot << " is never indexed";
    DType dt = s.global->dtype().base();
    bytes += static_cast<double>(s.count) * dt.itemsize();
    user_assert(bytes <= machine_memory_bytes() / 2)
        << source << ": its buffers need more than half of this machine's memory";
    if (slot == 0) {
      item.buffers.push_back(tensor_buffer(dt, s.count));
      continue;
    }
    Tensor data = Tensor::rand({s.count}, static_cast<uint64_t>(slot), dt);
    Tensor::collect_inputs(data, p.kernel_inputs);
    for (const UOpPtr& u : toposort(data.uop()))
      if (u->op() == Op::Buffer) item.buffers.push_back(u);
  }
  user_assert(!item.buffers.empty()) << source << ": the kernel has no output buffer";
  p.kernels = Schedule{{std::move(item)}, {}, {}};
  p.kernels->outputs.push_back(p.kernels->items[0].buffers[0]);
  return p;
}

Program load_kernel(const std::string& path) {
  std::ifstream f(path);
  user_assert(f) << "cannot read the kernel file '" << path << "'; check the path";
  std::stringstream text;
  text << f.rdbuf();
  return parse_kernel(text.str(), path);
}

} // namespace beamlab::ir_text

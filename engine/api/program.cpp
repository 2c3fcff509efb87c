// Programs; see beamlab/program.hpp.
#include <beamlab/program.hpp>

#include <unordered_set>

#include "engine/support/statistics.hpp"

namespace beamlab {

Schedule Program::schedule() const {
  if (kernels) return *kernels;
  std::vector<UOpPtr> roots;
  for (const Tensor& t : outputs) roots.push_back(t.uop());
  return create_schedule(roots);
}

BufferMap Program::inputs() const {
  BufferMap out = kernel_inputs;
  for (const Tensor& t : outputs) Tensor::collect_inputs(t, out);
  return out;
}

std::vector<std::vector<std::string>> Program::kernel_names(const Schedule& schedule) const {
  std::vector<std::vector<std::string>> out(schedule.items.size());
  if (names.empty()) return out;
  // A named node that only moves or reshapes an unnamed result (a matmul's output is a RESHAPE
  // of its REDUCE) is named where that result is computed; the kernels that merely index
  // through the movement don't take the name.
  std::unordered_set<const UOp*> named;
  for (const NodeName& n : names) named.insert(n.node.get());
  std::vector<const UOp*> keys;
  for (const NodeName& n : names) {
    const UOp* core = n.node.get();
    while (is_movement(core->op())) core = core->src(0).get();
    bool by_core = core != n.node.get() && !named.count(core) && core->op() != Op::Buffer;
    keys.push_back(by_core ? core : n.node.get());
  }
  for (size_t i = 0; i < schedule.items.size(); ++i) {
    std::unordered_set<const UOp*> computed;
    for (const UOpPtr& n : schedule.items[i].nodes) computed.insert(n.get());
    for (size_t j = 0; j < names.size(); ++j)
      if (computed.count(keys[j]) &&
          (out[i].empty() || out[i].back() != names[j].name)) // a node's several outputs: once
        out[i].push_back(names[j].name);
  }
  return out;
}

Program& Program::realize(const RealizeOptions& options) {
  if (kernels) {
    ExecutionPlan::prepare(*kernels, kernel_inputs, options).run();
    return *this;
  }
  std::vector<Tensor*> ptrs;
  for (Tensor& t : outputs) ptrs.push_back(&t);
  Tensor::realize_all(ptrs, options);
  return *this;
}

std::string join_names(const std::vector<std::string>& names, size_t max) {
  auto join = [&](size_t from, size_t to) {
    std::string out;
    for (size_t i = from; i < to; ++i) out += (i == from ? "" : ", ") + names[i];
    return out;
  };
  if (names.size() <= max) return join(0, names.size());
  size_t head = (max + 1) / 2, tail = max / 2;
  return join(0, head) + " ... " + join(names.size() - tail, names.size()) + " (" +
         std::to_string(names.size()) + " nodes)";
}

LaunchOverhead measure_launch_overhead(int threads) {
  threads = threads > 0 ? threads : default_threads();
  auto launch_us = [](int t) {
    Tensor x = Tensor::rand({16 * int64_t{t}}, 1);
    Tensor y = x + 1.0;
    HeuristicPolicy plan_of;
    plan_of.set("*", t > 1 ? std::vector<Opt>{{OptOp::Thread, 0, t}} : std::vector<Opt>{});
    ExecutionPlan plan =
        ExecutionPlan::prepare(y.schedule(), y.inputs(), {.threads = t, .policy = &plan_of});
    return quantile(plan.sample(15, 2.0), 0.5) * 1e3; // each sample a 2 ms batch's mean
  };
  return {threads, launch_us(1), launch_us(threads)};
}

} // namespace beamlab

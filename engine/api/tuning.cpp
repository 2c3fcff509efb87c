// The tuner's view of a kernel; see beamlab/tuning.hpp.
#include <beamlab/tuning.hpp>

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "engine/ir/kernel_ops.hpp"
#include "engine/support/hash.hpp"

namespace beamlab {

int64_t reduce_length(const UOpPtr& ast) {
  int64_t n = 1;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Op::Range && loop_kind(*u) == LoopKind::Reduce) n *= max_extent(*u);
  return n;
}

KernelTask kernel_task(const ScheduleItem& item, const std::vector<VarValues>& tune_at) {
  KernelBindings b = tune_at.empty() ? default_bindings(item.ast) : bindings_at(item.ast, tune_at);
  KernelCost cost;
  for (const VarValues& at : b.tune_at.empty() ? std::vector<VarValues>(1) : b.tune_at) {
    KernelCost one = kernel_cost(item, at);
    cost.flops += one.flops;
    cost.bytes += one.bytes;
  }
  KernelTask t{item.name,  item.key, print_graph(item.ast), {}, reduce_length(item.ast), cost.flops,
               cost.bytes, item.ast};
  for (size_t s = 0; s < item.buffers.size(); ++s)
    t.buffers.push_back({item.buffers[s]->dtype().scalar_type(), buffer_size(*item.buffers[s]),
                         s > 0 && s < item.constant_slots.size() && item.constant_slots[s]});
  t.tune_at = std::move(b.tune_at);
  t.check_at = std::move(b.check_at);
  return t;
}

Expected<UOpPtr> task_graph(const KernelTask& task) {
  if (task.graph) return task.graph;
  auto ast = parse_graph(task.ast);
  if (!ast) return make_unexpected("kernel " + task.name + ": " + ast.error().str("ast"));
  return *ast;
}

std::vector<Variable> kernel_variables(const UOpPtr& ast) {
  std::vector<Variable> vars;
  for (const UOpPtr& v : variables_of(ast))
    vars.push_back({v->arg().items()[0].as_str(), v->vmin(), v->vmax()});
  return vars;
}

KernelBindings default_bindings(const UOpPtr& ast) {
  return bindings_at(ast, default_tune_at(kernel_variables(ast)));
}

std::vector<VarValues> default_tune_at(const std::vector<Variable>& vars) {
  if (vars.empty()) return {};
  VarValues hi, small;
  for (const Variable& v : vars) hi[v.name] = v.hi, small[v.name] = std::max(v.lo, (v.hi + 7) / 8);
  return small == hi ? std::vector<VarValues>{hi} : std::vector<VarValues>{hi, small};
}

KernelBindings bindings_at(const UOpPtr& ast, const std::vector<VarValues>& tune_at) {
  std::vector<Variable> vars = kernel_variables(ast);
  if (vars.empty()) return {};
  auto add = [](std::vector<VarValues>& to, const VarValues& at) {
    if (std::find(to.begin(), to.end(), at) == to.end()) to.push_back(at);
  };
  VarValues lo, hi;
  for (const Variable& v : vars) lo[v.name] = v.lo, hi[v.name] = v.hi;
  KernelBindings b;
  for (const VarValues& given : tune_at) {
    VarValues at;
    for (const Variable& v : vars)
      if (auto it = given.find(v.name); it != given.end()) at[v.name] = it->second;
    check_values(vars, at);
    user_assert(at.size() == vars.size())
        << "kernel " << kernel_name(ast) << ": tune_at " << bindings_str({given})
        << " lacks a value of one of its variables";
    add(b.tune_at, at);
  }
  add(b.check_at, lo);
  for (const VarValues& at : b.tune_at) add(b.check_at, at);
  add(b.check_at, hi);
  return b;
}

std::string bindings_str(const std::vector<VarValues>& bindings) {
  std::string out;
  for (const VarValues& at : bindings) {
    if (!out.empty()) out += ", ";
    std::string one;
    for (const auto& [name, value] : at)
      one += (one.empty() ? "" : " ") + name + "=" + std::to_string(value);
    out += one;
  }
  return out;
}

HostIdentity host_identity() {
  HostIdentity h;
  h.cpu_model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      if (size_t colon = line.find(':'); colon != std::string::npos)
        h.cpu_model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  h.isa = host_cpu_description();
  h.cores = static_cast<int>(std::thread::hardware_concurrency());
  h.llvm_version = llvm_version();
  h.beamlab_version = BEAMLAB_VERSION;
  return h;
}

int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::string allowed_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "";
  std::string list;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set) || (c > 0 && CPU_ISSET(c - 1, &set))) continue; // not a run's start
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    list += (list.empty() ? "" : ",") + std::to_string(c);
    if (last > c) list += "-" + std::to_string(last);
  }
  return list;
}

std::string compiler_identity() {
  return "beamlab " + std::string(BEAMLAB_VERSION) + ", LLVM " + llvm_version() + ", hash v" +
         std::to_string(kHashVersion) + ", opts v" + std::to_string(kOptVersion);
}

} // namespace beamlab

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

KernelTask kernel_task(const ScheduleItem& item) {
  KernelCost cost = kernel_cost(item);
  KernelTask t{item.name,  item.key, print_graph(item.ast), {}, reduce_length(item.ast), cost.flops,
               cost.bytes, item.ast};
  for (size_t s = 0; s < item.buffers.size(); ++s)
    t.buffers.push_back({item.buffers[s]->dtype().scalar_type(), buffer_size(*item.buffers[s]),
                         s > 0 && s < item.constant_slots.size() && item.constant_slots[s]});
  return t;
}

Expected<UOpPtr> task_graph(const KernelTask& task) {
  if (task.graph) return task.graph;
  auto ast = parse_graph(task.ast);
  if (!ast) return make_unexpected("kernel " + task.name + ": " + ast.error().str("ast"));
  return *ast;
}

std::vector<std::string> kernel_variables(const UOpPtr& ast) {
  std::vector<std::string> names;
  for (const UOpPtr& v : variables_of(ast)) names.push_back(v->arg().items()[0].as_str());
  return names;
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

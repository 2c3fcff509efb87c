// Profiling a program execution; see program.hpp.
#include "gui/program.hpp"

#include <algorithm>
#include <exception>
#include <iterator>

#include <fmt/format.h>

#include <beamlab/workloads.hpp>

namespace beamlab::gui {
namespace {

int64_t bytes_of(const UOp& buffer) {
  return buffer_size(buffer) * std::max(1, buffer.dtype().scalar_type().itemsize());
}

// Each kernel's inputs, linked to the earlier kernel whose output (slot 0) is that buffer.
void link_buffers(const std::vector<PlannedKernel>& planned, std::vector<ProgramKernel>& out) {
  std::map<int64_t, int> producer; // BUFFER id -> kernel index
  for (size_t i = 0; i < planned.size(); ++i) {
    const std::vector<UOpPtr>& buffers = planned[i].item.buffers;
    ProgramKernel& k = out[i];
    k.output_bytes = buffers.empty() ? 0 : bytes_of(*buffers[0]);
    for (size_t slot = 1; slot < buffers.size(); ++slot) {
      int64_t id = buffer_id(*buffers[slot]);
      auto it = producer.find(id);
      k.inputs.push_back(it == producer.end() ? -1 : it->second);
      k.input_bytes.push_back(bytes_of(*buffers[slot]));
      k.input_buffers.push_back(id);
    }
    if (!buffers.empty()) producer[buffer_id(*buffers[0])] = static_cast<int>(i);
  }
}

ProgramProfile run_profile(const std::string& workload,
                           const std::map<std::string, int64_t>& params, const std::string& dtype,
                           int threads, int runs, const OptPolicy* policy) {
  Tensor out =
      dtype.empty() ? build_workload(workload, params) : build_workload(workload, params, dtype);
  ExecutionPlan plan =
      ExecutionPlan::prepare(out.schedule(), out.inputs(), {.threads = threads, .policy = policy});
  ProgramProfile p;
  p.workload = workload;
  p.params = params;
  p.dtype = out.dtype().str();
  p.threads = plan.threads();
  p.runs = std::max(1, runs);
  std::vector<KernelProfile> timed = plan.profile(p.runs);
  std::vector<KernelTrace> traced = plan.trace();
  for (size_t i = 0; i < timed.size(); ++i) {
    const KernelProfile& t = timed[i];
    ProgramKernel k;
    k.name = t.name;
    k.key = fmt::format("{:016x}", t.key);
    k.opts = t.opts;
    k.ms = t.ms;
    k.gflops = t.gflops;
    k.gbps = t.gbps;
    k.flops = t.cost.flops;
    k.bytes = t.cost.bytes;
    k.begin_ns = traced[i].begin_ns;
    k.end_ns = traced[i].end_ns;
    k.spans = std::move(traced[i].spans);
    p.total_ms += t.ms;
    p.traced_ns = std::max(p.traced_ns, k.end_ns);
    p.kernels.push_back(std::move(k));
  }
  link_buffers(plan.kernels(), p.kernels);
  return p;
}

} // namespace

Expected<ProgramProfile> profile_program(const std::string& workload,
                                         const std::map<std::string, int64_t>& params,
                                         const std::string& dtype, int threads, int runs,
                                         const OptPolicy* policy) {
  // A worker thread must not die of an exception: user errors (the message names the bad
  // input), JIT failures and even internal errors (the message says so) become the result.
  try {
    return run_profile(workload, params, dtype, threads, runs, policy);
  } catch (const std::exception& e) {
    return make_unexpected(std::string(e.what()));
  }
}

std::string format_ms(double ms) {
  return ms >= 1 ? fmt::format("{:.2f} ms", ms) : fmt::format("{:.3g} ms", ms);
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  size_t u = 0;
  for (; v >= 1024 && u + 1 < std::size(units); ++u) v /= 1024;
  return fmt::format("{:.1f} {}", v, units[u]);
}

} // namespace beamlab::gui

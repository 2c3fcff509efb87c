// Profiling a program execution; see program.hpp.
#include "gui/program.hpp"

#include <algorithm>
#include <charconv>
#include <exception>
#include <filesystem>
#include <iterator>
#include <sstream>

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

ProgramProfile run_profile(const tuner::CorpusEntry& entry, int threads, int runs,
                           const OptPolicy* policy) {
  Program out = tuner::build_entry(entry);
  Schedule schedule = out.schedule();
  ExecutionPlan plan =
      ExecutionPlan::prepare(schedule, out.inputs(), {.threads = threads, .policy = policy});
  std::vector<std::vector<std::string>> names = out.kernel_names(schedule);
  ProgramProfile p;
  p.workload = entry.workload.empty() ? entry.label : entry.workload;
  p.params = entry.params;
  p.dtype = out.outputs.empty() ? schedule.items.at(0).buffers.at(0)->dtype().str()
                                : out.outputs[0].dtype().str();
  p.threads = plan.threads();
  p.runs = std::max(1, runs);
  std::vector<KernelProfile> timed = plan.profile(p.runs);
  std::vector<KernelTrace> traced = plan.trace();
  for (size_t i = 0; i < timed.size(); ++i) {
    const KernelProfile& t = timed[i];
    ProgramKernel k;
    k.name = t.name;
    k.key = hash_hex(t.key);
    k.opts = t.opts;
    k.nodes = std::move(names[i]);
    k.task = kernel_task(plan.kernels()[i].item);
    k.ms = t.ms;
    k.once = t.once;
    k.samples_ms = t.samples_ms;
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

bool waited_for_cores(const ProgramKernel& k) {
  int64_t launch = k.end_ns - k.begin_ns, work = 0;
  for (const ThreadSpan& s : k.spans) work = std::max(work, s.end_ns - s.begin_ns);
  return work > 0 && launch > 4 * work && launch - work > 50'000;
}

Expected<ProgramProfile> profile_program(const tuner::CorpusEntry& entry, int threads, int runs,
                                         const OptPolicy* policy) {
  // A worker thread must not die of an exception: user errors (the message names the bad
  // input), JIT failures and even internal errors (the message says so) become the result.
  try {
    return run_profile(entry, threads, runs, policy);
  } catch (const std::exception& e) {
    return make_unexpected(std::string(e.what()));
  }
}

Expected<ProgramProfile> profile_program(const std::string& workload,
                                         const std::map<std::string, int64_t>& params,
                                         const std::string& dtype, int threads, int runs,
                                         const OptPolicy* policy) {
  return profile_program(tuner::workload_entry(workload, params, dtype.empty() ? "float32" : dtype),
                         threads, runs, policy);
}

tuner::CorpusEntry parse_program(const std::string& text) {
  auto words = [](std::string_view s) {
    std::vector<std::string> out;
    std::istringstream in{std::string(s)};
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  // An expression: everything before the first ';', then its inputs' shapes.
  if (size_t semi = text.find(';'); semi != std::string::npos)
    return tuner::expr_entry(text.substr(0, semi), words(text.substr(semi + 1)));
  std::vector<std::string> w = words(text);
  user_assert(!w.empty()) << "name a workload (matmul M=64), a model (model.onnx), a kernel "
                          << "(kernel.ir) or an expression (a.relu(); a=64x64)";
  std::vector<std::string> rest(w.begin() + 1, w.end());
  if (w[0].ends_with(".onnx")) return tuner::model_entry(w[0], rest);
  if (w[0].ends_with(".ir")) {
    user_assert(rest.empty()) << "a kernel file takes no parameters; its IR text gives the sizes";
    return tuner::kernel_entry(w[0]);
  }
  bool builtin = false;
  for (const WorkloadInfo& info : workloads()) builtin |= info.name == w[0];
  std::error_code ec;
  user_assert(builtin || !std::filesystem::is_regular_file(w[0], ec))
      << "'" << w[0] << "' is a file but neither a model (.onnx) nor a kernel's IR text (.ir); "
      << "give one of those";
  user_assert(builtin || w[0].find_first_of("(.+*") == std::string::npos)
      << "'" << text << "': an expression needs its inputs' shapes after a ';', e.g. "
      << "'a.relu(); a=64x64'";
  std::map<std::string, int64_t> params;
  std::string dtype = "float32";
  for (const std::string& word : rest) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq),
                value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (key == "dtype" && !value.empty()) {
      dtype = value;
      continue;
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    user_assert(eq != std::string::npos && ec == std::errc{} && end == value.data() + value.size())
        << "'" << word << "': expected NAME=INTEGER (or dtype=float16)";
    params[key] = v;
  }
  return tuner::workload_entry(w[0], params, dtype);
}

std::string format_ms(double ms) {
  return ms >= 1 ? fmt::format("{:.2f} ms", ms) : fmt::format("{:.3g} ms", ms);
}

std::string kernel_time_text(const ProgramKernel& k) {
  return k.once ? "once, before the first run" : format_ms(k.ms);
}

std::string share_text(const ProgramKernel& k, double total_ms) {
  if (k.once) return "-";
  return fmt::format("{:.1f}%", total_ms > 0 ? 100 * k.ms / total_ms : 0.0);
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

// Recording a bench run; see bench_record.hpp.
#include "reports/bench_record.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/run_data.hpp"
#include "reports/stats.hpp"
#include "tuner/batch.hpp"
#include "tuner/journal.hpp"
#include "tuner/policy.hpp"
#include <beamlab/beamlab.hpp>

extern char** environ;

namespace beamlab::reports {

using json = nlohmann::json;

namespace {

/// One corpus entry: the whole plan's time (every kernel in order) and each kernel's.
std::vector<Measurement> bench_entry(const tuner::CorpusEntry& e, const BenchOptions& o,
                                     const OptPolicy& policy, const OptPolicy& heuristic) {
  const std::string& label = e.label;
  Tensor out = tuner::build_entry(e);
  ExecutionPlan plan = ExecutionPlan::prepare(out.schedule(), out.inputs(),
                                              {.threads = o.threads, .policy = &policy});
  Measurement whole;
  whole.section = Section::workload;
  whole.key = label;
  whole.name = label;
  // The mean time of `n` runs of the whole plan.
  auto time_plan = [&](int n) {
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < n; ++k) plan.run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
               .count() /
           n;
  };
  int launches = 1; // calibrated (and warmed up) like ExecutionPlan::profile's kernels
  while (launches < (1 << 20) && time_plan(launches) * launches < o.min_sample_ms) launches *= 2;
  for (int r = 0; r < o.runs; ++r) whole.samples_ms.push_back(time_plan(launches));
  std::vector<Measurement> items = {whole};
  std::vector<KernelProfile> profiles = plan.profile(o.runs, o.min_sample_ms);
  for (size_t i = 0; i < profiles.size(); ++i) {
    const PlannedKernel& k = plan.kernels()[i];
    Measurement m;
    m.section = Section::kernel;
    m.key = tuner::kernel_record(kernel_task(k.item)).hash;
    m.name = profiles[i].name;
    m.workloads = {label};
    m.plan = profiles[i].opts;
    m.source = heuristic.opts_for(k.item, plan.threads()) == k.opts ? "heuristic" : "cache";
    m.flops = profiles[i].cost.flops;
    m.bytes = profiles[i].cost.bytes;
    m.samples_ms = profiles[i].samples_ms;
    items.push_back(std::move(m));
  }
  return items;
}

double to_ms(double value, const std::string& unit) {
  if (unit == "ns") return value / 1e6;
  if (unit == "us") return value / 1e3;
  if (unit == "s") return value * 1e3;
  return value;
}

/// Runs the suite binary with `args`, its output going to `log`; the exit status.
int run_process(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int err = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

/// The suite's benchmarks, each repetition a sample.
std::vector<Measurement> bench_suite(const BenchOptions& o) {
  const std::string binary = o.suite_binary.empty() ? default_suite_binary() : o.suite_binary;
  user_assert(::access(binary.c_str(), X_OK) == 0)
      << "the benchmark suite '" << binary
      << "' is missing: build the beamlab-bench target, set BEAMLAB_BENCH, or pass --no-suite";
  auto dir = std::filesystem::temp_directory_path() /
             fmt::format("beamlab-bench-{}-{}", ::getpid(),
                         std::chrono::steady_clock::now().time_since_epoch().count());
  std::filesystem::create_directories(dir);
  std::shared_ptr<void> cleanup(nullptr, [&](void*) { std::filesystem::remove_all(dir); });
  const std::string out = (dir / "suite.json").string(), log = (dir / "suite.log").string();
  int status = run_process({binary, "--benchmark_filter=" + o.suite_filter,
                            fmt::format("--benchmark_repetitions={}", o.runs),
                            fmt::format("--benchmark_min_time={}", o.suite_min_time),
                            "--benchmark_out=" + out, "--benchmark_out_format=json"},
                           log);
  user_assert(status == 0) << "the benchmark suite '" << binary << "' failed (exit " << status
                           << "): " << last_line(log) << " (pass --no-suite to skip it)";
  std::ifstream in(out);
  json report = json::parse(in, nullptr, false);
  user_assert(report.is_object() && report.contains("benchmarks"))
      << "the benchmark suite '" << binary << "' wrote no readable JSON report";
  std::vector<Measurement> items;
  for (const json& b : report["benchmarks"]) {
    if (b.value("run_type", "") != "iteration" || b.value("error_occurred", false)) continue;
    std::string name = b.value("run_name", b.value("name", ""));
    auto same = std::find_if(items.begin(), items.end(),
                             [&](const Measurement& m) { return m.key == name; });
    if (same == items.end()) {
      Measurement m;
      m.section = Section::suite;
      m.key = m.name = name;
      m.plan = b.value("label", "");
      items.push_back(m);
      same = items.end() - 1;
    }
    same->samples_ms.push_back(to_ms(b.value("real_time", 0.0), b.value("time_unit", "ns")));
  }
  return items;
}

json settings_json(const BenchOptions& o) {
  return {{"corpus", o.corpus.path.empty() ? o.corpus.name : o.corpus.path},
          {"runs", o.runs},
          {"threads", o.threads},
          {"cache", o.use_cache ? "read-only" : "off"},
          {"suite", o.suite ? json(o.suite_filter) : json(nullptr)},
          {"suite_min_time", o.suite_min_time},
          {"min_sample_ms", o.min_sample_ms}};
}

} // namespace

std::string default_suite_binary() {
  if (const char* env = std::getenv("BEAMLAB_BENCH"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ((ec ? std::filesystem::path(".") : self.parent_path()) / "beamlab-bench").string();
}

int64_t record_bench(db::Database& db, const BenchOptions& o,
                     const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  int64_t device = db.upsert_device(tuner::this_device());
  auto [gflops, gbps] = tuner::device_peaks(db, device, o.threads);
  say(fmt::format("device peaks: {:.1f} GFLOP/s, {:.1f} GB/s", gflops, gbps));
  db::NewRun nr;
  nr.device_id = device;
  nr.kind = "bench";
  nr.label = o.label;
  nr.command = o.command;
  nr.settings = settings_json(o).dump();
  nr.git_revision = o.git_revision;
  nr.host = tuner::host_name();
  int64_t run = db.begin_run(nr);
  try {
    HeuristicPolicy heuristic;
    std::unique_ptr<tuner::CachePolicy> cached;
    if (o.use_cache)
      cached =
          std::make_unique<tuner::CachePolicy>(db.path(), tuner::CacheMode::read_only, heuristic);
    const OptPolicy& policy = cached ? *cached : static_cast<const OptPolicy&>(heuristic);
    for (size_t i = 0; i < o.corpus.entries.size(); ++i) {
      const tuner::CorpusEntry& e = o.corpus.entries[i];
      std::vector<Measurement> items = bench_entry(e, o, policy, heuristic);
      for (const Measurement& m : items) db.add_benchmark(to_benchmark(run, m));
      say(fmt::format("[{}/{}] {}: {} kernel(s), {} ms a run", i + 1, o.corpus.entries.size(),
                      items.front().name, items.size() - 1,
                      fmt::format("{:.3f}", describe(items.front().samples_ms).median)));
    }
    if (o.suite) {
      say(fmt::format("benchmark suite ({}), {} repetitions each...", o.suite_filter, o.runs));
      std::vector<Measurement> items = bench_suite(o);
      for (const Measurement& m : items) db.add_benchmark(to_benchmark(run, m));
      say(fmt::format("benchmark suite: {} benchmark(s)", items.size()));
    }
  } catch (...) {
    db.end_run(run, "failed");
    throw;
  }
  db.end_run(run, "done");
  return run;
}

} // namespace beamlab::reports

// Recording a bench run; see bench_record.hpp.
#include "reports/bench_record.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/run_data.hpp"
#include "reports/stats.hpp"
#include "tuner/batch/batch.hpp"
#include "tuner/batch/policy.hpp"
#include "tuner/measure/sandbox.hpp"
#include "tuner/store/journal.hpp"
#include "tuner/store/run.hpp"
#include <beamlab/beamlab.hpp>

extern char** environ;

namespace beamlab::reports {

using json = nlohmann::json;

namespace {

// The plan as bound now: its whole time and each kernel's, named with `at`.
std::vector<Measurement> bench_binding(ExecutionPlan& plan, const std::string& label,
                                       const std::string& at, const BenchOptions& o, int runs,
                                       const tuner::CachePolicy* cache) {
  Measurement whole;
  whole.section = Section::workload;
  whole.key = label + at;
  whole.name = label + at;
  whole.samples_ms = plan.sample(runs, o.min_sample_ms);
  std::vector<Measurement> items = {whole};
  std::vector<KernelProfile> profiles = plan.profile(runs, o.min_sample_ms);
  for (size_t i = 0; i < profiles.size(); ++i) {
    const PlannedKernel& k = plan.kernels()[i];
    if (k.once) continue; // a kernel of constants: it ran once, before the plan's first run
    Measurement m;
    m.section = Section::kernel;
    m.key = tuner::kernel_record(kernel_task(k.item)).hash + at;
    m.name = profiles[i].name + at;
    m.workloads = {label + at};
    m.plan = profiles[i].opts;
    m.source = cache && cache->cached(k.item, plan.threads()) ? "cache" : "heuristic";
    m.flops = profiles[i].cost.flops;
    m.bytes = profiles[i].cost.bytes;
    m.samples_ms = profiles[i].samples_ms;
    items.push_back(std::move(m));
  }
  return items;
}

/// One corpus entry: the whole plan's time (every kernel in order) and each kernel's; a
/// program over symbolic variables at each binding it is tuned at, each measurement's key and
/// name ending in "@seq=512". Plans come from `cache` where it has them (null: no cache), else
/// from `heuristic`.
std::vector<Measurement> bench_entry(const tuner::CorpusEntry& e, const BenchOptions& o, int runs,
                                     const OptPolicy& policy, const tuner::CachePolicy* cache) {
  Program out = tuner::build_entry(e);
  ExecutionPlan plan = ExecutionPlan::prepare(out.schedule(), out.inputs(),
                                              {.threads = o.threads, .policy = &policy});
  std::vector<Measurement> items;
  for (const VarValues& vars : tuner::entry_bindings(e, plan)) {
    plan.bind(vars);
    std::string at = vars.empty() ? "" : "@" + bindings_str({vars});
    std::vector<Measurement> some = bench_binding(plan, e.label, at, o, runs, cache);
    items.insert(items.end(), some.begin(), some.end());
  }
  return items;
}

double to_ms(double value, const std::string& unit) {
  if (unit == "ns") return value / 1e6;
  if (unit == "us") return value / 1e3;
  if (unit == "s") return value * 1e3;
  return value;
}

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

/// Runs `args` (args[0] a path) with stdout and stderr going to `log`: the exit status, or
/// the reason it could not be started or waited for.
Expected<int> run_process(const std::vector<std::string>& args, const std::string& log) {
  SpawnOptions spawn;
  spawn.log = log;
  spawn.truncate_log = true;
  Expected<pid_t> pid = spawn_process(args, spawn);
  if (!pid) return make_unexpected("cannot start '" + args[0] + "': " + pid.error());
  return wait_process(*pid);
}

/// A fresh private directory for a child's files, removed when it goes.
class ScratchDir {
public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "beamlab-bench-XXXXXX").string();
    user_assert(::mkdtemp(pattern.data()) != nullptr)
        << "cannot create a temporary directory in " << std::filesystem::temp_directory_path()
        << ": " << std::strerror(errno) << " (set TMPDIR to a writable directory)";
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

/// Runs `args` and reads the JSON it wrote to out.json in `dir` (null if it wrote none); a
/// UserError naming `what` when it fails.
nlohmann::json run_for_json(std::vector<std::string> args, const ScratchDir& dir,
                            const std::string& what, const std::string& hint) {
  const std::string log = dir.file("log.txt");
  Expected<int> status = run_process(args, log);
  user_assert(status) << what << ": " << status.error() << " (" << hint << ")";
  user_assert(*status == 0) << what << " failed (exit " << *status << "): " << last_line(log)
                            << " (" << hint << ")";
  std::ifstream in(dir.file("out.json"));
  if (!in || in.peek() == std::ifstream::traits_type::eof()) return json(); // nothing to report
  json report = json::parse(in, nullptr, false);
  user_assert(!report.is_discarded())
      << what << " wrote no readable JSON: " << last_line(log) << " (" << hint << ")";
  return report;
}

/// The suite's benchmarks, each of `runs` repetitions a sample.
std::vector<Measurement> bench_suite(const BenchOptions& o, int runs) {
  const std::string binary = o.suite_binary.empty() ? default_suite_binary() : o.suite_binary;
  user_assert(::access(binary.c_str(), X_OK) == 0)
      << "the benchmark suite '" << binary << "' is missing or not executable: build the "
      << "beamlab-bench target, set BEAMLAB_BENCH, or pass --no-suite";
  ScratchDir dir;
  json report =
      run_for_json({binary, "--benchmark_filter=" + o.suite_filter,
                    fmt::format("--benchmark_repetitions={}", runs),
                    fmt::format("--benchmark_min_time={}", o.suite_min_time),
                    "--benchmark_out=" + dir.file("out.json"), "--benchmark_out_format=json"},
                   dir, "the benchmark suite '" + binary + "'", "pass --no-suite to skip it");
  std::vector<Measurement> items;
  const json benchmarks =
      report.is_object() ? report.value("benchmarks", json::array()) : json::array();
  for (const json& b : benchmarks) {
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
  user_assert(!items.empty()) << "--suite '" << o.suite_filter << "' matched no benchmark of '"
                              << binary << "' (list them with " << binary
                              << " --benchmark_list_tests)";
  return items;
}

/// The corpus measured in a fresh process: the child command writes its measurements as JSON.
std::vector<Measurement> measure_in_child(const BenchOptions& o, int runs) {
  ScratchDir dir;
  std::vector<std::string> args = o.child_command;
  args.insert(args.end(), {"--runs", std::to_string(runs), "--measure-into", dir.file("out.json")});
  json rows = run_for_json(args, dir, "a bench process", "run it alone to see the error");
  user_assert(rows.is_array()) << "a bench process reported nothing (run it alone to see why)";
  std::vector<Measurement> items;
  for (const json& row : rows)
    items.push_back(from_benchmark(
        {0, row.value("name", ""), row.value("params", "{}"), row.value("metrics", "{}")},
        "a bench process's report"));
  return items;
}

json settings_json(const BenchOptions& o) {
  return {{"corpus", o.corpus.path.empty() ? o.corpus.name : o.corpus.path},
          {"runs", o.runs},
          {"threads", o.threads},
          {"cache", o.use_cache ? "read-only" : "off"},
          {"suite", o.suite ? json(o.suite_filter) : json(nullptr)},
          {"suite_min_time", o.suite_min_time},
          {"min_sample_ms", o.min_sample_ms},
          {"processes", o.processes}};
}

} // namespace

std::string default_suite_binary() {
  return tuner::helper_program("beamlab-bench", "BEAMLAB_BENCH");
}

std::vector<Measurement> measure_corpus(const BenchOptions& o, const std::string& cache_path,
                                        int runs) {
  HeuristicPolicy heuristic;
  std::unique_ptr<tuner::CachePolicy> cached;
  if (o.use_cache)
    cached =
        std::make_unique<tuner::CachePolicy>(cache_path, tuner::CacheMode::read_only, heuristic);
  const OptPolicy& policy = cached ? *cached : static_cast<const OptPolicy&>(heuristic);
  std::vector<Measurement> items;
  for (const tuner::CorpusEntry& e : o.corpus.entries)
    for (Measurement& m : bench_entry(e, o, runs, policy, cached.get()))
      items.push_back(std::move(m));
  return items;
}

std::string measurements_json(const std::vector<Measurement>& items) {
  json rows = json::array();
  for (const Measurement& m : items) {
    db::Benchmark b = to_benchmark(0, m);
    rows.push_back({{"name", b.name}, {"params", b.params}, {"metrics", b.metrics}});
  }
  return rows.dump();
}

int64_t record_bench(db::Database& db, const BenchOptions& o,
                     const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  tuner::ActiveRun active = tuner::ActiveRun::begin(db, {.kind = db::RunKind::bench,
                                                         .label = o.label,
                                                         .command = o.command,
                                                         .settings = settings_json(o).dump(),
                                                         .git_revision = o.git_revision});
  say("device limits: " + describe(tuner::device_limits(db, active.device_id())));
  int64_t run = active.id(); // a throw on the way leaves it failed
  // Each process measures every workload, so the samples span the run's time and the
  // processes' own differences (memory placement, huge pages, thread placement), which no
  // single process's samples show.
  const int processes = std::max(1, o.processes);
  const int runs = (o.runs + processes - 1) / processes;
  for (int p = 0; p < processes; ++p) {
    std::vector<Measurement> items = processes > 1 && !o.child_command.empty()
                                         ? measure_in_child(o, runs)
                                         : measure_corpus(o, db.path(), runs);
    for (const Measurement& m : items) db.add_benchmark(to_benchmark(run, m));
    say(fmt::format("process {}/{}: {} workload(s) and kernel(s), {} sample(s) each", p + 1,
                    processes, items.size(), runs));
  }
  if (o.suite) {
    say(fmt::format("benchmark suite ({}) in {} process(es), {} repetition(s) each...",
                    o.suite_filter, processes, runs));
    size_t n = 0;
    for (int p = 0; p < processes; ++p) {
      std::vector<Measurement> items = bench_suite(o, runs);
      for (const Measurement& m : items) db.add_benchmark(to_benchmark(run, m));
      n = items.size();
    }
    say(fmt::format("benchmark suite: {} benchmark(s)", n));
  }
  active.finish(false, false);
  return run;
}

} // namespace beamlab::reports

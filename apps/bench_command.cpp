// The bench subcommand; see bench_command.hpp.
#include "apps/bench_command.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "apps/cli_checks.hpp"

#include "apps/output.hpp"
#include "apps/tune_command.hpp"
#include "db/database.hpp"
#include "reports/bench_record.hpp"
#include "tuner/batch/corpus.hpp"
#include "tuner/measure/sandbox.hpp"
#include "tuner/store/journal.hpp"
#include <beamlab/beamlab.hpp>

#ifndef BEAMLAB_GIT_REVISION
#define BEAMLAB_GIT_REVISION ""
#endif

namespace beamlab::cli {
namespace {

struct BenchArgs {
  std::string corpus;
  int runs = 12;
  int processes = 3;
  std::string measure_into; // set: a child process of a bench run
  int threads = 0;
  std::string label, db, cache;
  std::string suite = reports::kDefaultSuiteFilter;
  bool no_suite = false;
  double suite_min_time = 0.05;
  double sample_ms = 5;
  bool quiet = false;
  OutputFormat format = OutputFormat::Text;
};

/// The command line that repeats this run (what the run records).
std::string command_of(const BenchArgs& a) {
  std::string text = "beamlab bench";
  if (!a.corpus.empty()) text += " --corpus " + shell_word(a.corpus);
  text += fmt::format(" --runs {} --processes {}", a.runs, a.processes);
  if (a.threads) text += fmt::format(" --threads {}", a.threads);
  if (a.sample_ms != 5) text += fmt::format(" --sample-ms {:g}", a.sample_ms);
  if (!a.label.empty()) text += " --label " + shell_word(a.label);
  if (!a.cache.empty()) text += " --cache " + shell_word(a.cache);
  if (a.no_suite)
    text += " --no-suite";
  else if (a.suite != reports::kDefaultSuiteFilter)
    text += " --suite " + shell_word(a.suite);
  if (!a.no_suite && a.suite_min_time != 0.05)
    text += fmt::format(" --suite-min-time {:g}", a.suite_min_time);
  return text;
}

/// This executable, for the child processes.
std::string self_path() {
  std::string self = tuner::this_program();
  user_assert(!self.empty())
      << "bench: cannot find this executable to start its processes; pass --processes 1";
  return self;
}

void bench(const BenchArgs& args) {
  reports::BenchOptions o;
  o.corpus = args.corpus.empty()
                 ? tuner::parse_corpus(kDefaultCorpus, "the built-in corpus (corpora/quick.json)")
                 : tuner::load_corpus(args.corpus);
  if (args.corpus.empty()) o.corpus.path = "corpora/quick.json (built in)";
  o.runs = args.runs;
  o.processes = args.processes;
  o.threads = args.threads;
  o.min_sample_ms = args.sample_ms;
  const std::string mode = cache_mode_name(args.cache);
  o.use_cache = tuner::reads(tuner::parse_cache_mode(mode, "--cache"));
  o.suite = !args.no_suite;
  o.suite_filter = args.suite;
  o.suite_min_time = args.suite_min_time;
  o.label = args.label;
  o.command = command_of(args);
  o.git_revision = BEAMLAB_GIT_REVISION;
  std::string path = db_path(args.db);
  if (!args.measure_into.empty()) {
    // A child of a bench run: measure, report to the parent through the file, touch nothing.
    std::ofstream out(args.measure_into);
    out << reports::measurements_json(reports::measure_corpus(o, path, args.runs));
    user_assert(out.good()) << "--measure-into '" << args.measure_into << "': cannot write it";
    return;
  }
  o.child_command = {self_path(),   "bench",
                     "--db",        path,
                     "--cache",     mode,
                     "--threads",   std::to_string(args.threads),
                     "--sample-ms", fmt::format("{}", args.sample_ms)};
  if (!args.corpus.empty())
    o.child_command.insert(o.child_command.end(), {"--corpus", args.corpus});
  db::Database db(path);
  auto t0 = std::chrono::steady_clock::now();
  int64_t run = reports::record_bench(db, o, [&](const std::string& line) {
    if (!args.quiet) std::fprintf(stderr, "%s\n", line.c_str());
  });
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (args.format == OutputFormat::Json) {
    Json doc = json_document("bench");
    doc["run"] = run;
    doc["db"] = path;
    doc["corpus"] = o.corpus.path;
    doc["label"] = args.label;
    doc["workloads"] = o.corpus.entries.size();
    doc["wall_s"] = json_number(s);
    print_json(doc);
    return;
  }
  fmt::print("bench run {} recorded in {} ({} workload(s), {:.0f} s)\n", run, path,
             o.corpus.entries.size(), s);
  fmt::print("summary: beamlab report --run {}\n", run);
  fmt::print("compare: beamlab report --baseline <earlier run> --candidate {}\n", run);
}

} // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Record a benchmark run: a corpus's workloads and kernels and the beamlab-bench "
               "suite, every sample stored in the database for 'beamlab report'");
  cmd->add_option("--corpus", args->corpus,
                  "the workloads (a corpus file; default: the built-in corpora/quick.json)");
  cmd->add_option("--runs", args->runs,
                  "timed runs per workload and kernel, repetitions per suite benchmark")
      ->default_val(12)
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--processes", args->processes,
                  "measure in this many fresh processes (runs / processes samples each): "
                  "placement noise one process never shows")
      ->default_val(3)
      ->check(CLI::Range(1, 64));
  cmd->add_option("--measure-into", args->measure_into)->group(""); // a bench run's child
  cmd->add_option("--threads", args->threads, "cores to use (0: all)")
      ->default_val(0)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sample-ms", args->sample_ms,
                  "each sample is the mean of back-to-back runs lasting at least this long")
      ->default_val(5)
      ->check(kFinite)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--label", args->label, "a name for the run (reports can name it by this)");
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  add_cache_option(cmd, args->cache,
                   "use | read-only: plans from the tuning cache; off | ignore: the heuristic's "
                   "(BEAMLAB_CACHE)");
  cmd->add_option("--suite", args->suite,
                  "the suite benchmarks to run (a Google Benchmark filter regex)")
      ->default_val(reports::kDefaultSuiteFilter);
  cmd->add_flag("--no-suite", args->no_suite, "skip the beamlab-bench suite");
  cmd->add_option("--suite-min-time", args->suite_min_time,
                  "seconds each suite repetition runs for at least")
      ->default_val(0.05)
      ->check(kFinite)
      ->check(CLI::PositiveNumber);
  cmd->add_flag("-q,--quiet", args->quiet, "no progress lines");
  add_format_option(cmd, args->format);
  cmd->final_callback([args] { bench(*args); });
}

} // namespace beamlab::cli

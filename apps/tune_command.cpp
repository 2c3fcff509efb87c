// The tune subcommand; see tune_command.hpp.
#include "apps/tune_command.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

#include "apps/run_command.hpp"
#include "engine/runtime/launch.hpp"
#include "tuner/search.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::cli {
namespace {

struct TuneArgs {
  std::string workload;
  std::vector<std::string> params;
  tuner::SearchSettings settings;
  int workers = 0;
  int threads = 0;
  std::string json_out;
  bool quiet = false;
};

// The live progress line on a terminal (redrawn at most every 100 ms); elsewhere (a CI log)
// one line per iteration.
class Progress {
public:
  Progress(std::string kernel, bool quiet)
      : kernel_(std::move(kernel)), quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0),
        start_(Clock::now()) {}
  ~Progress() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
  }

  void operator()(const tuner::Event& e) {
    if (quiet_) return;
    using K = tuner::Event::Kind;
    if (e.candidate && e.kind == K::timed) ++timed_;
    if (e.kind == K::best && e.candidate) best_ = to_string(e.candidate->opts);
    double s = std::chrono::duration<double>(Clock::now() - start_).count();
    std::string line = fmt::format("{}: iteration {}, {}/{} candidates ({} timed), best {:.4f} ms "
                                   "[{}], {:.1f} s",
                                   kernel_, e.iteration, e.done, e.total, timed_, e.best_ms,
                                   best_.empty() ? "-" : best_, s);
    if (e.kind == K::restarted)
      std::fprintf(stderr, "%s%s: %s\n", tty_ ? "\r\033[K" : "", kernel_.c_str(), e.detail.c_str());
    if (!tty_) {
      if (e.kind == K::iteration) std::fprintf(stderr, "%s\n", line.c_str());
      return;
    }
    if (e.kind != K::finished && s - last_draw_ < 0.1 && e.kind != K::iteration) return;
    last_draw_ = s;
    drawn_ = true;
    std::fprintf(stderr, "\r\033[K%s", line.substr(0, 160).c_str());
    std::fflush(stderr);
  }

private:
  using Clock = std::chrono::steady_clock;
  std::string kernel_, best_;
  bool quiet_, tty_, drawn_ = false;
  Clock::time_point start_;
  double last_draw_ = -1;
  int timed_ = 0;
};

void tune(const TuneArgs& args) {
  Tensor out = build_workload(args.workload, parse_params("tune", args.params));
  Schedule schedule = out.schedule();
  tuner::PoolOptions pool_options;
  pool_options.workers = args.workers;
  pool_options.sandbox.threads = args.threads > 0 ? args.threads : default_threads();
  tuner::WorkerPool pool(pool_options);
  fmt::print("{} {}: {} kernel(s), BEAM {} on {} sandboxes of {} cores\n", args.workload,
             shape_str(out.shape()), schedule.items.size(), args.settings.beam, pool.size(),
             pool_options.sandbox.threads);
  std::vector<tuner::TuneResult> results;
  std::set<uint64_t> seen;
  int failed = 0;
  for (const ScheduleItem& item : schedule.items) {
    if (!seen.insert(item.key).second) continue;
    Expected<tuner::TuneResult> r = [&] {
      Progress progress(item.name, args.quiet);
      return tuner::tune_kernel(kernel_task(item), pool, args.settings,
                                [&](const tuner::Event& e) { progress(e); });
    }();
    if (!r) {
      std::fprintf(stderr, "beamlab: error: %s\n", r.error().c_str());
      ++failed;
      continue;
    }
    results.push_back(std::move(*r));
  }
  fmt::print("{:<24} {:>10} {:>10} {:>8} {:>6} {:>8} {:>7}  {}\n", "kernel", "heur. ms", "tuned ms",
             "speedup", "cands", "search s", "cand/s", "winning opts");
  for (const tuner::TuneResult& r : results) {
    double speedup = r.winner_ms > 0 ? r.heuristic_ms / r.winner_ms : 0;
    std::string opts = to_string(r.best().opts);
    fmt::print("{:<24} {:>10.4f} {:>10.4f} {:>7.2f}x {:>6} {:>8.1f} {:>7.1f}  {}{}\n", r.kernel,
               r.heuristic_ms, r.winner_ms, speedup, r.candidates.size(), r.wall_s,
               r.candidates_per_s(), opts.empty() ? "(none)" : opts,
               r.tie_with_heuristic ? "  (tie with the heuristic within noise)"
               : r.tie              ? "  (tie with the runner-up within noise)"
                                    : "");
    fmt::print("    candidates: {}\n", r.status_counts());
    fmt::print("    {} iterations, stopped by {}; reference {:.2f} s, compiling {:.2f} CPU-s, "
               "timing {:.2f} s; noise ±{:.1f}%; {} sandbox restarts\n",
               r.iterations, r.stop_reason, r.reference_s, r.compile_s, r.timing_s, 100 * r.noise,
               r.restarts);
  }
  if (!args.json_out.empty()) {
    nlohmann::json all = nlohmann::json::array();
    for (const tuner::TuneResult& r : results) all.push_back(r.to_json());
    std::ofstream f(args.json_out);
    user_assert(f) << "--json: cannot write '" << args.json_out << "'";
    f << all.dump(1) << "\n";
  }
  if (failed > 0) throw std::runtime_error(fmt::format("{} kernel(s) could not be tuned", failed));
}

} // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  tuner::SearchSettings& s = args->settings;
  CLI::App* cmd = app.add_subcommand(
      "tune", "BEAM-search the Opts of every kernel of a built-in workload, in sandboxes");
  cmd->add_option("workload", args->workload, "workload name (see 'beamlab run --list')")
      ->required();
  cmd->add_option("--beam", s.beam, "beam width (1: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--budget", s.time_budget_s, "seconds per kernel before the best so far wins")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-candidates", s.candidate_budget, "compiled candidates per kernel")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--early-stop", s.early_stop, "stop timing at this many times the best")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  cmd->add_option("--min-improvement", s.min_improvement,
                  "stop when an iteration gains less than this fraction")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--runs", s.runs, "timed runs per candidate")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--workers", args->workers, "sandboxes compiling in parallel (0: one per core)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--threads", args->threads, "cores each kernel runs on (0: all)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--json", args->json_out, "write every candidate and setting to this file");
  cmd->add_flag("--quiet", args->quiet, "no progress line");
  cmd->allow_extras();
  cmd->final_callback([args, cmd] {
    args->params = cmd->remaining();
    tune(*args);
  });
}

} // namespace beamlab::cli

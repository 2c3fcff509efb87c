// The tune subcommand; see tune_command.hpp.
#include "apps/tune_command.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <signal.h>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "apps/cli_checks.hpp"
#include "apps/interrupts.hpp"

#include "apps/output.hpp"
#include "apps/run_command.hpp"
#include "apps/tune_summary.hpp"
#include "db/database.hpp"
#include "engine/runtime/launch.hpp"
#include "tuner/batch/batch.hpp"
#include "tuner/batch/repeat.hpp"
#include "tuner/batch/session.hpp"
#include "tuner/store/run.hpp"
#include <beamlab/beamlab.hpp>

#ifndef BEAMLAB_GIT_REVISION
#define BEAMLAB_GIT_REVISION ""
#endif

namespace beamlab::cli {

using json = nlohmann::json;

std::string db_path(const std::string& flag) {
  return flag.empty() ? db::Database::default_path() : flag;
}

std::string db_path(const std::string& flag, tuner::CacheMode mode) {
  return mode == tuner::CacheMode::off && flag.empty() ? std::string() : db_path(flag);
}

std::string shell_word(const std::string& word) {
  auto safe = [](unsigned char ch) {
    return ch && (std::isalnum(ch) || std::strchr("@%+=:,./_-", ch));
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), safe)) return word;
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string cache_mode_name(const std::string& flag) {
  if (!flag.empty()) return tuner::to_string(tuner::parse_cache_mode(flag, "--cache"));
  const char* env = std::getenv("BEAMLAB_CACHE");
  if (env && *env) return tuner::to_string(tuner::parse_cache_mode(env, "BEAMLAB_CACHE"));
  return "use";
}

void add_cache_option(CLI::App* cmd, std::string& mode, const std::string& help) {
  cmd->add_option("--cache", mode, help)
      ->check(parsed_by("{use, ignore, read-only, off}",
                        [](const std::string& text, const std::string& what) {
                          (void)tuner::parse_cache_mode(text, what);
                        }));
}

namespace {

// A tune command line: what the run stores (tuner::TuneSettings, read back by any door's resume)
// and how this invocation reports.
struct TuneArgs {
  tuner::TuneSettings run;
  std::string db;
  std::string json_out;
  OutputFormat format = OutputFormat::Text;
  bool quiet = false;
  bool resume = false;
  int64_t resume_run = 0;
  int repeat = 1; // not part of a run's settings: each repeat is a run of its own
};

/// --shard, else Slurm's array task (ID - MIN of COUNT), else the whole set.
std::pair<int, int> shard_of(const std::string& flag) {
  if (!flag.empty()) return tuner::parse_shard(flag, "--shard");
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (!id || !count) return {0, 1};
  const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
  std::string text;
  try {
    text = std::to_string(std::stoi(id) - (min ? std::stoi(min) : 0)) + "/" + count;
  } catch (const std::exception&) {
    text = std::string(id) + "/" + count;
  }
  return tuner::parse_shard(text, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT");
}

std::string fmt_duration(double s) {
  if (s < 0) return "-";
  int t = static_cast<int>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}

// The progress bar on a terminal (redrawn at most every 100 ms), with the kernels done, the
// current kernel's iteration and best, and an ETA; elsewhere (a CI log) one line per kernel.
class Progress : public tuner::BatchListener {
public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0) {}
  ~Progress() override { clear(); }

  void planned(const std::vector<tuner::BatchKernel>& ks, double budget_s) override {
    std::lock_guard lock(mutex_);
    total_ = static_cast<int>(ks.size());
    budget_s_ = budget_s;
    start_ = Clock::now();
  }
  void started(const tuner::BatchKernel& k) override {
    std::lock_guard lock(mutex_);
    current_ = k.task.name;
    draw(true);
  }
  void event(const tuner::BatchKernel& k, const tuner::Event& e) override {
    std::lock_guard lock(mutex_);
    current_ = k.task.name;
    iteration_ = e.iteration;
    best_ms_ = e.best_ms;
    candidates_ = e.total;
    if (e.kind == tuner::Event::Kind::restarted && !quiet_) {
      clear();
      std::fprintf(stderr, "%s: %s\n", k.task.name.c_str(), e.detail.c_str());
    }
    draw(e.kind == tuner::Event::Kind::iteration);
  }
  void finished(const tuner::BatchKernel& k) override {
    std::lock_guard lock(mutex_);
    ++done_;
    if (k.outcome == tuner::BatchKernel::Outcome::tuned) tuned_s_ += k.result.wall_s, ++tuned_;
    if (!quiet_ && !tty_)
      std::fprintf(stderr, "[%d/%d] %s: %s%s%s\n", done_, total_, k.task.name.c_str(),
                   to_string(k.outcome), k.result.error.empty() ? "" : ": ",
                   k.result.error.c_str());
    if (!quiet_ && k.outcome == tuner::BatchKernel::Outcome::failed && tty_) {
      clear();
      std::fprintf(stderr, "%s: failed: %s\n", k.task.name.c_str(), k.result.error.c_str());
    }
    draw(true);
  }

private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double eta() const {
    if (done_ >= total_) return 0;
    double left_by_rate = tuned_ > 0 ? tuned_s_ / tuned_ * (total_ - done_) : -1;
    if (budget_s_ > 0) {
      double left = std::max(0.0, budget_s_ - elapsed());
      return left_by_rate < 0 ? left : std::min(left, left_by_rate);
    }
    return left_by_rate;
  }
  void clear() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }
  void draw(bool force) {
    if (quiet_ || !tty_) return;
    double s = elapsed();
    if (!force && s - last_draw_ < 0.1) return;
    last_draw_ = s;
    constexpr int kWidth = 24;
    int filled = total_ > 0 ? kWidth * done_ / total_ : kWidth;
    std::string bar = std::string(static_cast<size_t>(filled), '=') +
                      std::string(static_cast<size_t>(kWidth - filled), ' ');
    std::string line = fmt::format(
        "[{}] {}/{} kernels | {} iter {} best {:.4f} ms, {} cands | {} ETA {}", bar, done_, total_,
        current_, iteration_, best_ms_, candidates_, fmt_duration(s), fmt_duration(eta()));
    std::fprintf(stderr, "\r\033[K%s", line.substr(0, 160).c_str());
    std::fflush(stderr);
    drawn_ = true;
  }

  std::mutex mutex_;
  bool quiet_, tty_, drawn_ = false;
  Clock::time_point start_ = Clock::now();
  double last_draw_ = -1, budget_s_ = 0, best_ms_ = 0, tuned_s_ = 0;
  int total_ = 0, done_ = 0, tuned_ = 0, iteration_ = 0, candidates_ = 0;
  std::string current_;
};

// Whether the summary goes to stdout as JSON (--format json or --json -), the text to stderr.
bool json_on_stdout(const TuneArgs& args) {
  return args.format == OutputFormat::Json || args.json_out == "-";
}

// What a repeat of --repeat keeps of its run: the report for the study, its summary for the
// study's JSON.
struct RepeatRun {
  tuner::BatchReport report;
  Json summary;
};

// The summary to stdout as a table or JSON (but not a repeat's JSON: the study's document holds
// it), and to --json FILE.
void write_summary(const TuneArgs& args, const tuner::BatchReport& report, const Json& doc,
                   const SummaryPlace& place, bool repeat) {
  if (!json_on_stdout(args))
    print_summary(report, place, stdout);
  else if (!repeat)
    print_json(doc);
  if (!args.json_out.empty() && args.json_out != "-")
    write_output(args.json_out, json_text(doc), "--json");
  std::fflush(stdout); // the summary before any message, also when both go to one file
}

// How the run is named in `runs`: the command line that repeats it.
std::string command_line(const tuner::TuneSettings& st) {
  const tuner::TuneTarget& what = st.what;
  std::string c = "beamlab tune";
  if (!what.target.empty()) c += " " + shell_word(what.target);
  if (!what.expr.empty()) c += " --expr " + shell_word(what.expr);
  for (const std::string& i : what.inputs) c += " --input " + shell_word(i);
  for (const std::string& v : what.vars) c += " --var " + shell_word(v);
  for (const std::string& p : what.params) c += " " + shell_word(p);
  c += fmt::format(" --beam {}", st.beam);
  if (st.budget_s > 0) c += fmt::format(" --budget {:g}", st.budget_s);
  if (!st.shard.empty()) c += " --shard " + st.shard;
  if (st.warm_start) c += " --warm-start";
  return c;
}

int tune(TuneArgs args, RepeatRun* kept = nullptr) {
  // Ctrl-C or kill: the searches stop as at a budget's end; the run is kept as interrupted.
  tuner::SearchControl control;
  Interrupts interrupts([&control] { control.cancel(); });
  tuner::TuneSettings& st = args.run;
  st.cache = cache_mode_name(st.cache);
  st.door = "cli";
  tuner::TuneRequest request;
  request.db_path = db_path(args.db, tuner::parse_cache_mode(st.cache, "--cache"));
  request.control = &control;
  request.all_threads = default_threads();
  request.git_revision = BEAMLAB_GIT_REVISION;
  if (args.resume) {
    usage_assert(st.cache != "off") << "--resume needs the database (not --cache off)";
    request.resume = args.resume_run;
  } else {
    const tuner::TuneTarget& what = st.what;
    usage_assert(!st.warm_start || st.cache != "off")
        << "--warm-start seeds searches from the tuning cache; it needs the database (not "
           "--cache off)";
    usage_assert(!what.target.empty() || !what.expr.empty())
        << "tune: name a workload (see 'beamlab run --list'), a corpus file, a model or kernel "
           "file or --expr, or pass --resume";
    usage_assert(what.params.empty() || !tuner::is_corpus_file(what.target))
        << "tune: parameters like " << what.params.front()
        << " apply to a workload, not to the corpus file '" << what.target << "'";
    if (!tuner::is_corpus_file(what.target))
      request.corpus = build_command_line(program_entry("tune", what.target, what.params, what.expr,
                                                        what.inputs, what.dtype, what.vars),
                                          tuner::single_entry);
    // Stored resolved, so that a resume tunes the same shard wherever it runs (a resubmitted
    // Slurm task may be an array of one).
    auto [shard, shards] = shard_of(st.shard);
    st.shard = shards > 1 ? fmt::format("{}/{}", shard, shards) : "";
    request.command = command_line(st);
  }
  request.settings = st;
  tuner::TuneSession session(std::move(request));
  if (const db::Run* resumed = session.resumed())
    std::fprintf(stderr, "resuming run %lld: %s\n", static_cast<long long>(resumed->id),
                 resumed->command.c_str());
  if (!session.note().empty()) std::fprintf(stderr, "beamlab: note: %s\n", session.note().c_str());
  args.run = session.settings();
  const tuner::BatchOptions& o = session.options();
  SummaryPlace place{session.db_path(), session.run_id()};
  std::string target = session.target_name();
  std::string entries = session.entries() == 0   ? ""
                        : session.entries() == 1 ? ": 1 entry"
                                                 : fmt::format(": {} entries", session.entries());
  fmt::print(json_on_stdout(args) ? stderr : stdout,
             "{}{}, BEAM {} on {} core(s){}{}{}{}; cache {} in {}\n", target, entries,
             o.settings.beam, o.threads, allocation_note(),
             o.shards > 1 ? fmt::format(", shard {}/{}", o.shard, o.shards) : "",
             o.budget_s > 0 ? fmt::format(", budget {:g} s", o.budget_s) : "",
             o.warm_start ? ", warm start" : "", tuner::to_string(o.cache),
             place.db.empty() ? "nowhere (--cache off)" : place.db);
  std::fflush(stdout);
  tuner::BatchReport report;
  {
    Progress progress(args.quiet);
    report = session.run(progress);
  }
  int failed = static_cast<int>(report.count(tuner::BatchKernel::Outcome::failed));
  int sig = interrupts.signal();
  Json doc = summary_json(report, place, target, sig != 0);
  write_summary(args, report, doc, place, kept != nullptr);
  if (kept) *kept = {report, doc};
  if (sig) {
    std::fprintf(stderr, "beamlab: interrupted by %s%s\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
                 place.run_id > 0 ? fmt::format(": run {} is kept; finish it with 'beamlab tune "
                                                "--resume-run {}'",
                                                place.run_id, place.run_id)
                                        .c_str()
                                  : "");
    return 128 + sig;
  }
  if (failed > 0) throw std::runtime_error(fmt::format("{} kernel(s) could not be tuned", failed));
  return 0;
}

// `--repeat N`: the same search N times (each searching afresh, journaled as its own run), then
// every kernel's distinct winners timed together (tuner/batch/repeat.hpp).
int tune_repeated(const TuneArgs& args) {
  usage_assert(!args.resume) << "--repeat starts new runs; drop --resume (or --repeat)";
  std::vector<tuner::BatchReport> reports;
  Json runs = Json::array();
  for (int i = 0; i < args.repeat; ++i) {
    TuneArgs one = args;
    one.repeat = 1;
    if (cache_mode_name(args.run.cache) != "off") one.run.cache = "ignore"; // every repeat searches
    one.run.label = fmt::format(
        "{}{}/{}", args.run.label.empty() ? "repeat " : args.run.label + " ", i + 1, args.repeat);
    fmt::print(json_on_stdout(args) ? stderr : stdout, "== repeat {} of {}\n", i + 1, args.repeat);
    RepeatRun kept;
    int code = tune(one, &kept);
    reports.push_back(kept.report);
    runs.push_back(kept.summary);
    if (code == 0) continue;
    if (json_on_stdout(args)) print_json(repeat_study_json({}, args.repeat, runs, true));
    return code;
  }
  int threads = args.run.threads > 0 ? args.run.threads : default_threads();
  tuner::RepeatStudy study = tuner::study_repeats(reports, threads);
  if (json_on_stdout(args))
    print_json(repeat_study_json(study, args.repeat, runs, false));
  else
    print_repeat_study(study, args.repeat);
  return 0;
}

} // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  args->run.cache.clear(); // none given: BEAMLAB_CACHE, else use
  CLI::App* cmd = app.add_subcommand(
      "tune", "BEAM-search every kernel of a workload or a corpus file, journaled in the database");
  cmd->add_option("target", args->run.what.target,
                  "a workload name (see 'beamlab run --list'), a corpus file (corpora/*.json), "
                  "an ONNX model (MODEL.onnx) or a kernel in IR text (KERNEL.ir)");
  cmd->add_option("--expr", args->run.what.expr,
                  "tune an expression over named inputs, e.g. \"(a.matmul(w) + b).relu()\"");
  cmd->add_option("--input", args->run.what.inputs,
                  "an input's shape, NAME=DIMS (models: symbolic dims; --expr: every input)");
  cmd->add_option("--var", args->run.what.vars,
                  "keep a model's symbolic dim (dim_param) symbolic over a range, NAME=LOW..HIGH "
                  "like seq=1..512: its kernels are tuned at the range's top and an eighth of it "
                  "and serve every value")
      ->check(CLI::Validator(
          [](const std::string& w) {
            try {
              (void)tuner::parse_var_range(w, "--var");
            } catch (const UserError& e) {
              return std::string(e.what());
            }
            return std::string();
          },
          "NAME=LOW..HIGH"));
  cmd->add_option("--beam", args->run.beam, "beam width (1: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--budget", args->run.budget_s,
                  "seconds for the whole run, shared by expected gain (0: none)")
      ->check(kFinite)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--kernel-budget", args->run.kernel_budget_s, "seconds per kernel at most")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-candidates", args->run.max_candidates, "compiled candidates per kernel")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--early-stop", args->run.early_stop, "stop timing at this many times the best")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(1.0, 1000.0));
  cmd->add_option("--min-improvement", args->run.min_improvement,
                  "stop when an iteration gains less than this fraction")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--prune", args->run.prune,
                  "cost-model pruning: compile and time only this fraction of each iteration's "
                  "new plans, those a model trained on the journal ranks fastest (0: off)")
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--runs", args->run.runs, "timed runs per candidate")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--workers", args->run.workers,
                  "sandboxes compiling in parallel per job (0: cores / jobs)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--threads", args->run.threads, "cores each kernel runs on (0: all)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--dtype", args->run.what.dtype, "the workload's dtype (not for corpus files)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) {
            return parse_dtype(text)
                       ? std::string()
                       : "Value '" + text + "' is not a dtype (e.g. float32, float16)";
          },
          "DTYPE"));
  cmd->add_option("--shard", args->run.shard,
                  "tune shard i of N (0 <= i < N) of the kernels; default from "
                  "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT")
      ->check(parsed_by("i/N", [](const std::string& text, const std::string& what) {
        (void)tuner::parse_shard(text, what);
      }));
  cmd->add_option("--jobs", args->run.jobs, "kernels searched at once (timing stays exclusive)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  add_cache_option(cmd, args->run.cache);
  cmd->add_option("--label", args->run.label, "a name for the run, for reports");
  cmd->add_flag("--resume", args->resume,
                "finish the newest unfinished run (or --resume-run ID) without re-measuring");
  cmd->add_option("--resume-run", args->resume_run, "the run --resume finishes")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--json", args->json_out,
                  "write the summary as JSON to this file (-: to stdout, as --format json)");
  add_format_option(cmd, args->format);
  cmd->add_flag("--warm-start", args->run.warm_start,
                "seed each search with the plans that won for the nearest tuned kernels of the "
                "same structure (the same AST up to sizes), legalized for its shapes");
  cmd->add_flag("--quiet", args->quiet, "no progress bar");
  cmd->add_option("--repeat", args->repeat,
                  "run the search N times (each a run of its own, searching afresh) and report "
                  "how often the winners are within noise of each other")
      ->check(CLI::Range(1, 100));
  cmd->allow_extras();
  cmd->final_callback([args, cmd, &exit_code] {
    TuneArgs a = *args;
    a.run.what.params = cmd->remaining();
    check_unknown_options(*cmd, a.run.what.target, a.run.what.params);
    if (a.resume_run > 0) a.resume = true;
    exit_code = a.repeat > 1 ? tune_repeated(a) : tune(a);
  });
}

} // namespace beamlab::cli

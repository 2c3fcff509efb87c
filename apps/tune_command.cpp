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

// Everything a run needs to be repeated: stored as the run's settings, read back by --resume.
struct TuneArgs {
  std::string target; // a workload name, a corpus file or a model file
  std::vector<std::string> params;
  std::string expr;
  std::vector<std::string> inputs; // --input NAME=DIMS
  std::string dtype = "float32";
  int beam = 4;
  double budget_s = 0;
  double kernel_budget_s = 300;
  int max_candidates = 5000;
  double early_stop = 3.0;
  double min_improvement = 0.01;
  double prune = 0;
  int runs = 3;
  int workers = 0;
  int threads = 0;
  std::string shard;
  int jobs = 1;
  std::string cache;
  std::string label;
  bool warm_start = false;
  // Not stored: how this invocation reports and where.
  std::string db;
  std::string json_out;
  OutputFormat format = OutputFormat::Text;
  bool quiet = false;
  bool resume = false;
  int64_t resume_run = 0;
  int repeat = 1; // not part of a run's settings: each repeat is a run of its own

  json to_json() const {
    return {{"target", target},
            {"params", params},
            {"expr", expr},
            {"inputs", inputs},
            {"dtype", dtype},
            {"beam", beam},
            {"budget_s", budget_s},
            {"kernel_budget_s", kernel_budget_s},
            {"max_candidates", max_candidates},
            {"early_stop", early_stop},
            {"min_improvement", min_improvement},
            {"prune", prune},
            {"runs", runs},
            {"workers", workers},
            {"threads", threads},
            {"shard", shard},
            {"jobs", jobs},
            {"cache", cache},
            {"label", label},
            {"warm_start", warm_start}};
  }
  void from_json(const json& j) {
    target = j.at("target");
    params = j.at("params").get<std::vector<std::string>>();
    expr = j.value("expr", ""); // runs recorded before models and expressions have none
    inputs = j.value("inputs", std::vector<std::string>{});
    dtype = j.at("dtype");
    beam = j.at("beam");
    budget_s = j.at("budget_s");
    kernel_budget_s = j.at("kernel_budget_s");
    max_candidates = j.at("max_candidates");
    early_stop = j.at("early_stop");
    min_improvement = j.at("min_improvement");
    prune = j.value("prune", 0.0); // runs recorded before pruning have none
    runs = j.at("runs");
    workers = j.at("workers");
    threads = j.at("threads");
    shard = j.at("shard");
    jobs = j.at("jobs");
    cache = j.at("cache");
    label = j.at("label");
    warm_start = j.value("warm_start", false); // runs recorded before warm starts have none
  }
};

bool is_corpus_file(const std::string& target) {
  if (target.empty() || is_model_file(target) || is_kernel_file(target)) return false;
  return target.find('/') != std::string::npos || target.ends_with(".json") ||
         ::access(target.c_str(), R_OK) == 0;
}

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

int tune(TuneArgs args, RepeatRun* kept = nullptr) {
  // Ctrl-C or kill: the searches stop as at a budget's end; the run is kept as interrupted.
  tuner::SearchControl control;
  Interrupts interrupts([&control] { control.cancel(); });
  std::string path = db_path(args.db);
  std::string cache = cache_mode_name(args.cache);
  tuner::CacheMode mode = tuner::parse_cache_mode(cache, "--cache");
  std::unique_ptr<db::Database> db;
  if (mode != tuner::CacheMode::off)
    db = std::make_unique<db::Database>(path, mode == tuner::CacheMode::read_only
                                                  ? db::Database::Access::read_only
                                                  : db::Database::Access::read_write);
  std::optional<tuner::ActiveRun> run;
  int64_t resume_id = 0; // reopened once the resumed command is known to be good
  if (args.resume) {
    usage_assert(db) << "--resume needs the database (not --cache off)";
    db::Run resumed = tuner::run_to_resume(*db, args.resume_run);
    std::string db_flag = args.db, json_out = args.json_out;
    bool quiet = args.quiet;
    OutputFormat format = args.format;
    args.from_json(json::parse(resumed.settings));
    args.db = db_flag;
    args.json_out = json_out;
    args.quiet = quiet;
    args.format = format;
    cache = args.cache;
    mode = tuner::parse_cache_mode(cache, "the resumed run's cache mode");
    resume_id = resumed.id;
    std::fprintf(stderr, "resuming run %lld: %s\n", static_cast<long long>(resumed.id),
                 resumed.command.c_str());
  }
  usage_assert(!args.warm_start || mode != tuner::CacheMode::off)
      << "--warm-start seeds searches from the tuning cache; it needs the database (not "
         "--cache off)";
  usage_assert(!args.target.empty() || !args.expr.empty())
      << "tune: name a workload (see 'beamlab run --list'), a corpus file, a model or kernel file "
         "or --expr, or pass --resume";
  usage_assert(args.params.empty() || !is_corpus_file(args.target))
      << "tune: parameters like " << args.params.front()
      << " apply to a workload, not to the corpus file '" << args.target << "'";
  tuner::Corpus corpus = is_corpus_file(args.target)
                             ? tuner::load_corpus(args.target)
                             : build_command_line(program_entry("tune", args.target, args.params,
                                                                args.expr, args.inputs, args.dtype),
                                                  tuner::single_entry);
  tuner::BatchOptions o;
  o.settings.beam = args.beam;
  o.settings.time_budget_s = args.kernel_budget_s;
  o.settings.candidate_budget = args.max_candidates;
  o.settings.early_stop = args.early_stop;
  o.settings.min_improvement = args.min_improvement;
  o.settings.prune = args.prune;
  o.settings.runs = args.runs;
  o.budget_s = args.budget_s;
  std::tie(o.shard, o.shards) = shard_of(args.shard);
  // Stored resolved, so that --resume tunes the same shard wherever it runs (a resubmitted
  // Slurm task may be an array of one).
  if (o.shards > 1) args.shard = fmt::format("{}/{}", o.shard, o.shards);
  o.jobs = args.jobs;
  o.workers = args.workers;
  o.threads = args.threads > 0 ? args.threads : default_threads();
  o.cache = mode;
  o.warm_start = args.warm_start;
  o.settings.control = &control;
  args.cache = cache;

  tuner::BatchStore store; // --cache off: no file; the batch keeps its plumbing in memory
  if (db) {
    store.db_path = path;
    if (resume_id > 0) {
      run.emplace(tuner::ActiveRun::resume(*db, resume_id));
    } else if (tuner::writes(mode)) {
      tuner::RunSpec r;
      r.kind = db::RunKind::tune;
      r.label = args.label;
      r.command = "beamlab tune";
      if (!args.target.empty()) r.command += " " + shell_word(args.target);
      if (!args.expr.empty()) r.command += " --expr " + shell_word(args.expr);
      for (const std::string& i : args.inputs) r.command += " --input " + shell_word(i);
      for (const std::string& p : args.params) r.command += " " + shell_word(p);
      r.command += fmt::format(" --beam {}", args.beam);
      if (args.budget_s > 0) r.command += fmt::format(" --budget {:g}", args.budget_s);
      if (o.shards > 1) r.command += fmt::format(" --shard {}/{}", o.shard, o.shards);
      if (args.warm_start) r.command += " --warm-start";
      r.settings = args.to_json().dump();
      r.git_revision = BEAMLAB_GIT_REVISION;
      run.emplace(tuner::ActiveRun::begin(*db, r));
    }
    if (run) {
      store.run_id = run->id();
      store.device_id = run->device_id();
      store.source = run->source();
    } else {
      store.device_id = db->read_only()
                            ? db->find_device(tuner::this_device().fingerprint()).value_or(0)
                            : db->upsert_device(tuner::this_device());
    }
  }
  SummaryPlace place{db ? path : "", run ? run->id() : 0};
  std::string target = corpus.path.empty() ? corpus.name : corpus.path;
  fmt::print(json_on_stdout(args) ? stderr : stdout,
             "{}: {} entr{}, BEAM {} on {} core(s){}{}{}{}; cache {} in {}\n", target,
             corpus.entries.size(), corpus.entries.size() == 1 ? "y" : "ies", args.beam, o.threads,
             allocation_note(), o.shards > 1 ? fmt::format(", shard {}/{}", o.shard, o.shards) : "",
             o.budget_s > 0 ? fmt::format(", budget {:g} s", o.budget_s) : "",
             o.warm_start ? ", warm start" : "", cache, db ? path : "nowhere (--cache off)");
  std::fflush(stdout);
  tuner::BatchReport report;
  {
    Progress progress(args.quiet);
    report = tuner::run_batch(corpus, o, store, progress); // a throw: the run is failed
  }
  int failed = static_cast<int>(report.count(tuner::BatchKernel::Outcome::failed));
  int sig = interrupts.signal();
  if (run) run->finish(sig != 0, failed > 0);
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
    if (cache_mode_name(args.cache) != "off") one.cache = "ignore"; // every repeat searches
    one.label = fmt::format("{}{}/{}", args.label.empty() ? "repeat " : args.label + " ", i + 1,
                            args.repeat);
    fmt::print(json_on_stdout(args) ? stderr : stdout, "== repeat {} of {}\n", i + 1, args.repeat);
    RepeatRun kept;
    int code = tune(one, &kept);
    reports.push_back(kept.report);
    runs.push_back(kept.summary);
    if (code == 0) continue;
    if (json_on_stdout(args)) print_json(repeat_study_json({}, args.repeat, runs, true));
    return code;
  }
  int threads = args.threads > 0 ? args.threads : default_threads();
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
  CLI::App* cmd = app.add_subcommand(
      "tune", "BEAM-search every kernel of a workload or a corpus file, journaled in the database");
  cmd->add_option("target", args->target,
                  "a workload name (see 'beamlab run --list'), a corpus file (corpora/*.json), "
                  "an ONNX model (MODEL.onnx) or a kernel in IR text (KERNEL.ir)");
  cmd->add_option("--expr", args->expr,
                  "tune an expression over named inputs, e.g. \"(a.matmul(w) + b).relu()\"");
  cmd->add_option("--input", args->inputs,
                  "an input's shape, NAME=DIMS (models: symbolic dims; --expr: every input)");
  cmd->add_option("--beam", args->beam, "beam width (1: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--budget", args->budget_s,
                  "seconds for the whole run, shared by expected gain (0: none)")
      ->check(kFinite)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--kernel-budget", args->kernel_budget_s, "seconds per kernel at most")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-candidates", args->max_candidates, "compiled candidates per kernel")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--early-stop", args->early_stop, "stop timing at this many times the best")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(1.0, 1000.0));
  cmd->add_option("--min-improvement", args->min_improvement,
                  "stop when an iteration gains less than this fraction")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--prune", args->prune,
                  "cost-model pruning: compile and time only this fraction of each iteration's "
                  "new plans, those a model trained on the journal ranks fastest (0: off)")
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--runs", args->runs, "timed runs per candidate")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--workers", args->workers,
                  "sandboxes compiling in parallel per job (0: cores / jobs)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--threads", args->threads, "cores each kernel runs on (0: all)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--dtype", args->dtype, "the workload's dtype (not for corpus files)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) {
            return parse_dtype(text)
                       ? std::string()
                       : "Value '" + text + "' is not a dtype (e.g. float32, float16)";
          },
          "DTYPE"));
  cmd->add_option("--shard", args->shard,
                  "tune shard i of N (0 <= i < N) of the kernels; default from "
                  "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT")
      ->check(parsed_by("i/N", [](const std::string& text, const std::string& what) {
        (void)tuner::parse_shard(text, what);
      }));
  cmd->add_option("--jobs", args->jobs, "kernels searched at once (timing stays exclusive)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  add_cache_option(cmd, args->cache);
  cmd->add_option("--label", args->label, "a name for the run, for reports");
  cmd->add_flag("--resume", args->resume,
                "finish the newest unfinished run (or --resume-run ID) without re-measuring");
  cmd->add_option("--resume-run", args->resume_run, "the run --resume finishes")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--json", args->json_out,
                  "write the summary as JSON to this file (-: to stdout, as --format json)");
  add_format_option(cmd, args->format);
  cmd->add_flag("--warm-start", args->warm_start,
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
    a.params = cmd->remaining();
    check_unknown_options(*cmd, a.target, a.params);
    if (a.resume_run > 0) a.resume = true;
    exit_code = a.repeat > 1 ? tune_repeated(a) : tune(a);
  });
}

} // namespace beamlab::cli

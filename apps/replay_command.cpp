// The search-replay subcommand; see replay_command.hpp.
#include "apps/replay_command.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "apps/output.hpp"
#include "apps/usage.hpp"
#include "tuner/store/journal.hpp"
#include "tuner/store/recording.hpp"
#include "tuner/store/training.hpp"

namespace beamlab::cli {
namespace {

struct ReplayArgs {
  int64_t run = 0;
  std::vector<std::string> kernels;
  std::optional<int> beam;
  double prune = 0;
  bool curve = false;
  std::string db;
  OutputFormat format = OutputFormat::Text;
};

// One kernel's search, as recorded and as replayed with the variant.
struct KernelReplay {
  std::string kernel;
  int64_t tuning = 0;
  double recorded_s = 0, recorded_ms = 0;
  std::string recorded_opts;
  bool reproduced = false; ///< the as-recorded replay picked the recorded winner
  double replay_s = 0, replay_ms = 0;
  std::string replay_opts;
  int candidates = 0, recorded_candidates = 0, missing = 0;
  /// When each first came within 2% of the recorded winner's search time (-1: never).
  double recorded_to_2pct_s = -1, replay_to_2pct_s = -1;
  std::vector<std::pair<double, double>> curve;
};

double first_within(const std::vector<std::pair<double, double>>& curve, double target) {
  for (const auto& [s, ms] : curve)
    if (ms <= target) return s;
  return -1;
}

tuner::SearchSettings variant_of(const tuner::SearchSettings& recorded, const ReplayArgs& args) {
  tuner::SearchSettings s = recorded;
  if (args.beam) s.beam = *args.beam;
  if (args.prune > 0) s.prune = args.prune;
  return s;
}

// --prune: a model of every other kernel the device's journal holds (the kernel replayed is
// held out, so the model has never seen it), refitted by the search as it replays.
std::unique_ptr<tuner::CostModel> held_out_model(const tuner::Journal& journal,
                                                 const tuner::RecordedTuning& r) {
  auto model = std::make_unique<tuner::CostModel>();
  for (const tuner::JournalKernel& k : journal.kernels)
    if (k.key != r.task.key) tuner::add_samples(*model, k);
  model->fit();
  return model;
}

KernelReplay replay_one(const tuner::RecordedTuning& r, const ReplayArgs& args,
                        const tuner::Journal& journal) {
  KernelReplay k;
  k.kernel = r.task.name;
  k.tuning = r.tuning.id;
  k.recorded_s = r.tuning.wall_s;
  // The search's own winner (the tuning's may be the heuristic, kept by the in-process check).
  k.recorded_opts = r.search_winner;
  if (auto plan = parse_opts(r.search_winner))
    k.recorded_ms = tuner::recorded_ms(r.recording, *plan);
  k.recorded_candidates = static_cast<int>(r.recording.candidates.size());
  tuner::Calibration clock = tuner::calibrate(r);
  auto as_recorded = tuner::replay_search(r, r.settings, clock);
  user_assert(as_recorded.has_value()) << "tuning " << r.tuning.id << ": " << as_recorded.error();
  k.reproduced = beamlab::to_string(as_recorded->result.best().opts) == r.search_winner;
  tuner::SearchSettings settings = variant_of(r.settings, args);
  std::unique_ptr<tuner::CostModel> model;
  if (args.prune > 0) settings.model = (model = held_out_model(journal, r)).get();
  auto variant = tuner::replay_search(r, settings, clock);
  user_assert(variant.has_value()) << "tuning " << r.tuning.id << ": " << variant.error();
  const tuner::TuneResult& v = variant->result;
  k.replay_s = v.wall_s;
  k.replay_opts = beamlab::to_string(v.best().opts);
  k.replay_ms = tuner::recorded_ms(r.recording, v.best().opts);
  k.candidates = static_cast<int>(v.candidates.size());
  k.missing = variant->missing;
  k.curve = variant->curve;
  // The target: the recorded winner's own search time, within 2%.
  double target = 1.02 * (as_recorded->curve.empty() ? 0 : as_recorded->curve.back().second);
  k.recorded_to_2pct_s = first_within(as_recorded->curve, target);
  k.replay_to_2pct_s = first_within(variant->curve, target);
  return k;
}

// The cores the run's searches ran on (its first tuning's).
int threads_of(db::Database& db, int64_t run) {
  std::vector<db::Tuning> ts = db.tunings(run);
  return ts.empty() ? 1 : ts.front().threads;
}

std::string seconds(double s) { return s < 0 ? "never" : fmt::format("{:.1f}", s); }

void print_text(const ReplayArgs& args, const std::vector<KernelReplay>& rows) {
  fmt::print("{:<28} {:>9} {:>10} {:>5} | {:>9} {:>10} {:>7} {:>6} {:>7} | {:>8} {:>8}\n", "kernel",
             "rec s", "rec ms", "same", "replay s", "replay ms", "slower", "cands", "missing",
             "rec 2%", "rep 2%");
  double rec_s = 0, rep_s = 0, log_ratio = 0;
  int same = 0, missing = 0;
  const KernelReplay* worst = nullptr;
  for (const KernelReplay& k : rows) {
    double slower = k.recorded_ms > 0 && k.replay_ms > 0 ? k.replay_ms / k.recorded_ms : 1;
    fmt::print("{:<28} {:>9.1f} {:>10.4f} {:>5} | {:>9.1f} {:>10.4f} {:>6.1f}% {:>6} {:>7} | {:>8} "
               "{:>8}\n",
               k.kernel.substr(0, 28), k.recorded_s, k.recorded_ms, k.reproduced ? "yes" : "NO",
               k.replay_s, k.replay_ms, 100 * (slower - 1), k.candidates, k.missing,
               seconds(k.recorded_to_2pct_s), seconds(k.replay_to_2pct_s));
    if (args.curve)
      for (const auto& [s, ms] : k.curve) fmt::print("    {:>9.2f} s  {:.4f} ms\n", s, ms);
    rec_s += k.recorded_s;
    rep_s += k.replay_s;
    log_ratio += std::log(slower);
    same += k.reproduced;
    missing += k.missing;
    if (!worst || slower > worst->replay_ms / std::max(worst->recorded_ms, 1e-12)) worst = &k;
  }
  if (rows.empty()) return;
  double n = static_cast<double>(rows.size());
  fmt::print("\n{} searches: recorded {:.1f} s, replayed {:.1f} s ({:.2f}x faster); kernel "
             "time geomean {:+.2f}%, worst {} {:+.2f}%\n",
             rows.size(), rec_s, rep_s, rep_s > 0 ? rec_s / rep_s : 0,
             100 * (std::exp(log_ratio / n) - 1), worst->kernel,
             100 * (worst->replay_ms / std::max(worst->recorded_ms, 1e-12) - 1));
  fmt::print("as recorded, {} of {} winners reproduced; {} plans asked for were not in the "
             "recording\n",
             same, rows.size(), missing);
}

void print_json_doc(const ReplayArgs& args, const std::vector<KernelReplay>& rows) {
  Json doc = json_document("search-replay");
  doc["run"] = args.run;
  Json& out = doc["kernels"] = Json::array();
  for (const KernelReplay& k : rows) {
    Json curve = Json::array();
    for (const auto& [s, ms] : k.curve) curve.push_back({s, ms});
    out.push_back(
        {{"kernel", k.kernel},
         {"tuning", k.tuning},
         {"recorded_s", k.recorded_s},
         {"recorded_ms", k.recorded_ms},
         {"recorded_opts", k.recorded_opts},
         {"reproduced", k.reproduced},
         {"replay_s", k.replay_s},
         {"replay_ms", k.replay_ms},
         {"replay_opts", k.replay_opts},
         {"candidates", k.candidates},
         {"recorded_candidates", k.recorded_candidates},
         {"missing", k.missing},
         {"recorded_to_2pct_s",
          json_number(k.recorded_to_2pct_s < 0 ? std::nullopt
                                               : std::optional(k.recorded_to_2pct_s))},
         {"replay_to_2pct_s",
          json_number(k.replay_to_2pct_s < 0 ? std::nullopt : std::optional(k.replay_to_2pct_s))},
         {"curve", curve}});
  }
  print_json(doc);
}

void replay(const ReplayArgs& args) {
  db::Database db = open_existing_database(args.db);
  auto run = db.run(args.run);
  user_assert(run.has_value()) << "run " << args.run << " is not in '" << db.path()
                               << "'; 'beamlab cache list --runs' lists the runs";
  user_assert(run->kind == db::RunKind::tune)
      << "run " << args.run << " is a benchmark run; replay a tuning run";
  tuner::Journal journal;
  if (args.prune > 0)
    if (auto device = db.device(run->device_id))
      journal = tuner::read_journal(db, device->fingerprint, threads_of(db, args.run));
  std::vector<KernelReplay> rows;
  std::set<std::string> wanted(args.kernels.begin(), args.kernels.end()), found;
  for (const db::Tuning& t : db.tunings(args.run)) {
    if (t.status != db::TuningStatus::done || tuner::tried_by_hand(t)) continue;
    auto r = tuner::load_recording(db, t.id);
    user_assert(r.has_value()) << r.error();
    if (!wanted.empty() && !wanted.count(r->task.name)) continue;
    found.insert(r->task.name);
    if (args.format == OutputFormat::Text)
      std::fprintf(stderr, "replaying %s...\n", r->task.name.c_str());
    rows.push_back(replay_one(*r, args, journal));
  }
  for (const std::string& k : wanted)
    usage_assert(found.count(k)) << "--kernel " << k << ": run " << args.run
                                 << " has no finished search of it";
  user_assert(!rows.empty()) << "run " << args.run << " has no finished search to replay";
  if (args.format == OutputFormat::Json)
    print_json_doc(args, rows);
  else
    print_text(args, rows);
}

} // namespace

void add_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "search-replay",
      "Run a finished tuning run's searches again against their journal, timing nothing: as "
      "recorded (the winners must match), and with a changed strategy");
  cmd->add_option("run", args->run, "the tuning run (see 'beamlab cache list --runs')")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--kernel", args->kernels, "only these kernels (by name; repeatable)");
  cmd->add_option("--beam", args->beam, "the variant's beam width (default: as recorded)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--prune", args->prune,
                  "the variant prunes with a cost model of the journal's other kernels: it "
                  "measures this fraction of each iteration's plans (0: off)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--curve", args->curve, "print each kernel's best-so-far against simulated time");
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB or the embedded one)");
  add_format_option(cmd, args->format);
  cmd->final_callback([args] { replay(*args); });
}

} // namespace beamlab::cli

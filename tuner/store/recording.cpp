// Reading a journaled search back for replay; see recording.hpp.
#include "tuner/store/recording.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tuner/store/journal.hpp"
#include "tuner/store/records.hpp"

namespace beamlab::tuner {

namespace {

// The run's sandboxes: its --workers, else its cores shared by its jobs.
int sandboxes_of(db::Database& db, const db::Run& run) {
  nlohmann::json args = nlohmann::json::parse(run.settings, nullptr, false);
  int workers = args.is_object() ? args.value("workers", 0) : 0;
  if (workers > 0) return workers;
  int jobs = args.is_object() ? std::max(1, args.value("jobs", 1)) : 1;
  auto device = db.device(run.device_id);
  int cores = device ? device->info.cores : 1;
  return std::max(1, cores / jobs);
}

} // namespace

Expected<RecordedTuning> load_recording(db::Database& db, int64_t tuning_id) {
  auto tuning = db.tuning(tuning_id);
  if (!tuning) return make_unexpected(fmt::format("tuning {} is not in the journal", tuning_id));
  std::string what = fmt::format("tuning {}", tuning_id);
  if (tuning->status != db::TuningStatus::done)
    return make_unexpected(what + " did not finish: only a finished search can be replayed");
  if (tried_by_hand(*tuning))
    return make_unexpected(what + " holds plans tried by hand, not a search");
  auto kernel = db.kernel(tuning->kernel_id);
  if (!kernel) return make_unexpected(what + ": its kernel is missing");
  auto task = task_from_record(*kernel);
  if (!task) return make_unexpected(what + ": " + task.error());
  auto run = db.run(tuning->run_id);
  RecordedTuning r;
  r.tuning = *tuning;
  r.task = std::move(*task);
  r.settings = settings_from_json(nlohmann::json::parse(tuning->settings, nullptr, false));
  Recording& rec = r.recording;
  rec.runs = r.settings.runs;
  rec.warmup = r.settings.warmup;
  rec.checks = static_cast<int>(r.settings.checks.size());
  rec.threads = tuning->threads;
  rec.sandboxes = run ? sandboxes_of(db, *run) : 1;
  std::map<int, std::string> opts_of;
  for (const db::CandidateRow& row : db.candidates(tuning_id)) {
    opts_of[row.seq] = row.opts;
    // Seeds: plans measured beside the heuristic, before the first iteration.
    if (row.parent < 0 && row.iteration == 0 && row.seq > 0 && row.opts != tuning->heuristic_opts)
      if (auto opts = parse_opts(row.opts)) r.settings.seeds.push_back(*opts);
    rec.candidates.emplace(row.opts, candidate_from_row(row));
  }
  // "SEQ MS MS ..." per finalist; the lowest median wins, the earlier candidate on a tie.
  std::istringstream lines(tuning->round_ms);
  double best = 0;
  int best_seq = -1;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    int seq = -1;
    if (!(fields >> seq) || !opts_of.count(seq)) continue;
    std::vector<double>& rounds = rec.rounds[opts_of[seq]];
    std::vector<double> present;
    for (double ms; fields >> ms;) {
      rounds.push_back(ms);
      if (ms > 0) present.push_back(ms);
    }
    if (present.empty()) continue;
    double median = quantile(present, 0.5);
    if (best_seq < 0 || median < best || (median == best && seq < best_seq)) {
      best = median;
      best_seq = seq;
    }
  }
  r.search_winner = best_seq >= 0 ? opts_of[best_seq] : tuning->winner_opts;
  return r;
}

Expected<ReplayOutcome> replay_search(const RecordedTuning& r, const SearchSettings& settings,
                                      Calibration calibration, const EventSink& sink) {
  RecordedLab lab(r.recording, calibration);
  ReplayOutcome out;
  auto watch = [&](const Event& e) {
    if (e.kind == Event::Kind::best && e.candidate && e.best_ms > 0 &&
        (out.curve.empty() || e.best_ms < out.curve.back().second))
      out.curve.emplace_back(lab.clock_s(), e.best_ms);
    if (sink) sink(e);
  };
  auto result = search_kernel(r.task, lab, settings, watch);
  if (!result) return make_unexpected(result.error());
  out.result = std::move(*result);
  out.missing = lab.missing();
  return out;
}

Calibration calibrate(const RecordedTuning& r) {
  // The simulated time of the recorded strategy on a clock; a request count along.
  auto simulate = [&](Calibration c, int* requests = nullptr) {
    RecordedLab lab(r.recording, c);
    auto result = search_kernel(r.task, lab, r.settings);
    if (requests) *requests = lab.requests();
    return result ? result->wall_s : 0.0;
  };
  int requests = 0;
  double wall = r.tuning.wall_s, estimate = simulate({}, &requests);
  if (estimate <= 0 || requests == 0 || wall <= 0) return {};
  if (estimate > wall) return {wall / estimate, 0}; // a pure scale is exact
  // An overhead on compiles overlaps across lanes, so the time grows piecewise linearly in it:
  // a few secant steps from (0, estimate) find the overhead that takes the recorded time.
  double lo = 0, f_lo = estimate - wall, x = (wall - estimate) / requests;
  for (int step = 0; step < 8; ++step) {
    double f = simulate({1, x}) - wall;
    if (std::abs(f) <= 1e-9 * wall || f == f_lo) break;
    double next = x - f * (x - lo) / (f - f_lo);
    lo = x;
    f_lo = f;
    x = std::max(0.0, next);
  }
  return {1, x};
}

double recorded_ms(const Recording& rec, const std::vector<Opt>& plan) {
  std::string key = beamlab::to_string(plan);
  if (auto it = rec.rounds.find(key); it != rec.rounds.end()) {
    std::vector<double> kept;
    for (double ms : it->second)
      if (ms > 0) kept.push_back(ms);
    if (!kept.empty()) return quantile(kept, 0.5);
  }
  auto it = rec.candidates.find(key);
  if (it == rec.candidates.end() || it->second.samples_ms.empty()) return 0;
  return quantile(search_samples(it->second, rec.runs), 0.5);
}

} // namespace beamlab::tuner

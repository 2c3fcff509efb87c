// Database snapshots for the GUI; see store.hpp.
#include "gui/store.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "engine/support/roofline.hpp"
#include "tuner/search/search.hpp"
#include "tuner/store/journal.hpp"
#include "tuner/store/records.hpp"

namespace beamlab::gui {

namespace {

template <class T>
struct AsExpected {
  using type = Expected<T>;
};
template <class T>
struct AsExpected<Expected<T>> {
  using type = Expected<T>;
};

// Runs `read` on a fresh read-only connection, turning every error into its message (a read
// that can fail itself returns its Expected as it is).
template <class F>
auto reading(const std::string& path, F read) ->
    typename AsExpected<decltype(read(std::declval<db::Database&>()))>::type {
  try {
    db::Database db(path, db::Database::Access::read_only);
    return read(db);
  } catch (const std::exception& e) {
    return make_unexpected(std::string(e.what()));
  }
}

std::string describe(const db::Device& d) {
  return fmt::format("{}, {} cores", d.info.cpu_model, d.info.cores);
}

KernelRow kernel_row(db::Database& db, const db::Tuning& t, const std::optional<db::Device>& dev,
                     int64_t candidates) {
  KernelRow row{reports::tuned_kernel(db, t, dev), {}};
  row.candidates = candidates;
  row.label = row.kernel.name;
  return row;
}

} // namespace

Expected<std::vector<RunRow>> load_runs(const std::string& path) {
  return reading(path, [](db::Database& db) {
    std::map<int64_t, db::Database::RunStats> stats = db.run_stats();
    // One query for every run's hand tunings, not one per run on each reload.
    std::map<int64_t, int64_t> hand = db.tunings_with_workload(tuner::kHandTriedWorkload);
    std::map<int64_t, std::string> devices;
    std::vector<RunRow> out;
    for (db::Run& r : db.runs()) {
      RunRow row;
      if (!devices.count(r.device_id)) {
        auto d = db.device(r.device_id);
        devices[r.device_id] = d ? describe(*d) : "unknown device";
      }
      row.device = devices[r.device_id];
      if (auto s = stats.find(r.id); s != stats.end()) {
        row.kernels = s->second.tunings;
        row.candidates = s->second.candidates;
        row.measurements = s->second.benchmarks;
      }
      if (auto h = hand.find(r.id); h != hand.end()) row.by_hand = h->second == row.kernels;
      row.run = std::move(r);
      out.push_back(std::move(row));
    }
    return out;
  });
}

Expected<RunDetail> load_run(const std::string& path, int64_t run_id) {
  return reading(path, [&](db::Database& db) -> Expected<RunDetail> {
    auto run = db.run(run_id);
    if (!run) return make_unexpected(fmt::format("no run {} in '{}'", run_id, path));
    RunDetail d;
    d.run = *run;
    d.device = db.device(run->device_id);
    std::map<int64_t, int64_t> counts = db.candidate_counts(run_id);
    for (const db::Tuning& t : db.tunings(run_id))
      d.kernels.push_back(kernel_row(db, t, d.device, counts[t.id]));
    // Kernels sharing a name (and not a kernel: the AST hash differs) get its first 6 digits.
    std::map<std::string, std::set<std::string>> hashes;
    for (const KernelRow& k : d.kernels) hashes[k.kernel.name].insert(k.kernel.hash);
    for (KernelRow& k : d.kernels)
      if (hashes[k.kernel.name].size() > 1) k.label += " #" + k.kernel.hash.substr(0, 6);
    if (run->kind == db::RunKind::bench) d.measured = reports::load_run_data(db, run_id).items;
    return d;
  });
}

Expected<reports::Comparison> compare_stored_runs(const std::string& path, int64_t a, int64_t b) {
  return reading(path, [&](db::Database& db) {
    return reports::compare_stored(db, a, b, reports::VerdictRule{},
                                   reports::kDefaultHistoryWindow);
  });
}

namespace {

// See load_trend; `name` (when given) gets the measurement's readable name.
std::vector<TrendPoint> bench_trend(db::Database& db, int64_t device_id, reports::Section section,
                                    const std::string& key, std::string* name) {
  std::vector<TrendPoint> out;
  std::vector<db::Run> runs = db.runs(); // newest first
  for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
    if (r->kind != db::RunKind::bench || r->device_id != device_id) continue;
    reports::RunData data;
    try {
      data = reports::load_run_data(db, r->id);
    } catch (const UserError&) {
      continue; // a row that does not read is the bench run's error, shown when it is opened
    }
    auto m = std::find_if(data.items.begin(), data.items.end(), [&](const reports::Measurement& i) {
      return i.section == section && i.key == key && !i.samples_ms.empty();
    });
    if (m == data.items.end()) continue;
    if (name) *name = m->name;
    TrendPoint p{r->id, data.when(), std::move(m->samples_ms)};
    if (!out.empty())
      p.change = reports::compare_samples(out.back().samples_ms, p.samples_ms, {}).verdict;
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace

Expected<TuningDetail> load_tuning(const std::string& path, int64_t tuning_id) {
  return reading(path, [&](db::Database& db) -> Expected<TuningDetail> {
    auto t = db.tuning(tuning_id);
    if (!t) return make_unexpected(fmt::format("no tuning {} in '{}'", tuning_id, path));
    TuningDetail d;
    if (auto run = db.run(t->run_id)) d.run = *run;
    d.device = db.device(d.run.device_id);
    d.candidates = db.candidates(tuning_id);
    d.row = kernel_row(db, *t, d.device, static_cast<int64_t>(d.candidates.size()));
    d.history = db.tunings_of_kernel(t->kernel_id);
    int searches = 0;
    for (const db::Tuning& h : d.history) {
      if (!tuner::tried_by_hand(h)) {
        ++searches;
        continue;
      }
      for (const db::CandidateRow& c : db.candidates(h.id)) {
        bool beside = c.seq == 0 || (c.seq == 1 && c.opts == h.heuristic_opts);
        if (beside || c.status != "ok" || c.samples_ms.empty()) continue;
        d.hand_tries.push_back({c.opts, c.samples_ms, searches});
      }
    }
    // Bench runs on this kernel's device that timed it, each one point placed after the
    // searches of the runs before it.
    for (TrendPoint& p :
         bench_trend(db, d.run.device_id, reports::Section::kernel, d.row.kernel.hash, nullptr)) {
      int before = static_cast<int>(
          std::count_if(d.history.begin(), d.history.end(), [&](const db::Tuning& h) {
            return h.run_id < p.run_id && !tuner::tried_by_hand(h);
          }));
      d.bench_points.push_back({std::move(p), before});
    }
    return d;
  });
}

Expected<Trend> load_trend(const std::string& path, int64_t run_id, reports::Section section,
                           const std::string& key) {
  return reading(path, [&](db::Database& db) -> Trend {
    std::optional<db::Run> run = db.run(run_id);
    if (!run) throw UserError("run " + std::to_string(run_id) + " is not in " + path);
    Trend t;
    if (auto d = db.device(run->device_id)) t.device = describe(*d);
    t.points = bench_trend(db, run->device_id, section, key, &t.name);
    return t;
  });
}

Expected<ProgramProfile> note_standing(const std::string& path, ProgramProfile program) {
  return reading(path, [&](db::Database& db) -> ProgramProfile {
    std::optional<MachineLimits> limits;
    if (auto id = db.find_device(tuner::this_device().fingerprint()))
      if (auto d = db.device(*id)) limits = d->limits;
    for (ProgramKernel& k : program.kernels) {
      if (limits && !k.once)
        if (auto r = roofline(*limits, {k.flops, k.bytes, k.output_bytes}, k.ms))
          k.roof = r->fraction, k.bound = r->bound;
      auto id = db.find_kernel(k.key);
      if (!id) continue;
      std::vector<db::Tuning> searches = db.tunings_of_kernel(*id);
      for (auto t = searches.rbegin(); t != searches.rend(); ++t) {
        if (tuner::tried_by_hand(*t) || t->status != db::TuningStatus::done) continue;
        k.tie = t->tie_with_heuristic;
        k.heuristic_won = !t->winner_opts.empty() && t->winner_opts == t->heuristic_opts;
        if (t->speedup)
          k.gain = t->speedup->estimate;
        else if (t->heuristic_ms && t->winner_ms && *t->winner_ms > 0)
          k.gain = *t->heuristic_ms / *t->winner_ms;
        k.tuned = !t->winner_opts.empty() && t->winner_opts == k.opts;
        break;
      }
    }
    return program;
  });
}

Expected<std::optional<int64_t>> latest_tuning(const std::string& path, const std::string& hash) {
  return reading(path, [&](db::Database& db) -> std::optional<int64_t> {
    auto kernel = db.find_kernel(hash);
    if (!kernel) return std::nullopt;
    std::vector<db::Tuning> ts = db.tunings_of_kernel(*kernel);
    if (ts.empty()) return std::nullopt;
    return ts.back().id;
  });
}

double best_ms(const db::CandidateRow& c) {
  if (c.samples_ms.empty()) return 0;
  return *std::min_element(c.samples_ms.begin(), c.samples_ms.end());
}

double median_ms(const db::CandidateRow& c) { return beamlab::quantile(c.samples_ms, 0.5); }

Expected<bool> ChangeWatch::changed() {
  try {
    if (!db_) db_ = std::make_unique<db::Database>(path_, db::Database::Access::read_only);
    int64_t v = db_->data_version();
    bool changed = v != last_;
    last_ = v;
    return changed;
  } catch (const std::exception& e) {
    db_.reset();
    return make_unexpected(std::string(e.what()));
  }
}

} // namespace beamlab::gui

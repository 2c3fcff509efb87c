// One door to a tuning run; see session.hpp.
#include "tuner/batch/session.hpp"

#include <set>

#include <fmt/format.h>

#include "tuner/store/cache.hpp"
#include "tuner/store/records.hpp"
#include "tuner/store/run.hpp"

namespace beamlab::tuner {

using json = nlohmann::json;

json TuneSettings::to_json() const {
  return {{"version", 2},
          {"door", door},
          {"target", what.target},
          {"params", what.params},
          {"expr", what.expr},
          {"inputs", what.inputs},
          {"vars", what.vars},
          {"dtype", what.dtype},
          {"kernels", what.kernels},
          {"workload", what.workload},
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
          {"jobs", jobs},
          {"shard", shard},
          {"cache", cache},
          {"label", label},
          {"warm_start", warm_start}};
}

TuneSettings TuneSettings::from_json(const json& j) {
  TuneSettings s;
  user_assert(j.is_object()) << "a run's settings are not a JSON object: " << j.dump();
  try {
    if (!j.contains("target") && !j.contains("kernels")) {
      // Python and the GUI stored the search's settings (SearchSettings) before version 2.
      SearchSettings search = settings_from_json(j);
      s.beam = search.beam;
      s.kernel_budget_s = search.time_budget_s;
      s.max_candidates = search.candidate_budget;
      s.early_stop = search.early_stop;
      s.min_improvement = search.min_improvement;
      s.prune = search.prune;
      s.runs = search.runs;
      s.threads = search.threads;
      return s;
    }
    // Version 2, and the CLI's before it (fields added since are read with their defaults).
    s.door = j.value("door", "cli");
    s.what.target = j.value("target", "");
    s.what.params = j.value("params", std::vector<std::string>{});
    s.what.expr = j.value("expr", "");
    s.what.inputs = j.value("inputs", std::vector<std::string>{});
    s.what.vars = j.value("vars", std::vector<std::string>{});
    s.what.dtype = j.value("dtype", "float32");
    s.what.kernels = j.value("kernels", std::vector<std::string>{});
    s.what.workload = j.value("workload", "");
    s.beam = j.value("beam", s.beam);
    s.budget_s = j.value("budget_s", s.budget_s);
    s.kernel_budget_s = j.value("kernel_budget_s", s.kernel_budget_s);
    s.max_candidates = j.value("max_candidates", s.max_candidates);
    s.early_stop = j.value("early_stop", s.early_stop);
    s.min_improvement = j.value("min_improvement", s.min_improvement);
    s.prune = j.value("prune", s.prune);
    s.runs = j.value("runs", s.runs);
    s.workers = j.value("workers", s.workers);
    s.threads = j.value("threads", s.threads);
    s.jobs = j.value("jobs", s.jobs);
    s.shard = j.value("shard", "");
    s.cache = j.value("cache", s.cache);
    s.label = j.value("label", "");
    s.warm_start = j.value("warm_start", false);
  } catch (const json::exception& e) {
    throw UserError(fmt::format("a run's settings do not read back ({}): {}", e.what(), j.dump()));
  }
  return s;
}

struct TuneSession::State {
  TuneSettings settings;
  BatchOptions options;
  std::string db_path, note;
  std::unique_ptr<db::Database> db;
  std::optional<db::Run> resumed;
  std::optional<ActiveRun> run;
  BatchStore store;
  std::optional<Corpus> corpus;
  std::vector<KernelTask> tasks;
  bool ran = false;
};

namespace {

// What a run that stored no target (Python's and the GUI's before version 2) can be resumed
// with: the kernels its journal has, under the workload and at the thread count they were
// journaled with; the GUI's searched whatever the cache held.
void from_journal(db::Database& db, const db::Run& run, TuneSettings& s) {
  std::set<int64_t> seen;
  for (const db::Tuning& t : db.tunings(run.id))
    if (seen.insert(t.kernel_id).second)
      if (auto k = db.kernel(t.kernel_id)) {
        s.what.kernels.push_back(k->hash);
        if (s.what.workload.empty()) s.what.workload = t.workload;
        if (s.threads == 0) s.threads = t.threads;
      }
  bool gui = run.command.starts_with("beamlab-gui");
  s.door = gui ? "gui" : "python";
  if (gui) s.cache = "ignore";
}

// The stored kernels `hashes`, as tasks.
std::vector<KernelTask> stored_tasks(db::Database& db, const std::vector<std::string>& hashes,
                                     int64_t run_id) {
  std::vector<KernelTask> tasks;
  for (const std::string& hash : hashes) {
    std::optional<int64_t> id = db.find_kernel(hash);
    std::optional<db::Kernel> k = id ? db.kernel(*id) : std::nullopt;
    user_assert(k) << "run " << run_id << " tunes kernel " << hash << ", which is not in '"
                   << db.path() << "' (was the database pruned?)";
    Expected<KernelTask> task = task_from_record(*k);
    user_assert(task.has_value()) << "run " << run_id << ": kernel " << k->name << " (" << hash
                                  << ") does not read back in this build: " << task.error();
    tasks.push_back(std::move(*task));
  }
  return tasks;
}

} // namespace

TuneSession::TuneSession(TuneRequest r) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.settings = std::move(r.settings);
  CacheMode mode = parse_cache_mode(s.settings.cache, "cache");
  if (r.resume) {
    user_assert(mode != CacheMode::off && !r.db_path.empty())
        << r.resume_word << " needs the database (not cache off)";
    s.db = std::make_unique<db::Database>(r.db_path, db::Database::Access::read_write);
    db::Run run = run_to_resume(*s.db, *r.resume, r.resume_word);
    s.settings = TuneSettings::from_json(json::parse(run.settings, nullptr, false));
    TuneTarget& what = s.settings.what;
    if (what.target.empty() && what.expr.empty() && what.kernels.empty()) {
      from_journal(*s.db, run, s.settings);
      user_assert(!what.kernels.empty())
          << r.resume_word << " " << run.id << ": run " << run.id
          << " recorded neither what it tunes nor any kernel (an older beamlab began it); "
             "start it again";
      s.note = fmt::format("run {} was begun by an older beamlab, which did not record its "
                           "kernels or its whole-run budget: resuming the {} its journal holds",
                           run.id, what.kernels.size());
    }
    mode = parse_cache_mode(s.settings.cache, "the resumed run's cache mode");
    s.resumed = run;
    r.corpus.reset(); // the work is the run's own
    r.tasks.reset();
  } else if (mode != CacheMode::off) {
    s.db = std::make_unique<db::Database>(r.db_path, mode == CacheMode::read_only
                                                         ? db::Database::Access::read_only
                                                         : db::Database::Access::read_write);
  }
  s.db_path = s.db ? r.db_path : "";
  TuneTarget& what = s.settings.what;

  // The work: the door's, else the run's kernels or target.
  if (r.corpus) {
    s.corpus = std::move(*r.corpus);
  } else if (r.tasks) {
    s.tasks = std::move(*r.tasks);
    what.kernels.clear();
    for (const KernelTask& t : s.tasks) what.kernels.push_back(hash_hex(t.key));
    if (s.db && !s.db->read_only())
      for (const KernelTask& t : s.tasks) s.db->upsert_kernel(kernel_record(t));
  } else if (!what.kernels.empty()) {
    user_assert(s.db) << "a run of stored kernels needs the database (not cache off)";
    s.tasks = stored_tasks(*s.db, what.kernels, s.resumed ? s.resumed->id : 0);
  } else if (is_corpus_file(what.target)) {
    s.corpus = load_corpus(what.target);
  } else {
    user_assert(!what.target.empty() || !what.expr.empty())
        << "tune: name a workload, a corpus file, a model or kernel file, or an expression";
    s.corpus = single_entry(target_entry("tune", what.target, what.params, what.expr, what.inputs,
                                         what.dtype, what.vars));
  }
  if (s.corpus) what.kernels.clear();
  if (!s.corpus && what.workload.empty()) what.workload = s.settings.door;

  BatchOptions& o = s.options;
  o.settings.beam = s.settings.beam;
  o.settings.time_budget_s = s.settings.kernel_budget_s;
  o.settings.candidate_budget = s.settings.max_candidates;
  o.settings.early_stop = s.settings.early_stop;
  o.settings.min_improvement = s.settings.min_improvement;
  o.settings.prune = s.settings.prune;
  o.settings.runs = s.settings.runs;
  o.settings.control = r.control;
  o.budget_s = s.settings.budget_s;
  if (!s.settings.shard.empty())
    std::tie(o.shard, o.shards) = parse_shard(s.settings.shard, "shard");
  o.jobs = s.settings.jobs;
  o.workers = s.settings.workers;
  o.threads = s.settings.threads > 0 ? s.settings.threads
              : r.all_threads > 0    ? r.all_threads
                                     : usable_cores();
  o.cache = mode;
  o.warm_start = s.settings.warm_start;
  // Stored resolved: tunings are keyed by their thread count, so a resume from another door
  // (another default, OMP_NUM_THREADS under Slurm) must run the kernels at the same one.
  s.settings.threads = o.threads;

  if (!s.db) return; // cache off: the batch keeps its plumbing in memory
  s.store.db_path = s.db_path;
  if (s.resumed) {
    s.run.emplace(ActiveRun::resume(*s.db, s.resumed->id, r.resume_word));
  } else if (writes(mode)) {
    RunSpec spec;
    spec.kind = db::RunKind::tune;
    spec.label = s.settings.label;
    spec.command = r.command;
    spec.settings = s.settings.to_json().dump();
    spec.git_revision = r.git_revision;
    s.run.emplace(ActiveRun::begin(*s.db, spec));
  }
  if (s.run) {
    s.store.run_id = s.run->id();
    s.store.device_id = s.run->device_id();
    s.store.source = s.run->source();
  } else {
    s.store.device_id = s.db->read_only()
                            ? s.db->find_device(this_device().fingerprint()).value_or(0)
                            : s.db->upsert_device(this_device());
  }
}

TuneSession::~TuneSession() = default;

const TuneSettings& TuneSession::settings() const { return s_->settings; }
const BatchOptions& TuneSession::options() const { return s_->options; }
int64_t TuneSession::run_id() const { return s_->run ? s_->run->id() : 0; }
const std::string& TuneSession::db_path() const { return s_->db_path; }
const db::Run* TuneSession::resumed() const { return s_->resumed ? &*s_->resumed : nullptr; }
const std::string& TuneSession::note() const { return s_->note; }

std::string TuneSession::target_name() const {
  if (s_->corpus) return s_->corpus->path.empty() ? s_->corpus->name : s_->corpus->path;
  return fmt::format("{} kernel{} ({})", s_->tasks.size(), s_->tasks.size() == 1 ? "" : "s",
                     s_->settings.what.workload);
}

int TuneSession::entries() const {
  return s_->corpus ? static_cast<int>(s_->corpus->entries.size()) : 0;
}

BatchReport TuneSession::run(BatchListener& listener) {
  State& s = *s_;
  internal_assert(!s.ran) << "a tuning session runs once";
  s.ran = true;
  BatchReport report = s.corpus ? run_batch(*s.corpus, s.options, s.store, listener)
                                : run_batch(s.tasks, s.settings.what.workload, s.options, s.store,
                                            listener); // a throw: the run is failed
  const SearchControl* control = s.options.settings.control;
  if (s.run)
    s.run->finish(control && control->cancelled(), report.count(BatchKernel::Outcome::failed) > 0);
  return report;
}

} // namespace beamlab::tuner

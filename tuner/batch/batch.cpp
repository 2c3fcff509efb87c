// Batch tuning; see batch.hpp.
#include "tuner/batch/batch.hpp"
#include "tuner/batch/whole_program.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "tuner/store/training.hpp"

namespace beamlab::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// The corpus's distinct kernels, timed with the heuristic's plans, in key order.
std::vector<BatchKernel> collect_kernels(const Corpus& corpus, int threads,
                                         const MachineLimits& limits) {
  std::map<std::string, BatchKernel> by_key; // hex key: a deterministic order
  HeuristicPolicy heuristic;
  for (const CorpusEntry& entry : corpus.entries) {
    Program out = build_entry(entry);
    Schedule schedule = out.schedule();
    ExecutionPlan plan =
        ExecutionPlan::prepare(schedule, out.inputs(), {.threads = threads, .policy = &heuristic});
    // A program over symbolic variables runs (is ranked) at each binding it is tuned at; a
    // kernel over them is timed as its tuning times it, a launch at each, summed.
    std::vector<std::vector<KernelProfile>> at;
    for (const VarValues& vars : entry_bindings(entry, plan)) {
      plan.bind(vars);
      at.push_back(plan.profile(3));
    }
    for (size_t i = 0; i < schedule.items.size(); ++i) {
      const ScheduleItem& item = plan.kernels()[i].item; // with its constant slots
      if (plan.kernels()[i].once)
        continue; // runs once, before a plan's first run: not worth a search
      BatchKernel& k = by_key[hash_hex(item.key)];
      if (k.occurrences == 0) {
        k.task = kernel_task(item, entry.tune_at);
        double run_ms = 0;
        for (size_t b = 0; b < (k.task.tune_at.empty() ? 1 : at.size()); ++b) run_ms += at[b][i].ms;
        std::optional<Roof> roof = roofline(limits, traffic_of(k.task), run_ms);
        k.roofline = roof ? std::min(1.0, roof->fraction) : 0;
      }
      if (k.workloads.find(entry.label) == std::string::npos)
        k.workloads += (k.workloads.empty() ? "" : ",") + entry.label;
      ++k.occurrences;
      for (const std::vector<KernelProfile>& p : at) k.profile_ms += p[i].ms;
    }
  }
  std::vector<BatchKernel> out;
  for (auto& [key, k] : by_key) out.push_back(std::move(k));
  return out;
}

void from_cache(BatchKernel& k, const CacheHit& hit) {
  k.outcome = BatchKernel::Outcome::cached;
  k.result.status = db::TuningStatus::done;
  k.result.winner_opts = hit.entry.opts;
  k.result.winner_ms = hit.entry.ms;
  k.result.heuristic_ms = hit.entry.heuristic_ms;
}

void from_result(BatchKernel& k, const TuneResult& r) {
  k.outcome = BatchKernel::Outcome::tuned;
  summarize(k.result, r);
  k.candidates = static_cast<int>(r.candidates.size());
  k.status_counts = r.status_counts();
  k.compile_cpu_s = r.compile_s;
}

/// A search finished before the run was interrupted: its journaled result.
void from_journal(BatchKernel& k, db::Database& db, const db::Tuning& t) {
  k.outcome = BatchKernel::Outcome::resumed;
  k.result = t;
  std::map<std::string, int> counts;
  for (const db::CandidateRow& c : db.candidates(t.id)) {
    ++k.candidates;
    ++counts[c.status];
  }
  for (const auto& [status, n] : counts)
    k.status_counts += (k.status_counts.empty() ? "" : ", ") + status + " " + std::to_string(n);
}

void failed(BatchKernel& k, const std::string& error) {
  k.outcome = BatchKernel::Outcome::failed;
  k.result.status = db::TuningStatus::failed;
  k.result.error = error;
}

/// Hands out the kernels to search, most promising first, each with its share of the time left.
class Scheduler {
public:
  Scheduler(std::vector<BatchKernel*> todo, const BatchOptions& o)
      : todo_(std::move(todo)), options_(o), start_(Clock::now()) {
    std::sort(todo_.begin(), todo_.end(), [](const BatchKernel* a, const BatchKernel* b) {
      return a->weight > b->weight || (a->weight == b->weight && a->index < b->index);
    });
    for (const BatchKernel* k : todo_) weight_left_ += k->weight;
  }

  /// The next kernel and its budget (null when none is left).
  BatchKernel* next() {
    std::lock_guard lock(mutex_);
    if (next_ >= todo_.size()) return nullptr;
    BatchKernel* k = todo_[next_++];
    double budget = options_.settings.time_budget_s;
    if (options_.budget_s > 0) {
      // The time left, shared by weight over the kernels not started (J at a time).
      double left = std::max(0.0, options_.budget_s - seconds_since(start_));
      double share = weight_left_ > 0 ? k->weight / weight_left_ : 1.0;
      budget = std::min(budget, left * share * std::max(1, options_.jobs));
    }
    weight_left_ -= k->weight;
    k->budget_s = budget;
    return k;
  }

private:
  std::vector<BatchKernel*> todo_;
  const BatchOptions& options_;
  Clock::time_point start_;
  std::mutex mutex_;
  size_t next_ = 0;
  double weight_left_ = 0;
};

} // namespace

const char* to_string(BatchKernel::Outcome o) {
  switch (o) {
  case BatchKernel::Outcome::pending: return "pending";
  case BatchKernel::Outcome::cached: return "cache";
  case BatchKernel::Outcome::tuned: return "tuned";
  case BatchKernel::Outcome::resumed: return "resumed";
  case BatchKernel::Outcome::failed: return "failed";
  }
  return "?";
}

int BatchReport::count(BatchKernel::Outcome o) const {
  return static_cast<int>(std::count_if(kernels.begin(), kernels.end(),
                                        [&](const BatchKernel& k) { return k.outcome == o; }));
}

int BatchReport::warm_started() const {
  return static_cast<int>(std::count_if(kernels.begin(), kernels.end(),
                                        [](const BatchKernel& k) { return k.warm_seeds > 0; }));
}

std::pair<int, int> parse_shard(const std::string& text, const std::string& what) {
  int i = -1, n = 0;
  size_t slash = text.find('/');
  bool ok = slash != std::string::npos;
  if (ok) {
    auto [p1, e1] = std::from_chars(text.data(), text.data() + slash, i);
    auto [p2, e2] = std::from_chars(text.data() + slash + 1, text.data() + text.size(), n);
    ok = e1 == std::errc{} && p1 == text.data() + slash && e2 == std::errc{} &&
         p2 == text.data() + text.size();
  }
  user_assert(ok && n >= 1 && i >= 0 && i < n)
      << what << " '" << text << "': expected i/N with 0 <= i < N, e.g. 0/4";
  return {i, n};
}

namespace {

// No database file (--cache off): a private one in memory, for the device's peaks.
db::Database open_main(const BatchOptions& options, const BatchStore& store) {
  return db::Database(store.db_path.empty() ? ":memory:" : store.db_path,
                      options.cache == CacheMode::read_only ? db::Database::Access::read_only
                                                            : db::Database::Access::read_write);
}

// Searches the report's pending kernels (those this run hasn't journaled and the cache can't
// answer), most promising first, `options.jobs` at a time.
void search_kernels(BatchReport& report, const BatchOptions& options, const BatchStore& store,
                    BatchListener& listener, db::Database& main_db, Clock::time_point t0) {
  double total_ms = 0;
  for (BatchKernel& k : report.kernels) total_ms += k.profile_ms;
  CacheContext cache;
  cache.db = &main_db;
  cache.mode = options.cache;
  std::string key = settings_key(options.settings, options.warm_start);
  std::vector<BatchKernel*> todo;
  std::map<std::string, db::Tuning> journaled; // this run's finished tunings, by kernel hash
  if (store.run_id > 0)
    for (const db::Tuning& t : main_db.tunings(store.run_id))
      if (auto kr = main_db.kernel(t.kernel_id); kr && t.status == db::TuningStatus::done)
        journaled.emplace(kr->hash, t);
  for (size_t i = 0; i < report.kernels.size(); ++i) {
    BatchKernel& k = report.kernels[i];
    k.index = static_cast<int>(i);
    double share = total_ms > 0 ? k.profile_ms / total_ms : 1.0;
    k.weight = share * std::max(0.05, 1 - k.roofline);
    if (auto t = journaled.find(hash_hex(k.task.key)); t != journaled.end()) {
      from_journal(k, main_db, t->second);
    } else if (auto ast = task_graph(k.task); ast) {
      if (auto hit = cache_lookup(cache, k.task, *ast, options.threads, key))
        from_cache(k, *hit);
      else
        todo.push_back(&k);
    } else {
      failed(k, ast.error());
    }
  }
  report.prepare_s = seconds_since(t0);
  report.warm_start = options.warm_start;
  listener.planned(report.kernels, options.budget_s);
  for (BatchKernel& k : report.kernels)
    if (k.outcome != BatchKernel::Outcome::pending) listener.finished(k);

  // Pruning ranks plans by a model of this device's journal, refitted as the run measures.
  std::unique_ptr<CostModel> model;
  if (options.settings.prune > 0 && options.settings.prune < 1 && !todo.empty()) {
    model = std::make_unique<CostModel>();
    add_journal(main_db, cache.device, options.threads, *model);
    model->fit();
  }
  Scheduler scheduler(todo, options);
  auto gate = std::make_shared<Gate>();
  int jobs = std::max(1, std::min<int>(options.jobs, static_cast<int>(todo.size())));
  auto job = [&](db::Database& db) {
    PoolOptions pool_options;
    int cores = usable_cores();
    pool_options.workers = options.workers > 0 ? options.workers : std::max(1, cores / jobs);
    report.sandboxes = pool_options.workers * jobs;
    pool_options.sandbox.threads = options.threads;
    pool_options.gate = gate;
    WorkerPool pool(pool_options);
    CacheContext ctx = cache; // the same device and compiler, this job's connection
    ctx.db = &db;
    ctx.run_id = store.run_id;
    ctx.source = store.source;
    listener.pool_started(pool);
    while (BatchKernel* k = scheduler.next()) {
      if (options.settings.control && options.settings.control->cancelled()) break;
      listener.started(*k);
      SearchSettings s = options.settings;
      s.threads = options.threads;
      s.time_budget_s = k->budget_s;
      s.model = model.get();
      std::vector<WarmSeed> warm;
      if (options.warm_start)
        if (auto ast = task_graph(k->task))
          warm = warm_start_seeds(ctx, k->task, *ast, options.threads, s);
      k->warm_seeds = static_cast<int>(warm.size());
      Expected<TuneResult> r = tune_journaled(
          k->task, k->workloads, pool, s, ctx, [&](const Event& e) { listener.event(*k, e); },
          warm);
      if (!r)
        failed(*k, r.error());
      else
        from_result(*k, *r);
      listener.finished(*k);
    }
    listener.pool_stopping(pool);
  };
  if (jobs == 1) {
    job(main_db);
  } else {
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(static_cast<size_t>(jobs));
    for (int j = 0; j < jobs; ++j)
      threads.emplace_back([&, j] {
        try {
          db::Database db(main_db.path(), main_db.read_only() ? db::Database::Access::read_only
                                                              : db::Database::Access::read_write);
          job(db);
        } catch (...) {
          errors[static_cast<size_t>(j)] = std::current_exception();
        }
      });
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  report.wall_s = seconds_since(t0);
}

} // namespace

BatchReport run_batch(const Corpus& corpus, const BatchOptions& options, const BatchStore& store,
                      BatchListener& listener) {
  auto t0 = Clock::now();
  BatchReport report;
  db::Database main_db = open_main(options, store);
  int64_t device_id =
      store.db_path.empty() ? main_db.upsert_device(this_device()) : store.device_id;
  report.limits = device_limits(main_db, device_id);
  std::vector<BatchKernel> all = collect_kernels(corpus, options.threads, report.limits);
  report.total_kernels = static_cast<int>(all.size());
  for (size_t i = 0; i < all.size(); ++i)
    if (static_cast<int>(i) % options.shards == options.shard)
      report.kernels.push_back(std::move(all[i]));
  search_kernels(report, options, store, listener, main_db, t0);
  // Tuned is never slower: each program whole, the batch's plans against the heuristic's.
  if (!(options.settings.control && options.settings.control->cancelled())) {
    auto t1 = Clock::now();
    report.programs = check_programs(corpus, report, options, main_db);
    report.programs_s = seconds_since(t1);
    report.wall_s = seconds_since(t0);
  }
  return report;
}

BatchReport run_batch(const std::vector<KernelTask>& tasks, const std::string& workload,
                      const BatchOptions& options, const BatchStore& store,
                      BatchListener& listener) {
  auto t0 = Clock::now();
  BatchReport report;
  db::Database main_db = open_main(options, store);
  for (const KernelTask& t : tasks) {
    BatchKernel& k = report.kernels.emplace_back();
    k.task = t;
    k.workloads = workload;
    k.occurrences = 1;
  }
  report.total_kernels = static_cast<int>(tasks.size());
  search_kernels(report, options, store, listener, main_db, t0);
  return report;
}

} // namespace beamlab::tuner

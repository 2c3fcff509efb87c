// A GUI tuning run on its own thread; see tuning_session.hpp.
#include "gui/tuning_session.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace beamlab::gui {

namespace {

LiveEvent live(LiveEvent::Kind kind, std::string kernel) {
  LiveEvent e;
  e.kind = kind;
  e.kernel = std::move(kernel);
  return e;
}

tuner::BatchKernel batch_kernel(const KernelTask& task) {
  tuner::BatchKernel k;
  k.task = task;
  return k;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

class TuningSession::Listener : public tuner::BatchListener {
public:
  explicit Listener(TuningSession& s) : s_(s) {}
  void started(const tuner::BatchKernel& k) override {
    s_.push(live(LiveEvent::Kind::kernel_started, k.task.name));
  }
  void event(const tuner::BatchKernel& k, const tuner::Event& e) override {
    s_.push_event(k.task.name, e);
  }
  void finished(const tuner::BatchKernel& k) override {
    LiveEvent e = live(LiveEvent::Kind::kernel_finished, k.task.name);
    e.status = tuner::to_string(k.outcome);
    e.opts = k.opts;
    e.detail = k.error;
    e.ms = k.tuned_ms;
    s_.push(std::move(e));
  }
  void pool_started(tuner::WorkerPool& pool) override {
    std::lock_guard lock(s_.mutex_);
    s_.pool_ = &pool;
  }
  void pool_stopping(tuner::WorkerPool&) override {
    std::lock_guard lock(s_.mutex_);
    s_.pool_ = nullptr;
  }

private:
  TuningSession& s_;
};

TuningSession::TuningSession(SessionOptions options, KernelTask task)
    : options_(std::move(options)), task_(std::move(task)) {}

TuningSession::TuningSession(SessionOptions options, std::string corpus_path)
    : options_(std::move(options)), corpus_(std::move(corpus_path)) {}

TuningSession::~TuningSession() {
  control_.cancel();
  if (thread_.joinable()) thread_.join();
}

void TuningSession::start() {
  t0_ = now_s();
  thread_ = std::thread([this] { run(); });
}

std::string TuningSession::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

std::vector<LiveEvent> TuningSession::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(events_, {});
}

std::vector<tuner::SlotActivity> TuningSession::activity() {
  std::lock_guard lock(mutex_);
  return pool_ ? pool_->activity() : std::vector<tuner::SlotActivity>{};
}

void TuningSession::push(LiveEvent e) {
  e.t = now_s() - t0_;
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(e));
}

void TuningSession::push_event(const std::string& kernel, const tuner::Event& e) {
  using K = tuner::Event::Kind;
  LiveEvent out;
  out.kernel = kernel;
  out.best = e.best_ms;
  out.iteration = e.iteration;
  out.detail = e.detail;
  if (e.candidate) {
    out.id = e.candidate->id;
    out.parent = e.candidate->parent;
    out.iteration = e.candidate->iteration;
    out.status = tuner::to_string(e.candidate->status);
    out.opts = to_string(e.candidate->opts);
    out.ms = e.candidate->best_ms();
  }
  switch (e.kind) {
  case K::settled: out.kind = LiveEvent::Kind::settled; break;
  case K::iteration: out.kind = LiveEvent::Kind::iteration; break;
  case K::best: out.kind = LiveEvent::Kind::best; break;
  case K::restarted: out.kind = LiveEvent::Kind::restarted; break;
  default: return;
  }
  push(std::move(out));
}

void TuningSession::run() {
  Listener listener(*this);
  try {
    db::Database db(options_.db_path);
    int64_t device = db.upsert_device(tuner::this_device());
    int threads = options_.threads > 0 ? options_.threads
                                       : std::max(1, int(std::thread::hardware_concurrency()));
    tuner::SearchSettings s;
    s.beam = options_.beam;
    s.threads = threads;
    s.time_budget_s = options_.budget_s;
    s.control = &control_;
    std::string what = task_ ? task_->name : corpus_;
    std::string host = tuner::host_name();
    db::NewRun nr{.device_id = device,
                  .kind = db::RunKind::tune,
                  .label = "gui",
                  .command = fmt::format("beamlab-gui: tune {} --beam {} --budget {:g}", what,
                                         options_.beam, options_.budget_s),
                  .settings = s.to_json().dump(),
                  .git_revision = "",
                  .host = host};
    run_id_ = db.begin_run(nr);
    // The user asked for a search: search even when the cache has a plan, and store the winner.
    tuner::CacheContext ctx;
    ctx.db = &db;
    ctx.mode = tuner::CacheMode::ignore;
    ctx.run_id = run_id_;
    ctx.source = fmt::format("run {} on host {} (gui)", run_id_.load(), host);
    bool ok = true;
    if (task_) {
      tuner::PoolOptions po;
      po.workers = options_.workers;
      po.sandbox.threads = threads;
      tuner::WorkerPool pool(po);
      listener.pool_started(pool);
      listener.started(batch_kernel(*task_));
      auto r = tuner::tune_journaled(*task_, "gui", pool, s, ctx,
                                     [&](const tuner::Event& e) { push_event(task_->name, e); });
      listener.pool_stopping(pool);
      tuner::BatchKernel k = batch_kernel(*task_);
      k.outcome = r ? tuner::BatchKernel::Outcome::tuned : tuner::BatchKernel::Outcome::failed;
      if (r)
        k.opts = to_string(r->best().opts), k.tuned_ms = r->winner_ms;
      else
        k.error = r.error(), ok = false;
      listener.finished(k);
    } else {
      tuner::Corpus corpus = tuner::load_corpus(corpus_);
      tuner::BatchOptions bo;
      bo.settings = s;
      bo.budget_s = options_.budget_s;
      bo.threads = threads;
      bo.workers = options_.workers;
      bo.cache = tuner::CacheMode::ignore;
      tuner::BatchStore store{options_.db_path, run_id_, device, ctx.source};
      tuner::BatchReport report = tuner::run_batch(corpus, bo, store, listener);
      ok = report.count(tuner::BatchKernel::Outcome::failed) == 0;
    }
    // A cancelled run is kept as interrupted (as the CLI's Ctrl-C), never as done.
    db.end_run(run_id_, control_.cancelled() ? db::RunStatus::interrupted
                        : ok                 ? db::RunStatus::done
                                             : db::RunStatus::failed);
  } catch (const std::exception& e) {
    {
      std::lock_guard lock(mutex_);
      error_ = e.what();
    }
    if (run_id_ > 0) try {
        db::Database(options_.db_path).end_run(run_id_, db::RunStatus::failed);
      } catch (const std::exception&) {
        // The database itself is the trouble; the error above says so.
      }
  }
  LiveEvent done = live(LiveEvent::Kind::message, "");
  done.detail = error().empty() ? "finished" : error();
  push(std::move(done));
  finished_ = true;
}

} // namespace beamlab::gui

// A GUI tuning run on its own thread; see tuning_session.hpp.
#include "gui/tuning_session.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "tuner/batch/session.hpp"

namespace beamlab::gui {

namespace {

LiveEvent live(LiveEvent::Kind kind, std::string kernel) {
  LiveEvent e;
  e.kind = kind;
  e.kernel = std::move(kernel);
  return e;
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
    s_.push_event(k.task, e);
  }
  void finished(const tuner::BatchKernel& k) override {
    LiveEvent e = live(LiveEvent::Kind::kernel_finished, k.task.name);
    e.status = tuner::to_string(k.outcome);
    e.opts = k.result.winner_opts;
    e.detail = k.result.error;
    e.ms = k.tuned_ms();
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

TuningSession::TuningSession(SessionOptions options, std::vector<KernelTask> tasks)
    : options_(std::move(options)), tasks_(std::move(tasks)) {}

TuningSession::TuningSession(SessionOptions options, std::string corpus_path)
    : options_(std::move(options)), corpus_(std::move(corpus_path)) {}

TuningSession::TuningSession(SessionOptions options, int64_t resume_run)
    : options_(std::move(options)), resume_run_(resume_run) {}

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

void TuningSession::push_event(const KernelTask& task, const tuner::Event& e) {
  using K = tuner::Event::Kind;
  LiveEvent out;
  out.kernel = task.name;
  out.hash = fmt::format("{:016x}", task.key);
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
    tuner::TuneRequest request;
    request.db_path = options_.db_path;
    request.control = &control_;
    if (resume_run_ > 0) {
      request.resume = resume_run_;
      request.resume_word = "resume";
    } else {
      tuner::TuneSettings& st = request.settings;
      st.door = "gui";
      st.beam = options_.beam;
      st.budget_s = options_.budget_s;
      st.kernel_budget_s = options_.budget_s;
      st.threads = options_.threads;
      st.workers = options_.workers;
      // The user asked for a search: search even when the cache has a plan, and store the
      // winner.
      st.cache = "ignore";
      st.label = "gui";
      if (!tasks_.empty()) {
        request.tasks = tasks_;
        st.what.workload = "gui";
      } else {
        request.corpus = tuner::load_corpus(corpus_);
        st.what.target = corpus_;
      }
      request.command = fmt::format("beamlab-gui: tune {} --beam {} --budget {:g}",
                                    tasks_.size() == 1 ? tasks_[0].name
                                    : tasks_.empty()   ? corpus_
                                                       : fmt::format("{} kernels", tasks_.size()),
                                    options_.beam, options_.budget_s);
    }
    tuner::TuneSession session(std::move(request));
    run_id_ = session.run_id();
    if (!session.note().empty()) {
      LiveEvent note = live(LiveEvent::Kind::message, "");
      note.detail = session.note();
      push(std::move(note));
    }
    // A cancelled run is kept as interrupted (as the CLI's Ctrl-C), never as done.
    session.run(listener);
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    error_ = e.what();
  }
  LiveEvent done = live(LiveEvent::Kind::message, "");
  done.detail = error().empty() ? "finished" : error();
  push(std::move(done));
  finished_ = true;
}

} // namespace beamlab::gui

// The GUI with a big run: 10,000 candidates of one search loaded from the database into the
// views (the query, the candidates table sorted, the kernel view and roofline, the live chart).
// Run: build/release/bin/beamlab-bench --benchmark_filter=Gui
#include <cstdlib>
#include <filesystem>

#include <QApplication>
#include <benchmark/benchmark.h>

#include "gui/kernel_view.hpp"
#include "gui/live_view.hpp"
#include "gui/roofline_view.hpp"
#include "tuner/store/journal.hpp"

namespace beamlab::gui {
namespace {

constexpr int kCandidates = 10000;

QApplication& app() {
  static int argc = 1;
  static char name[] = "beamlab-bench";
  static char* argv[] = {name, nullptr};
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  static QApplication a(argc, argv);
  return a;
}

// A database with one search of 10,000 candidates (3 samples each), made once per process.
struct BigRun {
  std::string path;
  int64_t tuning = 0;
  BigRun() {
    path = (std::filesystem::temp_directory_path() /
            ("beamlab_bench_gui_" + std::to_string(::getpid()) + ".db"))
               .string();
    db::Database db(path);
    int64_t dev = db.upsert_device(tuner::this_device());
    MachineLimits limits;
    limits.threads = 2;
    limits.fma_f32_gflops = 200;
    limits.levels = {{"L2", 1 << 20, 1 << 19, 80, 60}, {"DRAM", 0, 1 << 28, 40, 30}};
    db.set_device_limits(dev, limits);
    int64_t run = db.begin_run({.device_id = dev,
                                .kind = db::RunKind::tune,
                                .label = "bench",
                                .command = "bench",
                                .settings = "{}",
                                .git_revision = "",
                                .host = "bench"});
    KernelTask task = kernel_task(
        Tensor::rand({256, 256}, 1).matmul(Tensor::rand({256, 256}, 2)).schedule().items.at(0));
    db::Tuning t =
        db.open_tuning(run, db.upsert_kernel(tuner::kernel_record(task)), 2, "bench", "{}", "", 0);
    std::vector<db::CandidateRow> rows;
    for (int i = 0; i < kCandidates; ++i) {
      db::CandidateRow c;
      c.seq = i;
      c.iteration = i / 100;
      c.parent = i > 0 ? (i - 1) / 4 : -1;
      c.opts = "UPCAST(1," + std::to_string(1 << (i % 6)) + ") THREAD(0," +
               std::to_string(i % 7 + 1) + ")";
      c.status = i % 10 == 0 ? "slow" : i % 97 == 0 ? "crashed" : "ok";
      double ms = 0.5 + (i * 7919 % 1000) / 500.0;
      if (c.status != "crashed") c.samples_ms = {ms, ms * 1.01, ms * 0.99};
      rows.push_back(std::move(c));
    }
    db.save_candidates(t.id, rows);
    t.status = db::TuningStatus::done;
    t.winner_opts = rows[1].opts;
    t.winner_ms = 0.5;
    t.heuristic_ms = 1.0;
    db.finish_tuning(t);
    db.end_run(run, db::RunStatus::done);
    tuning = t.id;
  }
  ~BigRun() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  }
};

BigRun& big_run() {
  static BigRun r;
  return r;
}

void BM_GuiLoadRunQuery(benchmark::State& state) {
  BigRun& r = big_run();
  for (auto _ : state) {
    auto d = load_tuning(r.path, r.tuning);
    if (!d || d->candidates.size() != kCandidates) state.SkipWithError("load failed");
    benchmark::DoNotOptimize(d);
  }
  state.counters["candidates"] = kCandidates;
}
BENCHMARK(BM_GuiLoadRunQuery)->Unit(benchmark::kMillisecond);

// The kernel view (candidates table sorted, history chart; the IR compiles on a worker thread)
// and the roofline with every candidate as a point.
void BM_GuiShowRunInViews(benchmark::State& state) {
  app();
  BigRun& r = big_run();
  auto d = load_tuning(r.path, r.tuning);
  KernelView view;
  RoofLineView roofline;
  for (auto _ : state) {
    view.set_tuning(*d, r.path);
    roofline.set_data(*d, {d->row});
    QApplication::processEvents();
  }
  state.counters["points"] = roofline.candidate_points();
}
BENCHMARK(BM_GuiShowRunInViews)->Unit(benchmark::kMillisecond);

// The live chart taking 10,000 settled candidates in the 10 Hz timer's batches of 100.
void BM_GuiLiveChart10k(benchmark::State& state) {
  app();
  for (auto _ : state) {
    LiveView live;
    for (int b = 0; b < kCandidates / 100; ++b) {
      std::vector<LiveEvent> batch;
      for (int i = b * 100; i < (b + 1) * 100; ++i) {
        LiveEvent e;
        e.kernel = "r_256_256_256";
        e.id = i;
        e.parent = i / 4;
        e.iteration = i / 100;
        e.status = i % 10 == 0 ? "slow" : "ok";
        e.ms = 0.5 + (i * 7919 % 1000) / 500.0;
        e.t = i * 0.01;
        batch.push_back(e);
      }
      LiveEvent it;
      it.kind = LiveEvent::Kind::iteration;
      it.kernel = "r_256_256_256";
      batch.push_back(it);
      live.apply(batch);
      QApplication::processEvents();
    }
    benchmark::DoNotOptimize(live.points(StatusClass::ok));
  }
}
BENCHMARK(BM_GuiLiveChart10k)->Unit(benchmark::kMillisecond)->Iterations(1);

} // namespace
} // namespace beamlab::gui

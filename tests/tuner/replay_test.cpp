// Offline replay of journaled searches (tuner/search/recorded.hpp, tuner/store/recording.hpp):
// real searches of a few kernels are journaled, then played back against their journal. The
// same strategy must retrace each search exactly (every candidate, every status, the winner)
// without a worker; a plan the journal lacks is counted, not invented; the clock is the
// recording's.
#include <gtest/gtest.h>

#include "tests/temp_dir.hpp"

#include "db/database.hpp"
#include "db/sqlite.hpp"
#include "tuner/store/journal.hpp"
#include "tuner/store/recording.hpp"

#include <set>

namespace beamlab::tuner {
namespace {

class ReplayTest : public beamlab::test_support::TempDirTest {
protected:
  // Journals one real search of each kernel in a fresh database; the run's id.
  int64_t tune_all(const std::vector<Tensor>& programs, const SearchSettings& settings) {
    db_ = std::make_unique<db::Database>(file("replay.db"));
    int64_t run = db_->begin_run({db_->upsert_device(this_device()), db::RunKind::tune, "", "test",
                                  R"({"workers": 2})", "", db::host_name()});
    PoolOptions o;
    o.workers = 2;
    o.sandbox.threads = 2;
    WorkerPool pool(o);
    CacheContext ctx;
    ctx.db = db_.get();
    ctx.mode = CacheMode::ignore; // journals every search (off would journal none)
    ctx.run_id = run;
    for (const Tensor& t : programs)
      for (const ScheduleItem& item : t.schedule().items) {
        auto r = tune_journaled(kernel_task(item), "test", pool, settings, ctx);
        EXPECT_TRUE(r) << r.error();
      }
    db_->end_run(run, db::RunStatus::done);
    return run;
  }
  std::unique_ptr<db::Database> db_;
};

SearchSettings small_search() {
  SearchSettings s;
  s.beam = 2;
  s.max_iterations = 3;
  s.final_rounds = 2;
  return s;
}

std::vector<Tensor> programs() {
  return {Tensor::rand({32, 48}, 1).matmul(Tensor::rand({48, 64}, 2)),
          Tensor::rand({64, 256}, 3).sum({1}), (Tensor::rand({128, 96}, 4) * 2.0f).exp()};
}

TEST_F(ReplayTest, TheSameStrategyRetracesEachSearchExactly) {
  int64_t run = tune_all(programs(), small_search());
  std::vector<db::Tuning> tunings = db_->tunings(run);
  ASSERT_EQ(tunings.size(), 3u);
  for (const db::Tuning& t : tunings) {
    auto rec = load_recording(*db_, t.id);
    ASSERT_TRUE(rec) << rec.error();
    auto replay = replay_search(*rec, rec->settings, calibrate(*rec));
    ASSERT_TRUE(replay) << replay.error();
    const TuneResult& r = replay->result;
    EXPECT_EQ(replay->missing, 0) << t.id;
    // The search's winner; the tuning's too unless the in-process check overruled it.
    EXPECT_EQ(beamlab::to_string(r.best().opts), rec->search_winner) << t.id;
    if (t.fidelity.rfind("overruled", 0) != 0) EXPECT_EQ(rec->search_winner, t.winner_opts);
    EXPECT_EQ(r.iterations, t.iterations) << t.id;
    EXPECT_EQ(r.stop_reason, t.stop_reason) << t.id;
    // Every candidate, in order, with the status the live search gave it.
    std::vector<db::CandidateRow> rows = db_->candidates(t.id);
    ASSERT_EQ(r.candidates.size(), rows.size()) << t.id;
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(beamlab::to_string(r.candidates[i].opts), rows[i].opts) << t.id << " #" << i;
      EXPECT_EQ(to_string(r.candidates[i].status), rows[i].status)
          << t.id << " #" << i << ", proposed in iteration " << rows[i].iteration << ", settled in "
          << rows[i].settled_in << " (replayed: " << r.candidates[i].settled_in << ")";
      EXPECT_EQ(r.candidates[i].parent, rows[i].parent) << t.id << " #" << i;
    }
    // Calibrated, the replay of the recorded strategy takes the recorded wall time.
    EXPECT_NEAR(r.wall_s, t.wall_s, 1e-6 + 1e-9 * t.wall_s) << t.id;
  }
}

// The search ranks the unoptimized kernel by the one time its reference runs gave; the samples
// the finalists' rounds append to it later (faster ones, on a loaded machine) must not move it
// up the replay's first beam.
TEST_F(ReplayTest, TheReferenceRanksByItsOwnTimeNotByTheRoundsItJoinedLater) {
  int64_t run = tune_all({programs()[0]}, small_search());
  db::Tuning t = db_->tunings(run).at(0);
  auto rec = load_recording(*db_, t.id);
  ASSERT_TRUE(rec) << rec.error();
  double fastest = 0;
  for (const auto& [opts, c] : rec->recording.candidates)
    if (!c.samples_ms.empty() && (fastest <= 0 || c.best_ms() < fastest)) fastest = c.best_ms();
  Candidate& reference = rec->recording.candidates.at("");
  ASSERT_FALSE(reference.samples_ms.empty());
  reference.samples_ms.insert(reference.samples_ms.end(), {fastest / 10, fastest / 10});
  auto replay = replay_search(*rec, rec->settings, {});
  ASSERT_TRUE(replay) << replay.error();
  std::vector<db::CandidateRow> rows = db_->candidates(t.id);
  const TuneResult& r = replay->result;
  ASSERT_EQ(r.candidates.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(beamlab::to_string(r.candidates[i].opts), rows[i].opts) << "#" << i;
    EXPECT_EQ(r.candidates[i].parent, rows[i].parent) << "#" << i;
  }
}

TEST_F(ReplayTest, APlanTheJournalLacksIsCountedNotInvented) {
  int64_t run = tune_all({programs()[0]}, small_search());
  db::Tuning t = db_->tunings(run).at(0);
  auto rec = load_recording(*db_, t.id);
  ASSERT_TRUE(rec) << rec.error();
  // Forget one timed candidate of the search that isn't the winner or the heuristic.
  std::string forgotten;
  for (const db::CandidateRow& row : db_->candidates(t.id))
    if (row.iteration >= 1 && row.opts != t.winner_opts && row.opts != t.heuristic_opts &&
        (row.status == "ok" || row.status == "slow")) {
      forgotten = row.opts;
      break;
    }
  ASSERT_FALSE(forgotten.empty());
  rec->recording.candidates.erase(forgotten);
  auto replay = replay_search(*rec, rec->settings, {});
  ASSERT_TRUE(replay) << replay.error();
  EXPECT_GE(replay->missing, 1);
  for (const Candidate& c : replay->result.candidates)
    if (beamlab::to_string(c.opts) == forgotten) {
      EXPECT_EQ(c.status, Status::error);
      EXPECT_EQ(c.error, "not in the recording");
      EXPECT_TRUE(c.samples_ms.empty());
    }
}

TEST_F(ReplayTest, TheClockIsTheRecordingsAndAWiderBeamCostsMore) {
  int64_t run = tune_all({programs()[0]}, small_search());
  auto rec = load_recording(*db_, db_->tunings(run).at(0).id);
  ASSERT_TRUE(rec) << rec.error();
  auto bare = replay_search(*rec, rec->settings, {});
  auto slow = replay_search(*rec, rec->settings, {2.0, 0.5});
  ASSERT_TRUE(bare && slow);
  // Twice the estimate plus half a second per request: the same search, a later clock.
  EXPECT_EQ(bare->result.candidates.size(), slow->result.candidates.size());
  EXPECT_GT(slow->result.wall_s, 2 * bare->result.wall_s);
  // The best-so-far only improves, in time order.
  for (size_t i = 1; i < slow->curve.size(); ++i) {
    EXPECT_GE(slow->curve[i].first, slow->curve[i - 1].first);
    EXPECT_LT(slow->curve[i].second, slow->curve[i - 1].second);
  }
  // A greedy search of the same recording measures no more than the recorded beam of two.
  SearchSettings greedy = rec->settings;
  greedy.beam = 1;
  auto narrow = replay_search(*rec, greedy, {});
  ASSERT_TRUE(narrow);
  EXPECT_LE(narrow->result.candidates.size() - static_cast<size_t>(narrow->missing),
            bare->result.candidates.size());
}

// A model taught the opposite of the truth: it ranks the slowest plans first.
std::unique_ptr<CostModel> adversary(const RecordedTuning& r, const UOpPtr& ast) {
  auto model = std::make_unique<CostModel>();
  Features k = kernel_features(ast);
  for (const auto& [text, c] : r.recording.candidates)
    if (c.status == Status::ok && !c.samples_ms.empty())
      if (auto x = plan_features(ast, k, c.opts, r.recording.threads))
        model->add(r.task.key, *x, 1.0 / c.best_ms());
  EXPECT_TRUE(model->fit());
  return model;
}

TEST_F(ReplayTest, PruningNeverDropsTheIncumbentAndItsWinnerIsALocalOptimum) {
  SearchSettings wide = small_search();
  wide.max_iterations = 4;
  int64_t run = tune_all({programs()[0]}, wide);
  auto rec = load_recording(*db_, db_->tunings(run).at(0).id);
  ASSERT_TRUE(rec) << rec.error();
  auto ast = task_graph(rec->task);
  ASSERT_TRUE(ast) << ast.error();
  for (bool honest : {true, false}) {
    SCOPED_TRACE(honest ? "a model of the recording" : "an adversarial model");
    std::unique_ptr<CostModel> model;
    if (honest) {
      model = std::make_unique<CostModel>();
      Features k = kernel_features(*ast);
      for (const auto& [text, c] : rec->recording.candidates)
        if (c.status == Status::ok && !c.samples_ms.empty())
          if (auto x = plan_features(*ast, k, c.opts, rec->recording.threads))
            model->add(rec->task.key, *x, c.best_ms());
      ASSERT_TRUE(model->fit());
    } else {
      model = adversary(*rec, *ast);
    }
    SearchSettings pruned = rec->settings;
    pruned.prune = 0.25;
    pruned.model = model.get();
    std::vector<double> bests;
    auto replay = replay_search(*rec, pruned, {}, [&](const Event& e) {
      if (e.kind == Event::Kind::best && e.best_ms > 0) bests.push_back(e.best_ms);
    });
    ASSERT_TRUE(replay) << replay.error();
    const TuneResult& r = replay->result;
    EXPECT_GT(r.pruned, 0);
    // The heuristic is measured before any ranking, and the incumbent only ever improves.
    EXPECT_EQ(r.candidates.at(size_t(r.heuristic)).status, Status::ok);
    for (size_t i = 1; i < bests.size(); ++i) EXPECT_LE(bests[i], bests[i - 1]) << i;
    // Whatever the model said, every neighbour of the search's best plan was measured (or
    // screened out as invalid, over a cap, or the same kernel as one measured). The best as the
    // search ranked it: by its search samples, not the finalists' re-measurement rounds
    // appended after them (a finalist's round can come out faster than the full passes' best,
    // which once failed this check one run in ten).
    auto search_best = [&](const Candidate& c) {
      size_t n = std::min(c.samples_ms.size(), static_cast<size_t>(std::max(1, pruned.runs)));
      return *std::min_element(c.samples_ms.begin(), c.samples_ms.begin() + n);
    };
    const Candidate* best = nullptr;
    for (const Candidate& c : r.candidates)
      if (c.status == Status::ok && !c.samples_ms.empty() &&
          (!best || search_best(c) < search_best(*best)))
        best = &c;
    ASSERT_NE(best, nullptr);
    std::set<std::string> measured;
    std::set<uint64_t> measured_hashes;
    for (const Candidate& c : r.candidates) {
      measured.insert(beamlab::to_string(c.opts));
      if (auto h = plan_hash(*ast, c.opts)) measured_hashes.insert(*h);
    }
    for (const std::vector<Opt>& n : neighbours(*ast, best->opts, r.threads)) {
      auto h = plan_hash(*ast, n);
      if (!h || measured.count(beamlab::to_string(n)) || measured_hashes.count(*h)) continue;
      auto k = apply_opts(*ast, n);
      ASSERT_TRUE(k);
      int64_t nodes = 0;
      for (const UOpPtr& stage : k->stages) nodes += static_cast<int64_t>(toposort(stage).size());
      bool over_caps = k->lanes > pruned.max_lanes || nodes * k->lanes > pruned.max_ops;
      EXPECT_TRUE(over_caps) << "neighbour " << beamlab::to_string(n) << " of the best plan "
                             << beamlab::to_string(best->opts) << " was never measured";
    }
  }
}

TEST_F(ReplayTest, OnlyAFinishedSearchCanBeReplayed) {
  int64_t run = tune_all({programs()[0]}, small_search());
  auto none = load_recording(*db_, 999);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), "tuning 999 is not in the journal");
  db_->connection().exec("UPDATE tunings SET status = 'running'");
  auto running = load_recording(*db_, db_->tunings(run).at(0).id);
  ASSERT_FALSE(running);
  EXPECT_NE(running.error().find("did not finish"), std::string::npos) << running.error();
}

} // namespace
} // namespace beamlab::tuner

// The journal as training data, on a real database: two small kernels searched by the tuner
// in sandboxed workers and journaled, then read back as samples (the candidates timed to the end
// and those stopped early; labels from the search-time samples only), filtered by device,
// threads, run, kernel and status, with plans tried by hand left out.
#include <gtest/gtest.h>

#include "tests/temp_dir.hpp"

#include <algorithm>

#include "tuner/store/journal.hpp"
#include "tuner/store/run.hpp"
#include "tuner/store/training.hpp"

namespace beamlab::tuner {
namespace {

class TrainingTest : public beamlab::test_support::TempDirTest {
protected:
  /// Tunes two kernels at 2 threads in one run of a fresh database, and tries one plan by hand.
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = std::make_unique<db::Database>(file("t.db"));
    ActiveRun run = ActiveRun::begin(*db_, {db::RunKind::tune, "t", "test", "{}", ""});
    run_id_ = run.id();
    PoolOptions pool_options;
    pool_options.workers = 2;
    pool_options.sandbox.threads = 2;
    WorkerPool pool(pool_options);
    SearchSettings s;
    s.beam = 1;
    s.max_iterations = 2;
    s.final_rounds = 2;
    s.runs = 3;
    CacheContext ctx;
    ctx.db = db_.get();
    ctx.run_id = run_id_;
    std::vector<Tensor> programs = {Tensor::rand({32, 48}, 1).matmul(Tensor::rand({48, 64}, 2)),
                                    (Tensor::rand({64, 1024}, 3) * 2.0f).exp().sum({1})};
    for (const Tensor& t : programs) {
      KernelTask task = kernel_task(t.schedule().items.at(0));
      Expected<TuneResult> r = tune_journaled(task, "test", pool, s, ctx);
      ASSERT_TRUE(r) << r.error();
      hashes_.push_back(hash_hex(task.key));
      if (hashes_.size() == 1) journal_hand_tried(*db_, run_id_, task, *r, r->best());
    }
    run.finish(false, false);
  }

  std::unique_ptr<db::Database> db_;
  int64_t run_id_ = 0;
  std::vector<std::string> hashes_;
};

TEST_F(TrainingTest, EveryMeasuredPlanIsASampleLabelledByItsSearchSamples) {
  Journal j = read_journal(*db_, this_device().fingerprint(), 2);
  ASSERT_EQ(j.kernels.size(), 2u);
  EXPECT_EQ(j.stats.kernels, 2);
  EXPECT_EQ(j.stats.tunings, 2); // the plans tried by hand are no search
  EXPECT_EQ(j.stats.unusable, 0);
  EXPECT_GT(j.stats.seconds, 0);
  int64_t samples = 0;
  bool saw_remeasured = false;
  for (const db::Tuning& t : db_->tunings(run_id_)) {
    if (tried_by_hand(t)) continue;
    std::string hash = db_->kernel(t.kernel_id)->hash;
    auto k = std::find_if(j.kernels.begin(), j.kernels.end(),
                          [&](const JournalKernel& jk) { return jk.hash == hash; });
    ASSERT_NE(k, j.kernels.end());
    EXPECT_EQ(hash_hex(k->key), hash);
    size_t timed = 0;
    for (const db::CandidateRow& c : db_->candidates(t.id)) {
      if ((c.status != "ok" && c.status != "slow") || c.samples_ms.empty()) continue;
      ++timed;
      auto s = std::find_if(k->samples.begin(), k->samples.end(),
                            [&](const JournalSample& js) { return js.opts == c.opts; });
      ASSERT_NE(s, k->samples.end()) << c.opts;
      // The finalists' re-measurement adds samples; the label is the fastest of the first 3.
      saw_remeasured |= c.samples_ms.size() > 3;
      size_t n = std::min<size_t>(3, c.samples_ms.size());
      EXPECT_EQ(s->ms, *std::min_element(c.samples_ms.begin(), c.samples_ms.begin() + n));
      EXPECT_EQ(s->x.size(), feature_names().size());
      EXPECT_EQ(s->run_id, run_id_);
    }
    EXPECT_EQ(k->samples.size(), timed);
    EXPECT_GE(timed, 2u); // the reference and the heuristic at least
    samples += static_cast<int64_t>(timed);
  }
  EXPECT_TRUE(saw_remeasured);
  EXPECT_GE(samples, 4);
  EXPECT_EQ(j.stats.samples, samples);
}

TEST_F(TrainingTest, FiltersByDeviceThreadsRunAndKernel) {
  std::string device = this_device().fingerprint();
  EXPECT_TRUE(read_journal(*db_, "0123456789abcdef", 2).kernels.empty());
  EXPECT_TRUE(read_journal(*db_, device, 4).kernels.empty());
  EXPECT_TRUE(read_journal(*db_, device, 2, {.exclude_runs = {run_id_}}).kernels.empty());
  Journal one = read_journal(*db_, device, 2, {.exclude_kernels = {hashes_[0]}});
  ASSERT_EQ(one.kernels.size(), 1u);
  EXPECT_EQ(one.kernels[0].hash, hashes_[1]);
  // Without the candidates stopped early, only those timed to the end.
  Journal all = read_journal(*db_, device, 2);
  JournalFilter ok_only;
  ok_only.exclude_slow = true;
  int64_t ok = 0;
  for (const db::Tuning& t : db_->tunings(run_id_))
    for (const db::CandidateRow& c : db_->candidates(t.id))
      ok += !tried_by_hand(t) && c.status == "ok" && !c.samples_ms.empty();
  EXPECT_EQ(read_journal(*db_, device, 2, ok_only).stats.samples, ok);
  EXPECT_LE(ok, all.stats.samples);
  // Thread counts of searches only (the plans tried by hand ran at 2 as well).
  EXPECT_EQ(journal_thread_counts(*db_, device), (std::vector<std::pair<int, int>>{{2, 2}}));
}

TEST_F(TrainingTest, LoadsAModelThatRanks) {
  CostModel model;
  TrainingStats s = add_journal(*db_, this_device().fingerprint(), 2, model);
  EXPECT_EQ(static_cast<int64_t>(model.size()), s.samples);
  EXPECT_EQ(model.kernels(), 2);
  ASSERT_TRUE(model.fit());
  Journal j = read_journal(*db_, this_device().fingerprint(), 2);
  std::vector<Features> rows;
  for (const JournalSample& x : j.kernels[0].samples) rows.push_back(x.x);
  EXPECT_EQ(model.predict(rows).size(), rows.size());
}

} // namespace
} // namespace beamlab::tuner

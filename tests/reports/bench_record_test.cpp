// The benchmark record end to end: a real corpus run with real plans and the real beamlab-bench
// suite (one fast benchmark), stored and read back as a report's measurements.
#include <gtest/gtest.h>

#include "db/database.hpp"
#include "engine/support/error.hpp"
#include "reports/bench_record.hpp"
#include "reports/compare.hpp"
#include "reports/run_data.hpp"
#include "tests/temp_dir.hpp"
#include "tuner/batch/policy.hpp"

namespace beamlab::reports {
namespace {

class BenchRecordTest : public test_support::TempDirTest {
protected:
  BenchOptions options() const {
    BenchOptions o;
    o.corpus = tuner::parse_corpus(
        R"({"name": "tiny", "workloads": [
              {"workload": "matmul", "params": {"M": 32, "N": 32, "K": 32}},
              {"workload": "softmax", "params": {"ROWS": 16, "COLS": 64}}]})",
        "tiny.json");
    o.runs = 4;
    o.processes = 1;
    o.min_sample_ms = 0.5;
    o.suite = false;
    o.label = "test";
    o.command = "beamlab bench (test)";
    return o;
  }
  /// One small workload and the suite's benchmarks matching `filter`.
  BenchOptions suite_options(const std::string& filter) const {
    BenchOptions o = options();
    o.corpus.entries.resize(1);
    o.suite = true;
    o.suite_filter = filter;
    return o;
  }
  /// The UserError recording `o` throws ("(no error)" if none).
  static std::string error_of(db::Database& db, const BenchOptions& o) {
    try {
      record_bench(db, o);
    } catch (const UserError& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(BenchRecordTest, RecordsEveryWorkloadAndKernelWithEverySample) {
  db::Database db(file("bench.db"));
  int64_t run = record_bench(db, options());
  std::optional<db::Run> r = db.run(run);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, db::RunKind::bench);
  EXPECT_EQ(r->status, db::RunStatus::done);
  EXPECT_EQ(r->label, "test");
  EXPECT_NE(r->settings.find("\"runs\":4"), std::string::npos) << r->settings;
  std::optional<db::Device> dev = db.device(r->device_id);
  ASSERT_TRUE(dev);
  ASSERT_TRUE(dev->limits); // measured for the rooflines
  EXPECT_GT(dev->limits->fma_f32_gflops, 0);
  EXPECT_EQ(dev->limits->levels.back().name, "DRAM");

  RunData data = load_run_data(db, run);
  int workloads = 0, kernels = 0;
  for (const Measurement& m : data.items) {
    EXPECT_EQ(m.samples_ms.size(), 4u) << m.name;
    for (double ms : m.samples_ms) EXPECT_GT(ms, 0) << m.name;
    if (m.section == Section::workload) ++workloads;
    if (m.section != Section::kernel) continue;
    ++kernels;
    EXPECT_EQ(m.key.size(), 16u) << "an AST hash in hex: " << m.key;
    EXPECT_GT(m.flops, 0);
    EXPECT_EQ(m.source, "heuristic"); // nothing tuned in this database
  }
  EXPECT_EQ(workloads, 2);
  EXPECT_GE(kernels, 2);
  EXPECT_EQ(data.items.front().name, "matmul_K32_M32_N32");

  // A second run of the same corpus matches kernel by kernel.
  int64_t again = record_bench(db, options());
  Comparison c = compare_runs(load_run_data(db, run), load_run_data(db, again), {});
  EXPECT_EQ(c.rows.size(), data.items.size());
  EXPECT_TRUE(c.only_baseline.empty() && c.only_candidate.empty());
}

// A kernel the database has a tuned plan for runs that plan and says so; the others run the
// heuristic's, even where the two plans would agree.
TEST_F(BenchRecordTest, KernelsWithATunedPlanRunItAndAreLabelledCache) {
  BenchOptions o = options();
  o.corpus.entries.resize(1); // the matmul
  {
    tuner::SearchSettings s;
    s.beam = 1;
    s.max_iterations = 1;
    s.final_rounds = 1;
    tuner::PoolOptions pool;
    pool.workers = 1;
    tuner::BeamPolicy beam(s, pool);
    beam.use_cache(file("bench.db"), tuner::CacheMode::use);
    (void)tuner::build_entry(o.corpus.entries[0]).realize({.threads = 2, .policy = &beam});
    ASSERT_EQ(beam.results().size(), 1u);
  }
  db::Database db(file("bench.db"));
  std::vector<db::CacheEntry> cached = db.cache_entries();
  ASSERT_EQ(cached.size(), 1u);
  o.threads = cached[0].threads;
  RunData data = load_run_data(db, record_bench(db, o));
  int labelled = 0;
  for (const Measurement& m : data.items) {
    if (m.section != Section::kernel) continue;
    EXPECT_EQ(m.key, cached[0].kernel_hash) << m.name;
    EXPECT_EQ(m.source, "cache");
    EXPECT_EQ(m.plan, cached[0].opts);
    ++labelled;
  }
  EXPECT_EQ(labelled, 1);
  o.use_cache = false;
  for (const Measurement& m : load_run_data(db, record_bench(db, o)).items)
    if (m.section == Section::kernel) EXPECT_EQ(m.source, "heuristic");
}

TEST_F(BenchRecordTest, RecordsTheSuitesRepetitionsAsSamplesPooledOverPasses) {
  db::Database db(file("bench.db"));
  BenchOptions o = suite_options("BM_InternExistingNode");
  o.suite_min_time = 0.01;
  o.runs = 3;
  o.processes = 2; // no child command: two passes in this process, 2 samples each
  RunData data = load_run_data(db, record_bench(db, o));
  EXPECT_EQ(data.items.front().samples_ms.size(), 4u);
  const Measurement& last = data.items.back();
  EXPECT_EQ(last.section, Section::suite);
  EXPECT_EQ(last.name, "BM_InternExistingNode");
  EXPECT_EQ(last.samples_ms.size(), 4u);
  for (double ms : last.samples_ms) EXPECT_GT(ms, 0);
}

TEST_F(BenchRecordTest, ASuiteFilterMatchingNothingIsAnError) {
  db::Database db(file("bench.db"));
  std::string error = error_of(db, suite_options("BM_NoSuchBenchmark"));
  EXPECT_NE(error.find("--suite 'BM_NoSuchBenchmark' matched no benchmark"), std::string::npos)
      << error;
}

TEST_F(BenchRecordTest, AMissingSuiteIsAnErrorAndTheRunIsMarkedFailed) {
  db::Database db(file("bench.db"));
  BenchOptions o = suite_options(kDefaultSuiteFilter);
  o.suite_binary = file("no-such-bench");
  std::string error = error_of(db, o);
  EXPECT_NE(error.find("is missing or not executable: build the beamlab-bench target"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--no-suite"), std::string::npos);
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].status, db::RunStatus::failed);
}

} // namespace
} // namespace beamlab::reports

// Tuned is never slower (tuner/batch/whole_program.hpp): a program timed whole with a batch's
// plans against the heuristic's; a plan that loses inside it is not kept, in the cache too.
#include <gtest/gtest.h>

#include "tests/temp_dir.hpp"
#include "tuner/batch/whole_program.hpp"
#include "tuner/store/cache.hpp"
#include <beamlab/tuning.hpp>

namespace beamlab::tuner {
namespace {

class WholeProgramTest : public beamlab::test_support::TempDirTest {};

// A "tuned" plan with no Opts at all (the scalar, single-threaded kernel: many times the
// heuristic's time) for a matmul: the whole program is slower with it, so it is not kept, and
// the cache holds the heuristic's plan for the kernel instead (the tuned entry staled, naming
// why). The same check with the heuristic's own plan has nothing to compare.
TEST_F(WholeProgramTest, APlanSlowerInsideTheProgramIsNotKept) {
  Corpus corpus = single_entry(workload_entry("matmul", {{"M", 128}, {"N", 128}, {"K", 128}}));
  Program program = build_entry(corpus.entries.at(0));
  ScheduleItem item = program.schedule().items.at(0);
  BatchOptions options;
  options.threads = 2;
  std::string heuristic = to_string(heuristic_opts(item.ast, options.threads));
  BatchReport report;
  BatchKernel& k = report.kernels.emplace_back();
  k.task = kernel_task(item);
  k.outcome = BatchKernel::Outcome::tuned;
  k.result.heuristic_opts = ""; // a cache hit's: not recorded; the check computes it
  k.result.winner_opts = "";
  k.result.heuristic_ms = 0.1;
  k.result.winner_ms = 0.05; // what a misleading sandbox said
  db::Database db(file("t.db"));
  db::CacheEntry e;
  e.kernel_hash = hash_hex(item.key);
  e.device = this_device().fingerprint();
  e.compiler = compiler_identity();
  e.settings_key = settings_key(options.settings);
  e.threads = options.threads;
  e.kernel_name = item.name;
  e.opts = "";
  e.optimized_hash = hash_hex(plan_hash(item.ast, {}).value());
  e.ms = 0.05;
  e.source = "the test";
  ASSERT_TRUE(db.cache_put(e));

  std::vector<ProgramCheck> checks = check_programs(corpus, report, options, db, 6);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].plans, 1);
  ASSERT_EQ(checks[0].reverted.size(), 1u);
  EXPECT_EQ(checks[0].reverted[0], item.name);
  std::vector<db::CacheEntry> entries =
      db.cache_lookup(e.kernel_hash, e.device, e.compiler, options.threads);
  int live = 0;
  for (const db::CacheEntry& c : entries) {
    if (c.stale) {
      EXPECT_NE(c.stale_reason.find("matmul"), std::string::npos) << c.stale_reason;
      continue;
    }
    ++live;
    EXPECT_EQ(c.opts, heuristic);
    EXPECT_NE(c.source.find("the heuristic's plan"), std::string::npos) << c.source;
  }
  EXPECT_EQ(live, 1);

  k.result.winner_opts = heuristic; // nothing but the heuristic's plan: nothing to check
  checks = check_programs(corpus, report, options, db, 6);
  EXPECT_EQ(checks.at(0).plans, 0);
  EXPECT_FALSE(checks.at(0).note.empty());
}

} // namespace
} // namespace beamlab::tuner

// Warm starts across shapes: the structure key (an AST up to sizes), plans legalized for
// another kernel of the structure (randomized: heuristic plans and random walks of neighbours
// on one shape always apply to another), the cache's lenders nearest first, and a tuning run
// whose search is seeded with the winner of another size.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/temp_dir.hpp"

#include "db/database.hpp"
#include "db/sqlite.hpp"
#include "tuner/batch/batch.hpp"
#include "tuner/search/legalize.hpp"
#include "tuner/search/structure.hpp"
#include "tuner/store/run.hpp"
#include "tuner/store/warm_start.hpp"

namespace beamlab::tuner {
namespace {

using Params = std::map<std::string, int64_t>;

/// Kernel `index` of a built-in workload.
UOpPtr kernel_of(const std::string& workload, const Params& params, size_t index = 0,
                 DType dtype = Scalar::Float32) {
  return build_workload(workload, params, dtype).schedule().items.at(index).ast;
}

UOpPtr matmul(int64_t m, int64_t n, int64_t k) {
  return kernel_of("matmul", {{"M", m}, {"N", n}, {"K", k}});
}

std::vector<Opt> opts(const std::string& text) { return *parse_opts(text); }

// --- the structure key -----------------------------------------------------------------------

TEST(Structure, SizesAreForgotten) {
  EXPECT_EQ(structure_key(matmul(64, 64, 64)), structure_key(matmul(48, 80, 32)));
  EXPECT_EQ(structure_key(kernel_of("elementwise", {{"N", 4096}})),
            structure_key(kernel_of("elementwise", {{"N", 1000}})));
  EXPECT_EQ(structure_key(kernel_of("softmax", {{"ROWS", 64}, {"COLS", 128}})),
            structure_key(kernel_of("softmax", {{"ROWS", 30}, {"COLS", 200}})));
  // A matmul's hash differs with its sizes; its structure and axes don't.
  EXPECT_NE(matmul(64, 64, 64)->hash(), matmul(48, 80, 32)->hash());
  EXPECT_EQ(size_signature(matmul(48, 80, 32)), (std::vector<int64_t>{48, 80, 32}));
}

TEST(Structure, OpsDtypesAndComputedConstantsAreKept) {
  uint64_t mm = structure_key(matmul(64, 64, 64));
  EXPECT_NE(mm, structure_key(
                    kernel_of("matmul", {{"M", 64}, {"N", 64}, {"K", 64}}, 0, Scalar::Float16)));
  EXPECT_NE(
      mm, structure_key(kernel_of("batched_matmul", {{"B", 2}, {"M", 64}, {"N", 64}, {"K", 64}})));
  EXPECT_NE(mm, structure_key(kernel_of("reduce_max", {{"ROWS", 64}, {"COLS", 64}})));
  EXPECT_NE(structure_key(kernel_of("reduce_max", {{"ROWS", 64}, {"COLS", 64}})),
            structure_key(kernel_of("reduce_mean", {{"ROWS", 64}, {"COLS", 64}})));
  EXPECT_NE(structure_key(kernel_of("elementwise", {{"N", 4096}, {"DEPTH", 8}})),
            structure_key(kernel_of("elementwise", {{"N", 4096}, {"DEPTH", 4}})));
  // A float constant is the computation's, not a size.
  Tensor a = Tensor::rand({256}, 1), b = Tensor::rand({256}, 2);
  EXPECT_NE(structure_key((a * b + 0.5).schedule().items.at(0).ast),
            structure_key((a * b + 0.25).schedule().items.at(0).ast));
}

TEST(Structure, DistanceCountsDoublingsPerAxis) {
  EXPECT_EQ(size_distance({64, 64, 64}, {64, 64, 64}), 0);
  EXPECT_DOUBLE_EQ(size_distance({64, 64, 64}, {32, 64, 256}), 3);
  EXPECT_TRUE(std::isinf(size_distance({64, 64}, {64, 64, 64})));
}

// --- legalization ----------------------------------------------------------------------------

SearchSettings caps() { return SearchSettings{}; }

// An UPCAST by a whole extent removes its axis in one kernel and not in the other: the Opts
// after it are sent to the same axis by lineage, not by position.
TEST(Legalize, OptsFollowTheirAxisWhenAnUpcastRemovesOne) {
  UOpPtr rows16 = kernel_of("reduce_max", {{"ROWS", 16}, {"COLS", 128}});
  UOpPtr rows32 = kernel_of("reduce_max", {{"ROWS", 32}, {"COLS", 128}});
  ASSERT_EQ(structure_key(rows16), structure_key(rows32));
  auto legal = legalize_plan(rows16, opts("UPCAST(0,16) UNROLL(0,4)"), rows32, 2, caps());
  ASSERT_TRUE(legal) << legal.error();
  EXPECT_EQ(to_string(legal->opts), "UPCAST(0,16) UNROLL(1,4)");
  EXPECT_EQ(legal->changed, 0);
  EXPECT_EQ(legal->dropped, 0);
  // And back: the outer loop of 2 has no counterpart; nothing addresses it.
  legal = legalize_plan(rows32, opts("UPCAST(0,16) UNROLL(1,4) THREAD(0,2)"), rows16, 2, caps());
  ASSERT_TRUE(legal) << legal.error();
  EXPECT_EQ(to_string(legal->opts), "UPCAST(0,16) UNROLL(0,4)");
  EXPECT_EQ(legal->dropped, 1);
}

TEST(Legalize, AnAmountThatDoesNotDivideTakesTheNearestThatDoes) {
  auto legal = legalize_plan(matmul(64, 64, 64), opts("UPCAST(1,16) UPCAST(0,4) UNROLL(2,4)"),
                             matmul(64, 24, 64), 2, caps());
  ASSERT_TRUE(legal) << legal.error();
  // 16 does not divide 24; 8 and 32 are as near (a factor of 2), the smaller first.
  EXPECT_EQ(to_string(legal->opts), "UPCAST(1,8) UPCAST(0,4) UNROLL(2,4)");
  EXPECT_EQ(legal->changed, 1);
}

TEST(Legalize, TheCapsCountAsNotApplying) {
  SearchSettings narrow;
  narrow.max_lanes = 8;
  auto legal =
      legalize_plan(matmul(64, 64, 64), opts("UPCAST(1,16)"), matmul(64, 32, 64), 2, narrow);
  ASSERT_TRUE(legal) << legal.error();
  EXPECT_EQ(to_string(legal->opts), "UPCAST(1,8)");
}

TEST(Legalize, KernelsOfAnotherStructureOrAPlanOfAnotherKernelFail) {
  auto other = legalize_plan(matmul(64, 64, 64), opts("UPCAST(1,16)"),
                             kernel_of("elementwise", {{"N", 4096}}), 2, caps());
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("not one structure"), std::string::npos) << other.error();
  auto foreign =
      legalize_plan(matmul(64, 64, 64), opts("UNROLL(0,4)"), matmul(32, 32, 32), 2, caps());
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().find("does not apply to its own kernel"), std::string::npos)
      << foreign.error();
}

/// A workload and a generator of its shapes (sizes of 1 would change the structure).
struct ShapeFamily {
  std::string workload;
  std::function<Params(std::mt19937&)> shape;
};

int64_t pick(std::mt19937& rng, std::initializer_list<int64_t> sizes) {
  std::uniform_int_distribution<size_t> d(0, sizes.size() - 1);
  return *(sizes.begin() + static_cast<std::ptrdiff_t>(d(rng)));
}

std::vector<ShapeFamily> families() {
  return {
      {"matmul",
       [](std::mt19937& r) {
         return Params{{"M", pick(r, {8, 16, 24, 48, 64, 96, 100})},
                       {"N", pick(r, {8, 16, 24, 28, 64, 80, 128})},
                       {"K", pick(r, {8, 16, 32, 36, 64, 96})}};
       }},
      {"reduce_max",
       [](std::mt19937& r) {
         return Params{{"ROWS", pick(r, {4, 16, 24, 64, 100})},
                       {"COLS", pick(r, {16, 64, 96, 128, 250})}};
       }},
      {"softmax",
       [](std::mt19937& r) {
         return Params{{"ROWS", pick(r, {4, 16, 48, 64})}, {"COLS", pick(r, {16, 32, 96, 128})}};
       }},
      {"conv2d",
       [](std::mt19937& r) {
         int64_t hw = pick(r, {8, 12, 14, 16});
         return Params{{"C", pick(r, {4, 8, 16})},
                       {"H", hw},
                       {"W", hw},
                       {"C_out", pick(r, {8, 16, 32})},
                       {"R", 3},
                       {"S", 1},
                       {"P", 1}};
       }},
  };
}

/// The kernel with the most loops of a workload (a padded convolution's own, not its copy).
UOpPtr main_kernel(const std::string& workload, const Params& p) {
  Schedule s = build_workload(workload, p).schedule();
  UOpPtr best;
  for (const ScheduleItem& item : s.items)
    if (!best || kernel_axes(item.ast).size() > kernel_axes(best).size()) best = item.ast;
  return best;
}

/// Plans for `ast`: the heuristic's, and random walks of neighbours from it and from nothing.
std::vector<std::vector<Opt>> plans_for(const UOpPtr& ast, int threads, std::mt19937& rng) {
  std::vector<std::vector<Opt>> out = {heuristic_opts(ast, threads)};
  for (int walk = 0; walk < 6; ++walk) {
    std::vector<Opt> plan = walk % 2 ? out.front() : std::vector<Opt>{};
    for (int step = 0; step < 5; ++step) {
      std::vector<std::vector<Opt>> next;
      for (std::vector<Opt>& n : neighbours(ast, plan, threads))
        if (apply_opts(ast, n)) next.push_back(std::move(n));
      if (next.empty()) break;
      plan = next[std::uniform_int_distribution<size_t>(0, next.size() - 1)(rng)];
    }
    out.push_back(plan);
  }
  return out;
}

// The warm start's promise: a seed is legal for the new shape. Plans from the heuristic and from
// random walks on shape A, legalized for shape B of the same structure, always apply to B and
// stay within the caps.
TEST(Legalize, SeedsAreLegalForTheNewShape) {
  std::mt19937 rng(23);
  const int threads = 4;
  for (const ShapeFamily& f : families()) {
    int pairs = 0, plans = 0, intact = 0;
    for (int trial = 0; trial < 6; ++trial) {
      Params pa = f.shape(rng), pb = f.shape(rng);
      UOpPtr a = main_kernel(f.workload, pa), b = main_kernel(f.workload, pb);
      if (structure_key(a) != structure_key(b)) continue; // sizes the simplifier folds apart
      ++pairs;
      for (const std::vector<Opt>& plan : plans_for(a, threads, rng)) {
        auto legal = legalize_plan(a, plan, b, threads, caps());
        ASSERT_TRUE(legal) << f.workload << ": " << legal.error();
        auto applied = apply_opts(b, legal->opts);
        ASSERT_TRUE(applied) << f.workload << " " << to_string(plan) << " -> "
                             << to_string(legal->opts) << ": " << applied.error();
        EXPECT_LE(applied->lanes, caps().max_lanes) << to_string(legal->opts);
        ++plans;
        intact += legal->changed == 0 && legal->dropped == 0;
      }
    }
    EXPECT_GE(pairs, 3) << f.workload << ": too few pairs of one structure";
    std::printf("%s: %d pairs, %d plans legalized, %d unchanged\n", f.workload.c_str(), pairs,
                plans, intact);
  }
}

// --- the cache's lenders ---------------------------------------------------------------------

class WarmStartTest : public beamlab::test_support::TempDirTest {};

/// The task of kernel 0 of a workload (buffers and all, for a search).
KernelTask task_of(const std::string& workload, const Params& params) {
  return kernel_task(build_workload(workload, params).schedule().items.at(0));
}

KernelTask matmul_task(int64_t m, int64_t n, int64_t k) {
  return task_of("matmul", {{"M", m}, {"N", n}, {"K", k}});
}

/// Stores kernel `task` and a cache entry of plan `plan` for it at `threads`.
void lend(db::Database& db, const CacheContext& ctx, const KernelTask& task,
          const std::string& plan, double ms, int threads = 2) {
  db.upsert_kernel(kernel_record(task));
  db::CacheEntry e;
  e.kernel_hash = hash_hex(task.key);
  e.device = ctx.device;
  e.compiler = ctx.compiler;
  e.settings_key = "test";
  e.threads = threads;
  e.kernel_name = task.name;
  e.opts = plan;
  e.optimized_hash = "0";
  e.actions = "";
  e.ms = ms;
  e.source = "test";
  ASSERT_TRUE(db.cache_put(e));
}

TEST_F(WarmStartTest, TheNearestKernelsOfTheStructureLendTheirPlansLegalized) {
  db::Database db(file("w.db"));
  CacheContext ctx;
  ctx.db = &db;
  KernelTask near = matmul_task(64, 64, 64), far = matmul_task(256, 256, 256);
  KernelTask other = task_of("elementwise", {{"N", 4096}});
  lend(db, ctx, far, "UPCAST(1,32) UPCAST(0,8)", 9);
  lend(db, ctx, near, "UPCAST(1,16) UPCAST(0,4) UNROLL(2,4)", 1);
  lend(db, ctx, other, "UPCAST(0,16)", 1);
  lend(db, ctx, near, "UPCAST(1,4)", 1, 4); // another thread count
  KernelTask me = matmul_task(48, 80, 32);
  lend(db, ctx, me, "UPCAST(1,2)", 1); // its own entry lends nothing
  std::vector<WarmSeed> seeds = warm_start_seeds(ctx, me, me.graph, 2, caps());
  ASSERT_EQ(seeds.size(), 2u);
  EXPECT_EQ(seeds[0].kernel_hash, hash_hex(near.key));
  EXPECT_EQ(to_string(seeds[0].opts), "UPCAST(1,16) UPCAST(0,4) UNROLL(2,4)");
  EXPECT_EQ(seeds[0].plan, "UPCAST(1,16) UPCAST(0,4) UNROLL(2,4)");
  EXPECT_DOUBLE_EQ(seeds[0].distance, std::log2(64.0 / 48) + std::log2(80.0 / 64) + 1);
  EXPECT_EQ(seeds[1].kernel_hash, hash_hex(far.key));
  // 32 does not divide 80: the nearest amount that does.
  EXPECT_EQ(to_string(seeds[1].opts), "UPCAST(1,16) UPCAST(0,8)");
  EXPECT_EQ(seeds[1].changed, 1);
  EXPECT_EQ(warm_start_seeds(ctx, me, me.graph, 2, caps(), 1).size(), 1u);
  nlohmann::json j = warm_start_json(seeds);
  EXPECT_EQ(j[0]["from_hash"], hash_hex(near.key));
  EXPECT_EQ(j[0]["cache_entry"], seeds[0].entry_id);
  EXPECT_EQ(j[1]["from_opts"], "UPCAST(1,32) UPCAST(0,8)");
}

// Kernels stored before schema 4 have no structure: a warm start computes it from their AST,
// stores it where it may write, and only computes it where it may not.
TEST_F(WarmStartTest, KernelsWithoutAStructureAreComputedAndFilledWhereWritable) {
  KernelTask lender = matmul_task(64, 64, 64), me = matmul_task(32, 64, 64);
  {
    db::Database db(file("old.db"));
    CacheContext ctx;
    ctx.db = &db;
    lend(db, ctx, lender, "UPCAST(1,16)", 1);
    db.connection().exec("UPDATE kernels SET structure = '', structure_version = 0");
  }
  auto stored = [&] {
    db::Database db(file("old.db"), db::Database::Access::read_only);
    return db.kernel(*db.find_kernel(hash_hex(lender.key)))->structure;
  };
  {
    db::Database ro(file("old.db"), db::Database::Access::read_only);
    CacheContext ctx;
    ctx.db = &ro;
    EXPECT_EQ(warm_start_seeds(ctx, me, me.graph, 2, caps()).size(), 1u);
  }
  EXPECT_EQ(stored(), "");
  db::Database db(file("old.db"));
  CacheContext ctx;
  ctx.db = &db;
  EXPECT_EQ(warm_start_seeds(ctx, me, me.graph, 2, caps()).size(), 1u);
  EXPECT_EQ(stored(), hash_hex(structure_key(lender.graph)));
}

TEST(WarmStartKey, AWarmKeyTakesTheColdSearchesEntriesButNotTheOtherWay) {
  SearchSettings s;
  std::string cold = settings_key(s), warm = settings_key(s, true);
  EXPECT_EQ(warm, cold + " warm");
  EXPECT_TRUE(settings_key_accepts(warm, warm));
  EXPECT_TRUE(settings_key_accepts(warm, cold));
  EXPECT_FALSE(settings_key_accepts(cold, warm));
  s.beam = 2;
  EXPECT_FALSE(settings_key_accepts(warm, settings_key(s)));
}

// --- a warm-started tuning run ---------------------------------------------------------------

BatchOptions quick_batch(bool warm) {
  BatchOptions o;
  o.settings.beam = 1;
  o.settings.max_iterations = 1;
  o.settings.final_rounds = 2;
  o.threads = 1; // the unoptimized kernel never wins: the winner is a plan to lend
  o.workers = 2;
  o.warm_start = warm;
  return o;
}

BatchReport tune_into(const std::string& path, const KernelTask& task, bool warm) {
  db::Database db(path);
  ActiveRun run = ActiveRun::begin(db, {db::RunKind::tune, "", "test", "{}", ""});
  BatchListener quiet;
  BatchReport r = run_batch({task}, "test", quick_batch(warm),
                            {path, run.id(), run.device_id(), run.source()}, quiet);
  run.finish(false, r.count(BatchKernel::Outcome::failed) > 0);
  return r;
}

// Tune a matmul at one size, then another size with warm starts on: its search is seeded with
// the first one's winner legalized for it (a candidate with no parent, journaled), the tuning
// records where the seed came from, and its cache entry is keyed warm.
TEST_F(WarmStartTest, ATuningRunIsSeededWithTheWinnerOfAnotherSize) {
  std::string path = file("tune.db");
  KernelTask first = matmul_task(64, 64, 64), second = matmul_task(48, 80, 32);
  BatchReport r1 = tune_into(path, first, true); // nothing to seed it with yet
  ASSERT_EQ(r1.count(BatchKernel::Outcome::tuned), 1) << r1.kernels[0].result.error;
  EXPECT_EQ(r1.kernels[0].warm_seeds, 0);
  BatchReport r2 = tune_into(path, second, true);
  ASSERT_EQ(r2.count(BatchKernel::Outcome::tuned), 1) << r2.kernels[0].result.error;
  EXPECT_TRUE(r2.warm_start);
  EXPECT_EQ(r2.warm_started(), 1);
  EXPECT_GE(r2.kernels[0].warm_seeds, 1);

  db::Database db(path, db::Database::Access::read_only);
  std::vector<db::CacheEntry> entries = db.cache_entries();
  ASSERT_EQ(entries.size(), 2u);
  const db::CacheEntry& cold =
      entries[0].kernel_hash == hash_hex(first.key) ? entries[0] : entries[1];
  const db::CacheEntry& warm = &cold == &entries[0] ? entries[1] : entries[0];
  EXPECT_FALSE(cold.settings_key.ends_with("warm")) << cold.settings_key;
  EXPECT_TRUE(warm.settings_key.ends_with(" warm")) << warm.settings_key;
  ASSERT_FALSE(cold.opts.empty());
  auto legal = legalize_plan(first.graph, *parse_opts(cold.opts), second.graph, 1,
                             quick_batch(true).settings);
  ASSERT_TRUE(legal) << legal.error();
  std::vector<db::Tuning> ts = db.tunings(db.runs().front().id); // the newest run
  ASSERT_EQ(ts.size(), 1u);
  std::vector<std::string> unparented;
  for (const db::CandidateRow& c : db.candidates(ts[0].id))
    if (c.parent == -1) unparented.push_back(c.opts);
  // A seed equal to the heuristic's plan is measured once, as the heuristic (also unparented).
  EXPECT_NE(std::find(unparented.begin(), unparented.end(), to_string(legal->opts)),
            unparented.end())
      << "the legalized winner " << to_string(legal->opts) << " is not a seed";
  nlohmann::json settings = nlohmann::json::parse(ts[0].settings);
  ASSERT_TRUE(settings.contains("warm_start")) << ts[0].settings;
  EXPECT_EQ(settings["warm_start"][0]["from_hash"], hash_hex(first.key));
  EXPECT_EQ(settings["warm_start"][0]["from_opts"], cold.opts);
}

} // namespace
} // namespace beamlab::tuner

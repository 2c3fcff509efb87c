// The BEAM search over real sandboxed workers: planted faults and a planted miscompile are
// recorded with the right status and never win; budgets end the search with an answer; the
// result is never slower than the heuristic beyond noise; the worker pool's gate keeps timing
// alone on the machine; the BEAM policy tunes each kernel once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <span>
#include <thread>

#include "engine/ir/kernel_ops.hpp"
#include "tests/tuner/symbolic_task.hpp"
#include "tuner/batch/policy.hpp"
#include "tuner/search/search.hpp"
#include "tuner/search/winner.hpp"
#include "tuner/store/records.hpp"

namespace beamlab::tuner {
namespace {

KernelTask matmul_task(int64_t m, int64_t k, int64_t n) {
  return kernel_task(
      Tensor::rand({m, k}, 1).matmul(Tensor::rand({k, n}, 2)).schedule().items.at(0));
}

PoolOptions test_pool() {
  PoolOptions o;
  o.workers = 2;
  o.sandbox.threads = 2;
  o.sandbox.allow_faults = true;
  return o;
}

const Candidate* find(const TuneResult& r, const std::string& opts) {
  for (const Candidate& c : r.candidates)
    if (to_string(c.opts) == opts) return &c;
  return nullptr;
}

// The winner from hand-computed rounds: the fastest median wins; its speedup over the
// heuristic is paired by round; a runner-up within noise is a tie.
TEST(Winner, TheFastestMedianWinsAndItsSpeedupIsPairedByRound) {
  TuneResult r;
  r.heuristic = 1;
  std::map<int, std::vector<double>> rounds = {
      {1, {2.0, 2.2, 2.0, 2.1}}, {2, {1.0, 1.1, 1.0, 1.05}}, {3, {1.01, 1.09, 1.02, 1.04}}};
  decide_by_rounds(r, rounds, {1, 2, 3});
  EXPECT_EQ(r.winner, 2);
  EXPECT_EQ(r.finalists, (std::vector<int>{2, 3, 1}));
  EXPECT_DOUBLE_EQ(r.winner_ms, 1.025);
  EXPECT_DOUBLE_EQ(r.heuristic_ms, 2.05);
  EXPECT_NEAR(r.speedup.estimate, 2.0, 0.01);
  EXPECT_TRUE(r.speedup.significant());
  EXPECT_FALSE(r.tie_with_heuristic);
  EXPECT_TRUE(r.tie) << "3 is within noise of 2";
  // A round a finalist failed (0) is left out of its median.
  decide_by_rounds(r, {{1, {2.0, 2.0, 0}}, {2, {0, 3.0, 3.0}}}, {1, 2});
  EXPECT_EQ(r.winner, 1);
  EXPECT_DOUBLE_EQ(r.winner_ms, 2.0);
}

// Plans tried by hand: the fastest median among those that ran, the reference (id 0) aside.
TEST(Winner, TheBestPlanTriedByHandIsTheFastestThatRan) {
  auto plan = [](int id, Status s, std::vector<double> samples) {
    Candidate c;
    c.id = id;
    c.status = s;
    c.samples_ms = std::move(samples);
    return c;
  };
  std::vector<Candidate> tried = {plan(0, Status::ok, {0.1}), plan(1, Status::ok, {3, 3, 9}),
                                  plan(2, Status::wrong_result, {1}), plan(3, Status::ok, {2, 4}),
                                  plan(4, Status::ok, {})};
  EXPECT_EQ(best_tried_by_hand(tried), std::optional<size_t>(1));
  EXPECT_EQ(best_tried_by_hand({plan(0, Status::ok, {1})}), std::nullopt);
}

// An integer division's check inputs stay in its domain (no zero divisor, no minimum that -1
// would overflow): the unoptimized kernel and the candidates run, and the search tunes it,
// special inputs included. Before, the reference died with SIGFPE and nothing could be tuned.
TEST(Search, IntegerDivisionKernelsTune) {
  std::vector<int32_t> values(64 * 64, 7);
  auto ints = [&](uint64_t) {
    return Tensor::from_bytes(std::as_bytes(std::span(values)), {64, 64}, Scalar::Int32);
  };
  for (Tensor t : {ints(1).floordiv(ints(2)), ints(1).mod(ints(2))}) {
    KernelTask task = kernel_task(t.schedule().items.at(0));
    DivisionDomain d = division_domain(*parse_graph(task.ast), task.buffers.size());
    EXPECT_TRUE(d.divides);
    ASSERT_EQ(d.divisor.size(), 3u);
    EXPECT_FALSE(d.divisor[1]); // the dividend
    EXPECT_TRUE(d.divisor[2]);
    SearchSettings s;
    s.beam = 1;
    s.max_iterations = 1;
    WorkerPool pool(test_pool());
    auto r = tune_kernel(task, pool, s);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->best().status, Status::ok) << r->best().error;
    EXPECT_EQ(r->count(Status::crashed), 0) << r->status_counts();
  }
  // The domain by hand: the minimum and (for a divisor) zero move inside it.
  std::vector<int32_t> v = {0, -1, INT32_MIN, 5};
  keep_in_domain(DType(Scalar::Int32), v.data(), 4, true);
  EXPECT_EQ(v, (std::vector<int32_t>{1, -1, INT32_MIN + 1, 5}));
  std::vector<uint8_t> u = {0, 255};
  keep_in_domain(DType(Scalar::UInt8), u.data(), 2, false);
  EXPECT_EQ(u, (std::vector<uint8_t>{0, 255}));
}

// The lane cap counts stacked UNROLLs as their product: under max_lanes 64 no plan of a
// 16K-element sum wider than 64 lanes is compiled (the heuristic, exempt, aside).
TEST(Search, TheLaneCapMultipliesStackedUnrolls) {
  KernelTask task = kernel_task(Tensor::rand({16384}, 3).sum().schedule().items.at(0));
  UOpPtr ast = *parse_graph(task.ast);
  SearchSettings s;
  s.beam = 4;
  s.max_iterations = 3;
  s.max_lanes = 64;
  WorkerPool pool(test_pool());
  auto r = tune_kernel(task, pool, s);
  ASSERT_TRUE(r) << r.error();
  EXPECT_GT(r->dropped_caps, 0);
  for (const Candidate& c : r->candidates) {
    if (c.id == r->heuristic) continue;
    EXPECT_LE(apply_opts(ast, c.opts)->lanes, 64) << to_string(c.opts);
  }
}

TEST(Search, PlantedFaultsAndAMiscompileAreRecordedAndNeverWin) {
  KernelTask task = matmul_task(32, 48, 64);
  UOpPtr ast = *parse_graph(task.ast);
  std::vector<Opt> heuristic = heuristic_opts(ast, 2);
  ASSERT_FALSE(heuristic.empty());
  // A miscompile in the heuristic's plan (so the search goes on from the unoptimized plan), and
  // faults in four of that plan's neighbours, each a different way to fail.
  SearchSettings s;
  s.beam = 2;
  s.run_timeout_s = 2;         // the endless loop's cost
  s.detach_stragglers = false; // each planted plan timed, never another's duplicate
  s.faults[to_string(heuristic)] = "miscompile";
  std::vector<std::string> planted;
  const char* kinds[] = {"write_out_of_bounds", "endless_loop", "abort_in_compile", "open_file"};
  for (const std::vector<Opt>& plan : neighbours(ast, {}, 2)) {
    if (planted.size() == std::size(kinds)) break;
    if (!apply_opts(ast, plan)) continue;
    planted.push_back(to_string(plan));
    s.faults[planted.back()] = kinds[planted.size() - 1];
  }
  ASSERT_EQ(planted.size(), 4u);
  WorkerPool pool(test_pool());
  std::vector<std::string> restarts;
  auto r = tune_kernel(task, pool, s, [&](const Event& e) {
    if (e.kind == Event::Kind::restarted) restarts.push_back(e.detail);
  });
  ASSERT_TRUE(r) << r.error();

  const Candidate* h = find(*r, to_string(heuristic));
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->status, Status::wrong_result) << h->error;
  EXPECT_NE(h->error.find("elements differ"), std::string::npos) << h->error;
  struct Want {
    Status status;
    const char* detail;
  };
  const Want wants[] = {{Status::crashed, "SIGSEGV"},
                        {Status::timeout, "no answer within"},
                        {Status::crashed, "SIGABRT"},
                        {Status::violation, "SIGSYS"}};
  for (size_t i = 0; i < planted.size(); ++i) {
    const Candidate* c = find(*r, planted[i]);
    ASSERT_NE(c, nullptr) << planted[i] << " was not a candidate";
    EXPECT_EQ(c->status, wants[i].status) << planted[i] << ": " << to_string(c->status);
    EXPECT_NE(c->error.find(wants[i].detail), std::string::npos) << planted[i] << ": " << c->error;
  }
  // Four dead workers, each restarted, and the search went on to measure the rest correctly.
  EXPECT_EQ(r->restarts, 4);
  EXPECT_EQ(restarts.size(), 4u);
  // Timed to the end or stopped early as slower than the incumbent: how many of each depends on
  // the machine's load (under ASan with another test beside it, most stop early).
  EXPECT_GT(r->count(Status::ok) + r->count(Status::slow), 5) << r->status_counts();
  const Candidate& w = r->best();
  EXPECT_EQ(w.status, Status::ok);
  EXPECT_EQ(s.faults.count(to_string(w.opts)), 0u) << to_string(w.opts);
  EXPECT_GT(r->winner_ms, 0.0);
}

// A slow compile doesn't hold its iteration: the others are timed while it compiles (stopped
// for each timing), it is timed once it is in, and the search ends only after it.
TEST(Search, ASlowCompileIsLeftRunningWhileTheOthersAreTimed) {
  KernelTask task = matmul_task(32, 48, 64);
  UOpPtr ast = *parse_graph(task.ast);
  SearchSettings s;
  s.beam = 1;
  s.max_iterations = 2;
  s.final_rounds = 2;
  // A few candidates beside the slow one: their compiles on the other sandbox must end well
  // before its 1.5 s, even on a loaded machine (the whole neighbourhood, ~50 compiles, took
  // about as long under ctest -j2, and then nothing was left to time meanwhile).
  s.candidate_budget = 6;
  // The first neighbour of the beam's one plan compiles slowly. Which plan that is (the
  // heuristic's or the unoptimized one) depends on their timings on this tiny kernel: both
  // first neighbours are planted, and the one proposed is followed.
  std::set<std::string> planted;
  for (const std::vector<Opt>& parent : {heuristic_opts(ast, 2), std::vector<Opt>{}})
    for (const std::vector<Opt>& plan : neighbours(ast, parent, 2))
      if (apply_opts(ast, plan)) {
        planted.insert(to_string(plan));
        s.faults[to_string(plan)] = "slow_compile";
        break;
      }
  ASSERT_FALSE(planted.empty());
  WorkerPool pool(test_pool());
  std::string slow; // the planted plan proposed first
  bool compiled = false;
  int timed_meanwhile = 0;
  auto r = tune_kernel(task, pool, s, [&](const Event& e) {
    if (!e.candidate) return;
    std::string plan = to_string(e.candidate->opts);
    if (slow.empty() && e.kind == Event::Kind::queued && planted.count(plan)) slow = plan;
    bool it = !slow.empty() && plan == slow;
    if (it && e.kind == Event::Kind::compiled) compiled = true;
    if (!slow.empty() && !planted.count(plan) && e.kind == Event::Kind::timed && !compiled)
      ++timed_meanwhile;
  });
  ASSERT_TRUE(r) << r.error();
  ASSERT_FALSE(slow.empty()) << "no planted plan was proposed";
  const Candidate* c = find(*r, slow);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->samples_ms.empty()) << to_string(c->status) << ": " << c->error;
  EXPECT_GT(timed_meanwhile, 0);
  EXPECT_LT(c->compile_ms, 60000);
}

TEST(Search, HostileRepliesAreErrorsThatNeverWinAndAHostileReferenceIsAClearError) {
  KernelTask task = matmul_task(32, 48, 64);
  UOpPtr ast = *parse_graph(task.ast);
  SearchSettings s;
  s.beam = 2;
  s.max_iterations = 1;
  // Each planted plan must be the one of its machine code that is timed, not the duplicate of
  // an equal one taken in first (which a compile carried over can make it).
  s.detach_stragglers = false;
  std::vector<std::string> planted;
  const char* kinds[] = {"reply_negative_samples", "reply_bad_hash", "reply_many_samples"};
  // Neighbours of the heuristic's plan: the first expansion's candidates.
  for (const std::vector<Opt>& plan : neighbours(ast, heuristic_opts(ast, 2), 2)) {
    if (planted.size() == std::size(kinds)) break;
    if (!apply_opts(ast, plan)) continue;
    planted.push_back(to_string(plan));
    s.faults[planted.back()] = kinds[planted.size() - 1];
  }
  ASSERT_EQ(planted.size(), std::size(kinds));
  WorkerPool pool(test_pool());
  auto r = tune_kernel(task, pool, s);
  ASSERT_TRUE(r) << r.error();
  for (const std::string& p : planted) {
    const Candidate* c = find(*r, p);
    ASSERT_NE(c, nullptr) << p << " was not a candidate";
    EXPECT_EQ(c->status, Status::error) << p << ": " << to_string(c->status);
    EXPECT_NE(c->error.find("a malformed reply"), std::string::npos) << p << ": " << c->error;
    EXPECT_NE(to_string(r->best().opts), p);
  }
  EXPECT_GE(r->restarts, 3);
  EXPECT_GT(r->winner_ms, 0.0);
  // The reference's outputs are what every candidate is checked against: a reference reply
  // without its check times (or outputs) ends the search with the reason, not a crash.
  SearchSettings bad;
  bad.beam = 2;
  bad.faults[""] = "reply_no_check_ms";
  auto failed = tune_kernel(task, pool, bad);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().find("malformed"), std::string::npos) << failed.error();
  EXPECT_NE(failed.error().find("check_ms has 0 entries"), std::string::npos) << failed.error();
}

TEST(Search, TheResultIsNeverSlowerThanTheHeuristicBeyondNoise) {
  KernelTask task = matmul_task(64, 64, 64);
  WorkerPool pool(test_pool());
  SearchSettings s;
  s.beam = 2;
  int events[9] = {};
  auto r = tune_kernel(task, pool, s, [&](const Event& e) { ++events[int(e.kind)]; });
  ASSERT_TRUE(r) << r.error();
  // The heuristic is re-measured beside the winner; the winner's median is the lowest.
  ASSERT_GE(r->heuristic, 0);
  EXPECT_NE(std::find(r->finalists.begin(), r->finalists.end(), r->heuristic), r->finalists.end());
  EXPECT_LE(r->winner_ms, r->heuristic_ms);
  EXPECT_EQ(r->best().status, Status::ok);
  // Every candidate has a status; the counts add up; statuses are consistent with the data.
  int total = 0;
  for (int i = 0; i < kStatusCount; ++i) total += r->count(static_cast<Status>(i));
  EXPECT_EQ(total, static_cast<int>(r->candidates.size()));
  for (const Candidate& c : r->candidates) {
    if (c.status == Status::ok) EXPECT_FALSE(c.samples_ms.empty()) << c.id;
    if (c.status == Status::duplicate) {
      ASSERT_GE(c.duplicate_of, 0);
      EXPECT_EQ(c.code_hash, r->candidates[size_t(c.duplicate_of)].code_hash);
    }
    if (c.status == Status::slow) EXPECT_NE(c.error.find("over 3 x the best"), std::string::npos);
  }
  // Every candidate was queued, the progress stream ended with "finished".
  EXPECT_EQ(events[int(Event::Kind::reference)], 1);
  EXPECT_EQ(events[int(Event::Kind::queued)], static_cast<int>(r->candidates.size()) - 1);
  EXPECT_EQ(events[int(Event::Kind::finished)], 1);
  EXPECT_GE(events[int(Event::Kind::iteration)], 1);
  // The settings are recorded with the result.
  nlohmann::json j = result_json(*r);
  EXPECT_EQ(j["settings"]["beam"], 2);
  EXPECT_EQ(j["settings"]["early_stop"], 3.0);
  EXPECT_EQ(j["candidates"].size(), r->candidates.size());
  EXPECT_EQ(j["winner_opts"], to_string(r->best().opts));
}

TEST(Search, ASymbolicKernelIsTimedAtItsValuesAndEachCandidateCheckedAtTheEndsOfItsRange) {
  KernelTask task = test_support::symbolic_matmul_task();
  ASSERT_EQ(task.name, "r_seq_80_64");
  EXPECT_EQ(bindings_str(task.tune_at), "seq=96, seq=12");
  EXPECT_EQ(bindings_str(task.check_at), "seq=1, seq=96, seq=12");
  UOpPtr ast = *task_graph(task);
  // The heuristic's plan run at the variable's upper bound, whatever its value: right at 96,
  // wrong (rows past the value written) at 1, where the checks find it.
  std::vector<Opt> heuristic = heuristic_opts(ast, 2);
  SearchSettings s;
  s.beam = 2;
  s.max_iterations = 2;
  s.faults[to_string(heuristic)] = "runs_to_bound";
  WorkerPool pool(test_pool());
  auto r = tune_kernel(task, pool, s, {});
  ASSERT_TRUE(r) << r.error();
  const Candidate* h = find(*r, to_string(heuristic));
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->status, Status::wrong_result) << h->error;
  EXPECT_NE(h->error.find("inputs at seq=1;"), std::string::npos) << h->error;
  // The unoptimized kernel is timed as every candidate is, at the tuned values (not at the
  // checks' smallest, which would stop every other candidate as slow), so plans get through.
  const Candidate& empty = r->candidates.at(static_cast<size_t>(r->empty));
  int timed = 0;
  for (const Candidate& c : r->candidates)
    timed += c.status == Status::ok && c.id != r->empty && c.id != r->heuristic;
  EXPECT_GE(timed, 3) << "the reference's " << empty.median_ms() << " ms";
  // The winner computes what the unoptimized kernel does, at every value, from one compile.
  ASSERT_EQ(r->best().status, Status::ok);
  auto winner = KernelCandidate::build(ast, r->best().opts, task.name);
  auto plain = KernelCandidate::build(ast, {}, task.name);
  ASSERT_TRUE(winner && plain);
  std::vector<std::vector<float>> data;
  for (const KernelBufferSpec& b : task.buffers) {
    data.emplace_back(static_cast<size_t>(b.count));
    for (size_t i = 0; i < data.back().size(); ++i)
      data.back()[i] = static_cast<float>((i * 7919) % 13) - 6;
  }
  for (int64_t v : {1, 5, 12, 95, 96}) {
    std::vector<float> got(data[0].size(), -1), want(data[0].size(), -1);
    winner->run({got.data(), data[1].data(), data[2].data()}, 2, {{"seq", v}});
    plain->run({want.data(), data[1].data(), data[2].data()}, 1, {{"seq", v}});
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-3)
          << to_string(r->best().opts) << " at seq=" << v << ", " << i;
  }
}

TEST(Search, BudgetsEndTheSearchWithTheBestSoFar) {
  KernelTask task = matmul_task(32, 32, 32);
  WorkerPool pool(test_pool());
  SearchSettings s;
  s.candidate_budget = 6;
  auto r = tune_kernel(task, pool, s);
  ASSERT_TRUE(r) << r.error();
  EXPECT_LE(r->candidates.size(), 7u); // the budget, and the reference
  EXPECT_EQ(r->stop_reason, "the candidate budget");
  EXPECT_EQ(r->best().status, Status::ok);

  s.candidate_budget = 5000;
  s.time_budget_s = 1e-3; // over before the first iteration
  auto t = tune_kernel(task, pool, s);
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->stop_reason, "the time budget");
  EXPECT_EQ(t->iterations, 0);
  EXPECT_EQ(t->best().status, Status::ok);

  // No time at all (a batch's budget spent before this kernel): the heuristic is still timed
  // and re-measured with the reference, so the answer is never the unoptimized kernel by
  // default (it was, with the heuristic skipped, for two quick-corpus kernels).
  s.time_budget_s = 0;
  auto none = tune_kernel(task, pool, s);
  ASSERT_TRUE(none) << none.error();
  ASSERT_NE(none->heuristic, none->empty);
  EXPECT_EQ(none->candidates.at(static_cast<size_t>(none->heuristic)).status, Status::ok);
  EXPECT_GT(none->heuristic_ms, 0);
  EXPECT_NE(std::find(none->finalists.begin(), none->finalists.end(), none->heuristic),
            none->finalists.end());
}

TEST(Search, AnUnoptimizedKernelThatCannotRunIsAClearError) {
  // The reference itself writes out of bounds: nothing can be checked against it.
  DType f32(Scalar::Float32);
  UOpPtr oob =
      sink({store(index(buffer_param(0, f32), UOp::const_int(Scalar::Index, int64_t{1} << 40)),
                  UOp::const_float(f32, 1.0))});
  KernelTask task{"E_oob", 0, print_graph(oob), {{f32, 16}}, 1};
  WorkerPool pool(test_pool());
  auto r = tune_kernel(task, pool, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("kernel E_oob: the unoptimized kernel failed in the sandbox (crashed, "
                           "SIGSEGV)"),
            std::string::npos)
      << r.error();
}

TEST(Search, ASeedIsMeasuredWithTheHeuristicAndNothingElseWithoutIterations) {
  // A plan tried by hand: the reference, the heuristic and the seed, nothing searched.
  KernelTask task = matmul_task(32, 32, 32);
  std::vector<Opt> seed = *parse_opts("UPCAST(1,4)");
  SearchSettings s;
  s.max_iterations = 0;
  s.early_stop = 1e9; // timed to the end however slow (under load it may pass 3x the heuristic)
  s.seeds = {seed, {}};
  WorkerPool pool(test_pool());
  auto r = tune_kernel(task, pool, s);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->candidates.size(), 3u);
  const Candidate* c = find(*r, "UPCAST(1,4)");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::ok) << c->error;
  EXPECT_FALSE(c->samples_ms.empty());
  EXPECT_EQ(r->iterations, 0);
}

TEST(Search, ACancelledSearchKeepsWhatItMeasuredAndAPausedOneWaits) {
  KernelTask task = matmul_task(64, 64, 64);
  SearchControl control;
  SearchSettings s;
  s.beam = 4;
  s.control = &control;
  WorkerPool pool(test_pool());
  std::atomic<int> settled = 0;
  std::atomic<bool> moved_while_paused = false;
  // Paused from the start, the search runs its reference and then waits: nothing settles until
  // it resumes. The sixth settled candidate cancels it from the search's own thread, so it can't
  // converge first.
  control.pause();
  std::thread driver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    int before = settled;
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    moved_while_paused = settled != before;
    control.resume();
  });
  auto r = tune_kernel(task, pool, s, [&](const Event& e) {
    if (e.kind == Event::Kind::settled && ++settled == 6) control.cancel();
  });
  driver.join();
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(moved_while_paused);
  EXPECT_EQ(r->stop_reason, "cancelled");
  // At least the six settled before the cancel are kept with their results.
  EXPECT_GE(static_cast<int>(r->candidates.size()) - r->count(Status::skipped), 6);
  EXPECT_GE(r->count(Status::ok), 1);
  EXPECT_EQ(r->best().status, Status::ok); // the best so far, re-measured
  EXPECT_GT(r->winner_ms, 0);
}

TEST(Pool, ActivityShowsTimingAndCompilingSlots) {
  WorkerPool pool(test_pool());
  std::promise<void> go;
  std::shared_future<void> started = go.get_future().share();
  std::atomic<bool> release = false;
  auto job = pool.submit(Access::exclusive, [&](Slot&) {
    go.set_value();
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  started.wait();
  std::vector<SlotActivity> a = pool.activity();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(std::count_if(a.begin(), a.end(),
                          [](const SlotActivity& s) { return s.state == SlotState::exclusive; }),
            1);
  release = true;
  job.get();
  // The slot goes idle right after its job's future is ready.
  auto busy = [&] {
    std::vector<SlotActivity> now = pool.activity();
    return std::any_of(now.begin(), now.end(),
                       [](const SlotActivity& s) { return s.state != SlotState::idle; });
  };
  for (int i = 0; i < 1000 && busy(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (const SlotActivity& s : pool.activity()) EXPECT_EQ(s.state, SlotState::idle);
}

TEST(Search, NeighboursAddChangeAndRemoveOpts) {
  UOpPtr ast = *parse_graph(matmul_task(64, 64, 64).ast);
  std::vector<Opt> plan = {{OptOp::Upcast, 1, 16}};
  auto n = neighbours(ast, plan, 2);
  auto has = [&](const std::string& text) {
    return std::any_of(n.begin(), n.end(), [&](const auto& p) { return to_string(p) == text; });
  };
  EXPECT_TRUE(has("UPCAST(1,16) UPCAST(0,4)")); // one more
  EXPECT_TRUE(has("UPCAST(1,8)"));              // another amount
  EXPECT_TRUE(has(""));                         // removed
  EXPECT_FALSE(has("UPCAST(1,16)"));            // not itself
}

TEST(Pool, TimingIsAloneOnTheMachine) {
  PoolOptions o = test_pool();
  o.workers = 3;
  WorkerPool pool(o);
  std::atomic<int> active{0}, violations{0};
  std::atomic<bool> exclusive{false};
  // An exclusive job finds nothing else running, and nothing starts while it runs.
  auto job = [&](Access a) {
    return [&, a](Slot&) {
      int now = ++active;
      if (exclusive.load() || (a == Access::exclusive && now != 1)) ++violations;
      if (a == Access::exclusive) exclusive = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (a == Access::exclusive) exclusive = false;
      --active;
    };
  };
  std::vector<std::future<void>> done;
  for (int i = 0; i < 60; ++i)
    done.push_back(pool.submit(i % 4 == 0 ? Access::exclusive : Access::shared,
                               job(i % 4 == 0 ? Access::exclusive : Access::shared), i % 3));
  for (auto& d : done) d.get();
  EXPECT_EQ(violations.load(), 0);
  // Jobs for a slot run on that slot's thread.
  EXPECT_EQ(pool.submit(
                    Access::shared, [](Slot& s) { return s.index; }, 2)
                .get(),
            2);
}

TEST(Policy, BeamTunesEachKernelOnceAndComputesTheSameValues) {
  Tensor a = Tensor::rand({48, 40}, 3), b = Tensor::rand({40, 56}, 4);
  std::vector<float> want = a.matmul(b).relu().to_vector<float>();
  SearchSettings s;
  s.beam = 1;
  BeamPolicy beam(s, test_pool());
  Tensor c = a.matmul(b).relu();
  c.realize({.threads = 2, .policy = &beam});
  std::vector<float> got = c.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  ASSERT_EQ(beam.results().size(), 1u);
  Tensor again = a.matmul(b).relu();
  again.realize({.threads = 2, .policy = &beam});
  EXPECT_EQ(beam.results().size(), 1u); // tuned once
}

// A kernel of constants (here a weight scaled, as a Winograd filter transform reads only the
// weight) runs once, before the first run: BEAM searches the kernels that run, not it.
TEST(Policy, BeamSearchesNoKernelOfConstants) {
  auto storage = std::make_shared<Buffer>(40 * 56 * sizeof(float));
  std::span<float> w = storage->as<float>();
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3;
  storage->mark_constant();
  Tensor a = Tensor::rand({48, 40}, 3);
  auto product = [&] { // a fresh graph each time: a realized one would be a buffer
    return a.matmul((Tensor::from_storage(storage, {40, 56}, Scalar::Float32) * 0.5).contiguous());
  };
  std::vector<float> want = product().to_vector<float>();
  SearchSettings s;
  s.beam = 1;
  s.max_iterations = 1;
  BeamPolicy beam(s, test_pool());
  Tensor c = product();
  c.realize({.threads = 2, .policy = &beam});
  std::vector<float> got = c.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-3) << i;
  EXPECT_EQ(beam.results().size(), 1u); // the matmul's search only
}

TEST(Policy, BeamFromTheEnvironment) {
  ::setenv("BEAM", "wide", 1);
  try {
    install_beam_from_env();
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("BEAM='wide': expected a beam width"), std::string::npos)
        << e.what();
  }
  ::setenv("BEAM", "0", 1);
  EXPECT_EQ(install_beam_from_env(), nullptr);
  ::setenv("BEAM", "2", 1);
  auto p = install_beam_from_env();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(&default_policy(), p.get());
  set_default_policy(nullptr);
  ::unsetenv("BEAM");
}

} // namespace
} // namespace beamlab::tuner

// The journal and the tuning cache end to end: a realize that hits the cache searches nothing,
// a stale entry is re-searched, a replayed search retraces its steps, and the CLI's batch runs
// survive kill -9 (resumed without re-measuring) and shard and merge to the unsharded cache.
#include <gtest/gtest.h>

#include "tests/busy_cpus.hpp"
#include "tests/synthetic_limits.hpp"
#include "tests/temp_dir.hpp"
#include "tests/tuner/symbolic_task.hpp"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "db/database.hpp"
#include "db/sqlite.hpp"
#include "tuner/batch/policy.hpp"
#include "tuner/batch/session.hpp"
#include "tuner/store/device.hpp"
#include "tuner/store/journal.hpp"
#include "tuner/store/records.hpp"
#include "tuner/store/run.hpp"

extern char** environ;

namespace beamlab::tuner {
namespace {

namespace fs = std::filesystem;

class JournalTest : public beamlab::test_support::TempDirTest {};

SearchSettings quick_settings() {
  SearchSettings s;
  s.beam = 1;
  s.max_iterations = 2;
  s.final_rounds = 2;
  return s;
}

PoolOptions small_pool() {
  PoolOptions o;
  o.workers = 2;
  o.sandbox.threads = 2;
  return o;
}

Tensor small_matmul() { return Tensor::rand({32, 48}, 1).matmul(Tensor::rand({48, 64}, 2)); }

TEST_F(JournalTest, ARealizeThatHitsTheCacheSearchesNothing) {
  std::vector<float> heuristic = small_matmul().to_vector<float>();
  std::vector<float> searched;
  {
    BeamPolicy first(quick_settings(), small_pool());
    first.use_cache(file("c.db"), CacheMode::use);
    searched = small_matmul().realize({.threads = 2, .policy = &first}).to_vector<float>();
    ASSERT_EQ(first.results().size(), 1u);
    EXPECT_EQ(first.cache_hits(), 0);
  }
  // The winner may split or unroll the reduction, which reorders its float sums: it matches the
  // heuristic plan to rounding. The cache hit runs that same winner, so it matches it exactly.
  ASSERT_EQ(searched.size(), heuristic.size());
  for (size_t i = 0; i < searched.size(); ++i) EXPECT_NEAR(searched[i], heuristic[i], 1e-4) << i;
  BeamPolicy second(quick_settings(), small_pool());
  second.use_cache(file("c.db"), CacheMode::use);
  EXPECT_EQ(small_matmul().realize({.threads = 2, .policy = &second}).to_vector<float>(), searched);
  EXPECT_EQ(second.cache_hits(), 1);
  EXPECT_TRUE(second.results().empty()); // no search, so no candidate compiled
  // Ignoring the cache searches again (and still writes).
  BeamPolicy third(quick_settings(), small_pool());
  third.use_cache(file("c.db"), CacheMode::ignore);
  (void)small_matmul().realize({.threads = 2, .policy = &third});
  EXPECT_EQ(third.results().size(), 1u);
  EXPECT_EQ(third.cache_hits(), 0);
}

TEST_F(JournalTest, AnEntryThatNoLongerBuildsItsKernelIsMarkedStaleAndReSearched) {
  {
    BeamPolicy first(quick_settings(), small_pool());
    first.use_cache(file("c.db"), CacheMode::use);
    (void)small_matmul().realize({.threads = 2, .policy = &first});
  }
  {
    db::Database db(file("c.db"));
    db.connection().exec("UPDATE cache SET optimized_hash = '0123456789abcdef'");
  }
  BeamPolicy second(quick_settings(), small_pool());
  second.use_cache(file("c.db"), CacheMode::use);
  (void)small_matmul().realize({.threads = 2, .policy = &second});
  EXPECT_EQ(second.cache_hits(), 0);
  EXPECT_EQ(second.results().size(), 1u);
  db::Database db(file("c.db"), db::Database::Access::read_only);
  std::vector<db::CacheEntry> es = db.cache_entries();
  ASSERT_EQ(es.size(), 1u); // the fresh search's winner replaced the stale entry
  EXPECT_FALSE(es[0].stale);
}

TEST_F(JournalTest, AStoredKernelReadsBackAsTheSameTask) {
  KernelTask task = kernel_task(
      Tensor::rand({16, 24}, 1).matmul(Tensor::rand({24, 8}, 2)).schedule().items.at(0));
  task.buffers.at(2).constant = true; // a weight: timed cold
  auto back = task_from_record(kernel_record(task));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->key, task.key);
  EXPECT_EQ(back->ast, task.ast);
  EXPECT_EQ(back->reduce_length, 24);
  ASSERT_EQ(back->buffers.size(), task.buffers.size());
  for (size_t i = 0; i < task.buffers.size(); ++i) {
    EXPECT_EQ(back->buffers[i].dtype, task.buffers[i].dtype);
    EXPECT_EQ(back->buffers[i].count, task.buffers[i].count);
    EXPECT_EQ(back->buffers[i].constant, i == 2) << i;
  }
  db::Kernel old = kernel_record(task); // a row from before constants were recorded
  old.shapes = R"([{"dtype": "float32", "count": 128}, {"dtype": "float32", "count": 384},
                   {"dtype": "float32", "count": 192}])";
  auto warm = task_from_record(old);
  ASSERT_TRUE(warm) << warm.error();
  for (const KernelBufferSpec& b : warm->buffers) EXPECT_FALSE(b.constant);
  db::Kernel bad = kernel_record(task);
  bad.shapes = R"([{"dtype": "float33", "count": 4}])";
  auto e = task_from_record(bad);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("bad buffer shape"), std::string::npos) << e.error();
  bad = kernel_record(task);
  bad.hash = "0000000000000001";
  ASSERT_FALSE(task_from_record(bad));
}

// A search's outcome is stored whole: its tie with the runner-up and its tie with the heuristic
// are two facts (a resumed run used to report the first as the second).
TEST_F(JournalTest, AFinishedSearchStoresBothItsTies) {
  db::Database db(file("ties.db"));
  KernelTask task = kernel_task(small_matmul().schedule().items.at(0));
  int64_t run = db.begin_run(
      {db.upsert_device(this_device()), db::RunKind::tune, "", "test", "{}", "", db::host_name()});
  TuningJournal journal(db, run, task, "test", 2, quick_settings(), "", 10);
  TuneResult r;
  r.candidates.resize(3);
  for (int i = 0; i < 3; ++i) r.candidates[size_t(i)].id = i;
  r.candidates[1].opts = {{OptOp::Upcast, 1, 4}};
  r.candidates[2].opts = {{OptOp::Upcast, 1, 8}};
  r.empty = 0;
  r.heuristic = 1;
  r.winner = 2;
  r.winner_ms = 0.5;
  r.heuristic_ms = 0.9;
  r.tie = true;
  r.tie_with_heuristic = false;
  r.speedup = paired_ratio({0.9, 0.92, 0.88}, {0.5, 0.51, 0.49});
  r.rounds_disturbed = 1;
  r.round_ms = {{1, {0.9, 0.92, 0.88}}, {2, {0.5, 0.51, 0.49}}};
  r.stop_reason = "convergence";
  journal.finish(r);
  db::Tuning t = db.tunings(run).at(0);
  EXPECT_EQ(t.status, db::TuningStatus::done);
  EXPECT_TRUE(t.tie);
  EXPECT_FALSE(t.tie_with_heuristic);
  EXPECT_EQ(t.winner_opts, "UPCAST(1,8)");
  EXPECT_EQ(t.heuristic_opts, "UPCAST(1,4)");
  EXPECT_DOUBLE_EQ(t.winner_ms.value_or(0), 0.5);
  EXPECT_DOUBLE_EQ(t.heuristic_ms.value_or(0), 0.9);
  EXPECT_EQ(t.stop_reason, "convergence");
  // The paired verdict and the rounds it came from, enough to compute it again.
  ASSERT_TRUE(t.speedup);
  EXPECT_NEAR(t.speedup->estimate, r.speedup.estimate, 1e-12);
  EXPECT_NEAR(t.speedup->lo, r.speedup.lo, 1e-12);
  EXPECT_NEAR(t.speedup->hi, r.speedup.hi, 1e-12);
  EXPECT_GT(t.speedup->lo, 1);
  EXPECT_EQ(t.rounds_disturbed, 1);
  EXPECT_EQ(t.round_ms, "1 0.9 0.92 0.88\n2 0.5 0.51 0.49\n");
}

TEST_F(JournalTest, ASymbolicKernelsTuningRecordsWhereItWasTimedAndChecked) {
  db::Database db(file("symbolic.db"));
  int64_t run = db.begin_run(
      {db.upsert_device(this_device()), db::RunKind::tune, "", "test", "{}", "", db::host_name()});
  KernelTask task = test_support::symbolic_matmul_task();
  TuningJournal(db, run, task, "test", 2, quick_settings(), "", 10);
  KernelTask fixed = kernel_task(small_matmul().schedule().items.at(0));
  TuningJournal(db, run, fixed, "test", 2, quick_settings(), "", 10);
  std::vector<db::Tuning> tunings = db.tunings(run);
  ASSERT_EQ(tunings.size(), 2u);
  EXPECT_EQ(tuned_at(tunings[0]), "seq=96, seq=12");
  EXPECT_EQ(checked_at(tunings[0]), "seq=1, seq=96, seq=12");
  EXPECT_EQ(tuned_at(tunings[1]), "");
  // The stored kernel reads back with the same default values.
  auto back = task_from_record(db.kernel(tunings[0].kernel_id).value());
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->tune_at, task.tune_at);
  EXPECT_EQ(back->check_at, task.check_at);
}

TEST_F(JournalTest, ActionSpacesCoverOnlyWhatTheyRecorded) {
  EXPECT_TRUE(action_space_covers("UPCAST:2,4 SWAP", "UPCAST:2 SWAP"));
  EXPECT_FALSE(action_space_covers("UPCAST:2,4", "UPCAST:2,8"));
  EXPECT_FALSE(action_space_covers("UPCAST:2,4", "UPCAST:2 PADTO:32"));
  KernelTask task = kernel_task(small_matmul().schedule().items.at(0));
  UOpPtr ast = *parse_graph(task.ast);
  std::string space = action_space(ast, 2);
  EXPECT_NE(space.find("UPCAST:"), std::string::npos) << space;
  EXPECT_TRUE(action_space_covers(space, space));
  // An elementwise kernel has no reduce axis: UNROLL and GROUP don't apply, so adding amounts
  // to them could not invalidate its plans.
  KernelTask add = kernel_task((Tensor::rand({1024}, 1) + 1.0).schedule().items.at(0));
  std::string add_space = action_space(*parse_graph(add.ast), 2);
  EXPECT_EQ(add_space.find("UNROLL"), std::string::npos) << add_space;
  EXPECT_EQ(add_space.find("GROUP"), std::string::npos) << add_space;
}

TEST_F(JournalTest, AReplayedSearchRetracesItsStepsWithoutMeasuring) {
  KernelTask task = kernel_task(small_matmul().schedule().items.at(0));
  WorkerPool pool(small_pool());
  SearchSettings s = quick_settings();
  s.threads = 2;
  // What a journal holds: each candidate as the search settled it (before the finalists'
  // re-measurement adds samples).
  Replay replay;
  Expected<TuneResult> first = tune_kernel(task, pool, s, [&](const Event& e) {
    if (e.kind == Event::Kind::settled || e.kind == Event::Kind::reference)
      replay.emplace(to_string(e.candidate->opts), *e.candidate);
  });
  ASSERT_TRUE(first);
  Expected<TuneResult> again = tune_kernel(task, pool, s, {}, &replay);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->replayed, static_cast<int>(first->candidates.size()) - 1); // all but ""
  ASSERT_EQ(again->candidates.size(), first->candidates.size());
  for (size_t i = 1; i < first->candidates.size(); ++i)
    EXPECT_EQ(to_string(again->candidates[i].opts), to_string(first->candidates[i].opts));
  EXPECT_EQ(again->compile_s, 0); // only the finalists' re-measurement compiled anything
}

// --- the CLI ---------------------------------------------------------------------------------

/// Starts the beamlab CLI with `args`; its output goes to `log`.
pid_t start_cli(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {BEAMLAB_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  // Its own process group, so kill -9 takes its sandboxes with it.
  SpawnOptions spawn;
  spawn.log = log;
  spawn.own_process_group = true;
  Expected<pid_t> pid = spawn_process(argv, spawn);
  EXPECT_TRUE(pid) << pid.error();
  return pid ? *pid : -1;
}

int wait_cli(pid_t pid) { return wait_process(pid).value_or(-1); }

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_corpus(const std::string& path) {
  std::ofstream(path) << R"({"name": "test", "workloads": [
    {"workload": "matmul", "params": {"M": 96, "N": 128, "K": 64}},
    {"workload": "softmax", "params": {"ROWS": 128, "COLS": 256}},
    {"workload": "reduce_sum", "params": {"N": 262144}}]})";
}

/// Candidates by (tuning, seq): their samples.
std::map<std::pair<int64_t, int>, std::vector<double>> journal(const std::string& path) {
  db::Database db(path, db::Database::Access::read_only);
  std::map<std::pair<int64_t, int>, std::vector<double>> out;
  for (const db::Run& r : db.runs())
    for (const db::Tuning& t : db.tunings(r.id))
      for (const db::CandidateRow& c : db.candidates(t.id)) out[{t.id, c.seq}] = c.samples_ms;
  return out;
}

/// Until `pid` has died, without reaping it: a zombie (/proc state Z) whose threads are all
/// gone (a zombie leader may wait for its other threads to finish exiting).
void wait_for_zombie(pid_t pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  for (int i = 0; i < 2500; ++i) {
    std::ifstream stat(proc + "/stat");
    std::string line;
    std::getline(stat, line);
    auto tasks = std::distance(fs::directory_iterator(proc + "/task"), {});
    if (line.find(") Z ") != std::string::npos && tasks == 1) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ADD_FAILURE() << "process " << pid << " did not die";
}

/// Starts `beamlab tune` on the test corpus into `db_path` and returns once it has journaled
/// some candidates (its run is under way).
pid_t start_tuning(const std::string& corpus, const std::string& db_path, const std::string& log) {
  write_corpus(corpus);
  pid_t pid = start_cli({"tune", corpus, "--beam", "2", "--db", db_path, "--quiet"}, log);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    try {
      if (fs::exists(db_path) && journal(db_path).size() >= 3) return pid;
    } catch (const UserError&) {
    }
  }
  ADD_FAILURE() << "no candidates journaled: " << read_file(log);
  return pid;
}

// A live run is refused by its lock, whatever pid its row names (a dead one here).
TEST_F(JournalTest, ALiveRunIsRefusedByItsLockNotItsRecordedPid) {
  std::string db_path = file("run.db"), log = file("log.txt"), resume_log = file("resume.txt");
  pid_t pid = start_tuning(file("corpus.json"), db_path, log);
  {
    db::Database db(db_path);
    db.connection().exec("UPDATE runs SET pid = 999999999, host = 'elsewhere'");
    EXPECT_EQ(db.runs()[0].status, db::RunStatus::running);
  }
  EXPECT_EQ(wait_cli(start_cli({"tune", "--resume", "--db", db_path}, resume_log)), 1);
  std::string out = read_file(resume_log);
  EXPECT_NE(out.find("beamlab: error: --resume 1: run 1 is still running (process 999999999 on "
                     "elsewhere holds it)"),
            std::string::npos)
      << out;
  ::kill(-pid, SIGKILL);
  wait_cli(pid);
}

// A run killed long ago whose pid now belongs to an unrelated live process on this host.
TEST_F(JournalTest, AStalePidOfAnUnrelatedProcessDoesNotBlockAResume) {
  std::string db_path = file("run.db"), log = file("log.txt");
  pid_t pid = start_tuning(file("corpus.json"), db_path, log);
  ::kill(-pid, SIGKILL);
  wait_cli(pid);
  {
    db::Database db(db_path);
    db.connection().exec("UPDATE runs SET pid = " + std::to_string(::getpid()));
    EXPECT_EQ(db.runs()[0].status, db::RunStatus::interrupted);
  }
  EXPECT_EQ(wait_cli(start_cli({"tune", "--resume", "--db", db_path, "--quiet"}, log)), 0)
      << read_file(log);
  db::Database db(db_path, db::Database::Access::read_only);
  EXPECT_EQ(db.runs()[0].status, db::RunStatus::done);
}

TEST_F(JournalTest, ARunKilledWithSigkillResumesWithoutReMeasuring) {
  write_corpus(file("corpus.json"));
  std::string db_path = file("run.db"), log = file("log.txt");
  pid_t pid =
      start_cli({"tune", file("corpus.json"), "--beam", "2", "--db", db_path, "--quiet"}, log);
  // Kill it once some candidates are committed and a search is under way.
  std::map<std::pair<int64_t, int>, std::vector<double>> before;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    try {
      if (!fs::exists(db_path)) continue;
      before = journal(db_path);
      if (before.size() >= 12) break;
    } catch (const UserError&) {
      // created but not yet migrated: try again
    }
  }
  ASSERT_GE(before.size(), 12u) << read_file(log);
  ::kill(-pid, SIGKILL);
  // Resumed at once, the killed process not yet reaped (a zombie whose pid still answers, as
  // under an init that doesn't reap): its lock went with its death.
  wait_for_zombie(pid);
  before = journal(db_path); // what the kill left: committed rows only
  {
    db::Database db(db_path, db::Database::Access::read_only);
    EXPECT_TRUE(db.verify().empty());
    ASSERT_EQ(db.runs().size(), 1u);
    EXPECT_EQ(db.runs()[0].status, db::RunStatus::interrupted); // recorded running, dead
  }
  EXPECT_EQ(wait_cli(start_cli({"tune", "--resume", "--db", db_path, "--quiet"}, log)), 0)
      << read_file(log);
  EXPECT_EQ(wait_cli(pid), 128 + SIGKILL);
  db::Database db(db_path, db::Database::Access::read_only);
  std::vector<db::Run> runs = db.runs();
  ASSERT_EQ(runs.size(), 1u) << "the resume continued the same run";
  EXPECT_EQ(runs[0].status, db::RunStatus::done);
  std::vector<db::Tuning> tunings = db.tunings(runs[0].id);
  EXPECT_EQ(tunings.size(), 3u);
  for (const db::Tuning& t : tunings) {
    EXPECT_EQ(t.status, db::TuningStatus::done);
    ASSERT_TRUE(t.winner_ms.has_value());
    EXPECT_GT(*t.winner_ms, 0);
  }
  // Every candidate measured before the kill kept its samples: not one was measured again
  // (the finalists' re-measurement may only add samples after them).
  std::map<std::pair<int64_t, int>, std::vector<double>> after = journal(db_path);
  for (const auto& [key, samples] : before) {
    ASSERT_TRUE(after.count(key));
    const std::vector<double>& now = after[key];
    ASSERT_GE(now.size(), samples.size());
    EXPECT_TRUE(std::equal(samples.begin(), samples.end(), now.begin()))
        << "candidate " << key.second << " of tuning " << key.first << " was re-measured";
  }
  EXPECT_GT(after.size(), before.size());
  // The cache holds each kernel's winner.
  EXPECT_EQ(db.cache_entries().size(), 3u);
}

// SIGINT or SIGTERM: the searches stop as at a budget's end, the run is kept as interrupted,
// the exit status is 128 + the signal, nothing is left in /dev/shm, and --resume finishes it.
void interrupt_and_resume(const std::string& corpus, const std::string& db_path,
                          const std::string& log, int sig) {
  write_corpus(corpus);
  pid_t pid = start_cli({"tune", corpus, "--beam", "1", "--db", db_path, "--quiet"}, log);
  size_t committed = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && committed < 6) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    try {
      if (fs::exists(db_path)) committed = journal(db_path).size();
    } catch (const UserError&) {
    }
  }
  ASSERT_GE(committed, 6u) << read_file(log);
  ::kill(pid, sig);
  EXPECT_EQ(wait_cli(pid), 128 + sig) << read_file(log);
  std::string out = read_file(log);
  EXPECT_NE(out.find(std::string("beamlab: interrupted by ") +
                     (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                     ": run 1 is kept; finish it with 'beamlab tune --resume-run 1'"),
            std::string::npos)
      << out;
  EXPECT_FALSE(fs::exists("/dev/shm/__KMP_REGISTERED_LIB_" + std::to_string(pid) + "_" +
                          std::to_string(::getuid())));
  {
    db::Database db(db_path, db::Database::Access::read_only);
    EXPECT_TRUE(db.verify().empty());
    ASSERT_EQ(db.runs().size(), 1u);
    EXPECT_EQ(db.runs()[0].status, db::RunStatus::interrupted);
  }
  EXPECT_EQ(wait_cli(start_cli({"tune", "--resume", "--db", db_path, "--quiet"}, log)), 0)
      << read_file(log);
  db::Database db(db_path, db::Database::Access::read_only);
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].status, db::RunStatus::done);
  EXPECT_EQ(db.cache_entries().size(), 3u);
}

TEST_F(JournalTest, SigintMarksTheRunInterruptedAndResumeFinishesIt) {
  interrupt_and_resume(file("corpus.json"), file("run.db"), file("log.txt"), SIGINT);
}

TEST_F(JournalTest, SigtermMarksTheRunInterruptedAndResumeFinishesIt) {
  interrupt_and_resume(file("corpus.json"), file("run.db"), file("log.txt"), SIGTERM);
}

std::set<std::tuple<std::string, std::string, std::string, int, std::string>>
cache_keys_and_plans(const std::string& path) {
  db::Database db(path, db::Database::Access::read_only);
  std::set<std::tuple<std::string, std::string, std::string, int, std::string>> out;
  for (const db::CacheEntry& e : db.cache_entries())
    out.emplace(e.kernel_hash, e.device, e.settings_key, e.threads, e.opts);
  return out;
}

// A run's life (tuner/store/run.hpp): it ends as its finish says, once; cancelled is
// interrupted whatever failed; dropped without a finish (an exception on the way) it is failed;
// resumed, it runs again on its own device.
TEST_F(JournalTest, ARunEndsOnceAsItsFinishSaysAndFailedWhenDropped) {
  db::Database db(file("runs.db"));
  auto begin = [&](const std::string& label) {
    return ActiveRun::begin(db, {db::RunKind::tune, label, "beamlab tune x", "{}", ""});
  };
  auto status = [&](int64_t id) { return db.run(id)->status; };
  int64_t done = 0, cancelled = 0, failed = 0, dropped = 0;
  {
    ActiveRun r = begin("done");
    done = r.id();
    EXPECT_EQ(status(done), db::RunStatus::running);
    EXPECT_EQ(db.run(done)->host, db::host_name());
    EXPECT_EQ(db.run(done)->label, "done");
    EXPECT_NE(r.source().find("run " + std::to_string(done) + " on " + db::host_name()),
              std::string::npos)
        << r.source();
    r.finish(false, false);
    r.finish(true, true); // a second finish changes nothing
  }
  EXPECT_EQ(status(done), db::RunStatus::done);
  {
    ActiveRun r = begin("cancelled");
    cancelled = r.id();
    r.finish(true, true);
  }
  EXPECT_EQ(status(cancelled), db::RunStatus::interrupted);
  {
    ActiveRun r = begin("failed");
    failed = r.id();
    r.finish(false, true);
  }
  EXPECT_EQ(status(failed), db::RunStatus::failed);
  try {
    ActiveRun r = begin("dropped");
    dropped = r.id();
    throw std::runtime_error("on the way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(status(dropped), db::RunStatus::failed);
  {
    ActiveRun r = ActiveRun::resume(db, cancelled);
    EXPECT_EQ(status(cancelled), db::RunStatus::running);
    EXPECT_EQ(r.device_id(), db.run(cancelled)->device_id);
    r.finish(false, false);
  }
  EXPECT_EQ(status(cancelled), db::RunStatus::done);
  EXPECT_EQ(db.runs().size(), 4u); // a resume begins no new run
}

TEST_F(JournalTest, MergedShardsEqualOneUnshardedRun) {
  write_corpus(file("corpus.json"));
  // One candidate per kernel (the heuristic's plan) and an early stop at 1x: quick searches.
  std::vector<std::string> common = {
      "tune", file("corpus.json"), "--beam", "1",      "--max-candidates",
      "1",    "--early-stop",      "1",      "--quiet"};
  auto run = [&](const std::string& db, const std::vector<std::string>& extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--db", db});
    args.insert(args.end(), extra.begin(), extra.end());
    return wait_cli(start_cli(args, file("log.txt")));
  };
  ASSERT_EQ(run(file("all.db"), {}), 0) << read_file(file("log.txt"));
  ASSERT_EQ(run(file("s0.db"), {"--shard", "0/2"}), 0) << read_file(file("log.txt"));
  ASSERT_EQ(run(file("s1.db"), {"--shard", "1/2"}), 0) << read_file(file("log.txt"));
  auto s0 = cache_keys_and_plans(file("s0.db")), s1 = cache_keys_and_plans(file("s1.db"));
  EXPECT_FALSE(s0.empty());
  EXPECT_FALSE(s1.empty());
  for (const auto& k : s0) EXPECT_FALSE(s1.count(k)) << "a kernel tuned in both shards";
  ASSERT_EQ(wait_cli(start_cli(
                {"cache", "merge", file("s0.db"), file("s1.db"), "--db", file("merged.db")},
                file("log.txt"))),
            0)
      << read_file(file("log.txt"));
  // The merge holds exactly the shards' entries, plans included, and covers the same keys as
  // the unsharded run. (Plans are not compared with that run's: which of the heuristic's plan
  // and the unoptimized reference re-measures faster is timing, and CI machines are loaded.)
  auto merged_entries = cache_keys_and_plans(file("merged.db"));
  auto shards = s0;
  shards.insert(s1.begin(), s1.end());
  EXPECT_EQ(merged_entries, shards);
  auto keys = [](const auto& entries) {
    std::set<std::tuple<std::string, std::string, std::string, int>> out;
    for (const auto& [hash, device, settings, threads, opts] : entries)
      out.emplace(hash, device, settings, threads);
    return out;
  };
  EXPECT_EQ(keys(merged_entries), keys(cache_keys_and_plans(file("all.db"))));
  db::Database merged(file("merged.db"), db::Database::Access::read_only);
  EXPECT_EQ(merged.runs().size(), 2u);
  EXPECT_TRUE(merged.verify().empty());
}

TEST_F(JournalTest, SlurmArrayVariablesPickTheShard) {
  write_corpus(file("corpus.json"));
  ::setenv("SLURM_ARRAY_TASK_ID", "1", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
  int rc = wait_cli(start_cli({"tune", file("corpus.json"), "--beam", "1", "--max-candidates", "1",
                               "--db", file("s.db"), "--quiet"},
                              file("log.txt")));
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ASSERT_EQ(rc, 0) << read_file(file("log.txt"));
  EXPECT_NE(read_file(file("log.txt")).find("shard 1/3"), std::string::npos)
      << read_file(file("log.txt"));
  EXPECT_EQ(cache_keys_and_plans(file("s.db")).size(), 1u);
}

// One settings shape for every door, and what older versions stored reads back.
TEST_F(JournalTest, EveryDoorsSettingsRoundTripAndOlderShapesReadBack) {
  TuneSettings s;
  s.door = "python";
  s.what.kernels = {"00ab", "00cd"};
  s.what.workload = "python";
  s.beam = 3;
  s.budget_s = 12.5;
  s.kernel_budget_s = 7;
  s.shard = "1/4";
  s.cache = "ignore";
  s.label = "x";
  s.warm_start = true;
  TuneSettings back = TuneSettings::from_json(s.to_json());
  EXPECT_EQ(back.to_json(), s.to_json());
  // The CLI's shape before version 2: no door, kernels or workload.
  nlohmann::json cli = s.to_json();
  for (const char* key : {"door", "kernels", "workload", "version", "prune", "warm_start"})
    cli.erase(key);
  cli["target"] = "matmul";
  cli["params"] = {"--M", "64"};
  TuneSettings old_cli = TuneSettings::from_json(cli);
  EXPECT_EQ(old_cli.door, "cli");
  EXPECT_EQ(old_cli.what.target, "matmul");
  EXPECT_EQ(old_cli.what.params, (std::vector<std::string>{"--M", "64"}));
  EXPECT_EQ(old_cli.beam, 3);
  EXPECT_TRUE(old_cli.what.kernels.empty());
  // Python's and the GUI's before version 2: a search's settings.
  SearchSettings search;
  search.beam = 2;
  search.time_budget_s = 33;
  search.candidate_budget = 77;
  TuneSettings old_py = TuneSettings::from_json(settings_json(search));
  EXPECT_EQ(old_py.beam, 2);
  EXPECT_EQ(old_py.kernel_budget_s, 33);
  EXPECT_EQ(old_py.max_candidates, 77);
  EXPECT_TRUE(old_py.what.target.empty() && old_py.what.kernels.empty());
  EXPECT_THROW(TuneSettings::from_json(nlohmann::json::array()), UserError);
}

// Stops the batch once its first kernel is searched, as a Ctrl-C would.
class CancelAfterFirst : public BatchListener {
public:
  explicit CancelAfterFirst(SearchControl& c) : control_(c) {}
  void finished(const BatchKernel& /*k*/) override { control_.cancel(); }

private:
  SearchControl& control_;
};

// A run of a program given in memory, begun as Python's beamlab.tune() begins it and
// interrupted after its first kernel, resumes from the CLI: with its own kernels (recorded when
// it began) and settings (its thread count among them), the first kernel not searched again.
TEST_F(JournalTest, ARunBegunFromPythonResumesFromTheCli) {
  std::string db_path = file("run.db"), log = file("log.txt");
  Tensor a = Tensor::rand({32, 48}, 1).matmul(Tensor::rand({48, 64}, 2));
  Program program;
  program.outputs = {(a.sum({1}) + 1).exp()};
  TuneRequest r;
  r.db_path = db_path;
  std::vector<KernelTask>& tasks = r.tasks.emplace();
  for (const ScheduleItem& item : program.schedule().items) tasks.push_back(kernel_task(item));
  ASSERT_GE(tasks.size(), 2u);
  r.settings.door = "python";
  r.settings.what.workload = "python";
  r.settings.beam = 1;
  r.settings.kernel_budget_s = 10;
  r.settings.max_candidates = 6;
  // Every core, as Python asks, resolved by the door to 1 here: the CLI's default (2 on a
  // 2-core machine) must not be what the resume runs at, or it would search the kernels again.
  r.settings.threads = 0;
  r.all_threads = 1;
  r.settings.workers = 2;
  SearchControl control;
  r.control = &control;
  size_t kernels = tasks.size();
  int64_t run_id = 0;
  {
    TuneSession session(r);
    run_id = session.run_id();
    CancelAfterFirst cancel(control);
    BatchReport report = session.run(cancel);
    EXPECT_EQ(report.count(BatchKernel::Outcome::tuned), 1);
  }
  int64_t first_tuning = 0;
  {
    db::Database db(db_path, db::Database::Access::read_only);
    ASSERT_EQ(db.runs().size(), 1u);
    EXPECT_EQ(db.runs()[0].status, db::RunStatus::interrupted);
    ASSERT_EQ(db.tunings(run_id).size(), 1u);
    first_tuning = db.tunings(run_id)[0].id;
    nlohmann::json settings = nlohmann::json::parse(db.runs()[0].settings);
    EXPECT_EQ(settings["door"], "python");
    EXPECT_EQ(settings["kernels"].size(), kernels);
    EXPECT_EQ(settings["threads"], 1) << "stored resolved";
  }
  EXPECT_EQ(wait_cli(start_cli({"tune", "--resume", "--db", db_path, "--quiet"}, log)), 0)
      << read_file(log);
  EXPECT_NE(read_file(log).find("resuming run 1"), std::string::npos) << read_file(log);
  db::Database db(db_path, db::Database::Access::read_only);
  ASSERT_EQ(db.runs().size(), 1u) << "the resume continued the same run";
  EXPECT_EQ(db.runs()[0].status, db::RunStatus::done);
  std::vector<db::Tuning> tunings = db.tunings(run_id);
  ASSERT_EQ(tunings.size(), kernels);
  EXPECT_EQ(tunings[0].id, first_tuning) << "the first kernel was not searched again";
  for (const db::Tuning& t : tunings) {
    EXPECT_EQ(t.status, db::TuningStatus::done);
    EXPECT_EQ(t.workload, "python");
  }
}

// An older Python or GUI run stored no target: a resume takes the kernels its journal holds,
// and says so.
TEST_F(JournalTest, AnOlderRunWithoutATargetResumesItsJournaledKernels) {
  std::string db_path = file("run.db");
  KernelTask task = kernel_task(small_matmul().schedule().items.at(0));
  int64_t run_id = 0;
  {
    db::Database db(db_path);
    ActiveRun run = ActiveRun::begin(db, {.kind = db::RunKind::tune,
                                          .label = "",
                                          .command = "beamlab.tune(...)  # Python",
                                          .settings = settings_json(quick_settings()).dump(),
                                          .git_revision = ""});
    run_id = run.id();
    // A search under way when it was stopped: the row stays running.
    db.open_tuning(run_id, db.upsert_kernel(kernel_record(task)), 2, "python", "{}", "", 10);
    run.finish(true, false);
  }
  TuneRequest r;
  r.db_path = db_path;
  r.resume = 0;
  TuneSession session(r);
  EXPECT_EQ(session.run_id(), run_id);
  EXPECT_NE(session.note().find("resuming the 1 its journal holds"), std::string::npos)
      << session.note();
  EXPECT_EQ(session.settings().what.kernels, std::vector<std::string>{hash_hex(task.key)});
  EXPECT_EQ(session.settings().what.workload, "python");
}

// The machine's limits measured while other processes spin on every CPU are low (a build on
// both cores once halved the FMA peak stored): they are stored with how busy the machine was
// where none were, never over quieter ones, and busy ones are measured again at the next use.
TEST_F(JournalTest, LimitsMeasuredOnABusyMachineGiveWayToQuieterOnes) {
  db::Database db(file("limits.db"));
  int64_t id = db.upsert_device(this_device());
  {
    test_support::BusyCpus busy;
    MachineLimits l = device_limits(db, id, true);
    EXPECT_GT(l.busy_elsewhere, kBusyElsewhere);
    ASSERT_TRUE(db.device(id)->limits); // better than none
    EXPECT_EQ(db.device(id)->limits->busy_elsewhere, l.busy_elsewhere);
    // A quiet measurement stored is not replaced by a busy one; --measure still shows it.
    MachineLimits quiet = test_support::synthetic_limits(1000, 100, 50, 20);
    db.set_device_limits(id, quiet);
    MachineLimits again = device_limits(db, id, true);
    EXPECT_GT(again.busy_elsewhere, kBusyElsewhere);
    EXPECT_EQ(db.device(id)->limits->fma_f32_gflops, 1000);
    EXPECT_EQ(device_limits(db, id).fma_f32_gflops, 1000); // used as they are
  }
  // Busier stored ones are measured again at the next use, and replaced.
  MachineLimits busier = test_support::synthetic_limits(1000, 100, 50, 20);
  busier.busy_elsewhere = 0.95;
  busier.threads = 1; // any measurement has as many threads or more
  db.set_device_limits(id, busier);
  MachineLimits now = device_limits(db, id);
  EXPECT_NE(now.fma_f32_gflops, 1000);
  EXPECT_LT(db.device(id)->limits->busy_elsewhere, 0.95);
}

} // namespace
} // namespace beamlab::tuner

// The beamlab database: one SQLite file that journals every tuning run and candidate, serves
// tuned plans back as a cache, and holds benchmark results; the GUI and reports read it.
//
// The file is plain tables a user can query with the sqlite3 shell (docs/architecture.md has
// the schema): Opt lists in their text form, hashes as hex, settings as JSON text, timestamps
// as ISO-8601 UTC. It runs in WAL mode with a busy timeout and foreign keys on, so a tuning run
// can write while the GUI or a report reads, and two tuning processes can share one file; every
// write is its own short IMMEDIATE transaction. The schema is versioned (PRAGMA user_version)
// and migrated forward on open; a file of another application, of a newer beamlab, or damaged
// is an error naming it, never overwritten or reset.
//
//   db::Database db(db::Database::default_path());
//   int64_t run = db.begin_run({.device_id = dev, .kind = "tune", .command = "beamlab tune ..."});
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/run_lock.hpp"
#include "engine/support/roofline.hpp"

namespace beamlab::db {

class Connection;

/// The schema this build writes; older files are migrated to it on open.
inline constexpr int kSchemaVersion = 7;

/// What identifies a machine and compiler for timing purposes.
struct DeviceInfo {
  std::string cpu_model;       ///< "AMD EPYC 7B13"
  std::string isa_flags;       ///< the CPU name and features LLVM targets
  int cores = 0;               ///< logical cores
  std::string llvm_version;    ///< "19.1.7"
  std::string beamlab_version; ///< "0.1.0"
  /// A stable hex hash of every field above: equal fingerprints mean comparable timings.
  std::string fingerprint() const;
};

struct Device {
  int64_t id = 0;
  std::string fingerprint;
  DeviceInfo info;
  /// The machine's measured limits (FMA peaks, each memory level's bandwidth), for rooflines;
  /// none until measured on the device (tuner::device_limits, `beamlab device --measure`).
  std::optional<MachineLimits> limits;
  std::string limits_measured_at; ///< UTC, when `limits` is set
};

/// What a run is: a tuning run (`beamlab tune`, the GUI) or a benchmark run (`beamlab bench`).
enum class RunKind { tune, bench };
/// Where a run stands. interrupted: stopped by a signal or a cancel, kept for --resume.
enum class RunStatus { running, done, failed, interrupted };
/// A kernel's search in a run.
enum class TuningStatus { running, done, failed };
/// Their stored names (the schema's CHECK constraints allow these only).
const char* to_string(RunKind k);
const char* to_string(RunStatus s);
const char* to_string(TuningStatus s);
RunKind parse_run_kind(std::string_view name);
RunStatus parse_run_status(std::string_view name);
TuningStatus parse_tuning_status(std::string_view name);

struct NewRun {
  int64_t device_id = 0;
  RunKind kind = RunKind::tune;
  std::string label;        ///< a user's name for it (may be empty)
  std::string command;      ///< the command line
  std::string settings;     ///< JSON: everything needed to repeat (and resume) it
  std::string git_revision; ///< of the beamlab build
  std::string host;
};

struct Run {
  int64_t id = 0;
  int64_t device_id = 0;
  RunKind kind = RunKind::tune;
  std::string label, command, settings, git_revision, host;
  int64_t pid = 0;
  std::string started_at, ended_at;
  RunStatus status = RunStatus::running;
};

struct Kernel {
  int64_t id = 0;
  std::string hash; ///< the AST's stable hash, hex (hash_version records the recipe)
  int hash_version = 0;
  std::string name;   ///< readable: "r_512_512_512"
  std::string shapes; ///< JSON: the buffers' dtypes and element counts
  int64_t flops = 0, bytes = 0;
  std::string ast; ///< the AST's text form
  /// The AST's hash up to sizes, hex (tuner/search/structure.hpp; "" not yet computed), and the
  /// recipe it was computed with (0: none).
  std::string structure;
  int structure_version = 0;
};

/// One kernel's search within a run.
/// The heuristic's time over the winner's from paired rounds, with its 95% interval.
struct PairedSpeedup {
  double estimate = 1, lo = 1, hi = 1;
};

struct Tuning {
  int64_t id = 0;
  int64_t run_id = 0, kernel_id = 0;
  std::string workload; ///< the corpus entry or workload that brought the kernel in
  int threads = 1;
  std::string settings; ///< JSON of the search settings
  std::string actions;  ///< the action space the search had for this kernel
  TuningStatus status = TuningStatus::running;
  std::string heuristic_opts, winner_opts;
  std::optional<double> heuristic_ms, winner_ms;
  double noise = 0;
  bool tie = false;                     ///< the winner and the runner-up within the noise
  bool tie_with_heuristic = false;      ///< the winner not faster than the heuristic beyond noise
  std::optional<PairedSpeedup> speedup; ///< from the paired rounds (none before schema 3)
  int rounds_disturbed = 0;             ///< re-measurement rounds dropped as disturbed
  std::string round_ms; ///< per finalist "SEQ MS MS ...": its median in each kept round
  std::optional<PairedSpeedup> in_process; ///< the same timed in the tuner's process
  std::string fidelity;                    ///< what that check found (TuneResult::fidelity)
  std::string stop_reason, error;
  int iterations = 0;
  double wall_s = 0, budget_s = 0;
  /// Where wall_s went: the reference's run, waiting for compiles, timing alone on the machine
  /// (the rest is the search's own work); 0 in files older than schema 5.
  double reference_s = 0, compiling_s = 0, timing_s = 0;
  int restarts = 0;
};

struct CandidateRow {
  int seq = 0; ///< the search's candidate id (0 is the unoptimized reference)
  std::string opts;
  int parent = -1, iteration = 0;
  std::string status, error;
  double compile_ms = 0;
  std::string code_hash;
  int64_t code_bytes = 0;
  double max_error = 0;
  int duplicate_of = -1;
  int settled_in = -1; ///< the iteration that settled it (-1: not recorded, before schema 6)
  std::vector<double> samples_ms; ///< every timed run, in order
};

/// A tuned plan: the best verified Opt list for a kernel on a device and compiler.
struct CacheEntry {
  int64_t id = 0;
  std::string kernel_hash, device, compiler, settings_key;
  int threads = 1;
  std::string kernel_name;
  std::string opts;           ///< the plan, in its text form
  std::string optimized_hash; ///< of the optimized kernel: a replay must produce it again
  std::string actions;        ///< the action space the search had (see tuner/cache.hpp)
  double ms = 0;              ///< the plan's median time when tuned
  std::optional<double> heuristic_ms;
  std::string source; ///< provenance: which run, host and file it came from
  std::optional<int64_t> run_id;
  std::string created_at;
  bool stale = false;
  std::string stale_reason;
};

struct Benchmark {
  int64_t run_id = 0;
  std::string name;
  std::string params;  ///< JSON
  std::string metrics; ///< JSON: name -> value (and samples)
};

class Database {
public:
  enum class Access { read_write, read_only };
  /// Opens (and, writable, creates or migrates) the database at `path`. Throws a UserError
  /// naming the file when it is not a beamlab database, is from a newer beamlab, or is damaged.
  explicit Database(const std::string& path, Access access = Access::read_write);
  ~Database();
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;

  /// BEAMLAB_DB, else $XDG_CACHE_HOME/beamlab/beamlab.db, else ~/.cache/beamlab/beamlab.db.
  static std::string default_path();

  const std::string& path() const;
  bool read_only() const;
  int schema_version() const;

  // Devices
  /// The device's id, inserted when its fingerprint is new.
  int64_t upsert_device(const DeviceInfo& info);
  std::optional<Device> device(int64_t id);
  std::optional<int64_t> find_device(const std::string& fingerprint);
  /// Stores (or replaces) the device's measured limits.
  void set_device_limits(int64_t id, const MachineLimits& limits);

  // Runs
  /// Records a new run, running, owned by this process. With `lock`, the run's liveness lock
  /// (run_lock.hpp) is taken into it before any other process can see the run.
  int64_t begin_run(const NewRun& run, RunLock* lock = nullptr);
  /// Marks a run running again (a resume), owned by this process.
  void reopen_run(int64_t id);
  void end_run(int64_t id, RunStatus status);
  /// Whether a run recorded running is alive: its lock decides; without a lock file, or where
  /// locks are refused, its process id on this host does (another host's: unknown). Sets `why`
  /// (if given) to the reason the lock couldn't tell.
  Liveness liveness(const Run& run, std::string* why = nullptr) const;
  /// A run as recorded, except that one recorded running whose process is gone (liveness dead)
  /// reads as interrupted, which is what it is.
  std::optional<Run> run(int64_t id);
  /// Newest first.
  std::vector<Run> runs();

  // Kernels and tunings
  /// The kernel's id, inserted when its hash is new; a stored row whose structure is of an
  /// older recipe (or none) takes `k`'s.
  int64_t upsert_kernel(const Kernel& k);
  /// Records a kernel's structure key (computed by the tuner from its AST).
  void set_kernel_structure(int64_t kernel_id, const std::string& structure, int version);
  std::optional<Kernel> kernel(int64_t id);
  /// The id of the kernel with AST hash `hash` (hex), if stored.
  std::optional<int64_t> find_kernel(const std::string& hash);
  /// The tuning of `kernel_id` in `run_id` at `threads`: the existing row (a resume) or a new
  /// one with status running.
  Tuning open_tuning(int64_t run_id, int64_t kernel_id, int threads, const std::string& workload,
                     const std::string& settings, const std::string& actions, double budget_s);
  void finish_tuning(const Tuning& t);
  std::vector<Tuning> tunings(int64_t run_id);
  std::optional<Tuning> tuning(int64_t id);
  /// Every search of a kernel, over all runs, oldest first: its timing history.
  std::vector<Tuning> tunings_of_kernel(int64_t kernel_id);
  struct RunStats {
    int tunings = 0;
    int64_t candidates = 0;
    int64_t benchmarks = 0; ///< a bench run's measurements
  };
  /// Per run id (runs without tunings or benchmarks are absent).
  std::map<int64_t, RunStats> run_stats();
  /// Candidates per tuning id of a run.
  std::map<int64_t, int64_t> candidate_counts(int64_t run_id);
  /// Per run id, how many of its tunings have workload `workload` (runs with none absent).
  std::map<int64_t, int64_t> tunings_with_workload(const std::string& workload);
  /// Candidates per status ("ok", "slow", ...) per tuning id of a run.
  std::map<int64_t, std::map<std::string, int64_t>> status_counts(int64_t run_id);
  /// Every timing sample of the candidate of a tuning with Opts `opts` that ran correctly (the
  /// winner's: its search samples and its re-measurement), in order; empty if none.
  std::vector<double> samples_of(int64_t tuning_id, const std::string& opts);

  // Candidates
  /// Inserts or replaces candidate `c.seq` of a tuning, with its samples, in one transaction.
  void save_candidate(int64_t tuning_id, const CandidateRow& c);
  /// Several at once, in one transaction.
  void save_candidates(int64_t tuning_id, const std::vector<CandidateRow>& cs);
  std::vector<CandidateRow> candidates(int64_t tuning_id);
  int64_t candidate_count();

  // The tuning cache
  /// The entries for a kernel on a device and compiler at `threads`, best first (stale last).
  std::vector<CacheEntry> cache_lookup(const std::string& kernel_hash, const std::string& device,
                                       const std::string& compiler, int threads);
  /// Stores `e` unless an entry with the same key holds a faster verified plan; true if stored.
  /// The conflict policy of merges and imports too: the fastest non-stale plan per key wins.
  bool cache_put(const CacheEntry& e);
  void cache_mark_stale(int64_t id, const std::string& reason);
  std::vector<CacheEntry> cache_entries();
  /// A cache entry with its kernel's stored record.
  struct EntryWithKernel {
    CacheEntry entry;
    Kernel kernel;
  };
  /// The non-stale entries on a device and compiler at `threads` whose kernel (stored in
  /// kernels) has structure `structure` of recipe `version`, or a structure not yet known at
  /// that version (the caller computes it from the AST), except those of kernel `except_hash`;
  /// in id order. A warm start's candidates (tuner/store/warm_start.hpp).
  std::vector<EntryWithKernel> cache_by_structure(const std::string& structure, int version,
                                                  const std::string& device,
                                                  const std::string& compiler, int threads,
                                                  const std::string& except_hash);

  // Benchmarks
  void add_benchmark(const Benchmark& b);
  std::vector<Benchmark> benchmarks(int64_t run_id);

  /// What merge_from added.
  struct MergeStats {
    int runs = 0, tunings = 0, candidates = 0, benchmarks = 0;
    int cache_added = 0, cache_kept = 0; ///< entries taken from the other file, and not
    /// Of `runs`, the unfinished runs merged before and replaced by their newer state.
    int refreshed = 0;
    /// The other file's unfinished runs (running or interrupted): their id there and status.
    std::vector<std::pair<int64_t, RunStatus>> unfinished;
  };
  /// Unions another beamlab database into this one: its devices, kernels, runs (with their
  /// tunings, candidates, samples and benchmarks) and cache entries, where per key the fastest
  /// non-stale plan wins and keeps its provenance. A run is known by its uid: one merged before
  /// is skipped, unless this file's copy is unfinished and the other's has moved on (a shard
  /// resumed after an earlier merge), which then replaces it. All or nothing.
  MergeStats merge_from(const std::string& other_path);

  /// Problems found by SQLite's integrity and foreign-key checks and beamlab's own (empty: ok).
  std::vector<std::string> verify();
  /// The columns the code reads and writes, for each table it describes column by column
  /// (db/table.hpp): tests hold each list equal to the schema's.
  static std::map<std::string, std::vector<std::string>> described_columns();

  /// Changes when another connection commits to the file (PRAGMA data_version): what a
  /// reader polls to see a writer's progress.
  int64_t data_version();

  Connection& connection();

private:
  /// The file is beamlab's, of an older schema than this build's.
  static bool needs_upgrade(const std::string& path);
  void migrate();
  Run as_it_is(Run r) const;
  std::unique_ptr<Connection> conn_;
  int version_ = 0;
};

/// The current time as the database stores it (ISO-8601 UTC with milliseconds).
std::string now_utc();

/// This machine's host name, as runs record it.
std::string host_name();

} // namespace beamlab::db

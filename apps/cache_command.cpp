// The cache subcommand; see cache_command.hpp.
#include "apps/cache_command.hpp"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/tune_command.hpp"
#include "apps/usage.hpp"
#include "db/database.hpp"
#include "engine/support/error.hpp"

namespace beamlab::cli {
namespace {

using json = nlohmann::json;

struct CacheArgs {
  std::string db;
  bool runs = false;
  std::string kernel;
  std::string file;
  std::vector<std::string> inputs;
};

db::Database open_read(const CacheArgs& a) {
  return db::Database(db_path(a.db), db::Database::Access::read_only);
}

std::string speedup(const db::CacheEntry& e) {
  return e.heuristic_ms && e.ms > 0 ? fmt::format("{:.2f}x", *e.heuristic_ms / e.ms) : "-";
}

void list(const CacheArgs& a) {
  db::Database db = open_read(a);
  if (a.runs) {
    fmt::print("{:>4}  {:<6} {:<11} {:<24} {:<24}  {}\n", "run", "kind", "status", "started",
               "ended", "command");
    for (const db::Run& r : db.runs())
      fmt::print("{:>4}  {:<6} {:<11} {:<24} {:<24}  {}{}\n", r.id, to_string(r.kind),
                 to_string(r.status), r.started_at, r.ended_at.empty() ? "-" : r.ended_at,
                 r.command, r.label.empty() ? "" : "  [" + r.label + "]");
    return;
  }
  std::vector<db::CacheEntry> entries = db.cache_entries();
  fmt::print("{:<26} {:<16} {:>3} {:>10} {:>8}  {:<40} {}\n", "kernel", "hash", "thr", "ms",
             "speedup", "opts", "source");
  for (const db::CacheEntry& e : entries)
    fmt::print("{:<26} {:<16} {:>3} {:>10.4f} {:>8}  {:<40} {}{}\n", e.kernel_name, e.kernel_hash,
               e.threads, e.ms, speedup(e), e.opts.empty() ? "(none)" : e.opts, e.source,
               e.stale ? "  STALE: " + e.stale_reason : "");
  fmt::print("{} entr{} in {}\n", entries.size(), entries.size() == 1 ? "y" : "ies", db.path());
}

void show(const CacheArgs& a) {
  db::Database db = open_read(a);
  int shown = 0;
  for (const db::CacheEntry& e : db.cache_entries()) {
    if (e.kernel_name != a.kernel && e.kernel_hash.rfind(a.kernel, 0) != 0) continue;
    ++shown;
    fmt::print("{} ({})\n  opts:      {}\n  time:      {:.4f} ms (heuristic {}, {})\n"
               "  device:    {}\n  compiler:  {}\n  settings:  {}\n  threads:   {}\n"
               "  actions:   {}\n  optimized: {}\n  source:    {}{}\n  stored:    {}\n",
               e.kernel_name, e.kernel_hash, e.opts.empty() ? "(none)" : e.opts, e.ms,
               e.heuristic_ms ? fmt::format("{:.4f} ms", *e.heuristic_ms) : "-", speedup(e),
               e.device, e.compiler, e.settings_key, e.threads, e.actions, e.optimized_hash,
               e.source, e.run_id ? fmt::format(" (run {})", *e.run_id) : "", e.created_at);
    if (e.stale) fmt::print("  STALE:     {}\n", e.stale_reason);
  }
  user_assert(shown > 0) << "cache show: no entry for kernel '" << a.kernel << "' in '" << db.path()
                         << "' (see 'beamlab cache list')";
}

json entry_json(const db::CacheEntry& e) {
  json j = {{"kernel_hash", e.kernel_hash},
            {"device", e.device},
            {"compiler", e.compiler},
            {"settings_key", e.settings_key},
            {"threads", e.threads},
            {"kernel_name", e.kernel_name},
            {"opts", e.opts},
            {"optimized_hash", e.optimized_hash},
            {"actions", e.actions},
            {"ms", e.ms},
            {"source", e.source},
            {"created_at", e.created_at},
            {"stale", e.stale},
            {"stale_reason", e.stale_reason}};
  if (e.heuristic_ms) j["heuristic_ms"] = *e.heuristic_ms;
  return j;
}

void export_json(const CacheArgs& a) {
  db::Database db = open_read(a);
  json entries = json::array();
  for (const db::CacheEntry& e : db.cache_entries()) entries.push_back(entry_json(e));
  std::ofstream f(a.file);
  user_assert(f) << "cache export: cannot write '" << a.file << "'";
  f << json{{"beamlab_cache", db::kSchemaVersion}, {"entries", entries}}.dump(1) << "\n";
  fmt::print("exported {} entr{} to {}\n", entries.size(), entries.size() == 1 ? "y" : "ies",
             a.file);
}

void import_json(const CacheArgs& a) {
  std::ifstream f(a.file);
  user_assert(f) << "cache import: cannot read '" << a.file << "'";
  json j;
  try {
    j = json::parse(f);
  } catch (const json::parse_error& e) {
    user_error << "cache import: '" << a.file << "' is not valid JSON (" << e.what() << ")";
  }
  user_assert(j.is_object() && j.contains("entries") && j["entries"].is_array())
      << "cache import: '" << a.file << "' is not a beamlab cache export (no \"entries\" array)";
  std::vector<db::CacheEntry> entries;
  size_t n = 0;
  for (const json& x : j["entries"]) {
    ++n;
    try {
      db::CacheEntry e;
      e.kernel_hash = x.at("kernel_hash");
      e.device = x.at("device");
      e.compiler = x.at("compiler");
      e.settings_key = x.at("settings_key");
      e.threads = x.at("threads");
      e.kernel_name = x.at("kernel_name");
      e.opts = x.at("opts");
      e.optimized_hash = x.at("optimized_hash");
      e.actions = x.at("actions");
      e.ms = x.at("ms");
      if (x.contains("heuristic_ms")) e.heuristic_ms = x["heuristic_ms"].get<double>();
      e.source = x.value("source", "") + " (imported from " + a.file + ")";
      e.created_at = x.value("created_at", "");
      e.stale = x.value("stale", false);
      entries.push_back(std::move(e));
    } catch (const json::exception& err) {
      user_error << "cache import: '" << a.file << "': entry " << n << ": " << err.what();
    }
  }
  db::Database db(db_path(a.db));
  int added = 0;
  for (const db::CacheEntry& e : entries) added += !e.stale && db.cache_put(e);
  fmt::print("imported {} of {} entr{} into {} (the others had a faster plan there already)\n",
             added, entries.size(), entries.size() == 1 ? "y" : "ies", db.path());
}

void merge(const CacheArgs& a) {
  db::Database db(db_path(a.db));
  for (const std::string& in : a.inputs) {
    usage_assert(in != db.path()) << "cache merge: '" << in << "' is the database merged into";
    db::Database::MergeStats st = db.merge_from(in);
    fmt::print("{}: {} run(s), {} tuning(s), {} candidate(s), {} benchmark(s); cache: {} "
               "entr{} taken, {} kept\n",
               in, st.runs, st.tunings, st.candidates, st.benchmarks, st.cache_added,
               st.cache_added == 1 ? "y" : "ies", st.cache_kept);
  }
  fmt::print("merged {} file(s) into {}\n", a.inputs.size(), db.path());
}

void verify(const CacheArgs& a) {
  db::Database db = open_read(a);
  std::vector<std::string> problems = db.verify();
  for (const std::string& p : problems) fmt::print("problem: {}\n", p);
  std::vector<db::Run> runs = db.runs();
  for (const db::Run& r : runs)
    if (r.status == db::RunStatus::running || r.status == db::RunStatus::interrupted)
      fmt::print("note: run {} is unfinished ({}); 'beamlab tune --resume-run {}' finishes it\n",
                 r.id, to_string(r.status), r.id);
  user_assert(problems.empty()) << "the database '" << db.path() << "' has " << problems.size()
                                << " problem(s); restore a copy or merge what is readable "
                                << "into a new file with 'beamlab cache merge'";
  fmt::print("ok: {} (schema v{}): {} run(s), {} candidate(s), {} cache entr{}\n", db.path(),
             db.schema_version(), runs.size(), db.candidate_count(), db.cache_entries().size(),
             db.cache_entries().size() == 1 ? "y" : "ies");
}

} // namespace

void add_cache_command(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cmd = app.add_subcommand("cache", "The tuning cache and run journal in the database");
  cmd->require_subcommand(1);
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  auto sub = [&](const char* name, const char* help, void (*fn)(const CacheArgs&)) {
    CLI::App* s = cmd->add_subcommand(name, help);
    s->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
    s->final_callback([args, fn] { fn(*args); });
    return s;
  };
  sub("list", "List the cached plans (or, with --runs, the runs)", list)
      ->add_flag("--runs", args->runs, "list the runs instead");
  sub("show", "Show a kernel's cached plans and their provenance", show)
      ->add_option("kernel", args->kernel, "kernel name or hash (prefix)")
      ->required();
  sub("export", "Write every cached plan to a JSON file", export_json)
      ->add_option("file", args->file, "the JSON file to write")
      ->required();
  sub("import", "Add the plans of a JSON export (the faster plan per key wins)", import_json)
      ->add_option("file", args->file, "a file written by 'beamlab cache export'")
      ->required();
  sub("merge", "Union other databases (shards) into this one (the faster plan per key wins)", merge)
      ->add_option("inputs", args->inputs, "the databases to merge in")
      ->required();
  sub("verify", "Check the database's integrity", verify);
}

} // namespace beamlab::cli

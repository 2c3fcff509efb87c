// The cache subcommand; see cache_command.hpp.
#include "apps/cache_command.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/output.hpp"
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
  std::string file; ///< export: "-" is stdout; import: "-" is stdin
  std::vector<std::string> inputs;
  bool require_finished = false; ///< merge: an input's unfinished run fails the merge
  OutputFormat format = OutputFormat::Text;
  bool json() const { return format == OutputFormat::Json; }
};

db::Database open_read(const CacheArgs& a) {
  return db::Database(db_path(a.db), db::Database::Access::read_only);
}

std::string speedup(const db::CacheEntry& e) {
  return e.heuristic_ms && e.ms > 0 ? fmt::format("{:.2f}x", *e.heuristic_ms / e.ms) : "-";
}

// A cached plan as `cache list` and `cache show` print it, named like their columns and labels.
Json cache_row(const db::CacheEntry& e) {
  return {
      {"kernel", e.kernel_name},
      {"hash", e.kernel_hash},
      {"threads", e.threads},
      {"ms", json_number(e.ms)},
      {"heuristic_ms", json_number(e.heuristic_ms)},
      {"speedup", e.heuristic_ms && e.ms > 0 ? json_number(*e.heuristic_ms / e.ms) : Json(nullptr)},
      {"opts", e.opts},
      {"source", e.source},
      {"run", e.run_id ? Json(*e.run_id) : Json(nullptr)},
      {"device", e.device},
      {"compiler", e.compiler},
      {"settings", e.settings_key},
      {"actions", e.actions},
      {"optimized", e.optimized_hash},
      {"stored", e.created_at},
      {"stale", e.stale},
      {"stale_reason", e.stale_reason}};
}

void list_runs(db::Database& db, bool json) {
  std::vector<db::Run> runs = db.runs();
  if (json) {
    Json doc = json_document("cache-list-runs");
    doc["db"] = db.path();
    Json& rows = doc["runs"] = Json::array();
    for (const db::Run& r : runs) rows.push_back(run_json(r));
    print_json(doc);
    return;
  }
  fmt::print("{:>4}  {:<6} {:<11} {:<24} {:<24}  {}\n", "run", "kind", "status", "started", "ended",
             "command");
  for (const db::Run& r : runs)
    fmt::print("{:>4}  {:<6} {:<11} {:<24} {:<24}  {}{}\n", r.id, to_string(r.kind),
               to_string(r.status), r.started_at, r.ended_at.empty() ? "-" : r.ended_at, r.command,
               r.label.empty() ? "" : "  [" + r.label + "]");
}

void list(const CacheArgs& a) {
  db::Database db = open_read(a);
  if (a.runs) {
    list_runs(db, a.json());
    return;
  }
  std::vector<db::CacheEntry> entries = db.cache_entries();
  if (a.json()) {
    Json doc = json_document("cache-list");
    doc["db"] = db.path();
    Json& rows = doc["entries"] = Json::array();
    for (const db::CacheEntry& e : entries) rows.push_back(cache_row(e));
    print_json(doc);
    return;
  }
  fmt::print("{:<26} {:<16} {:>3} {:>10} {:>8}  {:<40} {}\n", "kernel", "hash", "thr", "ms",
             "speedup", "opts", "source");
  for (const db::CacheEntry& e : entries)
    fmt::print("{:<26} {:<16} {:>3} {:>10.4f} {:>8}  {:<40} {}{}\n", e.kernel_name, e.kernel_hash,
               e.threads, e.ms, speedup(e), e.opts.empty() ? "(none)" : e.opts, e.source,
               e.stale ? "  STALE: " + e.stale_reason : "");
  fmt::print("{} entr{} in {}\n", entries.size(), entries.size() == 1 ? "y" : "ies", db.path());
}

void print_entry(const db::CacheEntry& e) {
  fmt::print("{} ({})\n  opts:      {}\n  time:      {:.4f} ms (heuristic {}, {})\n"
             "  device:    {}\n  compiler:  {}\n  settings:  {}\n  threads:   {}\n"
             "  actions:   {}\n  optimized: {}\n  source:    {}{}\n  stored:    {}\n",
             e.kernel_name, e.kernel_hash, e.opts.empty() ? "(none)" : e.opts, e.ms,
             e.heuristic_ms ? fmt::format("{:.4f} ms", *e.heuristic_ms) : "-", speedup(e), e.device,
             e.compiler, e.settings_key, e.threads, e.actions, e.optimized_hash, e.source,
             e.run_id ? fmt::format(" (run {})", *e.run_id) : "", e.created_at);
  if (e.stale) fmt::print("  STALE:     {}\n", e.stale_reason);
}

void show(const CacheArgs& a) {
  db::Database db = open_read(a);
  std::vector<db::CacheEntry> shown;
  for (const db::CacheEntry& e : db.cache_entries())
    if (e.kernel_name == a.kernel || e.kernel_hash.starts_with(a.kernel)) shown.push_back(e);
  user_assert(!shown.empty()) << "cache show: no entry for kernel '" << a.kernel << "' in '"
                              << db.path() << "' (see 'beamlab cache list')";
  if (!a.json()) {
    for (const db::CacheEntry& e : shown) print_entry(e);
    return;
  }
  Json doc = json_document("cache-show");
  doc["db"] = db.path();
  doc["kernel"] = a.kernel;
  Json& rows = doc["entries"] = Json::array();
  for (const db::CacheEntry& e : shown) rows.push_back(cache_row(e));
  print_json(doc);
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
  json doc = {{"beamlab_cache", db::kSchemaVersion}, {"entries", entries}};
  write_output(a.file, doc.dump(1) + "\n", "cache export");
  // With the export on stdout, the note goes to stderr.
  fmt::print(a.file == "-" ? stderr : stdout, "exported {} entr{} to {}\n", entries.size(),
             entries.size() == 1 ? "y" : "ies", a.file == "-" ? "stdout" : a.file);
}

// The export `file` holds, or stdin's for "-".
json read_export(const std::string& file) {
  std::ifstream in;
  if (file != "-") {
    in.open(file);
    user_assert(in) << "cache import: cannot read '" << file << "'";
  }
  try {
    return json::parse(file == "-" ? std::cin : in);
  } catch (const json::parse_error& e) {
    user_error << "cache import: '" << file << "' is not valid JSON (" << e.what() << ")";
  }
  return {};
}

void import_json(const CacheArgs& a) {
  json j = read_export(a.file);
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
      e.source =
          x.value("source", "") + " (imported from " + (a.file == "-" ? "stdin" : a.file) + ")";
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
  if (a.json()) {
    Json doc = json_document("cache-import");
    doc["db"] = db.path();
    doc["file"] = a.file;
    doc["entries"] = entries.size();
    doc["added"] = added;
    print_json(doc);
    return;
  }
  fmt::print("imported {} of {} entr{} into {} (the others had a faster plan there already)\n",
             added, entries.size(), entries.size() == 1 ? "y" : "ies", db.path());
}

// Each input is merged whole or not at all; one that can't be read (missing, damaged, another
// schema) is named and skipped, the others merged, and the command fails at the end.
void merge(const CacheArgs& a) {
  db::Database db(db_path(a.db));
  Json doc = json_document("cache-merge");
  doc["db"] = db.path();
  Json& rows = doc["inputs"] = Json::array();
  std::vector<std::string> unreadable, unfinished;
  for (const std::string& in : a.inputs) {
    usage_assert(in != db.path()) << "cache merge: '" << in << "' is the database merged into";
    db::Database::MergeStats st;
    try {
      st = db.merge_from(in);
    } catch (const UserError& e) {
      unreadable.push_back(in);
      rows.push_back({{"file", in}, {"error", e.what()}});
      std::fprintf(stderr, "beamlab: cache merge: skipped '%s': %s\n", in.c_str(), e.what());
      continue;
    }
    Json open_runs = Json::array();
    for (const auto& [id, status] : st.unfinished) {
      open_runs.push_back({{"id", id}, {"status", to_string(status)}});
      std::fprintf(stderr,
                   "beamlab: cache merge: run %lld of '%s' is unfinished (%s): merged as it "
                   "stands; finish it with 'beamlab tune --resume-run %lld --db %s' and merge "
                   "again (the newer state replaces this one)\n",
                   static_cast<long long>(id), in.c_str(), to_string(status),
                   static_cast<long long>(id), shell_word(in).c_str());
    }
    if (!st.unfinished.empty()) unfinished.push_back(in);
    rows.push_back({{"file", in},
                    {"runs", st.runs},
                    {"runs_refreshed", st.refreshed},
                    {"tunings", st.tunings},
                    {"candidates", st.candidates},
                    {"benchmarks", st.benchmarks},
                    {"cache_added", st.cache_added},
                    {"cache_kept", st.cache_kept},
                    {"unfinished_runs", open_runs}});
    if (!a.json())
      fmt::print("{}: {} run(s){}, {} tuning(s), {} candidate(s), {} benchmark(s); cache: {} "
                 "entr{} taken, {} kept\n",
                 in, st.runs,
                 st.refreshed ? fmt::format(" ({} replacing an unfinished copy)", st.refreshed)
                              : "",
                 st.tunings, st.candidates, st.benchmarks, st.cache_added,
                 st.cache_added == 1 ? "y" : "ies", st.cache_kept);
  }
  size_t merged = a.inputs.size() - unreadable.size();
  if (a.json())
    print_json(doc);
  else
    fmt::print("merged {} of {} file(s) into {}\n", merged, a.inputs.size(), db.path());
  std::fflush(stdout);
  auto quoted = [](const std::vector<std::string>& files) {
    std::string list;
    for (const std::string& f : files) list += (list.empty() ? "'" : ", '") + f + "'";
    return list;
  };
  user_assert(unreadable.empty()) << "cache merge: " << unreadable.size() << " of "
                                  << a.inputs.size()
                                  << " file(s) could not be merged: " << quoted(unreadable)
                                  << " (named above; the others are merged into '" << db.path()
                                  << "'); restore or re-create them and merge again";
  user_assert(!a.require_finished || unfinished.empty())
      << "cache merge: " << quoted(unfinished)
      << " hold(s) an unfinished run (--require-finished); resume it (scripts/slurm-tune.sh "
         "--resume SHARD for a Slurm shard) and merge again";
}

void verify(const CacheArgs& a) {
  db::Database db = open_read(a);
  std::vector<std::string> problems = db.verify();
  std::vector<db::Run> runs = db.runs();
  std::vector<const db::Run*> unfinished;
  for (const db::Run& r : runs)
    if (r.status == db::RunStatus::running || r.status == db::RunStatus::interrupted)
      unfinished.push_back(&r);
  size_t entries = db.cache_entries().size();
  if (a.json()) {
    Json doc = json_document("cache-verify");
    doc["db"] = db.path();
    doc["ok"] = problems.empty();
    doc["schema_version"] = db.schema_version();
    doc["problems"] = problems;
    Json& rows = doc["unfinished_runs"] = Json::array();
    for (const db::Run* r : unfinished)
      rows.push_back({{"id", r->id}, {"status", to_string(r->status)}});
    doc["runs"] = runs.size();
    doc["candidates"] = db.candidate_count();
    doc["cache_entries"] = entries;
    print_json(doc);
  } else {
    for (const std::string& p : problems) fmt::print("problem: {}\n", p);
    for (const db::Run* r : unfinished)
      if (r->status == db::RunStatus::running)
        fmt::print("note: run {} is running (process {} on {})\n", r->id, r->pid, r->host);
      else
        fmt::print("note: run {} is unfinished ({}); 'beamlab tune --resume-run {}' finishes it\n",
                   r->id, to_string(r->status), r->id);
  }
  user_assert(problems.empty()) << "the database '" << db.path() << "' has " << problems.size()
                                << " problem(s); restore a copy or merge what is readable "
                                << "into a new file with 'beamlab cache merge'";
  if (!a.json())
    fmt::print("ok: {} (schema v{}): {} run(s), {} candidate(s), {} cache entr{}\n", db.path(),
               db.schema_version(), runs.size(), db.candidate_count(), entries,
               entries == 1 ? "y" : "ies");
}

} // namespace

void add_cache_command(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cmd = app.add_subcommand("cache", "The tuning cache and run journal in the database");
  cmd->require_subcommand(1);
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  // Each subcommand takes --db too (before or after its name); those that print a table or a
  // summary take --format.
  auto sub = [&](const char* name, const char* help, void (*fn)(const CacheArgs&), bool table) {
    CLI::App* s = cmd->add_subcommand(name, help);
    s->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
    if (table) add_format_option(s, args->format);
    s->final_callback([args, fn] { fn(*args); });
    return s;
  };
  sub("list", "List the cached plans (or, with --runs, the runs)", list, true)
      ->add_flag("--runs", args->runs, "list the runs instead");
  sub("show", "Show a kernel's cached plans and their provenance", show, true)
      ->add_option("kernel", args->kernel, "kernel name or hash (prefix)")
      ->required();
  sub("export", "Write every cached plan to a JSON file", export_json, false)
      ->add_option("file", args->file, "the JSON file to write (-: stdout)")
      ->required();
  sub("import", "Add the plans of a JSON export (the faster plan per key wins)", import_json, true)
      ->add_option("file", args->file, "a file written by 'beamlab cache export' (-: stdin)")
      ->required();
  sub("merge", "Union other databases (shards) into this one (the faster plan per key wins)", merge,
      true)
      ->add_option("inputs", args->inputs, "the databases to merge in")
      ->required();
  cmd->get_subcommand("merge")->add_flag(
      "--require-finished", args->require_finished,
      "fail (after merging) when an input holds an unfinished run, e.g. a shard whose task was "
      "cancelled");
  sub("verify", "Check the database's integrity", verify, true);
}

} // namespace beamlab::cli

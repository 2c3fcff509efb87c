// The tuning journal and cache; see journal.hpp.
#include "tuner/store/journal.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace beamlab::tuner {

const char* to_string(CacheMode m) {
  switch (m) {
  case CacheMode::use: return "use";
  case CacheMode::ignore: return "ignore";
  case CacheMode::read_only: return "read-only";
  case CacheMode::off: return "off";
  }
  return "?";
}

CacheMode parse_cache_mode(const std::string& text, const std::string& what) {
  for (CacheMode m : {CacheMode::use, CacheMode::ignore, CacheMode::read_only, CacheMode::off})
    if (text == to_string(m)) return m;
  user_error << what << " '" << text << "': expected use, ignore (search anyway, still write), "
             << "read-only or off";
  return CacheMode::off;
}

std::string settings_key(const SearchSettings& s) {
  std::string checks;
  for (InputKind k : s.checks) checks += (checks.empty() ? "" : ",") + std::string(to_string(k));
  return fmt::format("beam={} iterations={} gain={:g} patience={} lanes={} ops={} checks={}",
                     s.beam, s.max_iterations, s.min_improvement, s.patience, s.max_lanes,
                     s.max_ops, checks);
}

std::string action_space(const UOpPtr& ast, int threads) {
  std::map<std::string, std::set<int64_t>> ops;
  for (const Opt& a : candidate_actions(ast, {}, threads)) {
    std::set<int64_t>& amounts = ops[std::string(opt_op_name(a.op))];
    if (a.op != OptOp::Swap) amounts.insert(a.arg); // SWAP's arg is an axis, not an amount
  }
  std::string out;
  for (const auto& [name, amounts] : ops) {
    out += (out.empty() ? "" : " ") + name;
    std::string list;
    for (int64_t a : amounts) list += (list.empty() ? ":" : ",") + std::to_string(a);
    out += list;
  }
  return out;
}

bool action_space_covers(const std::string& recorded, const std::string& now) {
  auto actions = [](const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    for (std::string word; in >> word;) {
      size_t colon = word.find(':');
      std::string op = word.substr(0, colon);
      out.insert(op);
      if (colon == std::string::npos) continue;
      std::istringstream amounts(word.substr(colon + 1));
      for (std::string a; std::getline(amounts, a, ',');) out.insert(op + ":" + a);
    }
    return out;
  };
  std::set<std::string> then = actions(recorded);
  for (const std::string& a : actions(now))
    if (!then.count(a)) return false;
  return true;
}

db::DeviceInfo this_device() {
  HostIdentity h = host_identity();
  return {h.cpu_model, h.isa, h.cores, h.llvm_version, h.beamlab_version};
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

db::Kernel kernel_record(const KernelTask& task) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const KernelBufferSpec& b : task.buffers)
    shapes.push_back({{"dtype", b.dtype.str()}, {"count", b.count}});
  db::Kernel k;
  k.hash = hash_hex(task.key);
  k.hash_version = kHashVersion;
  k.name = task.name;
  k.shapes = shapes.dump();
  k.flops = task.flops;
  k.bytes = task.bytes;
  k.ast = task.ast;
  return k;
}

Expected<KernelTask> task_from_record(const db::Kernel& k) {
  auto fail = [&](const std::string& why) {
    return make_unexpected("kernel " + k.name + " (" + k.hash + ") in the database: " + why);
  };
  auto ast = parse_graph(k.ast);
  if (!ast) return fail(ast.error().str("ast"));
  KernelTask t;
  t.name = k.name;
  t.key = (*ast)->hash();
  if (hash_hex(t.key) != k.hash)
    return fail("its AST hashes to " + hash_hex(t.key) + " in this build (another hash version)");
  t.ast = k.ast;
  auto shapes = nlohmann::json::parse(k.shapes, nullptr, false);
  if (!shapes.is_array()) return fail("its shapes are not a JSON array");
  for (const auto& b : shapes) {
    bool well_formed = b.is_object() && b.contains("dtype") && b["dtype"].is_string() &&
                       b.contains("count") && b["count"].is_number_integer();
    auto dt = well_formed ? parse_dtype(b["dtype"].get<std::string>()) : std::nullopt;
    if (!dt) return fail("bad buffer shape " + b.dump());
    t.buffers.push_back({*dt, b["count"].get<int64_t>()});
  }
  t.reduce_length = reduce_length(*ast);
  t.flops = k.flops;
  t.bytes = k.bytes;
  return t;
}

// --- the cache -------------------------------------------------------------------------------

std::optional<CacheHit> cache_lookup(CacheContext& ctx, const KernelTask& task, const UOpPtr& ast,
                                     int threads, const std::string& key) {
  if (!ctx.db || !reads(ctx.mode)) return std::nullopt;
  std::string actions_now = action_space(ast, threads);
  for (db::CacheEntry& e :
       ctx.db->cache_lookup(hash_hex(task.key), ctx.device, ctx.compiler, threads)) {
    if (e.stale || (!key.empty() && e.settings_key != key)) continue;
    if (!action_space_covers(e.actions, actions_now)) continue; // a new action may do better
    std::string why;
    Expected<std::vector<Opt>> opts = parse_opts(e.opts);
    if (!opts) {
      why = "its Opts no longer parse: " + opts.error();
    } else if (Expected<uint64_t> h = plan_hash(ast, *opts); !h) {
      why = "its Opts no longer apply: " + h.error();
    } else if (hash_hex(*h) != e.optimized_hash) {
      why = "its Opts now build a different kernel";
    } else {
      ++ctx.hits;
      return CacheHit{std::move(*opts), std::move(e)};
    }
    ++ctx.stale;
    if (writes(ctx.mode)) ctx.db->cache_mark_stale(e.id, why);
  }
  ++ctx.misses;
  return std::nullopt;
}

bool cache_store(CacheContext& ctx, const TuneResult& r, const UOpPtr& ast,
                 const std::string& actions) {
  if (!ctx.db || !writes(ctx.mode) || r.winner < 0) return false;
  const Candidate& w = r.best();
  if (w.status != Status::ok) return false;
  Expected<uint64_t> h = plan_hash(ast, w.opts);
  if (!h) return false;
  db::CacheEntry e;
  e.kernel_hash = hash_hex(r.key);
  e.device = ctx.device;
  e.compiler = ctx.compiler;
  e.settings_key = settings_key(r.settings);
  e.threads = r.threads;
  e.kernel_name = r.kernel;
  e.opts = beamlab::to_string(w.opts);
  e.optimized_hash = hash_hex(*h);
  e.actions = actions;
  e.ms = r.winner_ms;
  if (r.heuristic_ms > 0) e.heuristic_ms = r.heuristic_ms;
  e.source = ctx.source;
  if (ctx.run_id > 0) e.run_id = ctx.run_id;
  return ctx.db->cache_put(e);
}

// --- the journal -----------------------------------------------------------------------------

Status status_from_string(const std::string& name) {
  for (int i = 0; i < kStatusCount; ++i)
    if (name == to_string(static_cast<Status>(i))) return static_cast<Status>(i);
  return Status::error;
}

db::CandidateRow candidate_row(const Candidate& c) {
  db::CandidateRow r;
  r.seq = c.id;
  r.opts = beamlab::to_string(c.opts);
  r.parent = c.parent;
  r.iteration = c.iteration;
  r.status = to_string(c.status);
  r.error = c.error;
  r.compile_ms = c.compile_ms;
  r.code_hash = c.code_hash ? hash_hex(c.code_hash) : "";
  r.code_bytes = c.code_bytes;
  r.max_error = c.max_error;
  r.duplicate_of = c.duplicate_of;
  r.samples_ms = c.samples_ms;
  return r;
}

Candidate candidate_from_row(const db::CandidateRow& r) {
  Candidate c;
  c.id = r.seq;
  if (auto opts = parse_opts(r.opts)) c.opts = std::move(*opts);
  c.parent = r.parent;
  c.iteration = r.iteration;
  c.status = status_from_string(r.status);
  c.error = r.error;
  c.compile_ms = r.compile_ms;
  c.code_hash = r.code_hash.empty() ? 0 : std::stoull(r.code_hash, nullptr, 16);
  c.code_bytes = r.code_bytes;
  c.max_error = r.max_error;
  c.duplicate_of = r.duplicate_of;
  c.samples_ms = r.samples_ms;
  return c;
}

TuningJournal::TuningJournal(db::Database& db, int64_t run_id, const KernelTask& task,
                             const std::string& workload, int threads,
                             const SearchSettings& settings, const std::string& actions,
                             double budget_s)
    : db_(db) {
  int64_t kernel_id = db.upsert_kernel(kernel_record(task));
  tuning_ = db.open_tuning(run_id, kernel_id, threads, workload, settings.to_json().dump(), actions,
                           budget_s);
  if (finished()) return;
  for (const db::CandidateRow& row : db.candidates(tuning_.id))
    replay_.emplace(row.opts, candidate_from_row(row));
}

void TuningJournal::record(const Event& e) {
  if ((e.kind == Event::Kind::settled || e.kind == Event::Kind::reference) && e.candidate)
    db_.save_candidate(tuning_.id, candidate_row(*e.candidate));
}

void TuningJournal::finish(const TuneResult& r) {
  std::vector<db::CandidateRow> rows;
  for (const Candidate& c : r.candidates) rows.push_back(candidate_row(c));
  db_.save_candidates(tuning_.id, rows);
  tuning_.status = "done";
  const Candidate& h = r.candidates.at(static_cast<size_t>(r.heuristic));
  tuning_.heuristic_opts = beamlab::to_string(h.opts);
  if (r.heuristic_ms > 0) tuning_.heuristic_ms = r.heuristic_ms;
  tuning_.winner_opts = beamlab::to_string(r.best().opts);
  tuning_.winner_ms = r.winner_ms;
  tuning_.noise = r.noise;
  tuning_.tie = r.tie;
  tuning_.stop_reason = r.stop_reason;
  tuning_.iterations = r.iterations;
  tuning_.wall_s = r.wall_s;
  tuning_.restarts = r.restarts;
  db_.finish_tuning(tuning_);
}

void TuningJournal::fail(const std::string& error) {
  tuning_.status = "failed";
  tuning_.error = error;
  db_.finish_tuning(tuning_);
}

} // namespace beamlab::tuner

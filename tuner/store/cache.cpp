// The tuning cache; see cache.hpp.
#include "tuner/store/cache.hpp"

#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

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

namespace {
constexpr std::string_view kWarm = " warm";
}

std::string settings_key(const SearchSettings& s, bool warm_started) {
  std::string checks;
  for (InputKind k : s.checks) checks += (checks.empty() ? "" : ",") + std::string(to_string(k));
  std::string key =
      fmt::format("beam={} iterations={} gain={:g} patience={} lanes={} ops={} checks={}", s.beam,
                  s.max_iterations, s.min_improvement, s.patience, s.max_lanes, s.max_ops, checks);
  // Only when on, so the keys of searches without it stay what they were.
  if (s.prune > 0 && s.prune < 1) key += fmt::format(" prune={:g}", s.prune);
  return key + std::string(warm_started ? kWarm : "");
}

bool settings_key_accepts(const std::string& wanted, const std::string& stored) {
  if (stored == wanted) return true;
  return wanted.ends_with(kWarm) && stored == wanted.substr(0, wanted.size() - kWarm.size());
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

std::optional<CacheHit> cache_lookup(CacheContext& ctx, const KernelTask& task, const UOpPtr& ast,
                                     int threads, const std::string& key) {
  if (!ctx.db || !reads(ctx.mode)) return std::nullopt;
  std::string actions_now = action_space(ast, threads);
  for (db::CacheEntry& e :
       ctx.db->cache_lookup(hash_hex(task.key), ctx.device, ctx.compiler, threads)) {
    if (e.stale || (!key.empty() && !settings_key_accepts(key, e.settings_key))) continue;
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
                 const std::string& actions, bool warm_started) {
  if (!ctx.db || !writes(ctx.mode) || r.winner < 0) return false;
  const Candidate& w = r.best();
  if (w.status != Status::ok) return false;
  Expected<uint64_t> h = plan_hash(ast, w.opts);
  if (!h) return false;
  db::CacheEntry e;
  e.kernel_hash = hash_hex(r.key);
  e.device = ctx.device;
  e.compiler = ctx.compiler;
  e.settings_key = settings_key(r.settings, warm_started);
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

} // namespace beamlab::tuner

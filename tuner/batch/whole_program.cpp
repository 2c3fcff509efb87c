// The whole-program check of a batch's plans; see whole_program.hpp.
#include "tuner/batch/whole_program.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "tuner/store/cache.hpp"
#include <beamlab/tuning.hpp>

namespace beamlab::tuner {
namespace {

// Each whole-program sample lasts at least this long (back-to-back runs of a short program).
constexpr double kSampleMs = 2;

// A plan's time summed over `at` (a program over symbolic variables: a run at each binding).
double sample_at(ExecutionPlan& plan, const std::vector<VarValues>& at) {
  double ms = 0;
  for (const VarValues& vars : at) {
    plan.bind(vars);
    ms += plan.sample(1, kSampleMs).at(0);
  }
  return ms;
}

// The two plans' whole times in `rounds` rounds, each round running both back to back, the
// order alternating so neither always runs second (warmer caches, a later clock ramp).
std::pair<std::vector<double>, std::vector<double>>
paired_rounds(ExecutionPlan& heuristic, ExecutionPlan& tuned, int rounds,
              const std::vector<VarValues>& at) {
  std::vector<double> h, t;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      h.push_back(sample_at(heuristic, at));
      t.push_back(sample_at(tuned, at));
    } else {
      t.push_back(sample_at(tuned, at));
      h.push_back(sample_at(heuristic, at));
    }
  }
  return {h, t};
}

// Each kernel's median time inside the program, by key, summed over `at`.
std::map<uint64_t, double> kernel_times(ExecutionPlan& plan, int runs,
                                        const std::vector<VarValues>& at) {
  std::map<uint64_t, double> out;
  for (const VarValues& vars : at) {
    plan.bind(vars);
    for (const KernelProfile& p : plan.profile(runs, kSampleMs / 4)) out[p.key] += p.ms;
  }
  return out;
}

// The kernel's cache entries for this batch's settings, staled, and the heuristic's plan stored
// in their place.
void revert(db::Database& db, const BatchKernel& k, const BatchOptions& options,
            const std::string& why) {
  std::string device = this_device().fingerprint(), compiler = compiler_identity();
  std::string cold = settings_key(options.settings), warm = settings_key(options.settings, true);
  Expected<UOpPtr> ast = task_graph(k.task);
  if (!ast) return;
  std::vector<Opt> heuristic = heuristic_opts(*ast, options.threads);
  Expected<uint64_t> optimized = plan_hash(*ast, heuristic);
  if (!optimized) return;
  for (db::CacheEntry e :
       db.cache_lookup(hash_hex(k.task.key), device, compiler, options.threads)) {
    if (e.stale || (e.settings_key != cold && e.settings_key != warm)) continue;
    db.cache_mark_stale(e.id, why);
    e.opts = to_string(heuristic);
    e.optimized_hash = hash_hex(*optimized);
    e.ms = k.heuristic_ms() > 0 ? k.heuristic_ms() : e.ms;
    e.source += " (the heuristic's plan: " + why + ")";
    e.created_at.clear();
    db.cache_put(e);
  }
}

} // namespace

std::vector<ProgramCheck> check_programs(const Corpus& corpus, const BatchReport& report,
                                         const BatchOptions& options, db::Database& db,
                                         int rounds) {
  std::map<uint64_t, const BatchKernel*> by_key;
  for (const BatchKernel& k : report.kernels) by_key[k.task.key] = &k;
  // A plan other than the heuristic's (which a cache hit doesn't record: it is computed).
  auto tuned_plan = [&](const BatchKernel& k, const ScheduleItem& item) {
    bool planned = k.outcome == BatchKernel::Outcome::tuned ||
                   k.outcome == BatchKernel::Outcome::cached ||
                   k.outcome == BatchKernel::Outcome::resumed;
    return planned && k.result.winner_opts != to_string(heuristic_opts(item.ast, options.threads));
  };
  std::vector<ProgramCheck> out;
  std::vector<uint64_t> reverted; // a kernel shared by two programs is reverted once
  auto is_reverted = [&](uint64_t key) {
    return std::find(reverted.begin(), reverted.end(), key) != reverted.end();
  };
  for (const CorpusEntry& entry : corpus.entries) {
    ProgramCheck c;
    // The kernel's plan is not kept: named in the check, and its cache entry reverted.
    auto drop = [&](const BatchKernel& k, const std::string& why) {
      c.reverted.push_back(k.task.name);
      reverted.push_back(k.task.key);
      if (writes(options.cache)) revert(db, k, options, why);
    };
    c.label = entry.label;
    Program program = build_entry(entry);
    Schedule schedule = program.schedule();
    c.kernels = static_cast<int>(schedule.items.size());
    HeuristicPolicy heuristic, tuned;
    std::vector<const BatchKernel*> planned;
    for (const ScheduleItem& item : schedule.items) {
      auto k = by_key.find(item.key);
      if (k == by_key.end() || !tuned_plan(*k->second, item) || is_reverted(item.key)) continue;
      Expected<std::vector<Opt>> opts = parse_opts(k->second->result.winner_opts);
      if (!opts) continue;
      tuned.set(hash_hex(item.key), *opts);
      planned.push_back(k->second);
    }
    c.plans = static_cast<int>(planned.size());
    if (planned.empty()) {
      c.note = by_key.empty() ? "no kernel of it in this shard" : "no plan but the heuristic's";
      out.push_back(c);
      continue;
    }
    RealizeOptions ro{.threads = options.threads, .policy = &heuristic};
    ExecutionPlan base = ExecutionPlan::prepare(schedule, program.inputs(), ro);
    ro.policy = &tuned;
    ExecutionPlan mine = ExecutionPlan::prepare(schedule, program.inputs(), ro);
    std::vector<VarValues> at = entry_bindings(entry, base);
    auto [h, t] = paired_rounds(base, mine, rounds, at);
    c.speedup = paired_ratio(h, t);
    if (!c.speedup.significant()) {
      // Which plans lose inside the program: each kernel timed in it both ways.
      std::map<uint64_t, double> base_ms = kernel_times(base, rounds, at),
                                 mine_ms = kernel_times(mine, rounds, at);
      HeuristicPolicy kept;
      for (const BatchKernel* k : planned) {
        if (mine_ms[k->task.key] < 0.98 * base_ms[k->task.key]) {
          kept.set(hash_hex(k->task.key), *parse_opts(k->result.winner_opts));
          continue;
        }
        drop(*k, fmt::format("in {} it ran {:.4f} ms against the heuristic's {:.4f} ms",
                             entry.label, mine_ms[k->task.key], base_ms[k->task.key]));
      }
      if (!c.reverted.empty()) {
        ro.policy = &kept;
        mine = ExecutionPlan::prepare(schedule, program.inputs(), ro);
        std::tie(h, t) = paired_rounds(base, mine, rounds, at);
        c.speedup = paired_ratio(h, t);
      }
      if (c.speedup.estimate <= 1) { // what remains doesn't make the whole faster: none is kept
        for (const BatchKernel* k : planned)
          if (!is_reverted(k->task.key))
            drop(*k, c.speedup.estimate < 1
                         ? fmt::format("{} as a whole ran {:.2f}x slower with the tuned plans",
                                       entry.label, 1 / c.speedup.estimate)
                         : fmt::format("{} as a whole ran no faster with the tuned plans",
                                       entry.label));
        c.speedup = PairedRatio{1, 1, 1, c.speedup.rounds};
        t = h;
      }
    }
    c.heuristic_ms = quantile(h, 0.5);
    c.tuned_ms = quantile(t, 0.5);
    out.push_back(c);
  }
  return out;
}

} // namespace beamlab::tuner

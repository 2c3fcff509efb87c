// Warm starts across shapes; see warm_start.hpp.
#include "tuner/store/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "tuner/search/legalize.hpp"
#include "tuner/search/structure.hpp"

namespace beamlab::tuner {
namespace {

/// A cache entry of the kernel's structure, with its kernel's AST and distance.
struct Lender {
  const db::Database::EntryWithKernel* row = nullptr;
  UOpPtr ast;
  double distance = 0;
};

/// The entry's kernel, when it is of `structure`: its structure is computed here when the
/// stored one is of another recipe (and stored, once per kernel, where the file is writable).
UOpPtr lender_ast(db::Database& db, const db::Kernel& k, const std::string& structure,
                  std::set<int64_t>& filled) {
  auto ast = parse_graph(k.ast);
  if (!ast) return nullptr;
  if (k.structure_version == kStructureVersion) return k.structure == structure ? *ast : nullptr;
  std::string mine = hash_hex(structure_key(*ast));
  if (!db.read_only() && filled.insert(k.id).second)
    db.set_kernel_structure(k.id, mine, kStructureVersion);
  return mine == structure ? *ast : nullptr;
}

} // namespace

std::vector<WarmSeed> warm_start_seeds(const CacheContext& ctx, const KernelTask& task,
                                       const UOpPtr& ast, int threads,
                                       const SearchSettings& settings, int count) {
  if (!ctx.db || count <= 0) return {};
  std::string structure = hash_hex(structure_key(ast));
  std::vector<int64_t> sizes = size_signature(ast);
  std::vector<db::Database::EntryWithKernel> rows = ctx.db->cache_by_structure(
      structure, kStructureVersion, ctx.device, ctx.compiler, threads, hash_hex(task.key));
  std::vector<Lender> lenders;
  std::set<int64_t> filled;
  for (const db::Database::EntryWithKernel& row : rows) {
    UOpPtr theirs = lender_ast(*ctx.db, row.kernel, structure, filled);
    if (!theirs) continue;
    double d = size_distance(sizes, size_signature(theirs));
    if (std::isfinite(d)) lenders.push_back({&row, theirs, d});
  }
  auto order = [](const Lender& l) {
    return std::tuple(l.distance, l.row->entry.ms, l.row->entry.id);
  };
  std::sort(lenders.begin(), lenders.end(),
            [&](const Lender& a, const Lender& b) { return order(a) < order(b); });
  std::vector<WarmSeed> seeds;
  std::set<std::string> seen;
  for (const Lender& l : lenders) {
    if (static_cast<int>(seeds.size()) >= count) break;
    const db::CacheEntry& e = l.row->entry;
    Expected<std::vector<Opt>> plan = parse_opts(e.opts);
    if (!plan) continue;
    Expected<LegalizedPlan> legal = legalize_plan(l.ast, *plan, ast, threads, settings);
    if (!legal || legal->opts.empty() || !seen.insert(beamlab::to_string(legal->opts)).second)
      continue;
    seeds.push_back({legal->opts, e.id, e.kernel_hash, e.kernel_name, e.opts, e.ms, l.distance,
                     legal->changed, legal->dropped});
  }
  return seeds;
}

std::vector<std::vector<Opt>> seed_plans(const std::vector<WarmSeed>& seeds) {
  std::vector<std::vector<Opt>> out;
  for (const WarmSeed& s : seeds) out.push_back(s.opts);
  return out;
}

nlohmann::json warm_start_json(const std::vector<WarmSeed>& seeds) {
  nlohmann::json out = nlohmann::json::array();
  for (const WarmSeed& s : seeds)
    out.push_back({{"opts", beamlab::to_string(s.opts)},
                   {"cache_entry", s.entry_id},
                   {"from_kernel", s.kernel_name},
                   {"from_hash", s.kernel_hash},
                   {"from_opts", s.plan},
                   {"from_ms", s.ms},
                   {"distance", s.distance},
                   {"changed", s.changed},
                   {"dropped", s.dropped}});
  return out;
}

} // namespace beamlab::tuner

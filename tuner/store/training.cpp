// The journal as training data; see training.hpp.
#include "tuner/store/training.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "tuner/store/journal.hpp"
#include "tuner/store/records.hpp"

namespace beamlab::tuner {
namespace {

/// The timed runs per candidate a search made (its settings' "runs"); none when not recorded.
std::optional<size_t> search_runs(const db::Tuning& t) {
  auto settings = nlohmann::json::parse(t.settings, nullptr, false);
  if (!settings.is_object() || !settings.contains("runs") || !settings["runs"].is_number_integer())
    return std::nullopt;
  int64_t runs = settings["runs"].get<int64_t>();
  if (runs < 1) return std::nullopt;
  return static_cast<size_t>(runs);
}

/// The label of a candidate: its fastest search-time sample.
double search_time(const db::CandidateRow& c, std::optional<size_t> runs) {
  size_t n = std::min(c.samples_ms.size(), runs.value_or(c.samples_ms.size()));
  return *std::min_element(c.samples_ms.begin(), c.samples_ms.begin() + static_cast<long>(n));
}

bool usable(const db::CandidateRow& c, const JournalFilter& filter) {
  bool timed = c.status == "ok" || (c.status == "slow" && !filter.exclude_slow);
  return timed && !c.samples_ms.empty() &&
         std::all_of(c.samples_ms.begin(), c.samples_ms.end(), [](double ms) { return ms > 0; });
}

/// A kernel as read once: its AST, the kernel part of its features, and each plan's features
/// (the same plan recurs across runs, and applying it is the main cost).
struct KernelCache {
  bool readable = false;
  UOpPtr ast;
  Features kernel;
  size_t index = 0;                                     ///< in Journal::kernels
  std::map<std::string, std::optional<Features>> plans; ///< by the plan's text form
};

/// The runs on the device, oldest first.
std::vector<db::Run> device_runs(db::Database& db, const std::string& device_fingerprint) {
  std::map<int64_t, bool> on_device; // device id -> fingerprint matches
  std::vector<db::Run> out;
  for (const db::Run& r : db.runs()) {
    if (r.kind != db::RunKind::tune) continue;
    auto [it, fresh] = on_device.emplace(r.device_id, false);
    if (fresh) {
      std::optional<db::Device> d = db.device(r.device_id);
      it->second = d && d->fingerprint == device_fingerprint;
    }
    if (it->second) out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const db::Run& a, const db::Run& b) { return a.id < b.id; });
  return out;
}

/// The kernel of a tuning, its AST read and its features computed the first time it is seen;
/// null when it is excluded or doesn't read back in this build.
KernelCache* open_kernel(db::Database& db, int64_t kernel_id, const JournalFilter& filter,
                         std::map<int64_t, KernelCache>& kernels, Journal& out) {
  auto [it, fresh] = kernels.try_emplace(kernel_id);
  KernelCache& k = it->second;
  if (!fresh) return k.readable ? &k : nullptr;
  std::optional<db::Kernel> record = db.kernel(kernel_id);
  if (record && filter.exclude_kernels.contains(record->hash)) return nullptr;
  Expected<KernelTask> task =
      record ? task_from_record(*record) : make_unexpected(std::string("missing"));
  if (!task) {
    ++out.stats.unreadable_kernels;
    return nullptr;
  }
  k.readable = true;
  k.ast = task->graph;
  k.kernel = kernel_features(k.ast);
  k.index = out.kernels.size();
  out.kernels.push_back({task->key, record->hash, record->name, {}});
  return &k;
}

/// The timed candidates of tuning `t` (of run `run_id`, kernel `k`) as samples.
void add_tuning(db::Database& db, const db::Tuning& t, int64_t run_id, KernelCache& k,
                const JournalFilter& filter, Journal& out) {
  ++out.stats.tunings;
  std::optional<size_t> runs = search_runs(t);
  for (const db::CandidateRow& c : db.candidates(t.id)) {
    if (!usable(c, filter)) continue;
    auto [plan, new_plan] = k.plans.try_emplace(c.opts);
    if (new_plan) {
      Expected<std::vector<Opt>> opts = parse_opts(c.opts);
      Expected<Features> x =
          opts ? plan_features(k.ast, k.kernel, *opts, t.threads) : make_unexpected(opts.error());
      if (x) plan->second = std::move(*x);
    }
    if (!plan->second) {
      ++out.stats.unusable;
      continue;
    }
    out.kernels[k.index].samples.push_back({c.opts, *plan->second, search_time(c, runs), run_id});
    ++out.stats.samples;
  }
}

} // namespace

Journal read_journal(db::Database& db, const std::string& device_fingerprint, int threads,
                     const JournalFilter& filter) {
  auto t0 = std::chrono::steady_clock::now();
  Journal out;
  std::map<int64_t, KernelCache> kernels; // by kernel id
  for (const db::Run& run : device_runs(db, device_fingerprint)) {
    if (filter.exclude_runs.contains(run.id)) continue;
    for (const db::Tuning& t : db.tunings(run.id)) {
      if (t.threads != threads || tried_by_hand(t)) continue;
      if (KernelCache* k = open_kernel(db, t.kernel_id, filter, kernels, out))
        add_tuning(db, t, run.id, *k, filter, out);
    }
  }
  // Kernels without a sample are not kernels of the training data.
  std::erase_if(out.kernels, [](const JournalKernel& k) { return k.samples.empty(); });
  out.stats.kernels = static_cast<int>(out.kernels.size());
  out.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void add_samples(CostModel& model, const JournalKernel& kernel) {
  for (const JournalSample& s : kernel.samples) model.add(kernel.key, s.x, s.ms);
}

TrainingStats add_journal(db::Database& db, const std::string& device_fingerprint, int threads,
                          CostModel& model, const JournalFilter& filter) {
  Journal j = read_journal(db, device_fingerprint, threads, filter);
  for (const JournalKernel& k : j.kernels) add_samples(model, k);
  return j.stats;
}

std::vector<std::pair<int, int>> journal_thread_counts(db::Database& db,
                                                       const std::string& device_fingerprint) {
  std::map<int, int> counts;
  for (const db::Run& run : device_runs(db, device_fingerprint))
    for (const db::Tuning& t : db.tunings(run.id))
      if (!tried_by_hand(t)) ++counts[t.threads];
  return {counts.begin(), counts.end()};
}

} // namespace beamlab::tuner

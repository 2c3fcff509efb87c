// Reading a run's measurements back; see run_data.hpp.
#include "reports/run_data.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/stats.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::reports {

using json = nlohmann::json;

const char* to_string(Section s) {
  switch (s) {
  case Section::workload: return "workload";
  case Section::kernel: return "kernel";
  case Section::suite: return "suite";
  }
  return "?";
}

const char* heading(Section s) {
  switch (s) {
  case Section::workload: return "Workloads";
  case Section::kernel: return "Kernels";
  case Section::suite: return "Benchmark suite";
  }
  return "?";
}

namespace {

std::optional<Section> parse_section(const std::string& text) {
  for (Section s : {Section::workload, Section::kernel, Section::suite})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

/// Adds `m`, pooling it with an earlier measurement of the same thing.
void add(std::vector<Measurement>& items, Measurement m) {
  auto same = std::find_if(items.begin(), items.end(), [&](const Measurement& x) {
    return x.section == m.section && x.key == m.key;
  });
  if (same == items.end()) {
    items.push_back(std::move(m));
    return;
  }
  same->samples_ms.insert(same->samples_ms.end(), m.samples_ms.begin(), m.samples_ms.end());
  for (const std::string& w : m.workloads)
    if (std::find(same->workloads.begin(), same->workloads.end(), w) == same->workloads.end())
      same->workloads.push_back(w);
}

std::vector<Measurement> tuned_kernels(db::Database& db, int64_t run_id) {
  std::vector<Measurement> out;
  for (const db::Tuning& t : db.tunings(run_id)) {
    std::optional<db::Kernel> k = db.kernel(t.kernel_id);
    if (!k) continue;
    Measurement m;
    m.section = Section::kernel;
    m.key = k->hash;
    m.name = k->name;
    m.workloads = {t.workload};
    m.plan = t.winner_opts;
    m.source = "tuned";
    m.flops = k->flops;
    m.bytes = k->bytes;
    if (t.status == db::TuningStatus::done) m.samples_ms = db.samples_of(t.id, t.winner_opts);
    add(out, std::move(m));
  }
  return out;
}

} // namespace

db::Benchmark to_benchmark(int64_t run_id, const Measurement& m) {
  json params = {{"section", to_string(m.section)}, {"key", m.key}};
  if (!m.workloads.empty()) params["workload"] = m.workloads.front();
  if (!m.plan.empty()) params["plan"] = m.plan;
  if (!m.source.empty()) params["source"] = m.source;
  if (m.flops) params["flops"] = m.flops;
  if (m.bytes) params["bytes"] = m.bytes;
  json metrics = {{"samples_ms", m.samples_ms}, {"median_ms", describe(m.samples_ms).median}};
  return {run_id, m.name, params.dump(), metrics.dump()};
}

Measurement from_benchmark(const db::Benchmark& b, const std::string& where) {
  auto fail = [&](const std::string& why) {
    user_error << "run " << b.run_id << " in '" << where << "': benchmark '" << b.name << "' "
               << why << " (was it written by a newer beamlab?)";
  };
  json params = json::parse(b.params, nullptr, false);
  json metrics = json::parse(b.metrics, nullptr, false);
  if (!params.is_object() || !metrics.is_object()) fail("is not JSON");
  Measurement m;
  try {
    std::optional<Section> section = parse_section(params.value("section", ""));
    if (!section) fail("has no known section");
    m.section = *section;
    m.key = params.at("key").get<std::string>();
    m.name = b.name;
    if (params.contains("workload")) m.workloads = {params["workload"].get<std::string>()};
    m.plan = params.value("plan", "");
    m.source = params.value("source", "");
    m.flops = params.value("flops", int64_t{0});
    m.bytes = params.value("bytes", int64_t{0});
    m.samples_ms = metrics.at("samples_ms").get<std::vector<double>>();
  } catch (const json::exception& e) {
    fail(std::string("does not read: ") + e.what());
  }
  return m;
}

std::string RunData::when() const {
  std::string text = run.started_at.substr(0, 16);
  if (text.size() > 10 && text[10] == 'T') text[10] = ' ';
  return text;
}

std::string RunData::title() const {
  std::string label = run.label.empty() ? "" : fmt::format(" '{}'", run.label);
  std::string rev = run.git_revision.empty() ? "" : ", " + run.git_revision;
  return fmt::format("run {}{} ({}{}, {})", run.id, label, to_string(run.kind), rev, when());
}

RunData load_run_data(db::Database& db, int64_t run_id) {
  RunData data;
  std::optional<db::Run> run = db.run(run_id);
  user_assert(run) << "no run " << run_id << " in '" << db.path() << "'";
  data.run = *run;
  data.device = db.device(run->device_id);
  std::vector<Measurement> items;
  for (const db::Benchmark& b : db.benchmarks(run_id)) add(items, from_benchmark(b, db.path()));
  for (Measurement& m : tuned_kernels(db, run_id)) add(items, std::move(m));
  // Different kernels can share a readable name (two convolutions of one shape): a short hash
  // tells them apart in tables, charts and JUnit case names.
  std::map<std::string, std::set<std::string>> keys_of;
  for (const Measurement& m : items)
    if (m.section == Section::kernel) keys_of[m.name].insert(m.key);
  for (Measurement& m : items)
    if (m.section == Section::kernel && keys_of[m.name].size() > 1)
      m.name += " #" + m.key.substr(0, 6);
  // Sections in report order, each in the order the run measured it.
  for (Section s : {Section::workload, Section::kernel, Section::suite})
    for (Measurement& m : items)
      if (m.section == s) data.items.push_back(std::move(m));
  return data;
}

std::vector<double> History::medians_of(const Measurement& m) const {
  std::vector<double> out;
  auto it = entries.find({m.section, m.key});
  if (it == entries.end()) return out;
  for (const auto& [median, plan] : it->second)
    if (m.section != Section::kernel || plan == m.plan) out.push_back(median);
  return out;
}

namespace {

/// The bench settings a history must share with the candidate: other threads or another cache
/// mode time other plans (null when the run recorded none).
json comparable_settings(const db::Run& run) {
  json s = json::parse(run.settings, nullptr, false);
  if (!s.is_object()) return nullptr;
  return {{"threads", s.value("threads", json(nullptr))},
          {"cache", s.value("cache", json(nullptr))}};
}

} // namespace

History load_history(db::Database& db, const RunData& candidate, int window) {
  History history;
  if (!candidate.device || window <= 0 || candidate.run.kind != db::RunKind::bench) return history;
  const json settings = comparable_settings(candidate.run);
  std::vector<int64_t> ids; // newest first
  for (const db::Run& r : db.runs())
    if (static_cast<int>(ids.size()) < window && r.id < candidate.run.id &&
        r.kind == db::RunKind::bench && r.status == db::RunStatus::done &&
        r.device_id == candidate.run.device_id && comparable_settings(r) == settings)
      ids.push_back(r.id);
  history.runs = static_cast<int>(ids.size());
  for (auto id = ids.rbegin(); id != ids.rend(); ++id)
    for (const Measurement& m : load_run_data(db, *id).items)
      if (!m.samples_ms.empty())
        history.entries[{m.section, m.key}].emplace_back(describe(m.samples_ms).median, m.plan);
  return history;
}

db::Run resolve_run(db::Database& db, const std::string& spec, const std::string& flag) {
  std::vector<db::Run> runs = db.runs(); // newest first
  user_assert(!runs.empty()) << flag << " " << spec << ": the database '" << db.path()
                             << "' has no runs yet; record one with 'beamlab bench' or "
                                "'beamlab tune'";
  auto listing = [&] {
    return fmt::format("its runs are {}..{}; 'beamlab report --list' lists them", runs.back().id,
                       runs.front().id);
  };
  if (spec == "latest" || spec.starts_with("latest~")) {
    size_t back = 0;
    if (spec != "latest") {
      std::string n = spec.substr(7);
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), back);
      user_assert(ec == std::errc{} && p == n.data() + n.size())
          << flag << " '" << spec << "': expected latest~N with N a count of runs back";
    }
    user_assert(back < runs.size()) << flag << " '" << spec << "': the database '" << db.path()
                                    << "' holds only " << runs.size() << " run(s)";
    return runs[back];
  }
  int64_t id = 0;
  auto [p, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), id);
  if (ec == std::errc{} && p == spec.data() + spec.size()) {
    std::optional<db::Run> run = db.run(id);
    user_assert(run) << flag << " " << spec << ": no run " << id << " in '" << db.path() << "' ("
                     << listing() << ")";
    return *run;
  }
  auto labelled =
      std::find_if(runs.begin(), runs.end(), [&](const db::Run& r) { return r.label == spec; });
  user_assert(labelled != runs.end())
      << flag << " '" << spec << "': no run has that id or label in '" << db.path() << "' ("
      << listing() << ", or name one as latest or latest~N)";
  return *labelled;
}

} // namespace beamlab::reports

// Conversions between the tuner's types and the database's records; see records.hpp.
#include "tuner/store/records.hpp"

#include <fmt/format.h>

#include "tuner/measure/check.hpp"
#include "tuner/search/structure.hpp"

namespace beamlab::tuner {

db::DeviceInfo this_device() {
  HostIdentity h = host_identity();
  return {h.cpu_model, h.isa, h.cores, h.llvm_version, h.beamlab_version};
}

db::Kernel kernel_record(const KernelTask& task) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const KernelBufferSpec& b : task.buffers) shapes.push_back(buffer_json(b));
  db::Kernel k;
  k.hash = hash_hex(task.key);
  k.hash_version = kHashVersion;
  k.name = task.name;
  k.shapes = shapes.dump();
  k.flops = task.flops;
  k.bytes = task.bytes;
  k.ast = task.ast;
  // Its structure, for warm starts of the other kernels of it (none when the AST won't read).
  if (Expected<UOpPtr> ast = task_graph(task)) {
    k.structure = hash_hex(structure_key(*ast));
    k.structure_version = kStructureVersion;
  }
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
  t.graph = *ast;
  auto shapes = nlohmann::json::parse(k.shapes, nullptr, false);
  if (!shapes.is_array()) return fail("its shapes are not a JSON array");
  for (const auto& b : shapes) {
    bool well_formed = b.is_object() && b.contains("dtype") && b["dtype"].is_string() &&
                       b.contains("count") && b["count"].is_number_integer();
    auto dt = well_formed ? parse_dtype(b["dtype"].get<std::string>()) : std::nullopt;
    if (!dt) return fail("bad buffer shape " + b.dump());
    bool constant =
        b.contains("constant") && b["constant"].is_boolean() && b["constant"].get<bool>();
    t.buffers.push_back({*dt, b["count"].get<int64_t>(), constant});
  }
  t.reduce_length = reduce_length(*ast);
  KernelBindings bindings = default_bindings(*ast);
  t.tune_at = std::move(bindings.tune_at);
  t.check_at = std::move(bindings.check_at);
  t.flops = k.flops;
  t.bytes = k.bytes;
  return t;
}

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
  r.settled_in = c.settled_in;
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
  c.settled_in = r.settled_in;
  c.samples_ms = r.samples_ms;
  return c;
}

void summarize(db::Tuning& t, const TuneResult& r) {
  t.status = db::TuningStatus::done;
  t.heuristic_opts = beamlab::to_string(r.candidates.at(static_cast<size_t>(r.heuristic)).opts);
  if (r.heuristic_ms > 0) t.heuristic_ms = r.heuristic_ms;
  t.winner_opts = beamlab::to_string(r.best().opts);
  t.winner_ms = r.winner_ms;
  t.noise = r.noise;
  t.tie = r.tie;
  t.tie_with_heuristic = r.tie_with_heuristic;
  if (r.speedup.rounds > 0)
    t.speedup = db::PairedSpeedup{r.speedup.estimate, r.speedup.lo, r.speedup.hi};
  t.rounds_disturbed = r.rounds_disturbed;
  if (r.in_process.rounds > 0)
    t.in_process = db::PairedSpeedup{r.in_process.estimate, r.in_process.lo, r.in_process.hi};
  t.fidelity = r.fidelity;
  t.round_ms.clear();
  for (const auto& [id, rounds] : r.round_ms) {
    t.round_ms += std::to_string(id);
    // Shortest exact form: a replay re-ranks the finalists by these very numbers.
    for (double ms : rounds) t.round_ms += fmt::format(" {}", ms);
    t.round_ms += "\n";
  }
  t.stop_reason = r.stop_reason;
  t.iterations = r.iterations;
  t.wall_s = r.wall_s;
  t.reference_s = r.reference_s;
  t.compiling_s = r.compiling_s;
  t.timing_s = r.timing_s;
  t.restarts = r.restarts;
}

namespace {

nlohmann::json paired_json(const PairedRatio& p) {
  return {{"estimate", p.estimate}, {"lo", p.lo}, {"hi", p.hi}, {"rounds", p.rounds}};
}

} // namespace

std::optional<Speedup> speedup_of(const db::Tuning& t) {
  if (t.speedup) return Speedup{t.speedup->estimate, std::pair(t.speedup->lo, t.speedup->hi)};
  if (!t.heuristic_ms || !t.winner_ms || *t.heuristic_ms <= 0 || *t.winner_ms <= 0)
    return std::nullopt;
  return Speedup{*t.heuristic_ms / *t.winner_ms, std::nullopt};
}

nlohmann::json settings_json(const SearchSettings& s) {
  nlohmann::json checks_json = nlohmann::json::array();
  for (InputKind k : s.checks) checks_json.push_back(std::string(to_string(k)));
  return {{"beam", s.beam},
          {"max_iterations", s.max_iterations},
          {"min_improvement", s.min_improvement},
          {"patience", s.patience},
          {"early_stop", s.early_stop},
          {"max_lanes", s.max_lanes},
          {"max_ops", s.max_ops},
          {"bloat", s.bloat},
          {"time_budget_s", s.time_budget_s},
          {"candidate_budget", s.candidate_budget},
          {"warmup", s.warmup},
          {"runs", s.runs},
          {"finalists", s.finalists},
          {"final_rounds", s.final_rounds},
          {"final_runs", s.final_runs},
          {"compile_timeout_s", s.compile_timeout_s},
          {"run_timeout_s", s.run_timeout_s},
          {"threads", s.threads},
          {"checks", checks_json},
          {"prune", s.prune},
          {"detach_stragglers", s.detach_stragglers}};
}

SearchSettings settings_from_json(const nlohmann::json& j) {
  SearchSettings s;
  s.beam = j.value("beam", s.beam);
  s.max_iterations = j.value("max_iterations", s.max_iterations);
  s.min_improvement = j.value("min_improvement", s.min_improvement);
  s.patience = j.value("patience", s.patience);
  s.early_stop = j.value("early_stop", s.early_stop);
  s.max_lanes = j.value("max_lanes", s.max_lanes);
  s.max_ops = j.value("max_ops", s.max_ops);
  s.bloat = j.value("bloat", s.bloat);
  s.time_budget_s = j.value("time_budget_s", s.time_budget_s);
  s.candidate_budget = j.value("candidate_budget", s.candidate_budget);
  s.warmup = j.value("warmup", s.warmup);
  s.runs = j.value("runs", s.runs);
  s.finalists = j.value("finalists", s.finalists);
  s.final_rounds = j.value("final_rounds", s.final_rounds);
  s.final_runs = j.value("final_runs", s.final_runs);
  s.compile_timeout_s = j.value("compile_timeout_s", s.compile_timeout_s);
  s.run_timeout_s = j.value("run_timeout_s", s.run_timeout_s);
  s.threads = j.value("threads", s.threads);
  s.prune = j.value("prune", s.prune);                       // the model itself is not stored
  s.detach_stragglers = j.value("detach_stragglers", false); // what searches before it did
  if (j.contains("checks")) {
    s.checks.clear();
    for (const auto& name : j.at("checks"))
      if (auto k = parse_input_kind(name.get<std::string>())) s.checks.push_back(*k);
  }
  return s;
}

nlohmann::json result_json(const TuneResult& r) {
  nlohmann::json cands = nlohmann::json::array();
  for (const Candidate& c : r.candidates) {
    nlohmann::json j = {{"id", c.id},
                        {"opts", beamlab::to_string(c.opts)},
                        {"parent", c.parent},
                        {"iteration", c.iteration},
                        {"status", to_string(c.status)},
                        {"compile_ms", c.compile_ms},
                        {"samples_ms", c.samples_ms},
                        {"code_hash", hash_hex(c.code_hash)},
                        {"code_bytes", c.code_bytes}};
    if (!c.error.empty()) j["error"] = c.error;
    if (c.duplicate_of >= 0) j["duplicate_of"] = c.duplicate_of;
    cands.push_back(std::move(j));
  }
  return {{"kernel", r.kernel},
          {"key", hash_hex(r.key)},
          {"settings", settings_json(r.settings)},
          {"threads", r.threads},
          {"winner", r.winner},
          {"winner_opts", r.winner >= 0 ? beamlab::to_string(r.best().opts) : ""},
          {"winner_ms", r.winner_ms},
          {"heuristic", r.heuristic},
          {"heuristic_ms", r.heuristic_ms},
          {"empty", r.empty},
          {"finalists", r.finalists},
          {"noise", r.noise},
          {"tie", r.tie},
          {"tie_with_heuristic", r.tie_with_heuristic},
          {"speedup", paired_json(r.speedup)},
          {"rounds_disturbed", r.rounds_disturbed},
          {"in_process", paired_json(r.in_process)},
          {"fidelity", r.fidelity},
          {"iterations", r.iterations},
          {"stop_reason", r.stop_reason},
          {"wall_s", r.wall_s},
          {"reference_s", r.reference_s},
          {"compiling_s", r.compiling_s},
          {"timing_s", r.timing_s},
          {"compile_s", r.compile_s},
          {"restarts", r.restarts},
          {"replayed", r.replayed},
          {"dropped",
           {{"invalid", r.dropped_invalid},
            {"seen", r.dropped_seen},
            {"caps", r.dropped_caps},
            {"pruned", r.pruned}}},
          {"full_pass", r.full_pass},
          {"candidates", cands}};
}

} // namespace beamlab::tuner

// The run subcommand; see run_command.hpp.
#include "apps/run_command.hpp"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

#include "apps/cli_checks.hpp"
#include "apps/output.hpp"
#include "apps/tune_command.hpp"
#include "engine/support/did_you_mean.hpp"
#include "engine/support/statistics.hpp"
#include "tuner/batch/policy.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::cli {
namespace {

struct RunArgs {
  std::string workload; // a built-in workload, an ONNX model file or an IR kernel file
  std::string expr;
  std::vector<std::string> inputs; // --input NAME=DIMS
  std::vector<std::string> vars;   // --var NAME=VALUE or NAME=LOW..HIGH
  std::vector<std::string> params; // "--NAME VALUE" pairs, as given
  std::optional<std::string> opts; // set and empty: no Opts at all
  std::string kernel = "*";
  int runs = 10;
  int threads = 0;
  int beam = 0;
  bool list = false;
  std::string db, cache;
  std::string save_kernels; // a folder for each kernel's IR text
  OutputFormat format = OutputFormat::Text;
};

// Each kernel's AST as IR text, DIR/NAME_KEY.ir, for `beamlab run|tune FILE.ir` or a corpus.
void save_kernels(const Schedule& schedule, const std::string& label, const std::string& dir,
                  std::FILE* note) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  user_assert(!ec) << "--save-kernels: cannot create the folder '" << dir << "': " << ec.message();
  for (const ScheduleItem& item : schedule.items) {
    std::string path = fmt::format("{}/{}_{}.ir", dir, item.name, hash_hex(item.key));
    std::ofstream f(path);
    f << "# kernel " << item.name << " (key " << hash_hex(item.key) << ") of " << label
      << "\n# beamlab run|tune " << path << "\n"
      << print_graph(item.ast);
    user_assert(f.flush()) << "--save-kernels: cannot write '" << path << "'";
  }
  fmt::print(note, "saved {} kernel(s) as IR text in {}\n", schedule.items.size(), dir);
}

// --kernel must name a kernel of the program (or be "*").
void check_kernel_named(const Schedule& schedule, const std::string& kernel) {
  if (kernel == "*") return;
  std::vector<std::string> names;
  for (const ScheduleItem& item : schedule.items) {
    if (item.name == kernel || hash_hex(item.key) == kernel) return;
    names.push_back(item.name);
  }
  usage_error << "--kernel '" << kernel << "' names no kernel of the program"
              << did_you_mean(kernel, names, "its kernels: " + join_names(names, 8));
}

// --var NAME=VALUE words as values by name (NAME=LOW..HIGH words are ranges, for the model).
VarValues parse_vars(const std::vector<std::string>& words) {
  VarValues out;
  for (const std::string& w : words) {
    if (tuner::is_var_range(w)) continue;
    size_t eq = w.find('=');
    int64_t value = 0;
    const char* end = w.data() + w.size();
    auto [stop, ec] = eq == std::string::npos
                          ? std::from_chars_result{w.data(), std::errc::invalid_argument}
                          : std::from_chars(w.data() + eq + 1, end, value);
    bool number =
        eq != std::string::npos && eq > 0 && eq + 1 < w.size() && stop == end && ec == std::errc{};
    usage_assert(number) << "--var: '" << w
                         << "' is not NAME=VALUE with an integer value, e.g. seq=77";
    usage_assert(out.emplace(w.substr(0, eq), value).second)
        << "--var: '" << w.substr(0, eq) << "' is given twice";
  }
  return out;
}

// Every variable of the plan has a value (when it will run).
void check_vars_bound(const ExecutionPlan& plan, const VarValues& given) {
  for (const Variable& v : plan.variables())
    usage_assert(given.count(v.name))
        << "run: the program runs over the symbolic variable '" << v.name << "' in [" << v.lo
        << ", " << v.hi << "]; give its value, e.g. --var " << v.name << "=" << v.hi;
}

// Opts that do not apply to the kernel they are given for are a bad --opts value.
ExecutionPlan prepare(const Schedule& schedule, const Program& out, const RealizeOptions& options,
                      const RunArgs& args) {
  try {
    return ExecutionPlan::prepare(schedule, out.inputs(), options);
  } catch (const UserError& e) {
    if (!args.opts) throw;
    throw UsageError(std::string("--opts: ") + e.what());
  }
}

// What `run` measured, for the table or the JSON document.
struct Measured {
  std::string label;
  std::vector<Shape> outputs; ///< at the --var values, where they are given
  std::vector<KernelProfile> kernels;
  /// The whole plan's samples (ms), run end to end after the per-kernel profile: what a user
  /// of the program waits for, launches and the caches between kernels included.
  std::vector<double> whole;
  std::vector<std::vector<std::string>> model_nodes; ///< each kernel's; empty: not a model
  int runs = 0;
  int threads = 0;
  int cache_hits = 0;
  int searches = 0; ///< kernels BEAM-searched by this run (--beam, BEAM) for want of a plan
  std::string db;
};

void list_workloads(OutputFormat format) {
  if (format == OutputFormat::Json) {
    Json doc = json_document("run-list");
    Json& rows = doc["workloads"] = Json::array();
    for (const WorkloadInfo& w : workloads()) {
      Json dtypes = Json::array();
      for (DType d : w.dtypes) dtypes.push_back(d.str());
      rows.push_back({{"name", w.name},
                      {"description", w.description},
                      {"params", w.defaults},
                      {"dtypes", dtypes}});
    }
    print_json(doc);
    return;
  }
  for (const WorkloadInfo& w : workloads()) {
    std::string params;
    for (const auto& [k, v] : w.defaults) params += fmt::format(" --{} {}", k, v);
    fmt::print("{:<16} {}\n{:<16}{}\n", w.name, w.description, "", params);
  }
}

// "16x7 0.93": 16 threads run 7 parallel chunks each at most, 0.93 of the most on average.
std::string split_text(const ParallelProfile& p) {
  return fmt::format("{}x{} {:.2f}", p.used, p.per_thread, p.balance);
}

void print_table(const Measured& m) {
  std::string shapes;
  for (const auto& s : m.outputs) shapes += (shapes.empty() ? "" : ", ") + shape_str(s);
  fmt::print("{}{}{}: {} kernel(s), {} on {} thread(s)\n", m.label, shapes.empty() ? "" : " ",
             shapes, m.kernels.size(),
             m.runs > 0 ? fmt::format("median of {} runs", m.runs) : "plans only (--runs 0)",
             m.threads);
  // A model's kernels are also named by the model's nodes each computes.
  bool named = !m.model_nodes.empty();
  fmt::print("{:<28} {:>10} {:>9} {:>8} {:>10} {:>10}  {}\n", "kernel", "time ms", "GFLOP/s",
             "GB/s", "compile ms", "split", named ? "opts | model nodes" : "opts");
  double total = 0;
  int uneven = 0;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelProfile& k = m.kernels[i];
    total += k.ms;
    uneven += k.split.fills() ? 0 : 1;
    std::string opts = k.opts.empty() ? "-" : k.opts;
    if (named) opts += " | " + join_names(m.model_nodes[i]);
    if (m.runs > 0 && k.once) // ran once, before the runs
      fmt::print("{:<28} {:>10} {:>9} {:>8} {:>10.1f} {:>10}  {}\n", k.name, "once", "-", "-",
                 k.compile_ms, split_text(k.split), opts);
    else if (m.runs > 0)
      fmt::print("{:<28} {:>10.3f} {:>9.1f} {:>8.1f} {:>10.1f} {:>10}  {}\n", k.name, k.ms,
                 k.gflops, k.gbps, k.compile_ms, split_text(k.split), opts);
    else // nothing ran
      fmt::print("{:<28} {:>10} {:>9} {:>8} {:>10.1f} {:>10}  {}\n", k.name, "-", "-", "-",
                 k.compile_ms, split_text(k.split), opts);
  }
  if (m.runs > 0) {
    fmt::print("{:<28} {:>10.3f}  the sum of the kernels' medians\n", "total", total);
    fmt::print("{:<28} {:>10.3f}  median of {} end-to-end runs, interquartile {:.3f}-{:.3f}\n",
               "whole program", quantile(m.whole, 0.5), m.whole.size(), quantile(m.whole, 0.25),
               quantile(m.whole, 0.75));
  }
  if (auto once = std::count_if(m.kernels.begin(), m.kernels.end(),
                                [](const KernelProfile& k) { return k.once; }))
    fmt::print("once: {} kernel(s) of constants only (weights transformed for the kernels that "
               "read them), run once before the plan's first run\n",
               once);
  fmt::print("split: threads used x parallel chunks each, and their balance (mean / most work);"
             " {}\n",
             uneven == 0 ? fmt::format("every kernel fills the threads its work pays for")
                         : fmt::format("{} kernel(s) fill fewer threads than their work pays "
                                       "for, or unevenly (below {})",
                                       uneven, kMinBalance));
  if (m.cache_hits > 0)
    fmt::print("{} kernel(s) with plans from the tuning cache in {}\n", m.cache_hits, m.db);
}

void print_table_json(const Measured& m) {
  Json doc = json_document("run");
  doc["program"] = m.label;
  Json& outputs = doc["outputs"] = Json::array();
  for (const Shape& shape : m.outputs) { // a symbolic dim (no value given) as its name
    Json dims = Json::array();
    for (const Dim& d : shape) dims.push_back(d.is_const() ? Json(d.value()) : Json(d.str()));
    outputs.push_back(dims);
  }
  doc["runs"] = m.runs;
  doc["threads"] = m.threads;
  Json& rows = doc["kernels"] = Json::array();
  double total = 0;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelProfile& k = m.kernels[i];
    total += k.ms;
    rows.push_back(
        {{"kernel", k.name},
         {"key", hash_hex(k.key)},
         {"time_ms", json_number(k.ms)},
         {"gflops", json_number(k.gflops)},
         {"gbps", json_number(k.gbps)},
         {"compile_ms", json_number(k.compile_ms)},
         {"opts", k.opts},
         {"once", k.once},
         {"split",
          {{"threads", k.split.threads},
           {"chunks", k.split.chunks},
           {"used", k.split.used},
           {"per_thread", k.split.per_thread},
           {"balance", json_number(k.split.balance)},
           {"work", k.split.work},
           {"worth", k.split.worth},
           {"fills", k.split.fills()}}},
         {"model_nodes", m.model_nodes.empty() ? std::vector<std::string>{} : m.model_nodes[i]}});
  }
  doc["total_ms"] = json_number(total);
  if (m.whole.empty()) {
    doc["whole_ms"] = nullptr;
  } else {
    doc["whole_ms"] = {{"median", json_number(quantile(m.whole, 0.5))},
                       {"q1", json_number(quantile(m.whole, 0.25))},
                       {"q3", json_number(quantile(m.whole, 0.75))},
                       {"samples", m.whole}};
  }
  doc["cache_hits"] = m.cache_hits;
  doc["searches"] = m.searches;
  doc["db"] = m.db.empty() ? Json(nullptr) : Json(m.db);
  print_json(doc);
}

void run(const RunArgs& args) {
  if (args.list || (args.workload.empty() && args.expr.empty())) {
    list_workloads(args.format);
    return;
  }
  usage_assert(args.opts || args.kernel == "*")
      << "run: --kernel names the kernel --opts applies to; give --opts too";
  std::vector<std::string> ranges; // --var NAME=LOW..HIGH: a model's dims kept symbolic
  for (const std::string& w : args.vars)
    if (tuner::is_var_range(w)) ranges.push_back(w);
  tuner::CorpusEntry entry =
      program_entry("run", args.workload, args.params, args.expr, args.inputs, "float32", ranges);
  Program out = build_command_line(entry, tuner::build_entry);
  HeuristicPolicy heuristic;
  std::shared_ptr<tuner::BeamPolicy> beam;
  std::unique_ptr<tuner::CachePolicy> cached;
  tuner::CacheMode mode = tuner::parse_cache_mode(cache_mode_name(args.cache), "--cache");
  std::string path = db_path(args.db, mode);
  if (args.opts) {
    heuristic.set(args.kernel, *parse_opts(*args.opts)); // checked by the option
  } else if (args.beam > 0) {
    tuner::SearchSettings settings;
    settings.beam = args.beam;
    beam = std::make_shared<tuner::BeamPolicy>(settings);
  } else {
    beam = tuner::install_beam_from_env();
  }
  if (beam) {
    beam->use_cache(path, mode);
  } else if (!args.opts && tuner::reads(mode) && ::access(path.c_str(), R_OK) == 0) {
    cached = std::make_unique<tuner::CachePolicy>(path, tuner::CacheMode::read_only, heuristic);
  }
  const OptPolicy* policy = beam     ? static_cast<const OptPolicy*>(beam.get())
                            : cached ? static_cast<const OptPolicy*>(cached.get())
                                     : &heuristic;
  Schedule schedule = out.schedule();
  if (args.opts) check_kernel_named(schedule, args.kernel);
  ExecutionPlan plan = prepare(schedule, out, {.threads = args.threads, .policy = policy}, args);
  VarValues vars = parse_vars(args.vars);
  try {
    plan.bind(vars);
  } catch (const UserError& e) { // a variable the program lacks, or a value out of its range
    throw UsageError(std::string("--var: ") + e.what());
  }
  if (args.runs > 0) check_vars_bound(plan, vars);
  Measured m;
  m.label = entry.label;
  m.kernels = args.runs > 0 ? plan.profile(args.runs) : plan.describe();
  if (args.runs > 0) m.whole = plan.sample(args.runs);
  m.runs = args.runs;
  m.threads = plan.threads();
  m.db = path;
  for (const Tensor& t : out.outputs) {
    bool bound = true;
    for (const Variable& v : shape_variables(t.shape())) bound &= vars.count(v.name) > 0;
    m.outputs.push_back(bound ? Shape(shape_at(t.shape(), vars)) : t.shape());
  }
  if (!out.names.empty()) m.model_nodes = out.kernel_names(schedule);
  m.cache_hits = beam ? beam->cache_hits() : cached ? cached->hits() : 0;
  m.searches = beam ? static_cast<int>(beam->results().size()) : 0;
  if (args.format == OutputFormat::Json)
    print_table_json(m);
  else
    print_table(m);
  // With JSON on stdout, the note goes to stderr.
  if (!args.save_kernels.empty())
    save_kernels(schedule, entry.label, args.save_kernels,
                 args.format == OutputFormat::Json ? stderr : stdout);
}

} // namespace

tuner::CorpusEntry program_entry(const std::string& command, const std::string& target,
                                 const std::vector<std::string>& params, const std::string& expr,
                                 const std::vector<std::string>& inputs, const std::string& dtype,
                                 const std::vector<std::string>& vars) {
  usage_assert(expr.empty() || target.empty())
      << command << ": give a workload, a model file or --expr, not two of them";
  bool file = tuner::is_model_file(target) || tuner::is_kernel_file(target);
  usage_assert(params.empty() || (!file && expr.empty()))
      << command << ": parameters like " << (params.empty() ? "" : params.front())
      << " apply to built-in workloads; a model's input shapes are --input NAME=DIMS";
  usage_assert(!tuner::is_kernel_file(target) || inputs.empty())
      << command << ": --input does not apply to a kernel file (its buffers' sizes come from its "
      << "indices)";
  usage_assert(file || !expr.empty() || inputs.empty())
      << command << ": --input applies to models and expressions, not to the built-in workload '"
      << target << "'";
  // Words of the command line: a bad --input shape or parameter is a bad option value; a kernel
  // file is read, and the expression or model built, later.
  return usage_errors(
      [&] { return tuner::target_entry(command, target, params, expr, inputs, dtype, vars); });
}

void check_unknown_options(const CLI::App& cmd, const std::string& target,
                           const std::vector<std::string>& params) {
  const WorkloadInfo* workload = nullptr;
  for (const WorkloadInfo& w : workloads())
    if (w.name == target) workload = &w;
  for (const std::string& word : params) {
    if (!word.starts_with("--")) continue;
    std::string name = word.substr(0, word.find('='));
    if (workload && workload->defaults.count(name.substr(2))) continue;
    std::string suggestion = option_suggestion(cmd, name);
    usage_assert(suggestion.empty())
        << cmd.get_name() << ": unknown option '" << name << "'" << suggestion;
  }
}

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Realize a workload, an ONNX model, a kernel's IR text or an expression and print "
             "each kernel's time, GFLOP/s, GB/s and Opts");
  cmd->add_option("workload", args->workload,
                  "workload name (see --list), an ONNX model file (MODEL.onnx) or a kernel in IR "
                  "text (KERNEL.ir)");
  cmd->add_option("--expr", args->expr,
                  "an expression over named inputs instead, e.g. \"(a.matmul(w) + b).relu()\"");
  cmd->add_option("--input", args->inputs,
                  "an input's shape, NAME=DIMS like x=1x3x224x224 (models: symbolic dims; "
                  "--expr: every input)");
  cmd->add_option("--var", args->vars,
                  "a symbolic variable's value, NAME=VALUE like seq=77 (a kernel whose loops run "
                  "to a DEFINE_VAR; a model's dim kept symbolic); or the range a model's "
                  "symbolic dim (dim_param) keeps, NAME=LOW..HIGH like seq=1..512");
  cmd->add_flag("--list", args->list, "list the workloads and their parameters");
  add_format_option(cmd, args->format);
  cmd->add_option("--opts", args->opts,
                  "an explicit Opt list, e.g. \"UPCAST(1,16) THREAD(0,2)\" (\"\": none)")
      ->check(CLI::Validator(
          [](std::string& text) {
            Expected<std::vector<Opt>> opts = parse_opts(text);
            return opts ? std::string() : opts.error();
          },
          "OPTS"));
  cmd->add_option("--kernel", args->kernel, "the kernel (name or hex key) --opts applies to")
      ->default_val("*");
  cmd->add_option("--runs", args->runs,
                  "timed runs per kernel (median reported); 0: compile and show each kernel's "
                  "plan and split, running nothing (plans for --threads 64 on any machine)")
      ->default_val(10)
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--threads", args->threads, "cores to use (0: all)")
      ->default_val(0)
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--beam", args->beam,
                  "tune each kernel by BEAM search of this width first (the BEAM variable too)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  add_cache_option(cmd, args->cache);
  cmd->add_option("--save-kernels", args->save_kernels,
                  "write each kernel's IR text to this folder (NAME_KEY.ir), to run or tune alone")
      ->check(CLI::Validator(
          [](const std::string& dir) {
            return dir == "-" ? "a folder, not '-': each kernel is a file of its own" : "";
          },
          "DIR"));
  cmd->allow_extras();
  cmd->final_callback([args, cmd] {
    args->params = cmd->remaining();
    check_unknown_options(*cmd, args->workload, args->params);
    run(*args);
  });
}

} // namespace beamlab::cli

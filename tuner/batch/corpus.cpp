// Corpus files; see corpus.hpp.
#include "tuner/batch/corpus.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <beamlab/tuning.hpp>

#include "frontends/expr/expr.hpp"
#include "frontends/ir_text/kernel_file.hpp"
#include "frontends/onnx/model.hpp"

namespace beamlab::tuner {

using json = nlohmann::json;

namespace {

std::string default_label(const CorpusEntry& e) {
  if (!e.kernel.empty()) return std::filesystem::path(e.kernel).stem().string();
  if (!e.model.empty()) { // "model.onnx" is named by its folder (the ONNX test-data layout)
    std::filesystem::path m(e.model);
    std::string stem = m.stem().string();
    return stem == "model" && m.has_parent_path() ? m.parent_path().filename().string() : stem;
  }
  if (!e.expr.empty()) return e.expr;
  std::string label = e.workload;
  for (const auto& [k, v] : e.params) label += "_" + k + std::to_string(v);
  if (e.dtype != "float32") label += "_" + e.dtype;
  return label;
}

std::map<std::string, Shape> parse_inputs(const json& j, const std::string& where) {
  user_assert(j.is_object()) << where << ": field 'inputs': expected an object of shapes like "
                             << "{\"a\": [64, 128]}";
  std::map<std::string, Shape> out;
  for (const auto& [name, dims] : j.items()) {
    bool ok = dims.is_array();
    for (const json& d : dims) ok = ok && d.is_number_integer() && d.get<int64_t>() >= 1;
    user_assert(ok) << where << ": field 'inputs." << name
                    << "': expected a shape of positive integers like [64, 128], not "
                    << dims.dump();
    out[name] = dims.get<std::vector<int64_t>>();
  }
  return out;
}

// {"seq": [512, 64]} -> {{seq: 512}, {seq: 64}}.
std::vector<VarValues> parse_tune_at(const json& j, const std::string& where) {
  const char* example = "expected values per variable like {\"seq\": [512, 64]}";
  user_assert(j.is_object() && !j.empty()) << where << ": field 'tune_at': " << example;
  std::vector<VarValues> out;
  for (const auto& [name, values] : j.items()) {
    bool ok = values.is_array() && !values.empty();
    for (const json& v : values) ok = ok && v.is_number_integer();
    user_assert(ok) << where << ": field 'tune_at." << name << "': " << example << ", not "
                    << values.dump();
    user_assert(out.empty() || out.size() == values.size())
        << where << ": field 'tune_at': every variable needs as many values (they pair up)";
    out.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) out[i][name] = values[i].get<int64_t>();
  }
  return out;
}

// {"seq": [1, 512]} -> Variable seq in [1, 512].
std::vector<Variable> parse_vars(const json& j, const std::string& where) {
  const char* example = "expected a range per symbolic dim like {\"seq\": [1, 512]}";
  user_assert(j.is_object() && !j.empty()) << where << ": field 'vars': " << example;
  std::vector<Variable> out;
  for (const auto& [name, range] : j.items()) {
    bool ok = range.is_array() && range.size() == 2 && range[0].is_number_integer() &&
              range[1].is_number_integer() && range[0].get<int64_t>() >= 1 &&
              range[0].get<int64_t>() <= range[1].get<int64_t>();
    user_assert(ok) << where << ": field 'vars." << name << "': " << example
                    << " (1 <= low <= high), not " << range.dump();
    out.push_back({name, range[0].get<int64_t>(), range[1].get<int64_t>()});
  }
  return out;
}

// Each binding gives every variable a value in its range.
void check_tune_at(const std::vector<VarValues>& tune_at, const std::vector<Variable>& vars) {
  if (tune_at.empty()) return;
  user_assert(!vars.empty()) << "field 'tune_at': its kernels run over no symbolic variable";
  for (const VarValues& at : tune_at) {
    try {
      check_values(vars, at);
    } catch (const UserError& e) {
      user_error << "field 'tune_at': " << e.what();
    }
    for (const Variable& v : vars)
      user_assert(at.count(v.name)) << "field 'tune_at': no values for its variable '" << v.name
                                    << "' [" << v.lo << ", " << v.hi << "]";
  }
}

// What the entry builds: exactly one of workload, model, expr, kernel.
void check_kind(const json& j, const std::string& where) {
  int kinds = 0;
  for (const char* k : {"workload", "model", "expr", "kernel"})
    kinds += static_cast<int>(j.contains(k));
  user_assert(kinds == 1) << where << ": name exactly one of 'workload' (a built-in, see "
                          << "'beamlab run --list'), 'model' (an ONNX file), 'expr' (an "
                          << "expression) or 'kernel' (an IR text file)";
  for (const char* k : {"workload", "model", "expr", "kernel"})
    user_assert(!j.contains(k) || (j[k].is_string() && !j[k].get<std::string>().empty()))
        << where << ": field '" << k << "': expected a non-empty string";
  user_assert(!j.contains("params") || j.contains("workload"))
      << where << ": field 'params' applies to built-in workloads only";
  user_assert(!j.contains("inputs") || j.contains("model") || j.contains("expr"))
      << where << ": field 'inputs' applies to models and expressions only";
  user_assert(!j.contains("vars") || j.contains("model"))
      << where << ": field 'vars' applies to models only (a kernel's IR text gives its "
      << "variables' ranges)";
  user_assert(!j.contains("dtype") || !j.contains("kernel"))
      << where << ": field 'dtype' does not apply to a kernel (its IR text gives the dtypes)";
}

CorpusEntry parse_entry(const json& j, const std::string& where, const std::string& base_dir) {
  user_assert(j.is_object()) << where << ": expected an object like {\"workload\": \"matmul\", "
                             << "\"params\": {\"M\": 256}}";
  static const char* const kFields[] = {"workload", "params", "dtype",  "label",   "model",
                                        "expr",     "inputs", "kernel", "tune_at", "vars"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* f : kFields) known |= key == f;
    user_assert(known) << where << ": unknown field '" << key
                       << "' (the fields: workload, params, model, expr, kernel, inputs, dtype, "
                       << "label, tune_at, vars)";
  }
  check_kind(j, where);
  CorpusEntry e;
  e.workload = j.value("workload", "");
  e.expr = j.value("expr", "");
  auto file = [&](const char* field) {
    std::filesystem::path f(j[field].get<std::string>());
    return f.is_absolute() || base_dir.empty() ? f.string() : (base_dir / f).string();
  };
  if (j.contains("model")) e.model = file("model");
  if (j.contains("kernel")) e.kernel = file("kernel");
  if (j.contains("params")) {
    const json& p = j["params"];
    user_assert(p.is_object()) << where << ": field 'params': expected an object of integers";
    for (const auto& [key, value] : p.items()) {
      user_assert(value.is_number_integer())
          << where << ": field 'params." << key << "': expected an integer, not " << value.dump();
      e.params[key] = value.get<int64_t>();
    }
  }
  if (j.contains("inputs")) e.inputs = parse_inputs(j["inputs"], where);
  if (j.contains("tune_at")) e.tune_at = parse_tune_at(j["tune_at"], where);
  if (j.contains("vars")) e.vars = parse_vars(j["vars"], where);
  if (j.contains("dtype")) {
    user_assert(j["dtype"].is_string())
        << where << ": field 'dtype': expected a dtype name like \"float32\"";
    e.dtype = j["dtype"];
  }
  if (j.contains("label")) {
    user_assert(j["label"].is_string() && !j["label"].get<std::string>().empty())
        << where << ": field 'label': expected a non-empty string";
    e.label = j["label"];
  }
  if (e.label.empty()) e.label = default_label(e);
  try {
    Program program = build_entry(e); // names an unknown workload or parameter, a bad value
                                      // or dtype, a bad model or expression
    if (!e.tune_at.empty()) {
      std::vector<Variable> vars;
      for (const ScheduleItem& item : program.schedule().items)
        for (const Variable& v : kernel_variables(item.ast))
          if (std::none_of(vars.begin(), vars.end(),
                           [&](const Variable& w) { return w.name == v.name; }))
            vars.push_back(v);
      check_tune_at(e.tune_at, vars);
    }
  } catch (const UserError& err) {
    user_error << where << ": " << err.what();
  }
  return e;
}

std::map<std::string, Shape> parse_input_flags(const std::vector<std::string>& flags) {
  onnx::InputShapes shapes;
  for (const std::string& f : flags) onnx::parse_input_shape(f, shapes, "--input");
  return shapes;
}

Program build_expr(const CorpusEntry& e) {
  std::optional<DType> dt = parse_dtype(e.dtype);
  user_assert(dt && !dt->is_ptr() && dt->lanes() == 1 && !dt->is_void())
      << "expr: dtype '" << e.dtype << "' is not an element dtype (float32, float16, int32, ...)";
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 1;
  for (const auto& [name, shape] : e.inputs) inputs.emplace(name, Tensor::rand(shape, seed++, *dt));
  for (const std::string& name : expr::input_names(e.expr))
    user_assert(inputs.count(name)) << "expr: input '" << name << "' has no shape; give it with "
                                    << "--input " << name << "=64x128 (or in 'inputs')";
  Program p;
  p.outputs.push_back(expr::evaluate(e.expr, inputs));
  return p;
}

} // namespace

Program build_entry(const CorpusEntry& e) {
  if (!e.kernel.empty()) return ir_text::load_kernel(e.kernel);
  if (!e.model.empty()) {
    onnx::Model m = onnx::Model::load(e.model, e.inputs, e.vars);
    return m.build(m.random_inputs());
  }
  if (!e.expr.empty()) return build_expr(e);
  Program p;
  p.outputs.push_back(build_workload(e.workload, e.params, e.dtype));
  return p;
}

Corpus load_corpus(const std::string& path) {
  std::ifstream f(path);
  user_assert(f) << "cannot read the corpus '" << path << "'; check the path";
  std::stringstream text;
  text << f.rdbuf();
  return parse_corpus(text.str(), path);
}

Corpus parse_corpus(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& err) {
    user_error << path << ": not valid JSON (" << err.what() << ")";
  }
  user_assert(j.is_object() && j.contains("workloads") && j["workloads"].is_array())
      << path << ": expected an object with a \"workloads\" array";
  Corpus c;
  c.path = path;
  c.name = j.value("name", path);
  c.description = j.value("description", "");
  size_t n = 0;
  for (const json& entry : j["workloads"]) {
    ++n;
    std::string where = path + ": entry " + std::to_string(n);
    for (const char* k : {"workload", "model"})
      if (entry.is_object() && entry.contains(k) && entry[k].is_string())
        where += " (" + entry[k].get<std::string>() + ")";
    c.entries.push_back(
        parse_entry(entry, where, std::filesystem::path(path).parent_path().string()));
  }
  user_assert(!c.entries.empty()) << path << ": the \"workloads\" array is empty";
  return c;
}

CorpusEntry workload_entry(const std::string& workload,
                           const std::map<std::string, int64_t>& params, const std::string& dtype) {
  CorpusEntry e;
  e.workload = workload;
  e.params = params;
  e.dtype = dtype;
  e.label = default_label(e);
  return e;
}

bool is_var_range(const std::string& word) { return word.find("..") != std::string::npos; }

Variable parse_var_range(const std::string& word, const std::string& flag) {
  size_t eq = word.find('='), dots = word.find("..");
  Variable v;
  auto number = [](std::string_view text, int64_t& out) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && p == text.data() + text.size();
  };
  bool ok = eq != std::string::npos && eq > 0 && dots != std::string::npos && dots > eq &&
            number(std::string_view(word).substr(eq + 1, dots - eq - 1), v.lo) &&
            number(std::string_view(word).substr(dots + 2), v.hi);
  user_assert(ok) << flag << " '" << word << "': expected NAME=LOW..HIGH like seq=1..512";
  v.name = word.substr(0, eq);
  user_assert(v.lo >= 1 && v.lo <= v.hi)
      << flag << " '" << word << "': the range must have 1 <= LOW <= HIGH";
  return v;
}

CorpusEntry model_entry(const std::string& path, const std::vector<std::string>& input_flags,
                        const std::vector<std::string>& var_flags) {
  CorpusEntry e;
  e.model = path;
  e.inputs = parse_input_flags(input_flags);
  for (const std::string& w : var_flags) {
    Variable v = parse_var_range(w, "--var");
    user_assert(std::none_of(e.vars.begin(), e.vars.end(),
                             [&](const Variable& u) { return u.name == v.name; }))
        << "--var: the range of '" << v.name << "' is given twice";
    e.vars.push_back(v);
  }
  e.label = default_label(e);
  return e;
}

CorpusEntry kernel_entry(const std::string& path) {
  CorpusEntry e;
  e.kernel = path;
  e.label = default_label(e);
  return e;
}

CorpusEntry expr_entry(const std::string& expr, const std::vector<std::string>& input_flags,
                       const std::string& dtype) {
  CorpusEntry e;
  e.expr = expr;
  e.inputs = parse_input_flags(input_flags);
  e.dtype = dtype;
  e.label = default_label(e);
  return e;
}

Corpus single_entry(const CorpusEntry& e) {
  (void)build_entry(e); // names a bad workload, parameter, dtype, model, expression or kernel
  return {"", e.workload.empty() ? e.label : e.workload, "", {e}};
}

bool is_model_file(const std::string& target) { return target.ends_with(".onnx"); }

bool is_kernel_file(const std::string& target) { return target.ends_with(".ir"); }

bool is_corpus_file(const std::string& target) {
  if (target.empty() || is_model_file(target) || is_kernel_file(target)) return false;
  return target.find('/') != std::string::npos || target.ends_with(".json") ||
         ::access(target.c_str(), R_OK) == 0;
}

std::map<std::string, int64_t> parse_params(const std::string& command,
                                            const std::vector<std::string>& words) {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    user_assert(w.rfind("--", 0) == 0 && w.size() > 2)
        << command << ": expected a parameter like --M 1024, not '" << w << "'";
    std::string name = w.substr(2), value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      user_assert(i + 1 < words.size()) << command << ": parameter --" << name << " needs a value";
      value = words[++i];
    }
    int64_t v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    user_assert(ec == std::errc{} && p == value.data() + value.size())
        << command << ": parameter --" << name << " needs an integer, not '" << value << "'";
    out[name] = v;
  }
  return out;
}

CorpusEntry target_entry(const std::string& command, const std::string& target,
                         const std::vector<std::string>& params, const std::string& expr,
                         const std::vector<std::string>& inputs, const std::string& dtype,
                         const std::vector<std::string>& vars) {
  user_assert(vars.empty() || is_model_file(target))
      << command << ": --var NAME=LOW..HIGH keeps a model's symbolic dim symbolic; it applies to "
      << "ONNX models only (a kernel's IR text gives its variables' ranges)";
  if (!expr.empty()) return expr_entry(expr, inputs, dtype);
  if (is_model_file(target)) return model_entry(target, inputs, vars);
  if (is_kernel_file(target)) return kernel_entry(target);
  return workload_entry(target, parse_params(command, params), dtype);
}

std::vector<VarValues> entry_bindings(const CorpusEntry& entry, const ExecutionPlan& plan) {
  const std::vector<Variable>& vars = plan.variables();
  if (vars.empty()) {
    check_tune_at(entry.tune_at, vars);
    return {VarValues{}};
  }
  if (entry.tune_at.empty()) return default_tune_at(vars);
  check_tune_at(entry.tune_at, vars);
  std::vector<VarValues> out;
  for (const VarValues& at : entry.tune_at)
    if (std::find(out.begin(), out.end(), at) == out.end()) out.push_back(at);
  return out;
}

} // namespace beamlab::tuner

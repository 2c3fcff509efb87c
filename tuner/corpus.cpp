// Corpus files; see corpus.hpp.
#include "tuner/corpus.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace beamlab::tuner {

using json = nlohmann::json;

namespace {

std::string default_label(const CorpusEntry& e) {
  std::string label = e.workload;
  for (const auto& [k, v] : e.params) label += "_" + k + std::to_string(v);
  if (e.dtype != "float32") label += "_" + e.dtype;
  return label;
}

CorpusEntry parse_entry(const json& j, const std::string& where) {
  user_assert(j.is_object()) << where << ": expected an object like {\"workload\": \"matmul\", "
                             << "\"params\": {\"M\": 256}}";
  static const char* const kFields[] = {"workload", "params", "dtype", "label"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* f : kFields) known |= key == f;
    user_assert(known) << where << ": unknown field '" << key
                       << "' (the fields: workload, params, dtype, label)";
  }
  CorpusEntry e;
  user_assert(j.contains("workload") && j["workload"].is_string())
      << where << ": field 'workload': expected a workload name (see 'beamlab run --list')";
  e.workload = j["workload"];
  if (j.contains("params")) {
    const json& p = j["params"];
    user_assert(p.is_object()) << where << ": field 'params': expected an object of integers";
    for (const auto& [key, value] : p.items()) {
      user_assert(value.is_number_integer())
          << where << ": field 'params." << key << "': expected an integer, not " << value.dump();
      e.params[key] = value.get<int64_t>();
    }
  }
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
    (void)build_entry(e); // names an unknown workload or parameter, or a bad value or dtype
  } catch (const UserError& err) {
    user_error << where << ": " << err.what();
  }
  return e;
}

} // namespace

Tensor build_entry(const CorpusEntry& e) { return build_workload(e.workload, e.params, e.dtype); }

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
    if (entry.is_object() && entry.contains("workload") && entry["workload"].is_string())
      where += " (" + entry["workload"].get<std::string>() + ")";
    c.entries.push_back(parse_entry(entry, where));
  }
  user_assert(!c.entries.empty()) << path << ": the \"workloads\" array is empty";
  return c;
}

Corpus single_workload(const std::string& workload, const std::map<std::string, int64_t>& params,
                       const std::string& dtype) {
  CorpusEntry e{workload, params, dtype, ""};
  e.label = default_label(e);
  (void)build_entry(e);
  return {"", workload, "", {e}};
}

} // namespace beamlab::tuner

// Text or JSON output, to stdout or a file; see output.hpp.
#include "apps/output.hpp"

#include <cmath>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include <beamlab/tuning.hpp>

#include "apps/cli_checks.hpp"
#include "apps/tune_command.hpp"
#include "engine/support/error.hpp"
#include "reports/report.hpp"

namespace beamlab::cli {

db::Database open_existing_database(const std::string& flag) {
  std::string path = db_path(flag);
  user_assert(::access(path.c_str(), R_OK) == 0)
      << "no database at '" << path
      << "': record a run with 'beamlab bench' or 'beamlab tune' first, or pass --db FILE";
  return db::Database(path, db::Database::Access::read_only);
}

void add_format_option(CLI::App* cmd, OutputFormat& format) {
  cmd->add_option_function<std::string>(
         "--format",
         [&format](const std::string& name) {
           format = name == "json" ? OutputFormat::Json : OutputFormat::Text;
         },
         "text | json: the table (or summary) as one JSON document on stdout (default: text)")
      ->check(one_of({"text", "json"}));
}

Json json_document(const std::string& command) { return {{"schema", "beamlab-" + command + "/1"}}; }

Json json_number(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

Json json_number(const std::optional<double>& x) { return x ? json_number(*x) : Json(nullptr); }

Json limits_json(const MachineLimits& limits) {
  Json levels = Json::array();
  for (const MemoryLevel& m : limits.levels)
    levels.push_back({{"level", m.name},
                      {"holds_bytes", m.capacity_bytes ? Json(m.capacity_bytes) : Json(nullptr)},
                      {"measured_on_bytes", m.working_set_bytes},
                      {"read_gbps", json_number(m.read_gbps)},
                      {"triad_gbps", json_number(m.triad_gbps)}});
  return {{"threads", limits.threads},
          {"vector_bytes", limits.vector_bytes},
          {"fma_f32_gflops", json_number(limits.fma_f32_gflops)},
          {"fma_f64_gflops", json_number(limits.fma_f64_gflops)},
          {"levels", levels}};
}

Json run_json(const db::Run& r) {
  return {{"id", r.id},
          {"kind", to_string(r.kind)},
          {"status", to_string(r.status)},
          {"label", r.label},
          {"started_at", r.started_at},
          {"ended_at", r.ended_at.empty() ? Json(nullptr) : Json(r.ended_at)},
          {"git_revision", r.git_revision},
          {"host", r.host},
          {"command", r.command}};
}

void write_output(const std::string& path, const std::string& text, const std::string& what) {
  if (path != "-") {
    reports::write_report(path, text, what);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

std::string json_text(const Json& doc) {
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

void print_json(const Json& doc) { write_output("-", json_text(doc), "stdout"); }

std::string allocation_note() {
  int usable = usable_cores();
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (usable >= cores) return "";
  return fmt::format(" (this process may use {} of the machine's {} CPUs: {})", usable, cores,
                     allowed_cpus());
}

} // namespace beamlab::cli

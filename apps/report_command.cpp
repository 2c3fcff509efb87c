// The report subcommand; see report_command.hpp.
#include "apps/report_command.hpp"

#include <cstdio>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

#include "apps/cli_checks.hpp"

#include "apps/output.hpp"
#include "apps/tune_command.hpp"
#include "apps/usage.hpp"
#include "db/database.hpp"
#include "reports/report.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::cli {
namespace {

struct ReportArgs {
  std::string baseline, candidate, run;
  bool list = false;
  std::string format; ///< empty: from -o's suffix, else md
  std::string output;
  std::optional<double> fail_above;
  double min_change = 5;
  double alpha = 0.05;
  int history = reports::kDefaultHistoryWindow;
  std::string db;
};

/// Writes `text` to -o's `path` (atomically), or to stdout.
void emit(const std::string& text, const std::string& path) {
  write_output(path.empty() ? "-" : path, text, "-o");
}

// The runs, as a table or (--format json, or -o FILE.json) as JSON.
std::string list_runs(db::Database& db, reports::Format format) {
  std::vector<db::Run> runs = db.runs();
  user_assert(!runs.empty()) << "the database '" << db.path()
                             << "' has no runs yet; record one with 'beamlab bench' or "
                                "'beamlab tune'";
  if (format == reports::Format::json) {
    Json doc = json_document("report-list");
    doc["db"] = db.path();
    Json& rows = doc["runs"] = Json::array();
    for (const db::Run& r : runs) rows.push_back(run_json(r));
    return json_text(doc);
  }
  std::string text = fmt::format("{:>4}  {:<16}  {:<5}  {:<16}  {:<12}  {:<11}  {}\n", "id",
                                 "started (UTC)", "kind", "label", "git", "status", "command");
  for (const db::Run& r : runs)
    text +=
        fmt::format("{:>4}  {:<16}  {:<5}  {:<16}  {:<12}  {:<11}  {}\n", r.id,
                    r.started_at.substr(0, 16), to_string(r.kind), r.label.empty() ? "-" : r.label,
                    r.git_revision.empty() ? "-" : r.git_revision, to_string(r.status), r.command);
  return text;
}

// The command line must make sense before the database is opened.
void check_command_line(const ReportArgs& args) {
  usage_assert(args.run.empty() || (args.baseline.empty() && args.candidate.empty()))
      << "--run summarizes one run; drop --baseline/--candidate, or drop --run to compare";
  usage_assert(args.list || !args.run.empty() || !args.baseline.empty())
      << "report: name the runs to compare with --baseline RUN [--candidate RUN] (an id, a "
         "label, latest or latest~N), or one run to summarize with --run RUN";
}

// --list prints a table, or JSON; a report's other formats do not apply to it.
void check_list_format(reports::Format format) {
  usage_assert(format == reports::Format::markdown || format == reports::Format::json)
      << "--list prints a table, or JSON with --format json; not html or junit";
}

int report(const ReportArgs& args) {
  check_command_line(args);
  reports::Format format = !args.format.empty() ? reports::parse_format(args.format, "--format")
                           : args.output.empty() || args.output == "-"
                               ? reports::Format::markdown
                               : reports::format_of_file(args.output);
  if (args.list) check_list_format(format);
  db::Database db = open_existing_database(args.db);
  if (args.list) {
    emit(list_runs(db, format), args.output);
    return 0;
  }
  if (!args.run.empty()) {
    db::Run run = reports::resolve_run(db, args.run, "--run");
    emit(reports::render(reports::summarize_run(db, run.id), format), args.output);
    return 0;
  }
  db::Run baseline = reports::resolve_run(db, args.baseline, "--baseline");
  db::Run candidate =
      reports::resolve_run(db, args.candidate.empty() ? "latest" : args.candidate, "--candidate");
  reports::VerdictRule rule;
  rule.alpha = args.alpha;
  rule.min_change = args.min_change / 100;
  reports::Comparison c =
      reports::compare_stored(db, baseline.id, candidate.id, rule, args.history);
  emit(reports::render(c, format), args.output);
  std::FILE* note = args.output.empty() || args.output == "-" ? stderr : stdout;
  std::fprintf(note, "beamlab report: %s vs %s: %s\n", c.candidate.title().c_str(),
               c.baseline.title().c_str(), c.counts_text().c_str());
  if (!args.fail_above) return 0;
  std::vector<const reports::ComparedRow*> over = c.regressions_above(*args.fail_above);
  if (over.empty()) return 0;
  std::string worst;
  for (const reports::ComparedRow* r : over)
    worst +=
        fmt::format("{}{} {:+.1f}%", worst.empty() ? "" : ", ", r->name(), r->delta.change * 100);
  std::fprintf(stderr, "beamlab report: %zu regression(s) above --fail-above %g%%: %s\n",
               over.size(), *args.fail_above, worst.c_str());
  return kRegressionExit;
}

} // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Compare two runs kernel by kernel with a noise-aware verdict, or summarize one "
                "run (Markdown, HTML, JUnit or JSON)");
  cmd->add_option("--baseline", args->baseline,
                  "the run to compare against: an id, a label, latest or latest~N");
  cmd->add_option("--candidate", args->candidate, "the run to judge (default: latest)");
  cmd->add_option("--run", args->run, "summarize this one run instead");
  cmd->add_flag("--list", args->list, "list the runs in the database (a table, or --format json)");
  cmd->add_option("--format", args->format,
                  "md | html | junit | json (default: from -o's suffix, .html .xml .json, else md; "
                  "--list: a table, or json)")
      ->check(parsed_by("{md, html, junit, json}",
                        [](const std::string& text, const std::string& what) {
                          (void)reports::parse_format(text, what);
                        }));
  cmd->add_option("-o,--output", args->output, "write the report to FILE (default: stdout)");
  cmd->add_option("--fail-above", args->fail_above,
                  "exit with code 4 when a regression is larger than PCT percent")
      ->check(kFinite)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-change", args->min_change,
                  "changes up to PCT percent never count, however clean the samples (runs of one "
                  "commit drift apart by a few percent on a shared machine), for measurements "
                  "without a history")
      ->default_val(5)
      ->check(kFinite)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--history", args->history,
                  "set each measurement's floor from its own drift over the newest N bench runs "
                  "on the candidate's device (0: the --min-change floor for all)")
      ->default_val(reports::kDefaultHistoryWindow)
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--alpha", args->alpha, "the rank test's significance level")
      ->default_val(0.05)
      ->check(kFinite)
      ->check(CLI::Range(1e-9, 1.0));
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  cmd->final_callback([args, &exit_code] { exit_code = report(*args); });
}

} // namespace beamlab::cli

// Rendering reports: a comparison of two runs or a single run's summary, as Markdown (for a
// terminal or a CI job summary), one self-contained HTML file (tables and inline SVG charts,
// from the template in reports/templates/), JUnit XML (each regression a failed test case,
// for CI test dashboards) or JSON (everything, for scripts: schema "beamlab-report/1").
//
//   reports::Comparison c = reports::compare_runs(load_run_data(db, a), load_run_data(db, b), {});
//   std::string html = reports::render(c, reports::Format::html);
#pragma once

#include <string>

#include "reports/compare.hpp"
#include "reports/summary.hpp"

namespace beamlab::reports {

enum class Format { markdown, html, junit, json };

/// "md" (or "markdown"), "html", "junit" or "json"; a UserError naming `flag` otherwise.
Format parse_format(const std::string& text, const std::string& flag);
/// The format a file name asks for: ".html" or ".htm" HTML, ".xml" JUnit, ".json" JSON, else
/// Markdown.
Format format_of_file(const std::string& path);

/// Writes `text` to `path` whole: to a temporary file beside it, renamed over it, so a reader
/// never sees half a report and a failed write leaves the old file as it was. A UserError
/// naming `path` (introduced by `what`: "-o", "the report file") when it cannot.
void write_report(const std::string& path, const std::string& text, const std::string& what);

std::string render(const Comparison& c, Format format);
std::string render(const RunSummary& s, Format format);

// One per format (markdown.cpp, html.cpp, junit.cpp).
std::string render_markdown(const Comparison& c);
std::string render_markdown(const RunSummary& s);
std::string render_html(const Comparison& c);
std::string render_html(const RunSummary& s);
std::string render_junit(const Comparison& c);
std::string render_junit(const RunSummary& s);
std::string render_json(const Comparison& c);
std::string render_json(const RunSummary& s);

} // namespace beamlab::reports

// The Markdown renderer: GitHub-flavoured tables that read well in a terminal and in a CI job
// summary ($GITHUB_STEP_SUMMARY); see report.hpp.
#include <algorithm>

#include <fmt/format.h>

#include "reports/report.hpp"
#include "reports/report_internal.hpp"

namespace beamlab::reports {

using namespace detail;

namespace {

/// Text from a run (labels, names) on one line of a table or a heading: no '|' or line breaks,
/// and nothing that opens an HTML tag (a CI job summary renders HTML).
std::string inline_text(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n' || ch == '\r')
      out += ' ';
    else if (ch == '<')
      out += "&lt;";
    else
      out += ch;
  }
  return out;
}

std::string cell(const std::string& text) {
  std::string out = inline_text(text);
  return out.empty() ? "-" : out;
}

/// `text` as inline code, whatever backticks it holds: fenced by one more backtick than its
/// longest run of them, padded when it starts or ends with one.
std::string code_span(const std::string& text) {
  size_t longest = 0, run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  bool pad = text.empty() || text.front() == '`' || text.back() == '`';
  std::string body = text;
  for (char& ch : body)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

void header(std::string& out, const std::string& title, const std::vector<std::string>& warnings) {
  out += fmt::format("## {}\n\n", inline_text(title));
  for (const std::string& w : warnings)
    out += fmt::format("> **Warning:** {}\n>\n", inline_text(w));
  if (!warnings.empty()) out += "\n";
}

void runs_table(std::string& out, const Comparison& c) {
  out += "| | run | what |\n|---|---|---|\n";
  out += fmt::format("| baseline | {} | {} |\n", cell(c.baseline.title()),
                     cell(describe_run(c.baseline)));
  out += fmt::format("| candidate | {} | {} |\n\n", cell(c.candidate.title()),
                     cell(describe_run(c.candidate)));
}

void section_table(std::string& out, const Comparison& c, Section section) {
  std::vector<const ComparedRow*> rows;
  for (const ComparedRow& r : c.rows)
    if (r.section() == section) rows.push_back(&r);
  if (rows.empty()) return;
  const bool kernels = section == Section::kernel;
  out += fmt::format("### {} ({})\n\n", heading(section), rows.size());
  out += fmt::format(
      "| | {} |{} baseline ms | candidate ms | change | noise | floor | p | verdict |{}\n",
      to_string(section), kernels ? " workloads |" : "", kernels ? " plan |" : "");
  out += fmt::format("|---|---|{}---:|---:|---:|---:|---:|---:|---|{}\n", kernels ? "---|" : "",
                     kernels ? "---|" : "");
  for (const ComparedRow* r : rows) {
    const Delta& d = r->delta;
    std::string mark = verdict_mark(d.verdict);
    std::string dagger = d.tested || !judged(d.verdict) ? "" : " \u2020";
    out +=
        fmt::format("| {} | {} |{} {} | {} | {} | {} | {} | {} | {}{} |{}\n", mark, cell(r->name()),
                    kernels ? " " + cell(workloads_text(r->candidate)) + " |" : "",
                    d.baseline.n ? format_ms(d.baseline.median) : "-",
                    d.candidate.n ? format_ms(d.candidate.median) : "-",
                    d.verdict == Verdict::unknown ? "-" : format_change(d.change),
                    d.verdict == Verdict::unknown ? "-" : format_noise(d.noise),
                    judged(d.verdict) ? format_floor(d) : "-",
                    judged(d.verdict) ? format_p(d.p) : "-", to_string(d.verdict), dagger,
                    kernels ? " " + cell(plan_change_text(r->baseline, r->candidate)) + " |" : "");
  }
  out += "\n";
}

void only_list(std::string& out, const char* which, const std::vector<Measurement>& items) {
  if (items.empty()) return;
  out += fmt::format("### Only in the {} ({})\n\n", which, items.size());
  for (const Measurement& m : items)
    out += fmt::format("- {} {}{}\n", to_string(m.section), code_span(m.name),
                       m.workloads.empty() ? "" : " (" + inline_text(workloads_text(m)) + ")");
  out += "\n";
}

} // namespace

std::string render_markdown(const Comparison& c) {
  std::string out;
  header(out, title(c), c.warnings);
  Comparison::Counts n = c.counts();
  out += fmt::format("**{}**", c.counts_text());
  if (!c.only_baseline.empty() || !c.only_candidate.empty())
    out += fmt::format(" \u00b7 {} only in the baseline, {} only in the candidate",
                       c.only_baseline.size(), c.only_candidate.size());
  out += n.regressions ? "\n\n" : " \u2014 no regressions.\n\n";
  runs_table(out, c);
  for (Section s : {Section::workload, Section::kernel, Section::suite}) section_table(out, c, s);
  only_list(out, "baseline", c.only_baseline);
  only_list(out, "candidate", c.only_candidate);
  out += fmt::format("<details><summary>Method</summary>\n\n{}\n\n{}\n\n</details>\n",
                     describe_rule(c.rule), c.history_text());
  return out;
}

std::string render_markdown(const RunSummary& s) {
  std::string out;
  header(out, title(s), {});
  out += fmt::format("{}\n\n{}; roofline: the share of the roof of the level a kernel's data "
                     "fits in, and what bounds it\n\n",
                     inline_text(describe_run(s.data)), inline_text(describe_limits(s.data)));
  if (!s.tunings.empty()) {
    out += fmt::format("### Tuned kernels ({})\n\n", s.tunings.size());
    out += "| kernel | workload | heuristic ms | tuned ms | speedup | roofline | candidates | "
           "search s | stop | tuned Opts |\n|---|---|---:|---:|---:|---:|---|---:|---|---|\n";
    for (const TunedKernel& k : s.tunings)
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.1f} | {} | {} |\n",
                         cell(k.kernel.name), cell(k.tuning.workload),
                         k.tuning.heuristic_ms ? format_ms(*k.tuning.heuristic_ms) : "-",
                         k.tuning.winner_ms ? format_ms(*k.tuning.winner_ms) : "-",
                         format_tuned_speedup(k), format_roof(k.roof), cell(statuses_text(k)),
                         k.tuning.wall_s, cell(k.outcome()), cell(k.tuning.winner_opts));
    out += "\n";
  }
  for (Section section : {Section::workload, Section::kernel, Section::suite}) {
    std::vector<const Measurement*> items = s.measured(section);
    if (items.empty()) continue;
    out += fmt::format("### {} ({})\n\n", heading(section), items.size());
    out += fmt::format("| {} | median ms | IQR/median | runs | roofline | plan |\n"
                       "|---|---:|---:|---:|---:|---|\n",
                       to_string(section));
    for (const Measurement* m : items) {
      SampleStats st = describe(m->samples_ms);
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(m->name), format_ms(st.median),
                         format_spread(st.spread()), st.n, format_roof(s.roof(*m, st.median)),
                         cell(plan_text(*m)));
    }
    out += "\n";
  }
  if (std::vector<AgainstOrt> ort = s.against_ort(); !ort.empty()) {
    out += "### Models against ONNX Runtime (same run, same threads)\n\n"
           "| model | plans | beamlab ms | ONNX Runtime ms | beamlab / ORT |\n"
           "|---|---|---:|---:|---:|\n";
    for (const AgainstOrt& a : ort)
      out +=
          fmt::format("| {} | {} | {} ({}) | {} ({}) | {:.2f}x |\n", cell(a.model), cell(a.plans),
                      format_ms(a.beamlab.median), format_spread(a.beamlab.spread()),
                      format_ms(a.ort.median), format_spread(a.ort.spread()), a.ratio());
    out += "\nmedians (IQR/median); below 1x beamlab is faster\n\n";
  }
  if (s.tunings.empty() && s.data.items.empty()) out += "The run recorded no measurements.\n";
  for (const std::string& n : s.over_roof_notes()) out += "- ! " + inline_text(n) + "\n";
  return out;
}

} // namespace beamlab::reports

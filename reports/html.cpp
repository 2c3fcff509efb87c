// The HTML renderer: one self-contained page (the template in reports/templates/, tables, and
// SVG charts drawn by svg.hpp inline), well-formed XML so tools can read it back; see
// report.hpp.
#include <algorithm>

#include <fmt/format.h>

#include "db/database.hpp"
#include "reports/report.hpp"
#include "reports/report_internal.hpp"
#include "reports/svg.hpp"
#include "reports/templates.hpp"
#include <beamlab/tuning.hpp>

namespace beamlab::reports {

using namespace detail;
using svg::escape;

namespace {

std::string page(const std::string& title, const std::string& body) {
  return fill_template(html_template(), {{"title", escape(title)},
                                         {"body", body},
                                         {"version", escape(host_identity().beamlab_version)},
                                         {"generated", escape(db::now_utc().substr(0, 19))}});
}

/// A table cell, its text already escaped; the stylesheet right-aligns class "num" and
/// colours class "verdict" by the row's class.
struct Cell {
  std::string html;
  std::string cls = "";
};

std::string class_attr(const std::string& cls) {
  return cls.empty() ? "" : fmt::format(" class=\"{}\"", cls);
}

std::string row(const std::vector<Cell>& cells, const std::string& tr_class = "") {
  std::string out = tr_class.empty() ? "<tr>" : fmt::format("<tr class=\"{}\">", tr_class);
  for (const Cell& c : cells) out += fmt::format("<td{}>{}</td>", class_attr(c.cls), c.html);
  return out + "</tr>\n";
}

std::string head(const std::vector<Cell>& cells) {
  std::string out = "<tr>";
  for (const Cell& c : cells) out += fmt::format("<th{}>{}</th>", class_attr(c.cls), c.html);
  return out + "</tr>\n";
}

std::string warnings(const std::vector<std::string>& ws) {
  std::string out;
  for (const std::string& w : ws) out += fmt::format("<p class=\"warning\">{}</p>\n", escape(w));
  return out;
}

std::string runs_table(const Comparison& c) {
  std::string out = "<table>\n" + head({{""}, {"run"}, {"what"}});
  out += row({{"baseline"}, {escape(c.baseline.title())}, {escape(describe_run(c.baseline))}});
  out += row({{"candidate"}, {escape(c.candidate.title())}, {escape(describe_run(c.candidate))}});
  return out + "</table>\n";
}

std::string counts(const Comparison& c) {
  Comparison::Counts n = c.counts();
  std::string out = "<p class=\"counts\">";
  auto chip = [&](int k, const char* what, Verdict v) {
    out += fmt::format("<span style=\"background:{}\">{} {}</span>", verdict_color(v), k, what);
  };
  chip(n.regressions, n.regressions == 1 ? "regression" : "regressions", Verdict::regression);
  chip(n.improvements, n.improvements == 1 ? "improvement" : "improvements", Verdict::improvement);
  chip(n.unchanged, "within noise", Verdict::unchanged);
  if (n.unknown) chip(n.unknown, "without data", Verdict::unknown);
  if (n.incomparable) chip(n.incomparable, "measured differently", Verdict::incomparable);
  out += fmt::format("{} only in the baseline, {} only in the candidate</p>\n",
                     c.only_baseline.size(), c.only_candidate.size());
  return out;
}

std::vector<const ComparedRow*> charted_rows(const Comparison& c) {
  std::vector<const ComparedRow*> rows;
  for (const ComparedRow& r : c.rows)
    if (r.section() == Section::kernel && judged(r.delta.verdict)) rows.push_back(&r);
  if (!rows.empty()) return rows;
  for (const ComparedRow& r : c.rows)
    if (judged(r.delta.verdict)) rows.push_back(&r);
  return rows;
}

std::string charts(const Comparison& c) {
  std::vector<const ComparedRow*> rows = charted_rows(c);
  std::vector<svg::Bar> bars;
  std::vector<svg::Point> points;
  for (const ComparedRow* r : rows) {
    const Delta& d = r->delta;
    std::string tip = fmt::format(
        "{}: {} ms -> {} ms, {} (noise {}, floor {}, p {}), {}", r->name(),
        format_ms(d.baseline.median), format_ms(d.candidate.median), format_change(d.change),
        format_noise(d.noise), format_floor(d), format_p(d.p), to_string(d.verdict));
    svg::Bar bar;
    bar.label = r->name();
    bar.value = d.change * 100;
    bar.band = d.threshold * 100;
    bar.color = verdict_color(d.verdict);
    bar.tooltip = tip;
    bars.push_back(bar);
    points.push_back({d.baseline.median, d.candidate.median, verdict_color(d.verdict), tip});
  }
  const bool kernels = !rows.empty() && rows.front()->section() == Section::kernel;
  svg::BarChartOptions bar_options;
  bar_options.title =
      fmt::format("Change per {} (grey: the threshold, the larger of noise and floor)",
                  kernels ? "kernel" : "measurement");
  bar_options.axis_label = "change of the median time, %";
  bar_options.value_suffix = "%";
  svg::ScatterOptions scatter_options;
  scatter_options.title = "Baseline vs candidate";
  scatter_options.x_label = "baseline median, ms";
  scatter_options.y_label = "candidate median, ms";
  std::string out = "<h2>Charts</h2>\n";
  out += svg::legend({{"regression", verdict_color(Verdict::regression)},
                      {"improvement", verdict_color(Verdict::improvement)},
                      {"within noise", verdict_color(Verdict::unchanged)}});
  out += "<div class=\"charts\">\n" + svg::bar_chart(bars, bar_options) + "\n" +
         svg::scatter(points, scatter_options) + "\n</div>\n";
  return out;
}

std::string section_table(const Comparison& c, Section section) {
  std::vector<const ComparedRow*> rows;
  for (const ComparedRow& r : c.rows)
    if (r.section() == section) rows.push_back(&r);
  if (rows.empty()) return "";
  const bool kernels = section == Section::kernel;
  std::string out = fmt::format("<h2>{} ({})</h2>\n<table class=\"{}\">\n", heading(section),
                                rows.size(), to_string(section));
  std::vector<Cell> h = {{""}, {to_string(section)}};
  if (kernels) h.push_back({"workloads"});
  for (const char* num : {"baseline ms", "candidate ms", "change", "noise", "floor", "p"})
    h.push_back({num, "num"});
  h.push_back({"verdict"});
  if (kernels) h.push_back({"plan"});
  out += head(h);
  for (const ComparedRow* r : rows) {
    const Delta& d = r->delta;
    const bool known = d.verdict != Verdict::unknown;
    std::vector<Cell> cells = {{verdict_mark(d.verdict)}, {escape(r->name())}};
    if (kernels) cells.push_back({escape(workloads_text(r->candidate))});
    cells.push_back({d.baseline.n ? format_ms(d.baseline.median) : "-", "num"});
    cells.push_back({d.candidate.n ? format_ms(d.candidate.median) : "-", "num"});
    cells.push_back({known ? format_change(d.change) : "-", "num"});
    cells.push_back({known ? format_noise(d.noise) : "-", "num"});
    cells.push_back({judged(d.verdict) ? escape(format_floor(d)) : "-", "num"});
    cells.push_back({judged(d.verdict) ? escape(format_p(d.p)) : "-", "num"});
    cells.push_back(
        {std::string(to_string(d.verdict)) + (d.tested || !judged(d.verdict) ? "" : " \u2020"),
         "verdict"});
    if (kernels)
      cells.push_back({"<code>" + escape(plan_change_text(r->baseline, r->candidate)) + "</code>"});
    std::string cls = d.verdict == Verdict::regression    ? "regression"
                      : d.verdict == Verdict::improvement ? "improvement"
                                                          : "";
    out += row(cells, cls);
  }
  return out + "</table>\n";
}

std::string only_list(const char* which, const std::vector<Measurement>& items) {
  if (items.empty()) return "";
  std::string out = fmt::format("<h2>Only in the {} ({})</h2>\n<ul>\n", which, items.size());
  for (const Measurement& m : items)
    out += fmt::format("<li>{} <code>{}</code>{}</li>\n", to_string(m.section), escape(m.name),
                       m.workloads.empty() ? "" : " (" + escape(workloads_text(m)) + ")");
  return out + "</ul>\n";
}

std::string bar_chart(const std::string& title, const std::string& axis, const std::string& suffix,
                      const std::vector<svg::Bar>& bars) {
  svg::BarChartOptions o;
  o.title = title;
  o.axis_label = axis;
  o.value_suffix = suffix;
  o.signed_values = false;
  return svg::bar_chart(bars, o);
}

std::string summary_charts(const RunSummary& s) {
  std::vector<svg::Bar> speedups, rooflines;
  for (const TunedKernel& k : s.tunings) {
    if (auto x = k.speedup()) {
      svg::Bar bar;
      bar.label = k.kernel.name;
      bar.value = *x;
      bar.color =
          *x >= 1 ? verdict_color(Verdict::improvement) : verdict_color(Verdict::regression);
      bar.tooltip =
          fmt::format("{}: {} -> {} ms ({})", k.kernel.name, format_ms(*k.tuning.heuristic_ms),
                      format_ms(*k.tuning.winner_ms), format_speedup(x));
      speedups.push_back(bar);
    }
    if (k.roof) {
      svg::Bar bar;
      bar.label = k.kernel.name;
      bar.value = k.roof->fraction * 100;
      bar.color = "#1f77b4";
      bar.tooltip = fmt::format("{}: {} of the roofline ({} bound)", k.kernel.name,
                                format_fraction(k.roof->fraction), k.roof->bound);
      rooflines.push_back(bar);
    }
  }
  if (s.tunings.empty())
    for (const Measurement& m : s.data.items) {
      double median = describe(m.samples_ms).median;
      std::optional<Roof> f = s.roof(m, median);
      if (!f) continue;
      svg::Bar bar;
      bar.label = m.name;
      bar.value = f->fraction * 100;
      bar.color = "#1f77b4";
      bar.tooltip = fmt::format("{}: {} ms, {} of the roofline ({} bound)", m.name,
                                format_ms(median), format_fraction(f->fraction), f->bound);
      rooflines.push_back(bar);
    }
  std::string out;
  if (!speedups.empty())
    out += bar_chart("Speedup of the tuned plan over the heuristic", "speedup", "x", speedups);
  if (!rooflines.empty())
    out += bar_chart("Fraction of the device's roofline", "% of the roofline", "%", rooflines);
  return out.empty() ? "" : "<h2>Charts</h2>\n<div class=\"charts\">\n" + out + "\n</div>\n";
}

std::string tunings_table(const RunSummary& s) {
  if (s.tunings.empty()) return "";
  std::string out = fmt::format("<h2>Tuned kernels ({})</h2>\n<table>\n", s.tunings.size());
  out += head({{"kernel"},
               {"workload"},
               {"heuristic ms", "num"},
               {"tuned ms", "num"},
               {"speedup", "num"},
               {"roofline", "num"},
               {"candidates"},
               {"search s", "num"},
               {"stop"},
               {"tuned Opts"}});
  for (const TunedKernel& k : s.tunings)
    out += row({{escape(k.kernel.name)},
                {escape(k.tuning.workload)},
                {k.tuning.heuristic_ms ? format_ms(*k.tuning.heuristic_ms) : "-", "num"},
                {k.tuning.winner_ms ? format_ms(*k.tuning.winner_ms) : "-", "num"},
                {format_tuned_speedup(k), "num"},
                {format_roof(k.roof), "num"},
                {escape(statuses_text(k))},
                {fmt::format("{:.1f}", k.tuning.wall_s), "num"},
                {escape(k.outcome())},
                {"<code>" + escape(k.tuning.winner_opts) + "</code>"}},
               k.tuning.status == db::TuningStatus::failed ? "regression" : "");
  return out + "</table>\n";
}

std::string measurements_tables(const RunSummary& s) {
  std::string out;
  for (Section section : {Section::workload, Section::kernel, Section::suite}) {
    std::vector<const Measurement*> items = s.measured(section);
    if (items.empty()) continue;
    out += fmt::format("<h2>{} ({})</h2>\n<table>\n", heading(section), items.size());
    out += head({{to_string(section)},
                 {"median ms", "num"},
                 {"IQR/median", "num"},
                 {"runs", "num"},
                 {"roofline", "num"},
                 {"plan"}});
    for (const Measurement* m : items) {
      SampleStats st = describe(m->samples_ms);
      std::optional<Roof> f = s.roof(*m, st.median);
      out += row({{escape(m->name)},
                  {format_ms(st.median), "num"},
                  {format_spread(st.spread()), "num"},
                  {std::to_string(st.n), "num"},
                  {format_roof(f), "num"},
                  {"<code>" + escape(plan_text(*m)) + "</code>"}});
    }
    out += "</table>\n";
  }
  return out;
}

std::string against_ort_table(const RunSummary& s) {
  std::vector<AgainstOrt> ort = s.against_ort();
  if (ort.empty()) return "";
  std::string out = "<h2>Models against ONNX Runtime (same run, same threads)</h2>\n<table>\n";
  out += head({{"model"},
               {"plans"},
               {"beamlab ms", "num"},
               {"ONNX Runtime ms", "num"},
               {"beamlab / ORT", "num"}});
  for (const AgainstOrt& a : ort)
    out += row(
        {{escape(a.model)},
         {escape(a.plans)},
         {fmt::format("{} ({})", format_ms(a.beamlab.median), format_spread(a.beamlab.spread())),
          "num"},
         {fmt::format("{} ({})", format_ms(a.ort.median), format_spread(a.ort.spread())), "num"},
         {fmt::format("{:.2f}x", a.ratio()), "num verdict"}},
        a.ratio() > 1 ? "regression" : "improvement");
  return out + "</table>\n<p class=\"method\">medians (IQR/median); below 1x beamlab is "
               "faster</p>\n";
}

} // namespace

std::string render_html(const Comparison& c) {
  std::string body = warnings(c.warnings) + counts(c) + runs_table(c) + charts(c);
  for (Section s : {Section::workload, Section::kernel, Section::suite})
    body += section_table(c, s);
  body += only_list("baseline", c.only_baseline) + only_list("candidate", c.only_candidate);
  body += fmt::format("<h2>Method</h2>\n<p class=\"method\">{}</p>\n<p class=\"method\">{}</p>\n",
                      escape(describe_rule(c.rule)), escape(c.history_text()));
  return page(title(c), body);
}

std::string render_html(const RunSummary& s) {
  std::string body = fmt::format(
      "<p>{}</p>\n<p>{}; roofline: the share of the roof of the level a kernel's data fits in, "
      "and what bounds it</p>\n",
      escape(describe_run(s.data)), escape(describe_limits(s.data)));
  body += summary_charts(s) + tunings_table(s) + measurements_tables(s) + against_ort_table(s);
  if (s.tunings.empty() && s.data.items.empty())
    body += "<p>The run recorded no measurements.</p>\n";
  std::vector<std::string> notes = s.over_roof_notes();
  if (!notes.empty()) {
    body += "<ul class=\"method\">\n";
    for (const std::string& n : notes) body += "<li>! " + escape(n) + "</li>\n";
    body += "</ul>\n";
  }
  return page(title(s), body);
}

} // namespace beamlab::reports

// Format selection and the renderers' shared formatting; see report.hpp.
#include "reports/report.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "reports/report_internal.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::reports {

Format parse_format(const std::string& text, const std::string& flag) {
  if (text == "md" || text == "markdown") return Format::markdown;
  if (text == "html") return Format::html;
  if (text == "junit") return Format::junit;
  if (text == "json") return Format::json;
  user_error << flag << " '" << text << "': expected md, html, junit or json";
  return Format::markdown;
}

Format format_of_file(const std::string& path) {
  std::string name = path;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  if (name.ends_with(".html") || name.ends_with(".htm")) return Format::html;
  if (name.ends_with(".xml")) return Format::junit;
  if (name.ends_with(".json")) return Format::json;
  return Format::markdown;
}

void write_report(const std::string& path, const std::string& text, const std::string& what) {
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  user_assert(out) << what << " '" << path << "': cannot write there (" << std::strerror(errno)
                   << "); check that its directory exists";
  // Written, flushed and synced before the rename: a crash leaves the old file or the new one.
  bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0 &&
            ::fsync(::fileno(out)) == 0;
  int err = ok ? 0 : errno;
  if (std::fclose(out) != 0 && ok) ok = false, err = errno;
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return;
  if (ok) err = errno;
  std::remove(tmp.c_str());
  user_error << what << " '" << path << "': " << (ok ? "cannot replace it" : "writing failed")
             << " (" << std::strerror(err) << ")";
}

std::string render(const Comparison& c, Format format) {
  switch (format) {
  case Format::markdown: return render_markdown(c);
  case Format::html: return render_html(c);
  case Format::junit: return render_junit(c);
  case Format::json: return render_json(c);
  }
  return "";
}

std::string render(const RunSummary& s, Format format) {
  switch (format) {
  case Format::markdown: return render_markdown(s);
  case Format::html: return render_html(s);
  case Format::junit: return render_junit(s);
  case Format::json: return render_json(s);
  }
  return "";
}

namespace detail {

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return "-";
  if (ms < 0.01) return fmt::format("{:.5f}", ms);
  if (ms < 1) return fmt::format("{:.4f}", ms);
  if (ms < 100) return fmt::format("{:.3f}", ms);
  return fmt::format("{:.1f}", ms);
}

std::string format_change(double change) { return fmt::format("{:+.1f}%", change * 100); }

std::string format_noise(double noise) { return fmt::format("\u00b1{:.1f}%", noise * 100); }

std::string format_spread(double spread) { return fmt::format("{:.1f}%", spread * 100); }

std::string format_floor(const Delta& d) {
  std::string floor = format_spread(d.floor);
  return d.history_runs ? fmt::format("{} ({} runs)", floor, d.history_runs) : floor;
}

std::string format_p(double p) {
  if (p < 1e-6) return "<1e-6";
  if (p < 0.001) return fmt::format("{:.1e}", p);
  return fmt::format("{:.3f}", p);
}

std::string format_speedup(std::optional<double> x) { return x ? fmt::format("{:.2f}x", *x) : "-"; }

std::string format_fraction(std::optional<double> f) {
  return f ? fmt::format("{:.0f}%", *f * 100) : "-";
}

std::string format_tuned_speedup(const TunedKernel& k) {
  const std::optional<db::PairedSpeedup>& p = k.tuning.speedup;
  std::string interval = p ? fmt::format(" ({:.2f}-{:.2f})", p->lo, p->hi) : "";
  if (k.tuning.tie_with_heuristic) return "tie" + interval;
  return format_speedup(k.speedup()) + (k.speedup() ? interval : "");
}

std::string format_roof(const std::optional<Roof>& r) {
  if (!r) return "-";
  return fmt::format("{:.0f}% {}{}", r->fraction * 100, r->bound,
                     r->over_note().empty() ? "" : " !");
}

std::string describe_limits(const RunData& r) {
  if (!r.device || !r.device->limits) return "device limits: not measured";
  return "device limits: " + describe(*r.device->limits);
}

const char* verdict_color(Verdict v) {
  switch (v) {
  case Verdict::regression: return "#d62728";
  case Verdict::improvement: return "#2ca02c";
  case Verdict::unchanged: return "#8c8c8c";
  case Verdict::unknown: return "#c7c7c7";
  case Verdict::incomparable: return "#c7c7c7";
  }
  return "#000";
}

const char* verdict_mark(Verdict v) {
  switch (v) {
  case Verdict::regression: return "\u25b2";  // ▲
  case Verdict::improvement: return "\u25bc"; // ▼
  case Verdict::unchanged: return "\u00b7";   // ·
  case Verdict::unknown: return "?";
  case Verdict::incomparable: return "\u2260"; // ≠
  }
  return "";
}

std::string describe_run(const RunData& r) {
  std::vector<std::string> parts = {to_string(r.run.kind)};
  if (!r.run.git_revision.empty()) parts.push_back(r.run.git_revision);
  parts.push_back(r.when() + " UTC");
  if (!r.run.host.empty()) parts.push_back(r.run.host);
  if (r.device)
    parts.push_back(fmt::format("{} ({} cores)", r.device->info.cpu_model, r.device->info.cores));
  if (r.run.status != db::RunStatus::done) parts.push_back(to_string(r.run.status));
  return fmt::format("{}", fmt::join(parts, " \u00b7 "));
}

std::string workloads_text(const Measurement& m) {
  constexpr size_t kShown = 2;
  std::vector<std::string> shown(m.workloads.begin(),
                                 m.workloads.begin() + std::min(kShown, m.workloads.size()));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (m.workloads.size() > kShown) text += fmt::format(" +{}", m.workloads.size() - kShown);
  return text;
}

std::string plan_text(const Measurement& m) {
  if (m.section != Section::kernel) return m.plan;
  std::string opts = m.plan.empty() ? "no Opts" : m.plan;
  return m.source.empty() ? opts : fmt::format("{} ({})", opts, m.source);
}

std::string plan_change_text(const Measurement& baseline, const Measurement& candidate) {
  if (baseline.plan == candidate.plan) return plan_text(candidate);
  return fmt::format("{} \u2192 {}", plan_text(baseline), plan_text(candidate));
}

std::string statuses_text(const TunedKernel& k) {
  std::vector<std::pair<std::string, int64_t>> v(k.statuses.begin(), k.statuses.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  std::vector<std::string> parts;
  for (const auto& [status, n] : v) parts.push_back(fmt::format("{} {}", status, n));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string title(const Comparison& c) {
  return fmt::format("beamlab report: {} vs {}", c.candidate.title(), c.baseline.title());
}

std::string title(const RunSummary& s) { return "beamlab run summary: " + s.data.title(); }

} // namespace detail
} // namespace beamlab::reports

// The JUnit XML renderer: each compared measurement a test case, each regression a failure,
// what only one run measured a skipped case; for CI dashboards that read JUnit. See report.hpp.
#include <fmt/format.h>

#include "reports/report.hpp"
#include "reports/report_internal.hpp"
#include "reports/svg.hpp"

namespace beamlab::reports {

using namespace detail;
using svg::escape;

namespace {

struct Case {
  std::string classname, name;
  double seconds = 0;
  std::string failure, failure_type, details; ///< failure empty: passed
  std::string skipped;                        ///< non-empty: skipped with this message
};

struct Suite {
  std::string name;
  std::vector<Case> cases;
  int failures() const {
    int n = 0;
    for (const Case& c : cases) n += !c.failure.empty();
    return n;
  }
  int skipped() const {
    int n = 0;
    for (const Case& c : cases) n += !c.skipped.empty();
    return n;
  }
};

std::string write(const std::string& name, const std::vector<Suite>& suites,
                  const std::vector<std::pair<std::string, std::string>>& properties) {
  size_t tests = 0;
  int failures = 0, skipped = 0;
  for (const Suite& s : suites) {
    tests += s.cases.size();
    failures += s.failures();
    skipped += s.skipped();
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
                     "skipped=\"{}\">\n",
                     escape(name), tests, failures, skipped);
  for (const Suite& s : suites) {
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
                       "skipped=\"{}\">\n",
                       escape(s.name), s.cases.size(), s.failures(), s.skipped());
    out += "    <properties>\n";
    for (const auto& [k, v] : properties)
      out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", escape(k), escape(v));
    out += "    </properties>\n";
    for (const Case& c : s.cases) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\"",
                         escape(c.classname), escape(c.name), c.seconds);
      if (c.failure.empty() && c.skipped.empty()) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (!c.failure.empty())
        out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                           escape(c.failure), escape(c.failure_type), escape(c.details));
      if (!c.skipped.empty())
        out += fmt::format("      <skipped message=\"{}\"/>\n", escape(c.skipped));
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

std::string classname(Section s) { return std::string("beamlab.") + to_string(s); }

} // namespace

std::string render_junit(const Comparison& c) {
  std::vector<Suite> suites;
  for (Section section : {Section::workload, Section::kernel, Section::suite}) {
    Suite suite{heading(section), {}};
    for (const ComparedRow& r : c.rows) {
      if (r.section() != section) continue;
      const Delta& d = r.delta;
      Case tc{classname(section), r.name(), d.candidate.median / 1000, "", "", "", ""};
      if (d.verdict == Verdict::regression) {
        tc.failure = fmt::format("{} slower: {} ms -> {} ms (noise {}, floor {}, p {})",
                                 format_change(d.change), format_ms(d.baseline.median),
                                 format_ms(d.candidate.median), format_noise(d.noise),
                                 format_floor(d), format_p(d.p));
        tc.failure_type = "regression";
        tc.details = fmt::format("{} regressed in {} against {}. {}", r.name(), c.candidate.title(),
                                 c.baseline.title(), describe_rule(c.rule));
      } else if (d.verdict == Verdict::unknown) {
        tc.skipped = "no samples in one of the runs";
      } else if (d.verdict == Verdict::incomparable) {
        tc.skipped = "measured differently: a tuning run's sandbox time against a bench run's";
      }
      suite.cases.push_back(tc);
    }
    for (const auto& [which, items] :
         {std::pair{"baseline", &c.only_baseline}, std::pair{"candidate", &c.only_candidate}})
      for (const Measurement& m : *items)
        if (m.section == section)
          suite.cases.push_back(
              {classname(section), m.name, 0, "", "", "", fmt::format("only in the {}", which)});
    if (!suite.cases.empty()) suites.push_back(std::move(suite));
  }
  std::vector<std::pair<std::string, std::string>> properties = {
      {"baseline", c.baseline.title()}, {"candidate", c.candidate.title()}};
  for (const std::string& w : c.warnings) properties.push_back({"warning", w});
  return write(title(c), suites, properties);
}

std::string render_junit(const RunSummary& s) {
  std::vector<Suite> suites;
  if (!s.tunings.empty()) {
    Suite suite{"Tuned kernels", {}};
    for (const TunedKernel& k : s.tunings) {
      Case tc{"beamlab.tuning",
              k.kernel.name + " (" + k.tuning.workload + ")",
              k.tuning.wall_s,
              "",
              "",
              "",
              ""};
      if (k.tuning.status == db::TuningStatus::failed) {
        tc.failure = "the search failed: " + k.tuning.error;
        tc.failure_type = "tuning";
      } else if (k.tuning.status != db::TuningStatus::done) {
        tc.skipped = std::string("the search is ") + to_string(k.tuning.status);
      }
      suite.cases.push_back(tc);
    }
    suites.push_back(std::move(suite));
  }
  for (Section section : {Section::workload, Section::kernel, Section::suite}) {
    Suite suite{heading(section), {}};
    for (const Measurement* m : s.measured(section))
      suite.cases.push_back(
          {classname(section), m->name, describe(m->samples_ms).median / 1000, "", "", "", ""});
    if (!suite.cases.empty()) suites.push_back(std::move(suite));
  }
  return write(title(s), suites, {{"run", s.data.title()}});
}

} // namespace beamlab::reports

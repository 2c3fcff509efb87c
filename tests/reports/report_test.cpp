// Reports on synthetic databases: runs with a planted slowdown or only jitter, every format
// parsed back, the single-run summary, run names, and each bad input a clear error. The CLI's
// exit codes are checked by running the beamlab binary built beside this test.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>

#include <QString>
#include <QXmlStreamReader>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "engine/support/error.hpp"
#include "reports/compare.hpp"
#include "reports/report.hpp"
#include "reports/summary.hpp"
#include "reports/templates.hpp"
#include "tests/synthetic_limits.hpp"
#include "tests/temp_dir.hpp"

namespace beamlab::reports {
namespace {

db::DeviceInfo device(const std::string& cpu = "Test CPU") {
  return {cpu, "znver3 +avx2,+fma", 2, "19.1.7", "0.1.0"};
}

/// A synthetic bench run: kernel k of `kernels` takes 0.1 * (k + 1) ms times its factor, each
/// of `n` samples jittered uniformly by +-`jitter` (relative) and the whole run by `drift`.
struct SyntheticRun {
  explicit SyntheticRun(std::string l, uint32_t s = 1) : label(std::move(l)), seed(s) {}
  SyntheticRun& with(int k) { return kernels = k, *this; }
  SyntheticRun& jittered(double j) { return jitter = j, *this; }
  SyntheticRun& drifted(double d) { return drift = d, *this; }
  SyntheticRun& slower(int kernel, double f) { return factor[kernel] = f, *this; }
  SyntheticRun& without(std::vector<int> ks) { return skip = std::move(ks), *this; }
  SyntheticRun& on(std::string c) { return cpu = std::move(c), *this; }
  SyntheticRun& of(db::RunKind k) { return kind = k, *this; }
  std::string label;
  uint32_t seed = 1;
  int kernels = 12;
  int n = 10;
  double jitter = 0.02;
  double drift = 0;
  std::map<int, double> factor; ///< kernel index -> slowdown factor
  std::vector<int> skip;        ///< kernels this run did not measure
  std::string cpu = "Test CPU";
  std::string settings; ///< the run's settings JSON (none: unknown)
  db::RunKind kind = db::RunKind::bench;
};

std::string kernel_name(int k) { return "r_kernel_" + std::to_string(k); }

int64_t add_run(db::Database& db, const SyntheticRun& s) {
  int64_t dev = db.upsert_device(device(s.cpu));
  db::NewRun nr;
  nr.device_id = dev;
  nr.kind = s.kind;
  nr.label = s.label;
  nr.command = "beamlab bench (synthetic)";
  nr.settings = s.settings;
  int64_t run = db.begin_run(nr);
  std::mt19937 rng(s.seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int k = 0; k < s.kernels; ++k) {
    if (std::find(s.skip.begin(), s.skip.end(), k) != s.skip.end()) continue;
    Measurement m;
    m.section = Section::kernel;
    m.key = "hash" + std::to_string(k);
    m.name = kernel_name(k);
    m.workloads = {"synthetic"};
    m.plan = "UPCAST(0,4)";
    m.flops = 1000000;
    m.bytes = 4000000;
    double factor = s.factor.count(k) ? s.factor.at(k) : 1.0;
    for (int i = 0; i < s.n; ++i)
      m.samples_ms.push_back(0.1 * (k + 1) * factor * (1 + s.drift) * (1 + s.jitter * unit(rng)));
    db.add_benchmark(to_benchmark(run, m));
  }
  db.end_run(run, db::RunStatus::done);
  return run;
}

Comparison compare(db::Database& db, int64_t a, int64_t b, VerdictRule rule = {}) {
  return compare_runs(load_run_data(db, a), load_run_data(db, b), rule);
}

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

class ReportTest : public test_support::TempDirTest {
protected:
  std::string path() const { return file("runs.db"); }
};

// --- statistics -------------------------------------------------------------------------------

TEST(ReportStats, QuartilesAndSpreadOfAKnownSet) {
  SampleStats s = describe({5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.spread(), 2.0 / 3);
  EXPECT_EQ(describe({}).n, 0);
}

TEST(ReportStats, MannWhitneyByHand) {
  // Every ordering of {1,2} against {3} is equally likely: U = 0, 1, 2 each 1/3.
  EXPECT_NEAR(mann_whitney_p({1, 2}, {3}), 2.0 / 3, 1e-12);
  // Complete separation of 3 and 3: p = 2 / C(6,3) = 0.1, the smallest possible.
  EXPECT_NEAR(mann_whitney_p({1, 2, 3}, {4, 5, 6}), 0.1, 1e-12);
  EXPECT_NEAR(min_attainable_p(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(min_attainable_p(4, 4), 2.0 / 70, 1e-12);
  // Interleaved sets look alike.
  EXPECT_GT(mann_whitney_p({1, 3, 5, 7}, {2, 4, 6, 8}), 0.5);
  // Large tied sets go through the normal approximation: separated sets are significant,
  // identical ones are not.
  std::vector<double> low(40, 1.0), high(40, 2.0);
  EXPECT_LT(mann_whitney_p(low, high), 1e-6);
  EXPECT_DOUBLE_EQ(mann_whitney_p(low, low), 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_p({}, {1}), 1.0);
}

TEST(ReportStats, TheNormalApproximationCorrectsForTiesByHand) {
  // {1,1,2} vs {2,3,3}: U = 0.5 (the tie 2 = 2 counts a half), mean 4.5; three pairs of ties
  // give variance 9/12 * (7 - 18/30) = 4.8; z = (4 - 0.5) / sqrt(4.8); p = erfc(z / sqrt 2).
  EXPECT_NEAR(mann_whitney_p({1, 1, 2}, {2, 3, 3}), 0.11014892418594698, 1e-12);
}

TEST(ReportStats, ExactAndApproximateTestsAgreeOnLargerSets) {
  // 30 x 30 distinct values (exact) against the same with one tie added (approximation).
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(i * 2.0);
    b.push_back(i * 2.0 + 7);
  }
  double exact = mann_whitney_p(a, b);
  b.back() = a.back(); // one tie: the normal approximation
  double approx = mann_whitney_p(a, b);
  EXPECT_NEAR(exact, approx, 0.05);
}

TEST(ReportStats, FewSamplesLetTheBandAloneDecide) {
  Delta d = compare_samples({1.0, 1.01, 0.99}, {1.2, 1.21, 1.19}, {});
  EXPECT_FALSE(d.tested); // 3 a side can't reach p < 0.05
  EXPECT_EQ(d.verdict, Verdict::regression);
  Delta none = compare_samples({}, {1.0}, {});
  EXPECT_EQ(none.verdict, Verdict::unknown);
}

TEST(ReportStats, DriftIsTheUpperFenceOfConsecutiveChanges) {
  // Changes 2%, 2%, 1%, 1%, 3%: Q1 1%, Q3 2%, fence 2% + 1.5 x 1% = 3.5%.
  std::optional<Drift> d = drift_of({1.0, 1.02, 1.0, 1.01, 1.0, 1.03}, 6);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->runs, 6);
  EXPECT_NEAR(d->fence, 0.035, 1e-12);
  EXPECT_FALSE(drift_of({1.0, 1.02, 1.0, 1.01, 1.0}, 6)); // too few runs
  // A step up and the same step down weigh the same.
  EXPECT_NEAR(drift_of({1, 2}, 2)->fence, 1.0, 1e-12);
  EXPECT_NEAR(drift_of({2, 1}, 2)->fence, 1.0, 1e-12);
  // One real change among steady runs is an outlier the fence ignores.
  EXPECT_LT(drift_of({1, 1.01, 1, 1.01, 1, 1.01, 1.5, 1.51, 1.5, 1.51}, 6)->fence, 0.02);
  // The floor: the drift, at least history_floor; the rule's min_change without one.
  VerdictRule rule;
  std::vector<double> base = {1.0, 1.001, 0.999, 1.0, 1.002, 0.998, 1.0, 1.001, 0.999, 1.0};
  std::vector<double> up3 = base;
  for (double& x : up3) x *= 1.03;
  EXPECT_EQ(compare_samples(base, up3, rule).verdict, Verdict::unchanged); // 3% < 5%
  Delta steady = compare_samples(base, up3, rule, Drift{8, 0.004});
  EXPECT_DOUBLE_EQ(steady.floor, 0.01);
  EXPECT_EQ(steady.history_runs, 8);
  EXPECT_EQ(steady.verdict, Verdict::regression);
  EXPECT_EQ(compare_samples(base, up3, rule, Drift{8, 0.04}).verdict, Verdict::unchanged);
}

// --- comparisons ------------------------------------------------------------------------------

// Ten earlier runs on this device: kernel 0 steady within 0.3%, kernel 1 flipping by 15% from
// run to run. With that history a clean 3% slowdown of kernel 0 counts and kernel 1's 10% is
// its usual drift; without it (--history 0) the 5% floor says the opposite of both.
TEST_F(ReportTest, AHistoryGivesEachMeasurementItsOwnFloor) {
  db::Database db(path());
  for (int i = 0; i < 10; ++i) {
    SyntheticRun earlier("nightly", 100 + i);
    earlier.with(2).jittered(0.005);
    earlier.factor[0] = i % 2 ? 1.003 : 0.997;
    earlier.factor[1] = i % 2 ? 1.15 : 1.0;
    add_run(db, earlier);
  }
  // Made with other settings (one thread, no cache): other plans, not this history.
  SyntheticRun other("one thread", 99);
  other.with(2).settings = R"({"threads": 1, "cache": "off"})";
  other.factor[1] = 3;
  add_run(db, other);
  int64_t a = add_run(db, SyntheticRun("main", 7).with(2).jittered(0.005));
  int64_t b =
      add_run(db, SyntheticRun("pr", 8).with(2).jittered(0.005).slower(0, 1.03).slower(1, 1.10));
  Comparison with = compare_stored(db, a, b, {}, kDefaultHistoryWindow);
  EXPECT_EQ(with.history_runs, 11); // the ten and the baseline; never the candidate
  std::map<std::string, const ComparedRow*> rows;
  for (const ComparedRow& r : with.rows) rows[r.name()] = &r;
  ASSERT_EQ(rows.size(), 2u);
  const Delta& steady = rows.at(kernel_name(0))->delta;
  const Delta& flipping = rows.at(kernel_name(1))->delta;
  EXPECT_EQ(steady.history_runs, 11);
  EXPECT_LT(steady.floor, 0.02);
  EXPECT_EQ(steady.verdict, Verdict::regression);
  EXPECT_GT(flipping.floor, 0.14);
  EXPECT_EQ(flipping.verdict, Verdict::unchanged);
  EXPECT_NE(render_markdown(with).find("(11 runs)"), std::string::npos);

  Comparison without = compare_stored(db, a, b, {}, 0);
  EXPECT_EQ(without.history_runs, 0);
  for (const ComparedRow& r : without.rows) {
    EXPECT_EQ(r.delta.history_runs, 0);
    EXPECT_DOUBLE_EQ(r.delta.floor, 0.05);
    EXPECT_EQ(r.delta.verdict,
              r.name() == kernel_name(0) ? Verdict::unchanged : Verdict::regression);
  }
  EXPECT_NE(render_markdown(without).find("No measurement was in enough of the history"),
            std::string::npos);
  // Runs after the candidate are not its history: the verdicts stand.
  for (int i = 0; i < 3; ++i) add_run(db, SyntheticRun("later", 200 + i).with(2).slower(0, 1.5));
  Comparison again = compare_stored(db, a, b, {}, kDefaultHistoryWindow);
  EXPECT_EQ(again.history_runs, 11);
  for (const ComparedRow& r : again.rows)
    EXPECT_EQ(r.delta.verdict,
              r.name() == kernel_name(0) ? Verdict::regression : Verdict::unchanged);
  // Another device's runs are not this device's history.
  int64_t elsewhere = add_run(db, SyntheticRun("elsewhere", 9).with(2).on("Other CPU"));
  EXPECT_EQ(compare_stored(db, a, elsewhere, {}, kDefaultHistoryWindow).history_runs, 0);
}

TEST_F(ReportTest, APlantedTwentyPercentSlowdownIsTheOneRegression) {
  db::Database db(path());
  int64_t base = add_run(db, SyntheticRun("base", 1));
  SyntheticRun cand("cand", 2);
  cand.factor[5] = 1.2;
  int64_t slow = add_run(db, cand);
  Comparison c = compare(db, base, slow);
  ASSERT_EQ(c.rows.size(), 12u);
  EXPECT_EQ(c.counts().regressions, 1);
  EXPECT_EQ(c.counts().improvements, 0);
  EXPECT_EQ(c.rows.front().name(), kernel_name(5)); // worst first
  EXPECT_EQ(c.rows.front().delta.verdict, Verdict::regression);
  EXPECT_NEAR(c.rows.front().delta.change, 0.2, 0.03);
  EXPECT_EQ(c.regressions_above(10).size(), 1u);
  EXPECT_TRUE(c.regressions_above(25).empty());
  EXPECT_TRUE(c.warnings.empty());
  // The other way round it is an improvement.
  Comparison back = compare(db, slow, base);
  EXPECT_EQ(back.counts().improvements, 1);
  EXPECT_EQ(back.counts().regressions, 0);
}

TEST_F(ReportTest, JitterOfOneToTwoPercentIsNeverARegression) {
  db::Database db(path());
  int flagged = 0;
  for (uint32_t seed = 0; seed < 20; ++seed) {
    int64_t a = add_run(db, SyntheticRun("a", 2 * seed + 1).with(20).jittered(0.02));
    int64_t b = add_run(db, SyntheticRun("b", 2 * seed + 2)
                                .with(20)
                                .jittered(0.01 + 0.01 * (seed % 2))
                                .drifted(seed % 3 == 0   ? 0.02
                                         : seed % 3 == 1 ? -0.01
                                                         : 0.0));
    Comparison c = compare(db, a, b);
    flagged += c.counts().regressions + c.counts().improvements;
  }
  EXPECT_EQ(flagged, 0) << "of 400 kernel comparisons differing only by jitter";
}

TEST_F(ReportTest, KernelsSharingANameAreToldApartByHash) {
  db::Database db(path());
  int64_t run = add_run(db, SyntheticRun("a").with(2));
  Measurement twin;
  twin.key = "feed01";
  twin.name = kernel_name(1); // another kernel with kernel 1's name
  twin.samples_ms = {1, 1.1};
  db.add_benchmark(to_benchmark(run, twin));
  RunData data = load_run_data(db, run);
  ASSERT_EQ(data.items.size(), 3u);
  EXPECT_EQ(data.items[0].name, kernel_name(0));
  EXPECT_EQ(data.items[1].name, kernel_name(1) + " #hash1");
  EXPECT_EQ(data.items[2].name, kernel_name(1) + " #feed01");
}

TEST_F(ReportTest, KernelsInOneRunOnlyAreListedApart) {
  db::Database db(path());
  int64_t a = add_run(db, SyntheticRun("a").without({3}));
  int64_t b = add_run(db, SyntheticRun("b", 3).without({7, 8}));
  Comparison c = compare(db, a, b);
  EXPECT_EQ(c.rows.size(), 9u);
  ASSERT_EQ(c.only_baseline.size(), 2u);
  EXPECT_EQ(c.only_baseline[0].name, kernel_name(7));
  ASSERT_EQ(c.only_candidate.size(), 1u);
  EXPECT_EQ(c.only_candidate[0].name, kernel_name(3));
  std::string md = render_markdown(c);
  EXPECT_NE(md.find("### Only in the baseline (2)"), std::string::npos);
  EXPECT_NE(md.find("### Only in the candidate (1)"), std::string::npos);
}

TEST_F(ReportTest, RunsOnDifferentDevicesAreComparedButFlaggedFirst) {
  db::Database db(path());
  int64_t a = add_run(db, SyntheticRun("a"));
  int64_t b = add_run(db, SyntheticRun("b", 4).on("Other CPU"));
  Comparison c = compare(db, a, b);
  EXPECT_FALSE(c.same_device);
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings[0].find("different devices"), std::string::npos);
  std::string md = render_markdown(c);
  size_t warning = md.find("**Warning:** The runs are from different devices");
  ASSERT_NE(warning, std::string::npos);
  EXPECT_LT(warning, md.find("### Kernels")); // at the top
}

// A tuning run times its winners in the sandbox, a bench run inside its workloads: a kernel 5x
// slower in the bench is what the two measure, not a regression. The change is shown (table,
// JSON), no verdict is given (counts, JUnit skips it, charts leave it out), and the warning
// says why.
TEST_F(ReportTest, ATuningAgainstABenchRunIsMeasuredDifferentlyNotJudged) {
  db::Database db(path());
  int64_t tune = add_run(db, SyntheticRun("tune").with(3).of(db::RunKind::tune));
  SyntheticRun bench("bench", 2);
  bench.with(3).slower(0, 5).slower(1, 0.5);
  int64_t b = add_run(db, bench);
  Comparison c = compare(db, tune, b);
  ASSERT_EQ(c.rows.size(), 3u);
  for (const ComparedRow& r : c.rows) EXPECT_EQ(r.delta.verdict, Verdict::incomparable) << r.name();
  EXPECT_NEAR(c.rows.front().delta.change, 4.0, 0.3); // worst first, its change still there
  EXPECT_EQ(c.counts().regressions, 0);
  EXPECT_EQ(c.counts().improvements, 0);
  EXPECT_EQ(c.counts().incomparable, 3);
  EXPECT_NE(c.counts_text().find("3 measured differently"), std::string::npos) << c.counts_text();
  EXPECT_TRUE(c.regressions_above(0).empty());
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings[0].find("judged neither way"), std::string::npos) << c.warnings[0];
  std::string md = render_markdown(c);
  EXPECT_NE(md.find("| measured differently |"), std::string::npos) << md;
  EXPECT_TRUE(md.find("| +3") != md.npos || md.find("| +4") != md.npos) << md; // ~ +400%
  std::string xml = render_junit(c);
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  EXPECT_NE(xml.find("measured differently"), std::string::npos) << xml;
  const nlohmann::json json = nlohmann::json::parse(render_json(c));
  for (const auto& row : json["rows"]) {
    EXPECT_EQ(row["verdict"], "measured differently");
    EXPECT_TRUE(row["p"].is_null() && row["threshold"].is_null()) << row.dump();
    EXPECT_FALSE(row["change"].is_null()); // the change is shown
  }
  // Two bench runs of the same plans are judged as ever.
  int64_t b2 = add_run(db, SyntheticRun("bench2", 3).with(3));
  EXPECT_EQ(compare(db, b2, b).counts().regressions, 1);
}

TEST_F(ReportTest, RunsWithNothingInCommonAreAnError) {
  db::Database db(path());
  int64_t a = add_run(db, SyntheticRun("a").with(4).without({2, 3}));
  int64_t b = add_run(db, SyntheticRun("b").with(4).without({0, 1}));
  std::string error = user_error_of([&] { compare(db, a, b); });
  EXPECT_NE(error.find("measured nothing in common"), std::string::npos) << error;
  EXPECT_NE(error.find("run 1 'a'"), std::string::npos) << error;
}

// --- formats ----------------------------------------------------------------------------------

/// Parses `xml`, failing the test on any error; the elements by name.
std::map<std::string, int> parse_xml(const std::string& xml) {
  QXmlStreamReader r(QString::fromStdString(xml));
  std::map<std::string, int> elements;
  while (!r.atEnd())
    if (r.readNext() == QXmlStreamReader::StartElement)
      ++elements[r.name().toString().toStdString()];
  EXPECT_FALSE(r.hasError()) << r.errorString().toStdString() << " at line " << r.lineNumber();
  return elements;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReportFormats : public ReportTest {
protected:
  void SetUp() override {
    ReportTest::SetUp();
    db_ = std::make_unique<db::Database>(path());
    int64_t a = add_run(*db_, SyntheticRun("main").without({11}));
    SyntheticRun cand("pr <&> \"1\"", 9); // a label that needs escaping
    cand.factor[2] = 1.3;
    cand.factor[4] = 1.25;
    cand.factor[9] = 0.7;
    int64_t b = add_run(*db_, cand);
    comparison_ = compare(*db_, a, b);
  }
  std::unique_ptr<db::Database> db_;
  Comparison comparison_;
};

TEST_F(ReportFormats, TheMarkdownTableHasOneRowPerKernel) {
  std::string md = render_markdown(comparison_);
  ASSERT_EQ(comparison_.rows.size(), 11u);
  size_t table = md.find("### Kernels (11)");
  ASSERT_NE(table, std::string::npos);
  std::istringstream lines(md.substr(table));
  std::string line;
  int rows = 0;
  std::getline(lines, line); // heading
  std::getline(lines, line); // blank
  std::getline(lines, line); // header
  std::getline(lines, line); // rule
  while (std::getline(lines, line) && line.starts_with("| ")) ++rows;
  EXPECT_EQ(rows, 11);
  EXPECT_EQ(count(md, "| regression |"), 2);
  EXPECT_EQ(count(md, "| improvement |"), 1);
  EXPECT_NE(md.find("**2 regressions, 1 improvement, 8 within noise**"), std::string::npos);
  EXPECT_NE(md.find("Mann-Whitney"), std::string::npos); // the method is stated
}

TEST_F(ReportFormats, TheHtmlIsWellFormedAndCarriesItsCharts) {
  std::string html = render_html(comparison_);
  std::map<std::string, int> elements = parse_xml(html);
  EXPECT_EQ(elements["html"], 1);
  EXPECT_GE(elements["svg"], 2);   // change per kernel, baseline vs candidate (and a legend)
  EXPECT_EQ(elements["table"], 2); // the runs, the kernels
  EXPECT_EQ(count(html, "class=\"bar\""), 11); // one bar per kernel in the change chart
  EXPECT_EQ(count(html, "class=\"point\""), 11);
  EXPECT_EQ(count(html, "<tr class=\"regression\">"), 2);
  EXPECT_NE(html.find("pr &lt;&amp;&gt; &quot;1&quot;"), std::string::npos);
  EXPECT_EQ(html.find("{{"), std::string::npos); // every placeholder filled
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Nothing fetched from elsewhere: no scripts, sources, links or CSS urls.
  for (const char* external : {"src=", "href=", "url(", "@import"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
}

TEST_F(ReportFormats, JUnitCountsEachRegressionAsAFailure) {
  std::string xml = render_junit(comparison_);
  std::map<std::string, int> elements = parse_xml(xml);
  EXPECT_EQ(elements["testsuites"], 1);
  EXPECT_EQ(elements["testcase"], 12); // 11 compared + 1 only in the baseline
  EXPECT_EQ(elements["failure"], 2);
  EXPECT_EQ(elements["skipped"], 1);
  // The counts the attributes claim match the elements, on the root and on each suite.
  QXmlStreamReader r(QString::fromStdString(xml));
  while (!r.atEnd()) {
    if (r.readNext() != QXmlStreamReader::StartElement) continue;
    if (r.name() == QStringLiteral("testsuites")) {
      EXPECT_EQ(r.attributes().value("tests").toInt(), 12);
      EXPECT_EQ(r.attributes().value("failures").toInt(), 2);
      EXPECT_EQ(r.attributes().value("skipped").toInt(), 1);
    }
    if (r.name() == QStringLiteral("failure"))
      EXPECT_EQ(r.attributes().value("type").toString(), QStringLiteral("regression"));
  }
  EXPECT_FALSE(r.hasError());
}

// Names come from users (corpus labels) and from kernels; in Markdown they stay text: no HTML
// tag opens, a '|' doesn't split a cell, backticks don't end a code span early.
TEST_F(ReportTest, MarkdownKeepsNamesInertAndShowsAChangedPlan) {
  db::Database db(path());
  auto run_with = [&](const std::string& label, const std::vector<Measurement>& ms) {
    db::NewRun nr;
    nr.device_id = db.upsert_device(device());
    nr.kind = db::RunKind::bench;
    nr.label = label;
    int64_t run = db.begin_run(nr);
    for (const Measurement& m : ms) db.add_benchmark(to_benchmark(run, m));
    db.end_run(run, db::RunStatus::done);
    return run;
  };
  Measurement k;
  k.section = Section::kernel;
  k.key = "k1";
  k.name = "r_<b>x</b>|y";
  k.plan = "UPCAST(0,4)";
  k.source = "heuristic";
  k.samples_ms = {1.0, 1.01, 0.99, 1.0, 1.02};
  Measurement odd = k;
  odd.key = "k2";
  odd.name = "``tick`";
  odd.workloads = {"<img src=x>"};
  Measurement tuned = k;
  tuned.plan = "UPCAST(0,8) THREAD(0,2)";
  tuned.source = "cache";
  int64_t a = run_with("<img>", {k, odd});
  int64_t b = run_with("b", {tuned});
  std::string md = render_markdown(compare(db, a, b));
  EXPECT_EQ(md.find("<b>"), std::string::npos) << md;
  EXPECT_EQ(md.find("<img"), std::string::npos) << md;
  EXPECT_NE(md.find("r_&lt;b>x&lt;/b>\\|y"), std::string::npos) << md;
  EXPECT_NE(md.find("``` ``tick` ```"), std::string::npos) << md; // fenced by three, padded
  EXPECT_NE(md.find("UPCAST(0,4) (heuristic) \u2192 UPCAST(0,8) THREAD(0,2) (cache)"),
            std::string::npos)
      << md;
  // The same plan on both sides is shown once.
  std::string same = render_markdown(compare(db, a, a));
  EXPECT_NE(same.find("| UPCAST(0,4) (heuristic) |"), std::string::npos) << same;
}

TEST_F(ReportTest, AReportFileIsWrittenWholeOrNotAtAll) {
  std::string out = file("r.md");
  write_report(out, "old", "-o");
  write_report(out, "new", "-o");
  std::ifstream in(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new");
  std::string error =
      user_error_of([&] { write_report(file("no/such/dir/r.md"), "x", "the report file"); });
  EXPECT_NE(error.find("the report file '" + file("no/such/dir/r.md") + "': cannot write there"),
            std::string::npos)
      << error;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator{}),
            1); // r.md, and no temporary left beside it
}

TEST_F(ReportFormats, TheJsonCarriesEveryRowWithItsStatisticsAndVerdict) {
  nlohmann::json j = nlohmann::json::parse(render_json(comparison_));
  EXPECT_EQ(j["schema"], "beamlab-report/1");
  EXPECT_EQ(j["kind"], "comparison");
  EXPECT_EQ(j["candidate"]["label"], "pr <&> \"1\"");
  ASSERT_EQ(j["rows"].size(), 11u);
  EXPECT_EQ(j["only_baseline"].size(), 0u);
  EXPECT_EQ(j["only_candidate"].size(), 1u); // kernel 11: the baseline skipped it
  EXPECT_EQ(j["counts"]["regressions"], 2);
  EXPECT_EQ(j["counts"]["improvements"], 1);
  EXPECT_EQ(j["rule"]["min_change"], 0.05);
  int regressions = 0;
  for (const nlohmann::json& row : j["rows"]) {
    ASSERT_EQ(row["section"], "kernel");
    EXPECT_EQ(row["baseline"]["n"], 10);
    double change =
        row["candidate"]["median_ms"].get<double>() / row["baseline"]["median_ms"].get<double>() -
        1;
    EXPECT_NEAR(row["change"].get<double>(), change, 1e-12);
    if (row["verdict"] == "regression") {
      ++regressions;
      EXPECT_GT(row["change"].get<double>(), row["threshold"].get<double>());
      EXPECT_LT(row["p"].get<double>(), 0.05);
    }
  }
  EXPECT_EQ(regressions, 2);
  // A summary too; a label that is not UTF-8 doesn't stop it.
  db::NewRun nr;
  nr.device_id = db_->upsert_device(device());
  nr.kind = db::RunKind::bench;
  nr.label = "bad \xff label";
  int64_t run = db_->begin_run(nr);
  Measurement m;
  m.section = Section::workload;
  m.key = m.name = "w";
  m.samples_ms = {1, 2, 3};
  db_->add_benchmark(to_benchmark(run, m));
  nlohmann::json s = nlohmann::json::parse(render_json(summarize_run(*db_, run)));
  EXPECT_EQ(s["kind"], "summary");
  ASSERT_EQ(s["measurements"].size(), 1u);
  EXPECT_EQ(s["measurements"][0]["stats"]["median_ms"], 2.0);
  EXPECT_EQ(s["measurements"][0]["samples_ms"].size(), 3u);
}

TEST_F(ReportFormats, FormatsAreNamedAndABadNameIsAnError) {
  EXPECT_EQ(format_of_file("bot.json"), Format::json);
  EXPECT_EQ(parse_format("json", "--format"), Format::json);
  EXPECT_EQ(format_of_file("out/report.HTML"), Format::html);
  EXPECT_EQ(format_of_file("r.htm"), Format::html);
  EXPECT_EQ(format_of_file("junit.xml"), Format::junit);
  EXPECT_EQ(format_of_file("summary.md"), Format::markdown);
  EXPECT_EQ(format_of_file("report"), Format::markdown);
  EXPECT_EQ(parse_format("md", "--format"), Format::markdown);
  EXPECT_EQ(parse_format("html", "--format"), Format::html);
  EXPECT_EQ(parse_format("junit", "--format"), Format::junit);
  EXPECT_EQ(user_error_of([] { parse_format("pdf", "--format"); }),
            "--format 'pdf': expected md, html, junit or json");
}

TEST(ReportTemplates, FillingNeedsEveryPlaceholder) {
  EXPECT_EQ(fill_template("a {{x}} b {{y}}", {{"x", "1"}, {"y", "{{x}}"}}), "a 1 b {{x}}");
  EXPECT_THROW(fill_template("{{missing}}", {}), InternalError);
  EXPECT_NE(std::string(html_template()).find("{{body}}"), std::string::npos);
}

// --- run names ----------------------------------------------------------------------------------

TEST_F(ReportTest, RunsAreNamedByIdLabelOrLatest) {
  db::Database db(path());
  int64_t a = add_run(db, SyntheticRun("nightly"));
  int64_t b = add_run(db, SyntheticRun("nightly", 2));
  int64_t c = add_run(db, SyntheticRun("pr", 3));
  EXPECT_EQ(resolve_run(db, std::to_string(a), "--baseline").id, a);
  EXPECT_EQ(resolve_run(db, "nightly", "--baseline").id, b); // the newest with the label
  EXPECT_EQ(resolve_run(db, "latest", "--candidate").id, c);
  EXPECT_EQ(resolve_run(db, "latest~2", "--baseline").id, a);
  std::string unknown = user_error_of([&] { resolve_run(db, "42", "--baseline"); });
  EXPECT_NE(unknown.find("--baseline 42: no run 42 in"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("its runs are 1..3"), std::string::npos) << unknown;
  std::string label = user_error_of([&] { resolve_run(db, "weekly", "--candidate"); });
  EXPECT_NE(label.find("--candidate 'weekly': no run has that id or label"), std::string::npos)
      << label;
  std::string back = user_error_of([&] { resolve_run(db, "latest~3", "--baseline"); });
  EXPECT_NE(back.find("holds only 3 run(s)"), std::string::npos) << back;
  std::string bad = user_error_of([&] { resolve_run(db, "latest~x", "--baseline"); });
  EXPECT_NE(bad.find("expected latest~N"), std::string::npos) << bad;
}

TEST_F(ReportTest, AnEmptyDatabaseIsAnError) {
  db::Database db(path());
  std::string error = user_error_of([&] { resolve_run(db, "latest", "--baseline"); });
  EXPECT_NE(error.find("has no runs yet; record one with 'beamlab bench'"), std::string::npos)
      << error;
}

TEST_F(ReportTest, AMalformedBenchmarkRowIsAnErrorNamingIt) {
  db::Database db(path());
  int64_t run = add_run(db, SyntheticRun("a").with(1));
  db.add_benchmark({run, "broken", "{\"section\": \"kernel\"}", "{}"});
  std::string error = user_error_of([&] { load_run_data(db, run); });
  EXPECT_NE(error.find("benchmark 'broken' does not read"), std::string::npos) << error;
}

// --- a tuning run's summary -------------------------------------------------------------------

// A tuning run begun on the test device with `limits`.
int64_t begin_tune_run(db::Database& db, const MachineLimits& limits) {
  int64_t dev = db.upsert_device(device());
  db.set_device_limits(dev, limits);
  db::NewRun nr;
  nr.device_id = dev;
  nr.kind = db::RunKind::tune;
  return db.begin_run(nr);
}

TEST_F(ReportTest, ATuningRunSummaryHasTimesRooflineAndCandidatesByStatus) {
  db::Database db(path());
  int64_t run =
      begin_tune_run(db, test_support::synthetic_limits(100, 100, 10, 5)); // GFLOP/s, GB/s
  db::Kernel k;
  k.hash = "00ff";
  k.name = "r_16_16_16";
  k.shapes = "[]";
  k.flops = 2000000; // 2 MFLOP in 0.1 ms: 20 GFLOP/s, 20% of the peak
  k.bytes = 100000;  // 0.1 MB: fits L2 (10 GB/s); 0.01 ms there, under the 0.02 ms of FLOPs
  int64_t kid = db.upsert_kernel(k);
  db::Tuning t = db.open_tuning(run, kid, 2, "matmul_16", "{}", "UPCAST:2,4", 10);
  std::vector<db::CandidateRow> rows;
  for (int i = 0; i < 6; ++i) {
    db::CandidateRow c;
    c.seq = i;
    c.opts = i == 0 ? "" : "UPCAST(0," + std::to_string(1 << i) + ")";
    c.status = i == 5 ? "crashed" : i == 4 ? "slow" : "ok";
    if (c.status == "ok") c.samples_ms = {0.4 - 0.05 * i, 0.41 - 0.05 * i};
    rows.push_back(c);
  }
  db.save_candidates(t.id, rows);
  t.status = db::TuningStatus::done;
  t.heuristic_opts = "UPCAST(0,2)";
  t.heuristic_ms = 0.35;
  t.winner_opts = "UPCAST(0,8)";
  t.winner_ms = 0.25;
  t.wall_s = 3.5;
  t.stop_reason = "converged";
  db.finish_tuning(t);
  db.end_run(run, db::RunStatus::done);

  RunSummary s = summarize_run(db, run);
  ASSERT_EQ(s.tunings.size(), 1u);
  const TunedKernel& tk = s.tunings[0];
  EXPECT_NEAR(*tk.speedup(), 0.35 / 0.25, 1e-9);
  EXPECT_EQ(tk.candidates, 6);
  EXPECT_EQ(tk.statuses.at("ok"), 4);
  EXPECT_EQ(tk.statuses.at("slow"), 1);
  EXPECT_EQ(tk.statuses.at("crashed"), 1);
  ASSERT_TRUE(tk.roof);
  EXPECT_NEAR(tk.roof->fraction, 0.08, 1e-9); // 2 MFLOP in 0.25 ms = 8 GFLOP/s of 100
  EXPECT_EQ(tk.roof->level, "L2");
  EXPECT_EQ(tk.roof->bound, "compute");
  // The run's kernel is measured by the winner's samples.
  ASSERT_EQ(s.data.items.size(), 1u);
  ASSERT_EQ(s.data.items[0].samples_ms.size(), 2u);
  EXPECT_NEAR(s.data.items[0].samples_ms[0], 0.25, 1e-12);
  EXPECT_NEAR(s.data.items[0].samples_ms[1], 0.26, 1e-12);

  std::string md = render_markdown(s);
  EXPECT_NE(
      md.find("| r_16_16_16 | matmul_16 | 0.3500 | 0.2500 | 1.40x | 8% compute | ok 4, crashed 1, "
              "slow 1 | 3.5 | converged | UPCAST(0,8) |"),
      std::string::npos)
      << md;
  std::map<std::string, int> html = parse_xml(render_html(s));
  EXPECT_GE(html["svg"], 2); // speedup and roofline charts
  std::map<std::string, int> junit = parse_xml(render_junit(s));
  EXPECT_EQ(junit["testcase"], 1);
  EXPECT_EQ(junit["failure"], 0);
}

// A tuned kernel with `bytes` of data (a fifth of them its output) and almost no arithmetic,
// tuned to `ms`, in a run on a device with synthetic limits (L2 50 GB/s, DRAM 10 GB/s).
RunSummary memory_bound_run(const std::string& path, int64_t bytes, double ms) {
  db::Database db(path);
  int64_t run = begin_tune_run(db, test_support::synthetic_limits(100, 200, 50, 10));
  db::Kernel k;
  k.hash = "0a0b";
  k.name = "E_stream";
  k.shapes = fmt::format(R"([{{"dtype": "float32", "count": {}}}])", bytes / 5 / 4);
  k.flops = 1000;
  k.bytes = bytes;
  db::Tuning t = db.open_tuning(run, db.upsert_kernel(k), 2, "stream", "{}", "", 10);
  t.status = db::TuningStatus::done;
  t.heuristic_ms = t.winner_ms = ms;
  db.finish_tuning(t);
  db.end_run(run, db::RunStatus::done);
  return summarize_run(db, run);
}

TEST_F(ReportTest, AKernelWhoseDataFitsInL2IsJudgedAgainstTheL2Roof) {
  // 512 KiB fit the 1 MiB L2: at 50 GB/s they take 0.0105 ms, 10.5% of 0.1 ms (against DRAM's
  // 10 GB/s it would read 52%).
  RunSummary s = memory_bound_run(path(), 512 << 10, 0.1);
  ASSERT_EQ(s.tunings.size(), 1u);
  ASSERT_TRUE(s.tunings[0].roof);
  const Roof& r = *s.tunings[0].roof;
  EXPECT_EQ(r.level, "L2");
  EXPECT_EQ(r.bound, "L2");
  EXPECT_NEAR(r.gbps, 50, 1e-9);
  EXPECT_NEAR(r.fraction, (512 << 10) / 50e9 / 0.1e-3, 1e-9);
  EXPECT_TRUE(s.over_roof_notes().empty());
  EXPECT_NE(render_markdown(s).find("| 10% L2 |"), std::string::npos) << render_markdown(s);
}

TEST_F(ReportTest, AFigureOverItsRoofIsFlaggedWithWhy) {
  // 8 MiB (DRAM, 10 GB/s) in 0.5 ms is 16.8 GB/s: 168% of the roof, never shown bare.
  RunSummary s = memory_bound_run(path(), 8 << 20, 0.5);
  ASSERT_TRUE(s.tunings[0].roof);
  EXPECT_EQ(s.tunings[0].roof->level, "DRAM");
  EXPECT_NEAR(s.tunings[0].roof->fraction, (8 << 20) / 10e9 / 0.5e-3, 1e-9);
  std::vector<std::string> notes = s.over_roof_notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("E_stream: 168% of the DRAM roof: faster than the measured limit"),
            std::string::npos)
      << notes[0];
  std::string md = render_markdown(s);
  EXPECT_NE(md.find("| 168% DRAM ! |"), std::string::npos) << md;
  EXPECT_NE(md.find("- ! E_stream: 168% of the DRAM roof"), std::string::npos) << md;
  EXPECT_NE(render_html(s).find("! E_stream: 168% of the DRAM roof"), std::string::npos);
}

// --- the command line -------------------------------------------------------------------------

/// The beamlab binary beside this test, run through the shell; its exit code and stderr.
struct Cli {
  int code = -1;
  std::string err;
};

Cli beamlab(const std::string& args, const std::string& dir) {
  auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  std::string err = dir + "/stderr.txt";
  int status = std::system(
      ((self / "beamlab").string() + " " + args + " >" + dir + "/stdout.txt 2>" + err).c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST_F(ReportTest, FailAboveTurnsAPlantedRegressionIntoExitCodeFour) {
  {
    db::Database db(path());
    add_run(db, SyntheticRun("base"));
    SyntheticRun cand("cand", 2);
    cand.factor[5] = 1.2;
    add_run(db, cand);
    add_run(db, SyntheticRun("same", 3));
  }
  const std::string dir = dir_.string(), db = " --db " + path();
  Cli gate = beamlab("report" + db + " --baseline base --candidate cand --fail-above 10", dir);
  EXPECT_EQ(gate.code, 4) << gate.err;
  EXPECT_NE(gate.err.find("1 regression(s) above --fail-above 10%: r_kernel_5 +2"),
            std::string::npos)
      << gate.err;
  EXPECT_EQ(beamlab("report" + db + " --baseline base --candidate cand --fail-above 30", dir).code,
            0);
  EXPECT_EQ(beamlab("report" + db + " --baseline base --candidate same --fail-above 1", dir).code,
            0);
  // The report is written whole to -o even when the gate fails.
  Cli junit = beamlab("report" + db + " --baseline 1 --candidate 2 --format junit -o " + dir +
                          "/out.xml --fail-above 10",
                      dir);
  EXPECT_EQ(junit.code, 4);
  std::ifstream out(dir + "/out.xml");
  std::stringstream xml;
  xml << out.rdbuf();
  EXPECT_EQ(parse_xml(xml.str())["failure"], 1);
}

TEST_F(ReportTest, ErrorsAreOneLineExitingOneForBadInputTwoForABadCommandLine) {
  {
    db::Database db(path());
    add_run(db, SyntheticRun("a").with(4).without({2, 3}));
    add_run(db, SyntheticRun("b").with(4).without({0, 1}));
  }
  db::Database(file("empty.db"));
  const std::string dir = dir_.string(), db = " --db " + path();
  struct Case {
    std::string args, message;
    int code = 1; // 2: the command line was wrong
  };
  for (const Case& c : std::vector<Case>{
           {"report" + db + " --baseline 7", "--baseline 7: no run 7 in"},
           {"report" + db + " --baseline a --candidate b", "measured nothing in common"},
           {"report --db " + file("empty.db") + " --baseline latest", "has no runs yet"},
           {"report --db " + file("none.db") + " --run 1", "no database at '"},
           {"report" + db, "name the runs to compare with --baseline RUN", 2},
           {"report" + db + " --run a --baseline b", "--run summarizes one run", 2},
           {"report" + db + " --run a --format pdf",
            "--format: Value 'pdf': expected md, html, junit or json", 2},
           {"report" + db + " --run a -o " + dir + "/no/such/dir/r.md", "cannot write there"},
       }) {
    Cli r = beamlab(c.args, dir);
    EXPECT_EQ(r.code, c.code) << c.args << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("beamlab: error: ")) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(file("none.db"))); // a report never creates one
}

} // namespace
} // namespace beamlab::reports

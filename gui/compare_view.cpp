// The compare view; see compare_view.hpp.
#include "gui/compare_view.hpp"

#include <algorithm>
#include <optional>

#include <QColor>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include "engine/support/statistics.hpp"
#include "gui/async.hpp"
#include "gui/code_map.hpp"
#include "gui/style.hpp"
#include "gui/workbench.hpp"
#include "reports/report.hpp"

namespace beamlab::gui {

namespace {

// B against A, in the words of a comparison of two candidates.
QString verdict_text(reports::Verdict v) {
  switch (v) {
  case reports::Verdict::regression: return "slower";
  case reports::Verdict::improvement: return "faster";
  case reports::Verdict::unchanged: return "within noise";
  case reports::Verdict::unknown: return "not comparable (a side has no samples)";
  case reports::Verdict::incomparable:
    return "no verdict: measured differently (a tuning's sandbox time against a bench's own)";
  }
  return "";
}

/// Red for a regression, green for an improvement; the palette's text colour otherwise.
std::optional<QColor> verdict_color(reports::Verdict v) {
  if (v == reports::Verdict::regression) return QColor("#d62728");
  if (v == reports::Verdict::improvement) return QColor("#2e9d4a");
  return std::nullopt;
}

QString change_text(const reports::Delta& d) {
  return QString("%1%2% (noise +-%3%, p %4%5)")
      .arg(d.change >= 0 ? "+" : "")
      .arg(100 * d.change, 0, 'f', 1)
      .arg(100 * d.noise, 0, 'f', 1)
      .arg(d.p, 0, 'g', 3)
      .arg(d.tested ? "" : ", too few samples for the rank test: the band decided");
}

} // namespace

std::vector<std::pair<char, std::string>> line_diff(const std::string& a_text,
                                                    const std::string& b_text) {
  std::vector<std::string> a = split_lines(a_text), b = split_lines(b_text);
  size_t n = a.size(), m = b.size();
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::pair<char, std::string>> out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j])
      out.emplace_back(' ', a[i++]), ++j;
    else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]))
      out.emplace_back('+', b[j++]);
    else
      out.emplace_back('-', a[i++]);
  }
  return out;
}

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  cand_a_ = new QComboBox;
  cand_b_ = new QComboBox;
  auto* go_c = new QPushButton("Compare candidates");
  connect(go_c, &QPushButton::clicked, this, [this] {
    compare_candidates(cand_a_->currentData().toInt(), cand_b_->currentData().toInt());
  });
  run_a_ = new QComboBox;
  run_b_ = new QComboBox;
  auto* go_r = new QPushButton("Compare runs");
  connect(go_r, &QPushButton::clicked, this, [this] {
    compare_runs(run_a_->currentData().toLongLong(), run_b_->currentData().toLongLong());
  });
  summary_ = new QLabel("Pick two candidates of the open kernel, or two runs.");
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  opts_diff_ = new QTextEdit;
  opts_diff_->setReadOnly(true);
  diff_ = new QPlainTextEdit;
  diff_->setReadOnly(true);
  diff_->setLineWrapMode(QPlainTextEdit::NoWrap);
  diff_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  diff_of_ = new QComboBox;
  diff_of_->addItems({"LLVM IR diff", "Assembly diff"});
  connect(diff_of_, &QComboBox::currentIndexChanged, this, &CompareView::show_diff);
  save_ = new QPushButton("Save report...");
  save_->setEnabled(false);
  save_->setToolTip("The comparison as beamlab report writes it: .html, .md, JUnit .xml or .json");
  connect(save_, &QPushButton::clicked, this, [this] {
    QFileDialog dialog(this, "Save report", "report.html");
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setNameFilters(
        {"HTML (*.html)", "Markdown (*.md)", "JUnit XML (*.xml)", "JSON (*.json)"});
    dialog.setDefaultSuffix("html");
    // A name typed without a suffix gets the chosen filter's.
    connect(&dialog, &QFileDialog::filterSelected, &dialog, [&dialog](const QString& filter) {
      dialog.setDefaultSuffix(filter.section("*.", 1).chopped(1));
    });
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) return;
    QString path = dialog.selectedFiles().front();
    std::optional<QString> error = save_report(path);
    summary_->setText((error ? *error : "saved " + path).toHtmlEscaped());
  });
  runs_table_ = new QTableWidget(0, 9);
  runs_table_->setHorizontalHeaderLabels(
      {"Section", "Name", "A ms", "B ms", "Change %", "Noise %", "Floor %", "p", "Verdict"});
  runs_table_->horizontalHeaderItem(6)->setToolTip(
      "Changes up to the floor never count: the measurement's own run-to-run drift over "
      "earlier bench runs on this device where there are enough, else 5%");
  runs_table_->horizontalHeaderItem(5)->setToolTip(
      "The larger interquartile range over the median of the two runs' samples");
  runs_table_->horizontalHeaderItem(7)->setToolTip(
      "The rank test's p-value (Mann-Whitney U); blank with too few samples for it");
  runs_table_->horizontalHeader()->setStretchLastSection(true);
  runs_table_->setSortingEnabled(true);
  make_reading_table(runs_table_);

  auto* row_c = new QHBoxLayout;
  row_c->addWidget(new QLabel("Candidate A"));
  row_c->addWidget(cand_a_, 1);
  row_c->addWidget(new QLabel("B"));
  row_c->addWidget(cand_b_, 1);
  row_c->addWidget(go_c);
  auto* row_r = new QHBoxLayout;
  row_r->addWidget(new QLabel("Run A"));
  row_r->addWidget(run_a_, 1);
  row_r->addWidget(new QLabel("B"));
  row_r->addWidget(run_b_, 1);
  row_r->addWidget(go_r);
  row_r->addWidget(save_);
  auto* code = new QWidget;
  auto* cv = new QVBoxLayout(code);
  cv->setContentsMargins(0, 0, 0, 0);
  cv->addWidget(diff_of_);
  cv->addWidget(diff_, 1);
  auto* split = new QSplitter;
  split->addWidget(opts_diff_);
  split->addWidget(code);
  split->setStretchFactor(1, 3);
  tabs_ = new QTabWidget;
  tabs_->addTab(split, "Candidates: Opts and code diff");
  tabs_->addTab(runs_table_, "Runs: what both measured");
  auto* v = new QVBoxLayout(this);
  v->addLayout(row_c);
  v->addLayout(row_r);
  v->addWidget(summary_);
  v->addWidget(tabs_, 1);
}

void CompareView::set_tuning(const TuningDetail& d) {
  bool same_tuning = detail_.row.tuning.id == d.row.tuning.id;
  int picked_a = cand_a_->currentData().toInt(), picked_b = cand_b_->currentData().toInt();
  detail_ = d;
  for (QComboBox* c : {cand_a_, cand_b_}) {
    c->clear();
    for (const db::CandidateRow& r : d.candidates)
      c->addItem(QString("#%1 %2 %3 %4")
                     .arg(r.seq)
                     .arg(qstr(r.status), ms_text(best_ms(r)),
                          qstr(r.opts.empty() ? "(no Opts)" : r.opts)),
                 r.seq);
  }
  // A live reload keeps what was picked; a new kernel defaults to the heuristic (A) against
  // the winner (B): what the search gained.
  auto seq_of = [&](const std::string& opts, int fallback) {
    for (const db::CandidateRow& r : d.candidates)
      if (r.opts == opts && r.status == "ok") return r.seq;
    return fallback;
  };
  int a = same_tuning ? picked_a : seq_of(d.row.tuning.heuristic_opts, 0);
  int b = same_tuning ? picked_b
                      : seq_of(d.row.tuning.winner_opts,
                               d.candidates.empty() ? 0 : d.candidates.back().seq);
  if (int i = cand_a_->findData(a); i >= 0) cand_a_->setCurrentIndex(i);
  if (int i = cand_b_->findData(b); i >= 0) cand_b_->setCurrentIndex(i);
}

int CompareView::default_a(int b) const {
  if (b < 0) return -1;
  // A bench run against the bench before it, a tuning against the tuning before it; else
  // the run before B.
  for (size_t i = static_cast<size_t>(b) + 1; i < runs_.size(); ++i)
    if (runs_[i].run.kind == runs_[static_cast<size_t>(b)].run.kind &&
        runs_[i].by_hand == runs_[static_cast<size_t>(b)].by_hand)
      return static_cast<int>(i);
  return b + 1 < static_cast<int>(runs_.size()) ? b + 1 : -1;
}

void CompareView::pick_run(int64_t b) {
  int i = run_b_->findData(QVariant::fromValue<qlonglong>(b));
  if (i < 0) return;
  run_b_->setCurrentIndex(i);
  run_a_->setCurrentIndex(default_a(i));
}

void CompareView::set_database(const std::string& path) {
  if (path == db_path_) return;
  db_path_ = path;
  ++code_serial_; // comparisons still running belong to the last database
  ++runs_serial_;
  detail_ = {};
  runs_.clear();
  last_.reset();
  codes_.reset();
  code_error_.clear();
  save_->setEnabled(false);
  for (QComboBox* box : {cand_a_, cand_b_, run_a_, run_b_}) box->clear();
  runs_table_->setRowCount(0);
  summary_->clear();
  opts_diff_->clear();
  diff_->clear();
}

void CompareView::set_runs(const std::vector<RunRow>& runs) {
  runs_ = runs;
  // A reload keeps the runs picked; new ones default to the newest run (B) judged against the
  // one before it (A), as `beamlab report --baseline latest~1` does.
  QVariant picked_a = run_a_->currentData(), picked_b = run_b_->currentData();
  for (QComboBox* c : {run_a_, run_b_}) {
    c->clear();
    for (const RunRow& r : runs)
      c->addItem(QString("run %1 %2 %3 %4")
                     .arg(r.run.id)
                     .arg(qstr(to_string(r.run.kind)), qstr(r.run.started_at.substr(0, 16)),
                          qstr(r.run.label)),
                 QVariant::fromValue<qlonglong>(r.run.id));
  }
  auto pick = [](QComboBox* box, const QVariant& id, int fallback) {
    int i = id.isValid() ? box->findData(id) : -1;
    box->setCurrentIndex(i >= 0 ? i : std::min(fallback, box->count() - 1));
  };
  pick(run_b_, picked_b, 0);
  pick(run_a_, picked_a, default_a(run_b_->currentIndex()));
}

void CompareView::compare_candidates(int a, int b) {
  auto find = [&](int seq) -> const db::CandidateRow* {
    for (const db::CandidateRow& r : detail_.candidates)
      if (r.seq == seq) return &r;
    return nullptr;
  };
  const db::CandidateRow *ca = find(a), *cb = find(b);
  if (!ca || !cb) {
    summary_->setText("Open a kernel and pick two of its candidates.");
    return;
  }
  // The Opt diff: Opts only in A struck out, only in B in green, shared plain.
  auto oa = parse_opts(ca->opts), ob = parse_opts(cb->opts);
  QString html;
  if (oa && ob) {
    for (const Opt& o : *oa)
      html += std::find(ob->begin(), ob->end(), o) == ob->end()
                  ? "<div style='color:#d62728'>- " + qstr(to_string(o)) + "</div>"
                  : "<div>&nbsp; " + qstr(to_string(o)) + "</div>";
    for (const Opt& o : *ob)
      if (std::find(oa->begin(), oa->end(), o) == oa->end())
        html += "<div style='color:#2e9d4a'>+ " + qstr(to_string(o)) + "</div>";
  }
  opts_diff_->setHtml("<b>Opts A -> B</b>" + html);
  tabs_->setCurrentIndex(0);
  // The regression report's rule, so the window and `beamlab report` never disagree.
  reports::Delta d = reports::compare_samples(ca->samples_ms, cb->samples_ms, {});
  summary_->setText(QString("#%1 %2 vs #%3 %4: %5: B is %6")
                        .arg(a)
                        .arg(ms_text(d.baseline.median))
                        .arg(b)
                        .arg(ms_text(d.candidate.median))
                        .arg(change_text(d), verdict_text(d.verdict)));
  int serial = ++code_serial_;
  codes_.reset();
  code_error_.clear();
  diff_->setPlainText("compiling both...");
  std::string ast = detail_.row.kernel.ast, name = detail_.row.kernel.name;
  std::vector<Opt> pa = oa ? *oa : std::vector<Opt>{}, pb = ob ? *ob : std::vector<Opt>{};
  using Codes = Expected<std::pair<KernelCode, KernelCode>>;
  run_async(
      this,
      [ast, name, pa, pb]() -> Codes {
        auto x = kernel_code(ast, pa, name), y = kernel_code(ast, pb, name);
        if (!x) return make_unexpected("A: " + x.error());
        if (!y) return make_unexpected("B: " + y.error());
        return std::make_pair(std::move(*x), std::move(*y));
      },
      [this, serial](const Codes& codes) {
        if (serial != code_serial_) return;
        if (codes)
          codes_ = *codes;
        else
          code_error_ = codes.error();
        show_diff();
        Q_EMIT compared();
      });
}

void CompareView::show_diff() {
  if (!codes_) {
    if (!code_error_.empty()) diff_->setPlainText(qstr(code_error_));
    return;
  }
  bool assembly = diff_of_->currentIndex() == 1;
  const std::string& a = assembly ? codes_->first.assembly : codes_->first.llvm_ir;
  const std::string& b = assembly ? codes_->second.assembly : codes_->second.llvm_ir;
  std::string out;
  for (const auto& [op, line] : line_diff(a, b)) out += std::string(1, op) + " " + line + "\n";
  diff_->setPlainText(qstr(out));
}

void CompareView::compare_runs(int64_t a, int64_t b) {
  std::string path = db_path_;
  int serial = ++runs_serial_;
  summary_->setText(QString("comparing runs %1 and %2...").arg(a).arg(b));
  last_.reset();
  save_->setEnabled(false);
  for (auto [box, id] : {std::pair{run_a_, a}, std::pair{run_b_, b}})
    if (int i = box->findData(QVariant::fromValue<qlonglong>(id)); i >= 0) box->setCurrentIndex(i);
  tabs_->setCurrentWidget(runs_table_);
  run_async(
      this, [path, a, b] { return compare_stored_runs(path, a, b); },
      [this, serial](const Expected<reports::Comparison>& c) {
        if (serial != runs_serial_) return; // a newer comparison was asked for
        runs_table_->setSortingEnabled(false);
        runs_table_->setRowCount(0);
        // Rows keep the report's order (worst first) until a header is clicked.
        runs_table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
        if (!c) {
          runs_table_->setSortingEnabled(true);
          summary_->setText(qstr(c.error()).toHtmlEscaped());
          Q_EMIT compared();
          return;
        }
        // `only`: the column of the one side that measured it (A 2, B 3), for rows without d.
        auto add_row = [this](const reports::Measurement& m, const QString& verdict,
                              const reports::Delta* d, int only = 0) {
          int row = runs_table_->rowCount();
          runs_table_->insertRow(row);
          auto num = [](double x, int digits) {
            return new NumberItem(QString::number(x, 'f', digits), x);
          };
          runs_table_->setItem(row, 0, new QTableWidgetItem(reports::to_string(m.section)));
          runs_table_->setItem(row, 1, new QTableWidgetItem(qstr(m.name)));
          auto* v = new QTableWidgetItem(verdict);
          // The medians whenever both sides measured, even where the verdict is unknown (too
          // few samples for a test): a time is never hidden for want of a verdict.
          if (d && d->baseline.median > 0) runs_table_->setItem(row, 2, num(d->baseline.median, 4));
          if (d && d->candidate.median > 0)
            runs_table_->setItem(row, 3, num(d->candidate.median, 4));
          if (!d && !m.samples_ms.empty())
            runs_table_->setItem(row, only, num(beamlab::quantile(m.samples_ms, 0.5), 4));
          if (d && d->verdict != reports::Verdict::unknown) {
            runs_table_->setItem(row, 4, num(100 * d->change, 1));
            runs_table_->setItem(row, 5, num(100 * d->noise, 1));
            v->setToolTip(verdict_text(d->verdict));
          }
          if (d && reports::judged(d->verdict)) {
            runs_table_->setItem(row, 6, num(100 * d->floor, 1));
            if (d->history_runs)
              runs_table_->item(row, 6)->setToolTip(
                  QString("from %1 earlier runs").arg(d->history_runs));
            runs_table_->setItem(row, 7, new NumberItem(p_text(d->p), d->p));
            if (std::optional<QColor> color = verdict_color(d->verdict)) v->setForeground(*color);
          }
          runs_table_->setItem(row, 8, v);
        };
        for (const reports::ComparedRow& r : c->rows)
          add_row(r.candidate, reports::to_string(r.delta.verdict), &r.delta);
        for (const reports::Measurement& m : c->only_baseline) add_row(m, "only in A", nullptr, 2);
        for (const reports::Measurement& m : c->only_candidate) add_row(m, "only in B", nullptr, 3);
        runs_table_->setSortingEnabled(true);
        QString warnings;
        for (const std::string& w : c->warnings)
          warnings += "<div style='color:#d62728'><b>" + qstr(w).toHtmlEscaped() + "</b></div>";
        // One arg() call: a run label holding "%1" must not be read as a placeholder.
        summary_->setText(
            QString("%1<div>%2 -&gt; %3: %4 shared: %5; %6 only in A, %7 only in B.</div>"
                    "<div style='color:#666'>%8 %9</div>")
                .arg(warnings, qstr(c->baseline.title()).toHtmlEscaped(),
                     qstr(c->candidate.title()).toHtmlEscaped(), QString::number(c->rows.size()),
                     qstr(c->counts_text()), QString::number(c->only_baseline.size()),
                     QString::number(c->only_candidate.size()),
                     qstr(reports::describe_rule(c->rule)).toHtmlEscaped(),
                     qstr(c->history_text()).toHtmlEscaped()));
        last_ = *c;
        save_->setEnabled(true);
        Q_EMIT compared();
      });
}

std::optional<QString> CompareView::save_report(const QString& path) const {
  if (!last_) return QString("compare two runs first");
  try {
    std::string file = path.toStdString();
    reports::write_report(file, reports::render(*last_, reports::format_of_file(file)),
                          "the report file");
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return std::nullopt;
}

} // namespace beamlab::gui

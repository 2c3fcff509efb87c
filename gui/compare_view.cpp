// The compare view; see compare_view.hpp.
#include "gui/compare_view.hpp"

#include <map>
#include <sstream>

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include "gui/async.hpp"
#include "gui/style.hpp"
#include "gui/workbench.hpp"
#include "tuner/search.hpp"

namespace beamlab::gui {

namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

QString verdict(const TimingDelta& d) {
  if (!d.significant) return "within noise";
  return d.change < 0 ? "faster" : "slower";
}

} // namespace

std::vector<std::pair<char, std::string>> line_diff(const std::string& a_text,
                                                    const std::string& b_text) {
  std::vector<std::string> a = lines(a_text), b = lines(b_text);
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

TimingDelta timing_delta(const std::vector<double>& a, const std::vector<double>& b) {
  TimingDelta d;
  d.a_ms = tuner::quantile(a, 0.5);
  d.b_ms = tuner::quantile(b, 0.5);
  if (d.a_ms <= 0 || d.b_ms <= 0) return d;
  d.change = (d.b_ms - d.a_ms) / d.a_ms;
  d.noise = std::max(tuner::relative_spread(a), tuner::relative_spread(b));
  d.significant = std::abs(d.change) > d.noise;
  return d;
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
  runs_table_ = new QTableWidget(0, 6);
  runs_table_->setHorizontalHeaderLabels({"Kernel", "A ms", "B ms", "Change", "Noise", "Verdict"});
  runs_table_->horizontalHeader()->setStretchLastSection(true);
  runs_table_->setSortingEnabled(true);

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
  auto* split = new QSplitter;
  split->addWidget(opts_diff_);
  split->addWidget(diff_);
  split->setStretchFactor(1, 3);
  auto* tabs = new QTabWidget;
  tabs->addTab(split, "Candidates: Opts and LLVM IR diff");
  tabs->addTab(runs_table_, "Runs: shared kernels");
  auto* v = new QVBoxLayout(this);
  v->addLayout(row_c);
  v->addLayout(row_r);
  v->addWidget(summary_);
  v->addWidget(tabs, 1);
}

void CompareView::set_tuning(const TuningDetail& d) {
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
}

void CompareView::set_runs(const std::vector<RunRow>& runs) {
  for (QComboBox* c : {run_a_, run_b_}) {
    c->clear();
    for (const RunRow& r : runs)
      c->addItem(
          QString("run %1 %2 %3").arg(r.run.id).arg(qstr(r.run.started_at), qstr(r.run.label)),
          QVariant::fromValue<qlonglong>(r.run.id));
  }
  if (run_b_->count() > 1) run_b_->setCurrentIndex(1);
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
  TimingDelta d = timing_delta(ca->samples_ms, cb->samples_ms);
  summary_->setText(QString("#%1 %2 vs #%3 %4: %5%6% (noise +-%7%): B is %8")
                        .arg(a)
                        .arg(ms_text(d.a_ms))
                        .arg(b)
                        .arg(ms_text(d.b_ms))
                        .arg(d.change >= 0 ? "+" : "")
                        .arg(100 * d.change, 0, 'f', 1)
                        .arg(100 * d.noise, 0, 'f', 1)
                        .arg(verdict(d)));
  int serial = ++code_serial_;
  diff_->setPlainText("compiling both...");
  std::string ast = detail_.row.kernel.ast, name = detail_.row.kernel.name;
  std::vector<Opt> pa = oa ? *oa : std::vector<Opt>{}, pb = ob ? *ob : std::vector<Opt>{};
  run_async(
      this,
      [ast, name, pa, pb] {
        auto x = kernel_code(ast, pa, name), y = kernel_code(ast, pb, name);
        if (!x) return "A: " + x.error();
        if (!y) return "B: " + y.error();
        std::string out;
        for (const auto& [op, line] : line_diff(x->llvm_ir, y->llvm_ir))
          out += std::string(1, op) + " " + line + "\n";
        return out;
      },
      [this, serial](const std::string& text) {
        if (serial != code_serial_) return;
        diff_->setPlainText(qstr(text));
        Q_EMIT compared();
      });
}

void CompareView::compare_runs(int64_t a, int64_t b) {
  std::string path = db_path_;
  summary_->setText(QString("loading runs %1 and %2...").arg(a).arg(b));
  run_async(
      this, [path, a, b] { return std::make_pair(load_run(path, a), load_run(path, b)); },
      [this, a, b](const std::pair<Expected<RunDetail>, Expected<RunDetail>>& r) {
        if (!r.first || !r.second) {
          summary_->setText(qstr(!r.first ? r.first.error() : r.second.error()));
          return;
        }
        std::map<std::string, const KernelRow*> in_a;
        for (const KernelRow& k : r.first->kernels) in_a[k.kernel.hash] = &k;
        runs_table_->setSortingEnabled(false);
        runs_table_->setRowCount(0);
        int faster = 0, slower = 0, same = 0, only_b = 0;
        for (const KernelRow& kb : r.second->kernels) {
          auto it = in_a.find(kb.kernel.hash);
          if (it == in_a.end() || !it->second->tuning.winner_ms || !kb.tuning.winner_ms) {
            ++only_b;
            continue;
          }
          const db::Tuning &ta = it->second->tuning, &tb = kb.tuning;
          double change = (*tb.winner_ms - *ta.winner_ms) / *ta.winner_ms;
          double noise = std::max(ta.noise, tb.noise);
          QString v = std::abs(change) <= noise ? "within noise" : change < 0 ? "faster" : "slower";
          (v == "faster" ? faster : v == "slower" ? slower : same) += 1;
          int row = runs_table_->rowCount();
          runs_table_->insertRow(row);
          auto num = [](double x, int digits) {
            auto* item = new QTableWidgetItem;
            item->setData(Qt::DisplayRole, QString::number(x, 'f', digits).toDouble());
            return item;
          };
          runs_table_->setItem(row, 0, new QTableWidgetItem(qstr(kb.kernel.name)));
          runs_table_->setItem(row, 1, num(*ta.winner_ms, 4));
          runs_table_->setItem(row, 2, num(*tb.winner_ms, 4));
          runs_table_->setItem(row, 3, num(100 * change, 1));
          runs_table_->setItem(row, 4, num(100 * noise, 1));
          runs_table_->setItem(row, 5, new QTableWidgetItem(v));
        }
        runs_table_->setSortingEnabled(true);
        QString flag = r.first->run.device_id != r.second->run.device_id
                           ? "<b style='color:#d62728'>different devices</b>: "
                           : "";
        summary_->setText(
            QString("%1run %2 -> run %3: %4 shared kernels: %5 faster, %6 slower, "
                    "%7 within noise; %8 only in run %3 (change relative to A; noise: "
                    "the larger of the two searches' winner spreads)")
                .arg(flag)
                .arg(a)
                .arg(b)
                .arg(runs_table_->rowCount())
                .arg(faster)
                .arg(slower)
                .arg(same)
                .arg(only_b));
        Q_EMIT compared();
      });
}

} // namespace beamlab::gui

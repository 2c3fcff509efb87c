// The live tuning view: start BEAM on the selected kernel or a corpus (width and budget), and
// watch it. A chart of every candidate's time as it settles, coloured by status, with the
// best-so-far curve against wall time; the beam as a tree (iteration x rank) whose candidates
// open in the details pane; a strip with each sandbox's state (compiling, timing, idle,
// restarting). Pause and Cancel keep everything measured: candidates are journaled as they
// settle. The session runs on its own thread; a 10 Hz timer drains its events in batches, so
// thousands of candidates never block the UI thread.
#pragma once

#include <tuple>

#include <map>
#include <memory>

#include <QChartView>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QScatterSeries>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QTreeWidget>
#include <QValueAxis>
#include <QWidget>

#include "gui/style.hpp"
#include "gui/tuning_session.hpp"

namespace beamlab::gui {

/// One box per sandbox, coloured by what its thread does.
class SandboxStrip : public QWidget {
public:
  explicit SandboxStrip(QWidget* parent = nullptr);
  void set_activity(const std::vector<tuner::SlotActivity>& a);
  /// "compiling", "timing", "idle" or "restarting" per sandbox.
  QStringList states() const { return states_; }
  QSize sizeHint() const override { return {400, 28}; }

protected:
  void paintEvent(QPaintEvent*) override;

private:
  QStringList states_;
  std::vector<int> restarts_;
  std::vector<qint64> restarted_at_; ///< ms timestamps: "restarting" shows for a second
};

class LiveView : public QWidget {
  Q_OBJECT
public:
  explicit LiveView(QWidget* parent = nullptr);
  ~LiveView() override;

  void set_database(const std::string& path) { db_path_ = path; }
  /// The kernel "Tune selected kernel" searches (from the Runs or Kernel view).
  void set_kernel(std::optional<KernelTask> task);
  /// Several kernels for one session (a program's costliest), sharing its budget.
  void set_kernels(std::vector<KernelTask> tasks);
  void set_corpus(const QString& path);

  /// Starts a session on the kernel (or the corpus when `corpus` is set); false with the reason
  /// in the status line when it can't.
  bool start(bool corpus);
  /// Resumes unfinished tuning run `run_id` (begun here, by `beamlab tune` or by Python) with
  /// its own kernels and settings; false with the reason in the status line when it can't.
  bool resume_run(int64_t run_id);
  void pause_or_resume();
  void cancel();
  bool running() const { return session_ && !session_->finished(); }
  void set_beam(int w) { beam_->setValue(w); }
  void set_budget(double s) { budget_->setValue(s); }

  /// For tests and the benchmark: points per status class, the best-so-far curve, the tree.
  int points(StatusClass c) const;
  int best_points() const { return best_->count(); }
  /// The time axis's range (log scale).
  std::pair<double, double> time_range() const { return {ay_->min(), ay_->max()}; }
  QTreeWidget* beam_tree() const { return tree_; }
  /// What each kind of Opt step gained: one row per Opt kind a child added to its parent
  /// (steps, median and best speedup over the parent, how many were faster).
  QTableWidget* step_table() const { return steps_; }
  /// Opens the candidate nearest `p` (wall s, ms) of status class `c`, as a click does.
  void pick_point(StatusClass c, const QPointF& p);
  SandboxStrip* strip() const { return strip_; }
  QString status_text() const { return status_->text(); }
  QString start_text() const { return start_kernel_->text(); }
  /// The budget bar's reading: its value, its maximum and its text.
  std::tuple<int, int, QString> budget_reading() const {
    return {budget_bar_->value(), budget_bar_->maximum(), budget_bar_->text()};
  }
  int64_t run_id() const { return session_ ? session_->run_id() : 0; }
  /// Applies events as the timer would (the benchmark feeds synthetic ones).
  void apply(const std::vector<LiveEvent>& events);

Q_SIGNALS:
  /// The session ended (finished, cancelled or failed): the database has changed.
  void session_finished();
  /// A candidate picked in the tree (Enter, double-click): open its plan on kernel `hash`.
  void candidate_picked(const QString& hash, const QString& opts);

private:
  void poll();
  void reset_chart();
  bool can_start(); ///< none running and a database open (else the status line says why)
  void launch();    ///< starts session_ and puts the controls in their running state
  void update_tree(const std::string& kernel, int iteration);
  void update_steps();
  /// The bar against the budget: the session's wall time, and past the budget, by how much.
  void update_budget_bar();

  std::string db_path_;
  std::vector<KernelTask> tasks_; ///< what the kernel button tunes
  QString tune_text() const;      ///< that button's text while nothing runs
  std::unique_ptr<TuningSession> session_;
  QTimer timer_;
  QSpinBox* beam_;
  QDoubleSpinBox* budget_;
  QLineEdit* corpus_;
  QPushButton *start_kernel_, *start_corpus_, *pause_, *cancel_;
  QLabel *status_, *details_;
  QChartView* chart_view_;
  QValueAxis* ax_;
  QLogValueAxis* ay_; ///< log: a few slow outliers must not flatten the search
  std::map<StatusClass, QScatterSeries*> series_;
  QLineSeries* best_;
  std::map<StatusClass, QList<QPointF>> shown_; ///< every series' points
  QList<QPointF> shown_best_;
  QTreeWidget* tree_;
  QTableWidget* steps_;
  QProgressBar* budget_bar_;
  double budget_s_ = 0; ///< the running session's (0: a resumed run's own, not shown here)
  QElapsedTimer since_start_;
  bool cancelled_ = false;
  QString running_name_; ///< what the running session tunes
  /// Per series point (same order as shown_): the kernel's hash and the candidate's Opts.
  std::map<StatusClass, std::vector<std::pair<std::string, std::string>>> point_plans_;
  SandboxStrip* strip_;
  double max_t_ = 1, min_ms_ = 0, max_ms_ = 0;
  int settled_ = 0;
  /// Per kernel: the settled candidates (id -> event) for the beam tree.
  std::map<std::string, std::map<int, LiveEvent>> candidates_;
  std::string current_kernel_;
  int beam_width_ = 4;
};

} // namespace beamlab::gui

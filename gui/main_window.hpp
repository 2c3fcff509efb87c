// The workbench window: the views as tabs over one database.
//
//   Runs        the runs (newest first) and the selected run's kernels, sortable and filtered
//   Kernel      one kernel's search: axes, Opts editor, IR, assembly, candidates, history
//   Live        BEAM on the selected kernel or a corpus, as it runs
//   Schedule    a program's kernels as a dependency graph (Graphviz)
//   Timing      a program execution per kernel, and across cores
//   Roofline    a kernel's candidates on the device's roofline
//   Compare     two candidates, or two runs
//
// Every query runs off the UI thread. A timer polls the file's data_version, so a run another
// process is writing appears and updates live. A missing or damaged database is a message in
// the window, never a crash. The window's layout and the last database are remembered.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>

#include "gui/compare_view.hpp"
#include "gui/kernel_view.hpp"
#include "gui/live_view.hpp"
#include "gui/models.hpp"
#include "gui/roofline_view.hpp"
#include "gui/schedule_view.hpp"
#include "gui/timing_view.hpp"
#include "gui/trend_view.hpp"

namespace beamlab::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  enum Tab { runs_tab, kernel_tab, live_tab, schedule_tab, timing_tab, roofline_tab, compare_tab };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// How open_database treats a missing file.
  enum class OpenMode { create, existing };
  /// Opens `path` (with `create`, made when missing, as the CLI does). A file that can't be
  /// opened (missing, foreign, damaged) is an error in the window and changes nothing: the
  /// database shown before stays shown and remembered.
  void open_database(const QString& path, OpenMode mode = OpenMode::existing);
  const std::string& database() const { return db_path_; }
  /// Reloads the runs (and the open run and kernel) now.
  void reload();
  void select_run(int64_t run_id);
  /// Opens the kernel of tuning `id` in the Kernel view.
  void open_tuning(int64_t tuning_id);
  /// Profiles a program for the Schedule and Timing views: a workload ("matmul M=64"), a model
  /// ("resnet18.onnx"), a kernel ("k.ir") or an expression ("a.relu(); a=64x64"); see
  /// parse_program in program.hpp.
  void profile(const QString& spec);
  /// Starts a BEAM search of kernel `key_hex` of the profiled program in Live tuning (no corpus
  /// file needed); false, with the reason shown, when the program has no such kernel.
  bool tune_program_kernel(const QString& key_hex);
  /// The same for several kernels in one session (Timing's "Tune the N costliest").
  bool tune_program_kernels(const QStringList& keys_hex);
  /// Writes the current view's table (.csv, .json) or chart (.png, .svg) to `path` (File >
  /// Export, Ctrl+E): the one that has the focus, else the view's first. The error, also
  /// shown, when there is none or the file can't be written.
  std::optional<QString> export_current(const QString& path);
  /// Resumes unfinished tuning run `run_id` in Live tuning (the Runs view's context menu).
  bool resume_run(int64_t run_id);
  /// The Program box's last profile (none while one is being made, or after an error).
  const std::optional<ProgramProfile>& program_profile() const { return program_profile_; }

  RunsModel* runs_model() const { return runs_; }
  KernelsModel* kernels_model() const { return kernels_; }
  QSortFilterProxyModel* kernels_proxy() const { return kernels_proxy_; }
  KernelView* kernel_view() const { return kernel_view_; }
  LiveView* live_view() const { return live_view_; }
  ScheduleView* schedule_view() const { return schedule_view_; }
  TimingView* timing_view() const { return timing_view_; }
  RoofLineView* roofline_view() const { return roofline_view_; }
  CompareView* compare_view() const { return compare_view_; }
  QTabWidget* tabs() const { return tabs_; }
  QString message() const { return message_->text(); }
  QTableView* runs_view() const { return runs_view_; }
  QTableView* kernels_view() const { return kernels_view_; }
  /// A bench run's measurements, shown in the kernels' place when a bench run is selected.
  MeasurementsModel* measurements_model() const { return measurements_; }
  QTableView* measurements_view() const { return measurements_view_; }
  /// A measurement's trend across the bench runs of the selected run's device (shown in its
  /// own window; null until the first).
  TrendView* trend_view() const { return trend_view_; }
  void show_trend(reports::Section section, const std::string& key);

Q_SIGNALS:
  void runs_loaded();
  void run_loaded();
  void tuning_loaded();
  void program_loaded();
  void trend_loaded();

protected:
  void closeEvent(QCloseEvent* e) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  /// What an error banner is about: a later success of the same kind clears it (a good
  /// profile a failed profile's, a kernel that opens a failed kernel's); an action's (a search
  /// that could not start) goes with the next load the user asked for, not a background poll.
  enum class Cause { database, runs, poll, kernel, program, action };
  void show_error(const QString& text, Cause cause);
  /// Clears the banner, back to the database's path, if it is about one of `causes`.
  void clear_error(std::initializer_list<Cause> causes);
  void poll_changes();
  /// Opens kernel `hash`'s newest search, or for an untuned kernel of the profiled program
  /// readies Live tuning with it (ready_program_kernel).
  void open_kernel_by_hash(const QString& hash);
  const ProgramKernel* program_kernel(const QString& key_hex) const;
  /// Live tuning with kernel `key_hex` of the profiled program, not started; false when the
  /// program has no such kernel.
  bool ready_program_kernel(const QString& key_hex);
  /// Starts a search of the Runs view's selected kernel in Live tuning (T).
  void tune_selected_kernel();
  /// Opens the newest search of kernel `hash` with `opts` in the editor.
  void open_candidate(const QString& hash, const QString& opts);
  /// What the kernels table can't say about run `r` (a bench run, plans tried by hand).
  QString run_note(const RunDetail& r) const;

  std::string db_path_;
  std::shared_ptr<ChangeWatch> watch_;
  bool polling_ = false;
  std::optional<Cause> error_cause_; ///< the banner's, while one is shown
  int poll_failures_ = 0;            ///< consecutive failed polls: one is a retry, not a banner
  int64_t run_id_ = 0, tuning_id_ = 0;
  std::vector<KernelRow> run_kernels_;
  std::optional<ProgramProfile> program_profile_; ///< the Program box's last profile
  QTimer poll_timer_;
  QTabWidget* tabs_;
  QLabel* message_;
  QLabel* run_note_;
  std::optional<QString> pending_opts_; ///< a plan to show once the tuning opening loads
  RunsModel* runs_;
  KernelsModel* kernels_;
  MeasurementsModel* measurements_;
  QSortFilterProxyModel *runs_proxy_, *kernels_proxy_, *measurements_proxy_;
  QTableView *runs_view_, *kernels_view_, *measurements_view_;
  TrendView* trend_view_ = nullptr;
  int trend_serial_ = 0; ///< the newest trend asked for (an older answer is dropped)
  QLineEdit* filter_;
  QComboBox* program_;
  KernelView* kernel_view_;
  LiveView* live_view_;
  ScheduleView* schedule_view_;
  TimingView* timing_view_;
  RoofLineView* roofline_view_;
  CompareView* compare_view_;
};

/// The database a start with no argument opens: the one opened last (remembered as an absolute
/// path), which must still exist (moved or deleted, it is an error, never a new empty file where
/// the window happens to start), else the default path, created on first use.
std::pair<QString, MainWindow::OpenMode> remembered_database();

} // namespace beamlab::gui

// The schedule graph: a program's kernels as a dependency graph. Graphviz's dot lays it out;
// it is drawn in a QGraphicsScene with each kernel a box coloured (a cool-to-hot ramp) and
// sized by its time and labelled with its name and time, each edge labelled with the size of
// the buffer it carries, and program inputs as small grey ellipses. A model's kernels also
// name the model nodes they compute. Clicking a kernel (or pressing Enter on the selected
// one) activates it; T or its context menu tunes it; ctrl+wheel zooms.
#pragma once

#include <QPointF>
#include <QString>
#include <QWidget>

#include <vector>

#include "gui/program.hpp"

class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QStackedWidget;

namespace beamlab::gui {

class ScheduleView : public QWidget {
  Q_OBJECT
public:
  explicit ScheduleView(QWidget* parent = nullptr);

  /// Lays out and draws `program`'s kernels, replacing what was shown.
  void set_program(const ProgramProfile& program);
  /// Shows `message` (e.g. "profiling..." or an error) instead of a graph.
  void show_message(const QString& message);
  /// Selects and centres the kernel with this key (hex), if the graph has it.
  void select_kernel(const QString& key_hex);

  QGraphicsScene* scene() const { return scene_; }
  QGraphicsView* view() const { return view_; }
  /// Kernel nodes in the graph (program inputs not counted).
  int node_count() const { return static_cast<int>(keys_.size()); }
  /// The scene position of kernel `kernel`'s node centre, from the Graphviz layout.
  QPointF node_center(int kernel) const;
  /// The message shown instead of a graph ("" while a graph is shown).
  QString message() const;
  /// Kernel `kernel`'s time line in its box: "0.290 ms, 7.1%" (its share of the program's
  /// time, as the Timing table gives it).
  QString node_time(int kernel) const {
    return kernel >= 0 && kernel < node_count() ? times_[static_cast<size_t>(kernel)] : QString();
  }
  /// The graph's legend (empty with no graph).
  QString legend() const { return legend_; }

Q_SIGNALS:
  /// A kernel was clicked, or Enter was pressed with it selected.
  void kernel_activated(const QString& key_hex);
  /// "Tune this kernel" from a kernel's context menu, or T with it selected.
  void tune_requested(const QString& key_hex);

private:
  void activate(int kernel);
  /// The selected kernel node's index, or -1.
  int selected() const;

  QStackedWidget* stack_ = nullptr;
  QLabel* message_ = nullptr;
  QGraphicsView* view_ = nullptr;
  QGraphicsScene* scene_ = nullptr;
  std::vector<QString> keys_;    ///< per kernel node
  std::vector<QPointF> centers_; ///< per kernel node
  std::vector<QString> times_;   ///< per kernel node
  QString legend_;
};

} // namespace beamlab::gui

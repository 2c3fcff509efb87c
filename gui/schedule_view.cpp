// The schedule graph; see schedule_view.hpp.
#include "gui/schedule_view.hpp"

#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QPainterPath>
#include <QStackedWidget>
#include <QStyleOptionGraphicsItem>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <fmt/format.h>

// Last: Graphviz's headers define macros (TRUE, MAX, ...) that must not reach Qt's.
#include <graphviz/gvc.h>

namespace beamlab::gui {
namespace {

// ---- Layout by Graphviz ----------------------------------------------------------------------

// Sizes in scene units, which are Graphviz points (72 per inch).
struct GraphNode {
  double width = 0, height = 0;
  bool ellipse = false; // a program input
  std::string tooltip;
};
struct GraphEdge {
  int tail = 0, head = 0;
  std::string label;
};

// Where dot put everything, in scene coordinates (y grows downwards).
struct GraphLayout {
  std::vector<QPointF> centers;      // per node
  std::vector<QPainterPath> curves;  // per edge
  std::vector<QPolygonF> arrows;     // per edge, empty without an arrowhead
  std::vector<QPointF> label_points; // per edge, the centre of its label
  QRectF bounds;
};

// libcgraph takes char* where it only reads; these strings outlive each call.
char* cstr(const char* s) { return const_cast<char*>(s); }
void set_attr(void* object, const char* name, const std::string& value) {
  agsafeset(object, cstr(name), cstr(value.c_str()), cstr(""));
}
std::string inches(double points) { return fmt::format("{:.3f}", points / 72.0); }

QPolygonF arrowhead(QPointF base, QPointF tip) {
  QPointF d = tip - base;
  QPointF n(-d.y() * 0.45, d.x() * 0.45);
  return QPolygonF({tip, base + n, base - n});
}

// Graphviz's layout state is process-wide in places, so one layout runs at a time.
std::mutex& graphviz_mutex() {
  static std::mutex mu;
  return mu;
}

// The process's one Graphviz context, created on first use and deliberately never freed (an
// explicit cache, like the compile cache): Graphviz's pango text-layout plugin keeps a static
// pointer to a font name the context owns, so after gvFreeContext the next context's first
// label size reads freed memory (AddressSanitizer shows it with Graphviz 2.43). Each layout
// is still freed (gvFreeLayout, agclose). Use under graphviz_mutex().
GVC_t* graphviz_context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

// Lays `nodes` and `edges` out top to bottom with dot. Each node keeps its given size
// (fixedsize); edge labels take room of their own between the ranks.
GraphLayout layout_graph(const std::vector<GraphNode>& nodes, const std::vector<GraphEdge>& edges) {
  std::lock_guard<std::mutex> lock(graphviz_mutex());
  GVC_t* gvc = graphviz_context();
  Agraph_t* g = agopen(cstr("schedule"), Agdirected, nullptr);
  set_attr(g, "rankdir", "TB");
  set_attr(g, "nodesep", "0.45");
  set_attr(g, "ranksep", "0.35");
  std::vector<Agnode_t*> gv_nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Agnode_t* n = agnode(g, cstr(fmt::format("n{}", i).c_str()), 1);
    set_attr(n, "shape", nodes[i].ellipse ? "ellipse" : "box");
    set_attr(n, "fixedsize", "true");
    set_attr(n, "label", "");
    set_attr(n, "width", inches(nodes[i].width));
    set_attr(n, "height", inches(nodes[i].height));
    gv_nodes.push_back(n);
  }
  std::vector<Agedge_t*> gv_edges;
  for (const GraphEdge& e : edges) {
    Agedge_t* edge = agedge(g, gv_nodes[static_cast<size_t>(e.tail)],
                            gv_nodes[static_cast<size_t>(e.head)], nullptr, 1);
    set_attr(edge, "label", e.label);
    // Room for the label as Qt draws it (a sans face, wider than Graphviz's default Times):
    // at 8 points, neighbouring edges' labels ran into each other.
    set_attr(edge, "fontsize", "11");
    gv_edges.push_back(edge);
  }
  GraphLayout out;
  if (gvLayout(gvc, g, "dot") == 0) {
    boxf bb = GD_bb(g);
    auto to_scene = [&](pointf p) { return QPointF(p.x - bb.LL.x, bb.UR.y - p.y); };
    out.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
    for (Agnode_t* n : gv_nodes) out.centers.push_back(to_scene(ND_coord(n)));
    for (Agedge_t* e : gv_edges) {
      QPainterPath path;
      QPolygonF arrow;
      for (int b = 0; ED_spl(e) && b < ED_spl(e)->size; ++b) {
        const bezier& bz = ED_spl(e)->list[b];
        if (bz.size == 0) continue;
        path.moveTo(to_scene(bz.list[0]));
        for (int i = 1; i + 2 < bz.size; i += 3)
          path.cubicTo(to_scene(bz.list[i]), to_scene(bz.list[i + 1]), to_scene(bz.list[i + 2]));
        if (bz.eflag) arrow = arrowhead(to_scene(bz.list[bz.size - 1]), to_scene(bz.ep));
      }
      out.curves.push_back(path);
      out.arrows.push_back(arrow);
      out.label_points.push_back(ED_label(e) ? to_scene(ED_label(e)->pos)
                                             : path.pointAtPercent(0.5));
    }
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  return out;
}

// The data a kernel node's item carries.
constexpr int kKernelKey = 0;
constexpr int kKernelIndex = 1;

// ---- Items -----------------------------------------------------------------------------------

// Light yellow for the cheapest kernel through orange to dark red for the most expensive.
QColor ramp_color(double fraction) {
  static const QColor stops[] = {
      {255, 255, 204}, {254, 217, 118}, {253, 141, 60}, {227, 26, 28}, {128, 0, 38}};
  constexpr int n = static_cast<int>(std::size(stops));
  double x = std::clamp(fraction, 0.0, 1.0) * (n - 1);
  int i = std::min(static_cast<int>(x), n - 2);
  double t = x - i;
  const QColor &a = stops[i], &b = stops[i + 1];
  auto mix = [t](int u, int v) { return static_cast<int>(std::lround(u + (v - u) * t)); };
  return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

bool is_dark(const QColor& c) {
  return 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue() < 140;
}

QFont name_font() {
  QFont f;
  f.setPointSizeF(9);
  f.setBold(true);
  return f;
}
QFont time_font() {
  QFont f;
  f.setPointSizeF(8);
  return f;
}

QFont nodes_font() {
  QFont f;
  f.setPointSizeF(7.5);
  f.setItalic(true);
  return f;
}

// A kernel's box: a rounded rectangle centred on its position, its name over its time and,
// for a model, the model nodes it computes. Its context menu opens or tunes it.
class KernelItem : public QGraphicsItem {
public:
  struct Actions {
    std::function<void()> open, tune;
  };
  KernelItem(QSizeF size, QColor fill, QString name, QString time, QString nodes, Actions actions)
      : size_(size), fill_(fill), name_(std::move(name)), time_(std::move(time)),
        nodes_(std::move(nodes)), actions_(std::move(actions)) {
    setFlag(ItemIsSelectable);
    setCursor(Qt::PointingHandCursor);
  }
  QRectF boundingRect() const override {
    return QRectF(-size_.width() / 2 - 2, -size_.height() / 2 - 2, size_.width() + 4,
                  size_.height() + 4);
  }
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
    QRectF box(-size_.width() / 2, -size_.height() / 2, size_.width(), size_.height());
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(isSelected() ? QPen(QColor(20, 90, 200), 3) : QPen(QColor(90, 90, 90), 1));
    p->setBrush(fill_);
    p->drawRoundedRect(box, 5, 5);
    p->setPen(is_dark(fill_) ? Qt::white : Qt::black);
    // The text block (name, time, nodes) centred vertically in the box.
    QFontMetricsF nm(name_font()), tm(time_font()), dm(nodes_font());
    double h = nm.height() + tm.height() + (nodes_.isEmpty() ? 0 : dm.height());
    QRectF line = box.adjusted(4, 0, -4, 0);
    line.setTop(box.center().y() - h / 2);
    auto draw = [&](const QFont& f, const QFontMetricsF& m, const QString& text) {
      line.setHeight(m.height());
      p->setFont(f);
      p->drawText(line, Qt::AlignHCenter | Qt::AlignVCenter,
                  m.elidedText(text, Qt::ElideMiddle, line.width()));
      line.translate(0, m.height());
    };
    draw(name_font(), nm, name_);
    draw(time_font(), tm, time_);
    if (!nodes_.isEmpty()) draw(nodes_font(), dm, nodes_);
  }

protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override {
    QGraphicsItem::mousePressEvent(event); // selects
    if (event->button() == Qt::LeftButton) actions_.open();
  }
  void contextMenuEvent(QGraphicsSceneContextMenuEvent* event) override {
    setSelected(true);
    QMenu menu;
    QAction* open = menu.addAction("Open its tuning (Enter)");
    QAction* tune = menu.addAction("Tune this kernel (T)");
    QAction* picked = menu.exec(event->screenPos());
    if (picked == open) actions_.open();
    if (picked == tune) actions_.tune();
  }

private:
  QSizeF size_;
  QColor fill_;
  QString name_, time_, nodes_;
  Actions actions_;
};

// The view: ctrl+wheel zooms, Enter activates the selection, T tunes it, and the graph fits
// the window until the user zooms.
class GraphView : public QGraphicsView {
public:
  GraphView(QGraphicsScene* scene, std::function<void()> on_enter, std::function<void()> on_tune)
      : QGraphicsView(scene), on_enter_(std::move(on_enter)), on_tune_(std::move(on_tune)) {
    setRenderHint(QPainter::Antialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  }
  void fit() {
    user_zoomed_ = false;
    fit_if_auto();
  }

protected:
  void wheelEvent(QWheelEvent* event) override {
    if (!(event->modifiers() & Qt::ControlModifier)) return QGraphicsView::wheelEvent(event);
    user_zoomed_ = true;
    double factor = std::pow(1.0015, event->angleDelta().y());
    scale(factor, factor);
    event->accept();
  }
  void keyPressEvent(QKeyEvent* event) override {
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) return on_enter_();
    if (event->key() == Qt::Key_T) return on_tune_();
    QGraphicsView::keyPressEvent(event);
  }
  void resizeEvent(QResizeEvent* event) override {
    QGraphicsView::resizeEvent(event);
    fit_if_auto();
  }

private:
  // Shrinks a graph bigger than the window to fit it; never magnifies a small one.
  void fit_if_auto() {
    if (user_zoomed_ || !scene()) return;
    resetTransform();
    QRectF r = sceneRect();
    QSizeF v = viewport()->size();
    if (r.isEmpty() || v.isEmpty()) return;
    double s = std::min({1.0, v.width() / r.width(), v.height() / r.height()});
    if (s < 1.0) scale(s, s);
  }

  std::function<void()> on_enter_, on_tune_;
  bool user_zoomed_ = false;
};

QString tooltip(const ProgramKernel& k) {
  std::string nodes;
  for (const std::string& n : k.nodes) nodes += "\n  " + n;
  return QString::fromStdString(fmt::format(
      "{}\nkey {}\n{}, {:.2f} GFLOP/s, {:.2f} GB/s\n{} FLOPs, {} moved\nopts: {}{}{}", k.name,
      k.key, kernel_time_text(k), k.gflops, k.gbps, k.flops, format_bytes(k.bytes),
      k.opts.empty() ? "-" : k.opts, nodes.empty() ? "" : "\nmodel nodes:", nodes));
}

// A kernel's model nodes on one line: the first and the last when there are many.
QString nodes_line(const ProgramKernel& k) {
  return QString::fromStdString(join_names(k.nodes, 2));
}

// The graph of a program: node i is kernel i, then one node per distinct program input; an
// edge per input slot, labelled with the buffer's size. Kernel boxes fit their two label
// lines and grow with the kernel's share of the slowest one's time.
struct ScheduleGraph {
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  std::vector<QString> times; // per kernel, its time label
};

ScheduleGraph build_graph(const ProgramProfile& program, double max_ms) {
  ScheduleGraph g;
  QFontMetricsF name_metrics(name_font()), time_metrics(time_font()), nodes_metrics(nodes_font());
  for (const ProgramKernel& k : program.kernels) {
    // Its time and its share of the program's, the Timing table's figures.
    QString time = QString::fromStdString(
        k.once ? kernel_time_text(k)
               : fmt::format("{}, {}", kernel_time_text(k), share_text(k, program.total_ms)));
    double text_w = std::max(name_metrics.horizontalAdvance(QString::fromStdString(k.name)),
                             time_metrics.horizontalAdvance(time));
    double text_h = name_metrics.height() + time_metrics.height();
    if (!k.nodes.empty()) { // long node names are elided in the middle past 220 points
      text_w = std::max(text_w, std::min(220.0, nodes_metrics.horizontalAdvance(nodes_line(k))));
      text_h += nodes_metrics.height();
    }
    // Area grows with time: the heavy kernels stand out even before reading the labels.
    double weight = max_ms > 0 ? std::sqrt(k.ms / max_ms) : 0;
    g.nodes.push_back({text_w + 16 + 70 * weight, text_h + 8 + 26 * weight, false, k.name});
    g.times.push_back(time);
  }
  std::map<int64_t, int> input_node; // BUFFER id -> node
  for (size_t i = 0; i < program.kernels.size(); ++i) {
    const ProgramKernel& k = program.kernels[i];
    for (size_t s = 0; s < k.inputs.size(); ++s) {
      std::string size = s < k.input_bytes.size() ? format_bytes(k.input_bytes[s]) : "";
      int tail = k.inputs[s];
      if (tail < 0) {
        int64_t id = s < k.input_buffers.size() ? k.input_buffers[s] : -1 - static_cast<int64_t>(s);
        auto [it, fresh] = input_node.emplace(id, static_cast<int>(g.nodes.size()));
        if (fresh) g.nodes.push_back({26, 18, true, size});
        tail = it->second;
      }
      g.edges.push_back({tail, static_cast<int>(i), size});
    }
  }
  return g;
}

} // namespace

ScheduleView::ScheduleView(QWidget* parent) : QWidget(parent) {
  scene_ = new QGraphicsScene(this);
  scene_->setBackgroundBrush(Qt::white);
  auto* view = new GraphView(
      scene_, [this] { activate(selected()); },
      [this] {
        if (int k = selected(); k >= 0) Q_EMIT tune_requested(keys_[static_cast<size_t>(k)]);
      });
  view_ = view;
  message_ = new QLabel(this);
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(message_);
  stack_->addWidget(view_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(stack_);
  show_message(tr("No program yet. Type one in the Program box above and press Enter:\n"
                  "a workload (matmul M=64 N=64 K=64), an ONNX model (resnet18.onnx),\n"
                  "a kernel's IR text (k.ir) or an expression (a.relu(); a=64x64);\n"
                  "or open a model or kernel file with File > Open model or kernel (Ctrl+M)."));
}

QString ScheduleView::message() const {
  return stack_->currentWidget() == message_ ? message_->text() : QString();
}

void ScheduleView::show_message(const QString& message) {
  scene_->clear();
  legend_.clear();
  keys_.clear();
  centers_.clear();
  times_.clear();
  message_->setText(message);
  stack_->setCurrentWidget(message_);
}

void ScheduleView::set_program(const ProgramProfile& program) {
  show_message({});
  if (program.kernels.empty()) return show_message(tr("The program has no kernels."));
  double max_ms = 0;
  for (const ProgramKernel& k : program.kernels) max_ms = std::max(max_ms, k.ms);
  ScheduleGraph graph = build_graph(program, max_ms);
  const std::vector<GraphNode>& nodes = graph.nodes;
  const std::vector<GraphEdge>& edges = graph.edges;
  GraphLayout layout = layout_graph(nodes, edges);
  if (layout.centers.size() != nodes.size())
    return show_message(tr("Graphviz could not lay the schedule out."));

  for (size_t e = 0; e < edges.size(); ++e) {
    QPen pen(QColor(110, 110, 110), 1.2);
    scene_->addPath(layout.curves[e], pen)->setZValue(0);
    if (!layout.arrows[e].isEmpty())
      scene_->addPolygon(layout.arrows[e], pen, QColor(110, 110, 110))->setZValue(0);
    QGraphicsSimpleTextItem* label =
        scene_->addSimpleText(QString::fromStdString(edges[e].label), time_font());
    label->setBrush(QColor(70, 70, 70));
    label->setPos(layout.label_points[e] - label->boundingRect().center());
    label->setZValue(1);
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (!nodes[n].ellipse) continue;
    QRectF r(-nodes[n].width / 2, -nodes[n].height / 2, nodes[n].width, nodes[n].height);
    auto* item = scene_->addEllipse(r, QPen(QColor(150, 150, 150)), QColor(215, 215, 215));
    item->setPos(layout.centers[n]);
    item->setToolTip(tr("program input, %1").arg(QString::fromStdString(nodes[n].tooltip)));
    item->setZValue(2);
    QGraphicsSimpleTextItem* label = scene_->addSimpleText(tr("in"), time_font());
    label->setBrush(QColor(70, 70, 70));
    label->setPos(layout.centers[n] - label->boundingRect().center());
    label->setZValue(3);
  }
  for (size_t i = 0; i < program.kernels.size(); ++i) {
    const ProgramKernel& k = program.kernels[i];
    // Coloured by its share of the program's time against the largest share; a kernel of
    // constants costs no run and is grey.
    QColor fill = k.once ? QColor(225, 225, 225) : ramp_color(max_ms > 0 ? k.ms / max_ms : 0);
    auto* item = new KernelItem(QSizeF(nodes[i].width, nodes[i].height), fill,
                                QString::fromStdString(k.name), graph.times[i], nodes_line(k),
                                {[this, i] { activate(static_cast<int>(i)); },
                                 [this, i] { Q_EMIT tune_requested(keys_[i]); }});
    item->setPos(layout.centers[i]);
    item->setToolTip(tooltip(k));
    item->setZValue(2);
    item->setData(kKernelKey, QString::fromStdString(k.key));
    item->setData(kKernelIndex, static_cast<int>(i));
    scene_->addItem(item);
    keys_.push_back(QString::fromStdString(k.key));
    centers_.push_back(layout.centers[i]);
    times_.push_back(graph.times[i]);
  }
  QGraphicsSimpleTextItem* title = scene_->addSimpleText(QString::fromStdString(
      fmt::format("{} ({}), {} kernel(s), {} in all, {} thread(s)", program.workload, program.dtype,
                  program.kernels.size(), format_ms(program.total_ms), program.threads)));
  title->setPos(0, -title->boundingRect().height() - 10);
  // The legend, under the title: what the colours, shapes and labels mean, what a click does
  // (an untuned kernel's readies Live tuning with it) and how to zoom.
  QGraphicsSimpleTextItem* legend = scene_->addSimpleText(
      tr("colour and size: the kernel's share of the program's time (Timing's share column), "
         "light yellow (least) to dark red (most); grey boxes: kernels of constants, run once - "
         "grey ovals (in): the program's inputs - edge labels: the bytes passed on\n"
         "click or Enter: open the kernel's search (untuned: ready one in Live tuning) - "
         "right-click or T: tune it now - Ctrl+wheel: zoom, drag: pan"),
      time_font());
  legend->setBrush(QColor(90, 90, 90));
  legend->setPos(0, title->pos().y() - legend->boundingRect().height() - 6);
  legend_ = legend->text();
  scene_->setSceneRect(scene_->itemsBoundingRect().adjusted(-12, -12, 12, 12));
  stack_->setCurrentWidget(view_);
  static_cast<GraphView*>(view_)->fit();
}

QPointF ScheduleView::node_center(int kernel) const {
  return kernel >= 0 && kernel < node_count() ? centers_[static_cast<size_t>(kernel)] : QPointF();
}

void ScheduleView::select_kernel(const QString& key_hex) {
  // A kernel that runs several times (equal layers) has one node per run: select them all.
  scene_->clearSelection();
  QGraphicsItem* first = nullptr;
  for (QGraphicsItem* item : scene_->items(Qt::AscendingOrder)) {
    if (!item->data(kKernelIndex).isValid() || item->data(kKernelKey).toString() != key_hex)
      continue;
    item->setSelected(true);
    if (!first) first = item;
  }
  if (first) view_->centerOn(first);
}

void ScheduleView::activate(int kernel) {
  if (kernel < 0 || kernel >= node_count()) return;
  Q_EMIT kernel_activated(keys_[static_cast<size_t>(kernel)]);
}

int ScheduleView::selected() const {
  for (QGraphicsItem* item : scene_->selectedItems())
    if (item->data(kKernelIndex).isValid()) return item->data(kKernelIndex).toInt();
  return -1;
}

} // namespace beamlab::gui

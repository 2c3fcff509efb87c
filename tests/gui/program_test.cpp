// Program profiles and their two views: the schedule graph (laid out by Graphviz) and the
// kernel timing (bar chart and timeline across cores). Needs the QApplication the test main
// creates (offscreen). Pictures of both views go to gui_artifacts/ for a look by eye.
#include "gui/program.hpp"
#include "gui/schedule_view.hpp"
#include "gui/style.hpp"
#include "gui/timing_view.hpp"

#include <QApplication>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QPixmap>
#include <QTableWidget>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace beamlab::gui {
namespace {

// Three linear+relu layers: a chain, each layer reading the previous one's output.
const ProgramProfile& mlp() {
  static const ProgramProfile p = [] {
    auto r = profile_program("mlp", {{"BATCH", 16}, {"IN", 32}, {"HIDDEN", 64}, {"LAYERS", 3}}, "",
                             2, 3);
    EXPECT_TRUE(r) << r.error();
    return r ? *r : ProgramProfile{};
  }();
  return p;
}

// A DAG with fan-out and fan-in: projections feeding attention, residuals, an MLP.
const ProgramProfile& transformer() {
  static const ProgramProfile p = [] {
    auto r = profile_program("transformer_block", {{"L", 16}, {"D", 32}, {"H", 2}, {"F", 64}},
                             "float32", 2, 3);
    EXPECT_TRUE(r) << r.error();
    return r ? *r : ProgramProfile{};
  }();
  return p;
}

std::string artifact(const std::string& name) {
  std::filesystem::create_directories("gui_artifacts");
  return "gui_artifacts/" + name;
}

// Every kernel's trace: spans on real threads, inside the kernel's launch, kernels in order.
void expect_consistent_trace(const ProgramProfile& p) {
  int64_t previous_end = 0;
  for (const ProgramKernel& k : p.kernels) {
    SCOPED_TRACE(k.name);
    ASSERT_FALSE(k.spans.empty());
    EXPECT_LE(previous_end, k.begin_ns);
    EXPECT_LE(k.begin_ns, k.end_ns);
    for (const ThreadSpan& s : k.spans) {
      EXPECT_GE(s.thread, 0);
      EXPECT_LT(s.thread, p.threads);
      EXPECT_LE(k.begin_ns, s.begin_ns);
      EXPECT_LE(s.begin_ns, s.end_ns);
      EXPECT_LE(s.end_ns, k.end_ns);
    }
    previous_end = k.end_ns;
  }
  EXPECT_EQ(p.traced_ns, previous_end);
}

TEST(ProfileProgram, MlpIsAChainOfTimedKernels) {
  const ProgramProfile& p = mlp();
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.workload, "mlp");
  EXPECT_EQ(p.dtype, "float32");
  EXPECT_EQ(p.threads, 2);
  double total = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const ProgramKernel& k = p.kernels[i];
    SCOPED_TRACE(k.name);
    EXPECT_GT(k.ms, 0);
    EXPECT_GT(k.flops, 0);
    EXPECT_EQ(k.key.size(), 16u);
    EXPECT_EQ(k.key.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(k.output_bytes, 16 * 64 * 4); // BATCH x HIDDEN float32
    ASSERT_GE(k.inputs.size(), 2u);         // activations and weight (biases may fuse elsewhere)
    ASSERT_EQ(k.input_bytes.size(), k.inputs.size());
    // Layer 0 reads only program inputs; layer i reads layer i-1's output and inputs.
    int produced = 0;
    for (int from : k.inputs) {
      if (from < 0) continue;
      ++produced;
      EXPECT_EQ(from, static_cast<int>(i) - 1);
    }
    EXPECT_EQ(produced, i == 0 ? 0 : 1);
    for (size_t s = 0; s < k.inputs.size(); ++s)
      if (k.inputs[s] >= 0) EXPECT_EQ(k.input_bytes[s], p.kernels[i - 1].output_bytes);
    total += k.ms;
  }
  EXPECT_DOUBLE_EQ(p.total_ms, total);
  expect_consistent_trace(p);
}

TEST(ProfileProgram, TransformerInputsComeFromEarlierKernels) {
  const ProgramProfile& p = transformer();
  ASSERT_GE(p.kernels.size(), 4u);
  int produced = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    for (size_t s = 0; s < p.kernels[i].inputs.size(); ++s) {
      int from = p.kernels[i].inputs[s];
      if (from < 0) continue;
      ++produced;
      ASSERT_LT(from, static_cast<int>(i));
      EXPECT_EQ(p.kernels[i].input_bytes[s], p.kernels[static_cast<size_t>(from)].output_bytes);
    }
  EXPECT_GE(produced, static_cast<int>(p.kernels.size()) - 1); // connected, not a bag
  expect_consistent_trace(p);
}

// A launch far longer than any thread's work means its threads waited for a core: the
// machine was busy (seen: a 5 us kernel launched over 8 ms during a build on both cores).
TEST(ProfileProgram, ThreadsWaitingForACoreAreTold) {
  ProgramKernel k;
  k.begin_ns = 0;
  k.end_ns = 8'000'000;
  k.spans = {{0, 100, 5'100}, {1, 7'990'000, 7'995'000}};
  EXPECT_TRUE(waited_for_cores(k));
  k.end_ns = 12'000; // 12 us for 5 us of work: a launch's own cost, not a busy machine
  k.spans = {{0, 100, 5'100}, {1, 200, 5'200}};
  EXPECT_FALSE(waited_for_cores(k));
  k.end_ns = 8'000'000; // a long kernel whose threads worked the whole time
  k.spans = {{0, 0, 7'900'000}, {1, 10, 7'950'000}};
  EXPECT_FALSE(waited_for_cores(k));
  k.spans.clear(); // untraced: nothing to tell
  EXPECT_FALSE(waited_for_cores(k));
}

TEST(ProfileProgram, OneThreadTracesThreadZeroOnly) {
  auto p = profile_program("attention", {{"H", 2}, {"L", 16}, {"D", 16}}, "", 1, 1);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->threads, 1);
  // The scores, the softmax over them, then the weighted sum of V (which would recompute the
  // softmax once per column of V if it were fused there).
  ASSERT_EQ(p->kernels.size(), 3u);
  for (int i : {1, 2})
    EXPECT_NE(std::find(p->kernels[i].inputs.begin(), p->kernels[i].inputs.end(), i - 1),
              p->kernels[i].inputs.end());
  for (const ProgramKernel& k : p->kernels)
    for (const ThreadSpan& s : k.spans) EXPECT_EQ(s.thread, 0);
  expect_consistent_trace(*p);
}

TEST(ProfileProgram, UnknownWorkloadIsAnErrorNamingIt) {
  auto p = profile_program("no_such_workload", {}, "", 1, 1);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("unknown workload 'no_such_workload'"), std::string::npos) << p.error();
}

TEST(ProfileProgram, UnknownParameterIsAnErrorNamingIt) {
  auto p = profile_program("mlp", {{"WIDTH", 3}}, "", 1, 1);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("'WIDTH'"), std::string::npos) << p.error();
}

TEST(ProgramBox, NamesAWorkloadAModelAKernelOrAnExpression) {
  tuner::CorpusEntry w = parse_program("matmul M=64 N=32 dtype=float16");
  EXPECT_EQ(w.workload, "matmul");
  EXPECT_EQ(w.params, (std::map<std::string, int64_t>{{"M", 64}, {"N", 32}}));
  EXPECT_EQ(w.dtype, "float16");
  tuner::CorpusEntry m = parse_program("nets/resnet18.onnx input=1x3x224x224");
  EXPECT_EQ(m.model, "nets/resnet18.onnx");
  EXPECT_EQ(m.inputs.at("input"), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(parse_program("r_64_64_64_0123.ir").kernel, "r_64_64_64_0123.ir");
  tuner::CorpusEntry e = parse_program("(a.matmul(w) + b).relu(); a=8x16 w=16x4  b=4");
  EXPECT_EQ(e.expr, "(a.matmul(w) + b).relu()");
  EXPECT_EQ(e.inputs.at("w"), (Shape{16, 4}));
  EXPECT_EQ(e.inputs.at("b"), (Shape{4}));
}

TEST(ProgramBox, BadTextIsOneLineSayingWhatToWrite) {
  auto error = [](const std::string& text) {
    try {
      parse_program(text);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("  "), "name a workload (matmul M=64), a model (model.onnx), a kernel "
                         "(kernel.ir) or an expression (a.relu(); a=64x64)");
  EXPECT_EQ(error("matmul M=big"), "'M=big': expected NAME=INTEGER (or dtype=float16)");
  EXPECT_EQ(error("a.relu()"), "'a.relu()': an expression needs its inputs' shapes after a ';', "
                               "e.g. 'a.relu(); a=64x64'");
  EXPECT_EQ(error("k.ir M=3"), "a kernel file takes no parameters; its IR text gives the sizes");
  EXPECT_EQ(error("a.relu(); a=8xq"), "--input 'a=8xq': dimension 'q' is not a positive integer; "
                                      "expected NAME=DIMS like input=1x3x224x224");
  // A file that is neither a model nor a kernel (issue 40: it was "an expression needs ...").
  std::string notes = (std::filesystem::temp_directory_path() / "beamlab_notes.txt").string();
  std::ofstream(notes) << "not a model";
  EXPECT_EQ(error(notes), "'" + notes +
                              "' is a file but neither a model (.onnx) nor a kernel's "
                              "IR text (.ir); give one of those");
  std::filesystem::remove(notes);
}

TEST(ProfileProgram, AnExpressionIsProfiledWithItsKernelsTasks) {
  auto p = profile_program(parse_program("(x * 2).sum(1); x=32x64"), 1, 1);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->workload, "(x * 2).sum(1)");
  ASSERT_EQ(p->kernels.size(), 1u);
  const ProgramKernel& k = p->kernels[0];
  EXPECT_EQ(fmt::format("{:016x}", k.task.key), k.key);
  EXPECT_EQ(k.task.name, k.name);
  ASSERT_EQ(k.task.buffers.size(), 2u);
  EXPECT_EQ(k.task.buffers[1].count, 32 * 64);
  EXPECT_TRUE(k.nodes.empty()); // only a model's kernels are named by nodes
}

TEST(ProfileProgram, FormatsBytesAndTimes) {
  EXPECT_EQ(format_ms(12.3456), "12.35 ms");
  EXPECT_EQ(format_ms(0.021345), "0.0213 ms");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(4096), "4.0 KiB");
  EXPECT_EQ(format_bytes(4 << 20), "4.0 MiB");
  EXPECT_EQ(format_bytes(int64_t{3} << 29), "1.5 GiB");
}

TEST(ScheduleView, LaysOutOneNodePerKernelWithGraphviz) {
  const ProgramProfile& p = mlp();
  ScheduleView view;
  view.set_program(p);
  ASSERT_EQ(view.node_count(), 3);
  // dot ranks a chain top to bottom: distinct positions, each layer below the previous.
  for (int i = 1; i < 3; ++i) EXPECT_GT(view.node_center(i).y(), view.node_center(i - 1).y());
  // Edges carry their buffer's size: layer outputs are 16 x 64 floats.
  bool labelled = false;
  for (QGraphicsItem* item : view.scene()->items())
    if (auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item))
      labelled |= text->text() == "4.0 KiB";
  EXPECT_TRUE(labelled);
  view.show_message("profiling...");
  EXPECT_EQ(view.node_count(), 0);
}

TEST(ScheduleView, ClickingANodeActivatesItsKernel) {
  const ProgramProfile& p = transformer();
  ScheduleView view;
  view.resize(1000, 800);
  view.set_program(p);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  ASSERT_EQ(view.node_count(), static_cast<int>(p.kernels.size()));
  std::set<std::pair<double, double>> positions;
  for (int i = 0; i < view.node_count(); ++i)
    positions.insert({view.node_center(i).x(), view.node_center(i).y()});
  EXPECT_EQ(positions.size(), p.kernels.size());

  std::vector<QString> activated;
  QObject::connect(&view, &ScheduleView::kernel_activated,
                   [&](const QString& key) { activated.push_back(key); });
  int last = view.node_count() - 1;
  QGraphicsView* gv = view.view();
  QTest::mouseClick(gv->viewport(), Qt::LeftButton, {}, gv->mapFromScene(view.node_center(last)));
  ASSERT_EQ(activated.size(), 1u);
  EXPECT_EQ(activated[0].toStdString(), p.kernels.back().key);
  // Enter on the selection (the clicked node) activates it again.
  QTest::keyClick(gv, Qt::Key_Return);
  ASSERT_EQ(activated.size(), 2u);
  EXPECT_EQ(activated[1], activated[0]);
  // A click on empty space activates nothing.
  QTest::mouseClick(gv->viewport(), Qt::LeftButton, {}, QPoint(2, 2));
  EXPECT_EQ(activated.size(), 2u);

  QPixmap picture = view.grab();
  ASSERT_FALSE(picture.isNull());
  EXPECT_TRUE(picture.save(QString::fromStdString(artifact("schedule.png"))));
}

// Kernels of constants (run once, before the first run) come after the kernels every run pays
// for, so a model's table opens on its costs (ResNet-18 opened on ten of them).
TEST(TimingView, KernelsOfConstantsComeLast) {
  ProgramProfile p;
  p.workload = "synthetic";
  p.threads = 1;
  p.runs = 1;
  for (int i = 0; i < 4; ++i) {
    ProgramKernel k;
    k.name = "k" + std::to_string(i);
    k.key = fmt::format("{:016x}", i);
    k.once = i < 2;
    k.ms = k.once ? 0 : 1.0 + i;
    k.samples_ms = {k.ms};
    p.total_ms += k.ms;
    p.kernels.push_back(k);
  }
  TimingView view;
  view.set_program(p);
  QTableWidget* table = view.table();
  ASSERT_EQ(table->rowCount(), 4);
  std::vector<std::string> order;
  for (int r = 0; r < 4; ++r) order.push_back(table->item(r, TimingView::kKernel)->text().toStdString());
  EXPECT_EQ(order, (std::vector<std::string>{"k2", "k3", "k0", "k1"}));
  EXPECT_EQ(table->item(2, TimingView::kIndex)->text(), "0"); // its place in the program
  EXPECT_EQ(view.costliest_untuned(5), (QStringList{qstr(p.kernels[3].key), qstr(p.kernels[2].key)}));
}

// Every kernel is a row, its name whole (a 43-kernel model's bar labels were all "..."), its
// share of the total drawn; rows sort by time; Enter on a row opens its kernel; every thread
// span is on the timeline.
TEST(TimingView, OneRowPerKernelSortableAndEveryThreadSpan) {
  const ProgramProfile& p = transformer();
  TimingView view;
  view.resize(1000, 800);
  view.set_program(p);
  QTableWidget* table = view.table();
  ASSERT_EQ(table->rowCount(), static_cast<int>(p.kernels.size()));
  double slowest = 0;
  for (int i = 0; i < table->rowCount(); ++i) {
    const ProgramKernel& k = p.kernels[static_cast<size_t>(i)];
    EXPECT_EQ(table->item(i, TimingView::kKernel)->text().toStdString(), k.name);
    EXPECT_EQ(table->item(i, TimingView::kTime)->text(), ms_text(k.ms));
    slowest = std::max(slowest, k.ms);
  }
  EXPECT_NE(view.summary().indexOf(qstr(format_ms(p.total_ms))), -1)
      << view.summary().toStdString();
  int spans = 0;
  for (const ProgramKernel& k : p.kernels) spans += static_cast<int>(k.spans.size());
  EXPECT_EQ(view.span_count(), spans);

  table->sortByColumn(TimingView::kTime, Qt::DescendingOrder);
  EXPECT_EQ(table->item(0, TimingView::kTime)->text(), ms_text(slowest));
  std::vector<QString> activated;
  QObject::connect(&view, &TimingView::kernel_activated,
                   [&](const QString& key) { activated.push_back(key); });
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  table->setFocus();
  table->selectRow(0);
  table->setCurrentCell(0, TimingView::kKernel);
  QTest::keyClick(table, Qt::Key_Return);
  ASSERT_EQ(activated.size(), 1u);
  auto row0 = std::find_if(p.kernels.begin(), p.kernels.end(),
                           [&](const ProgramKernel& k) { return k.ms == slowest; });
  EXPECT_EQ(activated[0].toStdString(), row0->key);

  QPixmap picture = view.grab();
  ASSERT_FALSE(picture.isNull());
  EXPECT_TRUE(picture.save(QString::fromStdString(artifact("timing.png"))));

  view.show_message("failed");
  EXPECT_EQ(table->rowCount(), 0);
  EXPECT_EQ(view.span_count(), 0);
}

} // namespace
} // namespace beamlab::gui

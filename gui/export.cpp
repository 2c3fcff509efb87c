// Exporting tables and charts; see export.hpp.
#include "gui/export.hpp"

#include <QAbstractItemView>
#include <QFileInfo>
#include <QGraphicsView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTableView>

namespace beamlab::gui {

namespace {

// The columns a table view shows (hidden ones left out), with their titles.
std::vector<std::pair<int, QString>> shown_columns(const QAbstractItemView& view) {
  const QAbstractItemModel* m = view.model();
  const auto* table = qobject_cast<const QTableView*>(&view);
  std::vector<std::pair<int, QString>> out;
  for (int c = 0; c < m->columnCount(); ++c)
    if (!table || !table->isColumnHidden(c))
      out.emplace_back(c, m->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
  return out;
}

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
QString csv_field(QString s) {
  if (!s.contains(',') && !s.contains('"') && !s.contains('\n') && !s.contains('\r')) return s;
  return '"' + s.replace('"', "\"\"") + '"';
}

QByteArray table_text(const QAbstractItemView& view, bool json) {
  const QAbstractItemModel* m = view.model();
  auto columns = shown_columns(view);
  if (json) {
    QJsonArray rows;
    for (int r = 0; r < m->rowCount(); ++r) {
      QJsonObject row;
      for (const auto& [c, title] : columns) {
        QString text = m->index(r, c).data(Qt::DisplayRole).toString();
        bool number = false;
        double x = text.toDouble(&number); // a plain number stays one; "0.52 ±2%" is text
        row[title] = number ? QJsonValue(x) : QJsonValue(text);
      }
      rows.append(row);
    }
    return QJsonDocument(rows).toJson(QJsonDocument::Indented);
  }
  QStringList lines, header;
  for (const auto& [c, title] : columns) header << csv_field(title);
  lines << header.join(',');
  for (int r = 0; r < m->rowCount(); ++r) {
    QStringList cells;
    for (const auto& [c, title] : columns)
      cells << csv_field(m->index(r, c).data(Qt::DisplayRole).toString());
    lines << cells.join(',');
  }
  return (lines.join("\r\n") + "\r\n").toUtf8();
}

bool exportable(const QWidget* w) {
  return qobject_cast<const QAbstractItemView*>(w) || qobject_cast<const QGraphicsView*>(w);
}

} // namespace

bool exports_as_table(const QWidget* view) {
  return qobject_cast<const QAbstractItemView*>(view) != nullptr;
}

std::optional<QString> export_view(QWidget* view, const QString& path) {
  QString suffix = QFileInfo(path).suffix().toLower();
  bool table = exports_as_table(view);
  if (table && suffix != "csv" && suffix != "json")
    return QString("%1: a table exports as .csv or .json; name the file so").arg(path);
  if (!table && suffix != "png" && suffix != "svg")
    return QString("%1: a chart exports as .png or .svg; name the file so").arg(path);
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly))
    return QString("%1: can't write it: %2").arg(path, file.errorString());
  bool written = true;
  if (table) {
    written =
        file.write(table_text(*qobject_cast<QAbstractItemView*>(view), suffix == "json")) >= 0;
  } else if (suffix == "png") {
    written = view->grab().save(&file, "PNG");
  } else {
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(view->size());
    svg.setViewBox(QRect(QPoint(0, 0), view->size()));
    svg.setTitle(view->window()->windowTitle());
    QPainter painter(&svg);
    view->render(&painter);
    written = painter.end();
  }
  if (!written || !file.commit())
    return QString("%1: writing it failed: %2").arg(path, file.errorString());
  return std::nullopt;
}

QWidget* exportable_on(QWidget* page) {
  if (!page) return nullptr;
  // The page's focus child: the widget last given the focus there, the window active or not.
  for (QWidget* f = page->focusWidget(); f && f != page; f = f->parentWidget())
    if (exportable(f) && page->isAncestorOf(f) && f->isVisibleTo(page)) return f;
  for (QWidget* w : page->findChildren<QWidget*>())
    if (exportable(w) && w->isVisibleTo(page)) return w;
  return nullptr;
}

} // namespace beamlab::gui

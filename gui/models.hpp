// Table models over the database's snapshots: runs, a run's kernels, a search's candidates.
//
// A TableModel is rows of a plain struct and columns as data (title, display, sort key,
// colour). Sorting and filtering go through a QSortFilterProxyModel on kSortRole, so numeric
// columns sort as numbers. A reload that only appends rows or changes existing ones (a run in
// progress) updates in place, keeping the view's selection and scroll position.
#pragma once

#include <functional>
#include <vector>

#include <QAbstractTableModel>
#include <QColor>
#include <QSortFilterProxyModel>

#include "gui/store.hpp"

namespace beamlab::gui {

inline constexpr int kSortRole = Qt::UserRole;
inline constexpr int kIdRole = Qt::UserRole + 1;

template <class Row>
class TableModel : public QAbstractTableModel {
public:
  struct Column {
    QString title;
    std::function<QVariant(const Row&)> display;
    std::function<QVariant(const Row&)> sort = {}; ///< default: display
    std::function<QVariant(const Row&)> color = {};
    QString header_tip = {};                      ///< what the column's figure is
    std::function<QVariant(const Row&)> tip = {}; ///< a cell's tooltip (default: display)
  };
  TableModel(std::vector<Column> columns, std::function<int64_t(const Row&)> id, QObject* parent)
      : QAbstractTableModel(parent), columns_(std::move(columns)), id_(std::move(id)) {}

  void set_rows(std::vector<Row> rows) {
    bool same_prefix = rows.size() >= rows_.size() && !rows_.empty();
    for (size_t i = 0; same_prefix && i < rows_.size(); ++i)
      same_prefix = id_(rows[i]) == id_(rows_[i]);
    if (!same_prefix) {
      beginResetModel();
      rows_ = std::move(rows);
      endResetModel();
      return;
    }
    size_t old = rows_.size();
    for (size_t i = 0; i < old; ++i) rows_[i] = std::move(rows[i]);
    if (old > 0)
      Q_EMIT dataChanged(index(0, 0), index(static_cast<int>(old) - 1, columnCount() - 1));
    if (rows.size() > old) {
      beginInsertRows({}, static_cast<int>(old), static_cast<int>(rows.size()) - 1);
      for (size_t i = old; i < rows.size(); ++i) rows_.push_back(std::move(rows[i]));
      endInsertRows();
    }
  }
  const std::vector<Row>& rows() const { return rows_; }
  const Row& row(int i) const { return rows_.at(static_cast<size_t>(i)); }

  int rowCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
  }
  int columnCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : static_cast<int>(columns_.size());
  }
  QVariant data(const QModelIndex& index, int role) const override {
    if (!index.isValid()) return {};
    const Row& r = rows_.at(static_cast<size_t>(index.row()));
    const Column& c = columns_.at(static_cast<size_t>(index.column()));
    switch (role) {
    case Qt::DisplayRole: return c.display(r);
    case Qt::ToolTipRole: return c.tip ? c.tip(r) : c.display(r);
    case kSortRole: return c.sort ? c.sort(r) : c.display(r);
    case kIdRole: return QVariant::fromValue<qlonglong>(id_(r));
    case Qt::ForegroundRole: return c.color ? c.color(r) : QVariant();
    default: return {};
    }
  }
  QVariant headerData(int section, Qt::Orientation o, int role) const override {
    if (o != Qt::Horizontal) return {};
    const Column& c = columns_.at(static_cast<size_t>(section));
    if (role == Qt::DisplayRole) return c.title;
    if (role == Qt::ToolTipRole && !c.header_tip.isEmpty()) return c.header_tip;
    return {};
  }

private:
  std::vector<Column> columns_;
  std::function<int64_t(const Row&)> id_;
  std::vector<Row> rows_;
};

using RunsModel = TableModel<RunRow>;
using KernelsModel = TableModel<KernelRow>;
using CandidatesModel = TableModel<db::CandidateRow>;
using MeasurementsModel = TableModel<reports::Measurement>;

RunsModel* make_runs_model(QObject* parent);
KernelsModel* make_kernels_model(QObject* parent);
/// A bench run's measurements: what each is, its median with its spread, the plan it ran.
MeasurementsModel* make_measurements_model(QObject* parent);
CandidatesModel* make_candidates_model(QObject* parent);

/// A proxy sorting on kSortRole and filtering column `filter_column` by a case-insensitive
/// substring.
QSortFilterProxyModel* make_proxy(QAbstractItemModel* source, int filter_column, QObject* parent);

/// Column indexes the views and tests refer to.
namespace runs_col {
enum { id, when, kind, label, command, device, status, kernels, candidates };
}
namespace kernels_col {
enum {
  name,
  workload,
  tuned_at, // a symbolic kernel's values
  status,
  heuristic_ms,
  tuned_ms,
  speedup,
  in_process,
  roofline,
  candidates,
  opts
};
}
namespace measurements_col {
enum { section, name, workloads, median_ms, spread, samples, plan };
}
namespace candidates_col {
enum { seq, iteration, parent, status, best_ms, median_ms, spread, compile_ms, opts, error };
}

} // namespace beamlab::gui

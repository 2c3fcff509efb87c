// Exporting what a view shows: a table as CSV or JSON (its rows in the order and under the
// filter the view shows them, its header's titles as the columns), a chart or graph as PNG or
// SVG (what is on screen, at its size).
#pragma once

#include <optional>

#include <QString>

class QWidget;

namespace beamlab::gui {

/// Writes the table or picture `view` shows to `path`, in the format its suffix names: .csv or
/// .json for a table (an item view), .png or .svg for anything else. The file is written
/// whole or not at all; on failure, the one-line reason (a suffix that doesn't fit the view,
/// a file that can't be written), naming the path.
std::optional<QString> export_view(QWidget* view, const QString& path);

/// What File > Export takes on `page`: the table or chart in it that has the focus, else its
/// first shown one; none when it has neither.
QWidget* exportable_on(QWidget* page);

/// Whether `view` exports as a table (CSV, JSON) rather than a picture (PNG, SVG).
bool exports_as_table(const QWidget* view);

} // namespace beamlab::gui

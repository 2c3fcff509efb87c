// A table's columns described once: each column's name with how it is read into and bound from
// the C++ struct of a row. The SELECT lists, the reads, the INSERTs and UPDATEs and the merge's
// copies of a table are built from its list, so a column is never read by a hand-counted
// position, and a column added to the schema but not to its list fails a test
// (tests/db/database_test.cpp compares each list with the schema). db/ only.
//
//   const Columns<Row> kThings = {column("name", &Row::name), column("ms", &Row::ms)};
//   Statement st = conn.prepare("SELECT " + names(kThings) + " FROM things");
//   while (st.step()) { Row r; read_columns(kThings, st, 0, r); }
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite.hpp"

namespace beamlab::db {

template <class Row>
struct Column {
  std::string_view name;
  std::function<void(const Statement&, int col, Row&)> read;
  std::function<void(const Row&, Statement&, int param)> bind;
};

template <class Row>
using Columns = std::vector<Column<Row>>;

namespace detail {
inline void read_value(const Statement& st, int c, int64_t& v) { v = st.i64(c); }
inline void read_value(const Statement& st, int c, int& v) { v = static_cast<int>(st.i64(c)); }
inline void read_value(const Statement& st, int c, double& v) { v = st.f64(c); }
inline void read_value(const Statement& st, int c, bool& v) { v = st.i64(c) != 0; }
inline void read_value(const Statement& st, int c, std::string& v) { v = st.text(c); }
inline void read_value(const Statement& st, int c, std::optional<double>& v) { v = st.opt_f64(c); }
inline void read_value(const Statement& st, int c, std::optional<int64_t>& v) {
  v = st.is_null(c) ? std::nullopt : std::optional(st.i64(c));
}
template <class T>
void bind_value(Statement& st, int i, const T& v) {
  st.bind(i, v);
}
inline void bind_value(Statement& st, int i, bool v) { st.bind(i, static_cast<int64_t>(v)); }
} // namespace detail

/// The column `name` stored in `member`.
template <class Row, class T>
Column<Row> column(std::string_view name, T Row::*member) {
  return {name,
          [member](const Statement& st, int c, Row& r) { detail::read_value(st, c, r.*member); },
          [member](const Row& r, Statement& st, int i) { detail::bind_value(st, i, r.*member); }};
}

/// The column `name` stored in `member` as text, through `to_text` and `from_text` (an enum).
template <class Row, class T, class To, class From>
Column<Row> text_column(std::string_view name, T Row::*member, To to_text, From from_text) {
  return {name,
          [member, from_text](const Statement& st, int c, Row& r) {
            r.*member = from_text(st.text(c));
          },
          [member, to_text](const Row& r, Statement& st, int i) {
            st.bind(i, std::string(to_text(r.*member)));
          }};
}

/// Three columns (`name`, `name_lo`-style names given) holding an optional estimate with its
/// interval: present only when all three are stored.
template <class Row, class P>
Columns<Row> interval_columns(std::string_view estimate, std::string_view lo, std::string_view hi,
                              std::optional<P> Row::*member) {
  auto part = [member](std::string_view name, double P::*field, bool first) {
    return Column<Row>{name,
                       [member, field, first](const Statement& st, int c, Row& r) {
                         if (st.is_null(c)) {
                           (r.*member).reset();
                         } else if (first) {
                           r.*member = P{};
                           (*(r.*member)).*field = st.f64(c);
                         } else if (r.*member) {
                           (*(r.*member)).*field = st.f64(c);
                         }
                       },
                       [member, field](const Row& r, Statement& st, int i) {
                         if (r.*member)
                           st.bind(i, (*(r.*member)).*field);
                         else
                           st.bind(i, std::nullopt);
                       }};
  };
  return {part(estimate, &P::estimate, true), part(lo, &P::lo, false), part(hi, &P::hi, false)};
}

template <class Row>
Columns<Row> operator+(Columns<Row> a, const Columns<Row>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// "a, b, c", each name after `prefix` ("t." for a table's alias).
template <class Row>
std::string names(const Columns<Row>& cols, std::string_view prefix = "") {
  std::string out;
  for (const Column<Row>& c : cols)
    out += (out.empty() ? "" : ", ") + std::string(prefix) + std::string(c.name);
  return out;
}

/// "?, ?, ?": one parameter per column.
template <class Row>
std::string placeholders(const Columns<Row>& cols) {
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) out += i ? ", ?" : "?";
  return out;
}

/// "a = ?, b = ?": an UPDATE's assignments.
template <class Row>
std::string assignments(const Columns<Row>& cols) {
  std::string out;
  for (const Column<Row>& c : cols) out += (out.empty() ? "" : ", ") + std::string(c.name) + " = ?";
  return out;
}

/// Reads the columns from result column `first` on into `row`; the next result column.
template <class Row>
int read_columns(const Columns<Row>& cols, const Statement& st, int first, Row& row) {
  for (const Column<Row>& c : cols) c.read(st, first++, row);
  return first;
}

/// A row read from the columns, the first at result column `first`.
template <class Row>
Row read_row(const Columns<Row>& cols, const Statement& st, int first = 0) {
  Row row;
  read_columns(cols, st, first, row);
  return row;
}

/// Binds the columns from parameter `first` on; the next parameter.
template <class Row>
int bind_columns(const Columns<Row>& cols, const Row& row, Statement& st, int first) {
  for (const Column<Row>& c : cols) c.bind(row, st, first++);
  return first;
}

} // namespace beamlab::db

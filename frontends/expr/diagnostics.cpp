// Positioned errors and typo suggestions for the expression front-end; see syntax_internal.hpp.
#include "frontends/expr/syntax_internal.hpp"

#include <algorithm>
#include <cctype>

namespace beamlab::expr {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours cost 1; a change of case costs nothing, so 'Relu' is a typo of 'relu'.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

} // namespace

void fail(Pos at, const std::string& what) {
  throw PositionedError("expr:" + std::to_string(at.line) + ":" + std::to_string(at.col) + ": " +
                        what);
}

std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
      continue;
    }
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 15];
  }
  return out + "'";
}

std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates) {
  // Names longer than any candidate by far are no typos; this also bounds the table's size.
  if (name.empty() || name.size() > 64) return "";
  size_t best = name.size() / 3 + 1;
  std::string_view pick;
  for (std::string_view c : candidates) {
    size_t d = edit_distance(name, c);
    if (d == 0 && c == name) continue;
    if (d < best) best = d, pick = c;
  }
  if (pick.empty()) return "";
  return " (did you mean " + quoted(pick) + "?)";
}

} // namespace beamlab::expr

// Positioned errors and typo suggestions for the expression front-end; see syntax_internal.hpp.
#include "frontends/expr/syntax_internal.hpp"

#include "engine/support/did_you_mean.hpp"

namespace beamlab::expr {

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

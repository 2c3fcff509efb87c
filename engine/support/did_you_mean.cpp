// Typo suggestions; see did_you_mean.hpp.
#include "engine/support/did_you_mean.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace beamlab {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// A typo, not another word: two edits at most, and fewer than the shorter name has letters
// (an option's leading dashes are no letters: '--Q' is no typo of '--K').
bool is_close(size_t distance, std::string_view a, std::string_view b) {
  auto letters = [](std::string_view s) {
    return s.size() - std::min(s.find_first_not_of('-'), s.size());
  };
  return distance <= 2 && distance < std::min(letters(a), letters(b));
}

} // namespace

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

std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string>& candidates) {
  // Names far longer than any candidate are no typos; this also bounds the table's size.
  if (name.empty() || name.size() > 64) return std::nullopt;
  if (std::find(candidates.begin(), candidates.end(), name) != candidates.end())
    return std::nullopt;
  std::vector<size_t> distance;
  distance.reserve(candidates.size());
  for (const std::string& c : candidates) distance.push_back(edit_distance(name, c));
  // Another case first ('m': M), then an abbreviation ('rep': report, not run).
  auto same_letters = std::find(distance.begin(), distance.end(), 0);
  if (same_letters != distance.end()) return candidates[same_letters - distance.begin()];
  auto begins = [&](const std::string& c) { return c.starts_with(name); };
  if (std::count_if(candidates.begin(), candidates.end(), begins) == 1)
    return *std::find_if(candidates.begin(), candidates.end(), begins);
  // Then the nearest typo; of two as near, one that begins with `name`.
  std::optional<size_t> best;
  auto rank = [&](size_t i) { return std::pair(distance[i], !begins(candidates[i])); };
  for (size_t i = 0; i < candidates.size(); ++i)
    if (is_close(distance[i], name, candidates[i]) && (!best || rank(i) < rank(*best))) best = i;
  if (!best) return std::nullopt;
  return candidates[*best];
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates,
                         std::string_view more) {
  std::optional<std::string> pick = closest_name(name, candidates);
  std::string text = pick ? "did you mean '" + *pick + "'?" : "";
  if (!more.empty()) text += (text.empty() ? "" : " ") + std::string(more);
  return text.empty() ? "" : " (" + text + ")";
}

} // namespace beamlab

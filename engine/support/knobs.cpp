// Environment knobs; see knobs.hpp.
#include "engine/support/knobs.hpp"

#include <charconv>
#include <cstdlib>

#include "engine/support/error.hpp"

namespace beamlab {

std::string knob_string(const char* name, std::string_view fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::string(fallback);
  return v;
}

int64_t knob_int(const char* name, int64_t fallback) {
  std::string v = knob_string(name);
  if (v.empty()) return fallback;
  int64_t out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  user_assert(ec == std::errc() && end == v.data() + v.size())
      << "environment variable " << name << "='" << v << "' is not an integer; set it to a "
      << "whole number or unset it";
  return out;
}

bool knob_lists(const char* name, std::string_view step) {
  std::string v = knob_string(name);
  if (v == "all") return true;
  std::string_view rest = v;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    if (rest.substr(0, comma) == step) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

} // namespace beamlab

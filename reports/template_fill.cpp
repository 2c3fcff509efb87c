// Filling a template's {{name}} placeholders; see templates.hpp.
#include "reports/templates.hpp"

#include <beamlab/beamlab.hpp>

namespace beamlab::reports {

std::string fill_template(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    size_t close = text.find("}}", open);
    internal_assert(close != std::string_view::npos) << "unclosed {{ in a report template";
    out.append(text.substr(pos, open - pos));
    std::string name(text.substr(open + 2, close - open - 2));
    auto value = values.find(name);
    internal_assert(value != values.end())
        << "report template placeholder {{" << name << "}} has no value";
    out += value->second;
    pos = close + 2;
  }
  out.append(text.substr(pos));
  return out;
}

} // namespace beamlab::reports

// The report templates (reports/templates/), built into the binary by CMake.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace beamlab::reports {

/// The HTML page every HTML report fills: placeholders {{title}}, {{body}}, {{version}} and
/// {{generated}}.
std::string_view html_template();

/// `text` with each {{name}} replaced by values[name]; an internal error names a placeholder
/// without a value.
std::string fill_template(std::string_view text, const std::map<std::string, std::string>& values);

} // namespace beamlab::reports

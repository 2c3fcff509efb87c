// Option checks; see cli_checks.hpp.
#include "apps/cli_checks.hpp"

#include <algorithm>

#include "engine/support/did_you_mean.hpp"
#include "engine/support/error.hpp"

namespace beamlab::cli {

CLI::Validator one_of(std::vector<std::string> names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return {[names = std::move(names), list](std::string& text) -> std::string {
            if (std::find(names.begin(), names.end(), text) != names.end()) return {};
            return "Value '" + text + "' is not one of " + list + did_you_mean(text, names);
          },
          "{" + list + "}"};
}

CLI::Validator parsed_by(const std::string& description,
                         std::function<void(const std::string&, const std::string&)> parse) {
  return {[parse = std::move(parse)](std::string& text) -> std::string {
            try {
              parse(text, "Value");
            } catch (const UserError& e) {
              return e.what();
            }
            return {};
          },
          description};
}

} // namespace beamlab::cli

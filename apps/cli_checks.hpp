// Option checks the commands share. A value that fails one is a CLI11 parse error, so the
// command line is refused with exit code 2 before any work starts.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace beamlab::cli {

/// A number option must be finite: CLI11's range checks let "nan" and "inf" through (every
/// comparison with NaN is false), and a NaN budget would be stored as JSON null.
inline const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
      double v = 0;
      if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v))
        return "Value " + text + " is not a finite number";
      return {};
    },
    "FINITE");

/// The value must be one of `names`: "Value 'jsno' is not one of text, json (did you mean
/// 'json'?)" otherwise. Its description "{text, json}" lists them for the help and the shell
/// completion.
CLI::Validator one_of(std::vector<std::string> names);

/// The value must be one `parse(text, what)` accepts; it throws a UserError beginning with
/// `what` otherwise, here "Value". For values the layers below already know how to parse
/// (cache modes, shards, report formats), so the rule stays in one place. A `description`
/// "{a, b}" lists the values for the help and the shell completion.
CLI::Validator parsed_by(const std::string& description,
                         std::function<void(const std::string&, const std::string&)> parse);

} // namespace beamlab::cli

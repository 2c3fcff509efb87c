// Option checks the commands share.
#pragma once

#include <cmath>
#include <string>

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

} // namespace beamlab::cli

// Knobs: settings read from the environment, for debugging and tests.
//
//   BEAMLAB_PRINT_AFTER=step[,step...]|all   print the IR after the named rewrite steps
//   BEAMLAB_VERIFY=0|1                       verify the IR after each step (default: 1 in
//                                            builds with assertions, 0 with NDEBUG)
//   BEAMLAB_REWRITE_LIMIT=N                  rewrites of one node before a loop is reported
//
// Knobs are read when asked (no global state is cached), so tests may set them with setenv.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace beamlab {

/// The environment variable's value, or `fallback` when it is unset or empty.
std::string knob_string(const char* name, std::string_view fallback = {});

/// The environment variable parsed as an integer; a malformed value is a UserError
/// naming the variable.
int64_t knob_int(const char* name, int64_t fallback);

/// True when `step` is listed in the comma-separated knob `name`, or the knob is "all".
bool knob_lists(const char* name, std::string_view step);

} // namespace beamlab

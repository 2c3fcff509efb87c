// Typo suggestions for names a user gave: "unknown workload 'matmull' (did you mean 'matmul'?)".
// The CLI uses them for flags, subcommands and workload parameters, the workload registry for
// workload and parameter names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace beamlab {

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbours cost 1; a change of case costs nothing, so 'm' is a typo of 'M'.
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate `name` most likely misspells: one that differs only in case, else the only one
/// that starts with `name` (an abbreviation), else the nearest within edit distance 2 and nearer
/// than either has letters (one letter is no typo of another); nullopt when none is close or
/// `name` is one of them.
std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" for closest_name(name, candidates); with `more`, " (did you mean 'x'?
/// more)", or " (more)" when no candidate is close; "" when there is neither.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates,
                         std::string_view more = "");

} // namespace beamlab

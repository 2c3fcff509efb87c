// graph_rewrite: apply a rule set to a whole graph until nothing matches.
//
// Two orders, both to a fixed point and memoized (each node is rewritten once per call):
//   * bottom-up (default): a node's sources are rewritten first, then the node itself;
//   * top-down: a node is rewritten first, then the sources of whatever it became.
// Whatever a rule returns is itself rewritten to the fixed point, sources included.
// A rule set that loops (a node rewrites back into itself, or keeps rewriting more than
// BEAMLAB_REWRITE_LIMIT times) raises an InternalError that names the rule and the node.
// Setting BEAMLAB_PRINT_AFTER=<name> prints the graph after the step with that name.
#pragma once

#include <string_view>
#include <unordered_map>

#include "engine/rewrite/pattern_matcher.hpp"

namespace beamlab {

class Spec;

struct RewriteOptions {
  std::string_view name = "rewrite"; ///< the step's name, for knobs and error messages
  bool top_down = false;
  /// When set and verification is on (BEAMLAB_VERIFY, default on with assertions), the result
  /// is checked against this spec.
  const Spec* spec = nullptr;
};

/// Prints `graph` to stderr if BEAMLAB_PRINT_AFTER lists `step` (or is "all"); for passes that
/// are not a single graph_rewrite.
void print_after_step(std::string_view step, const UOpPtr& graph);

/// `root` with every node rewritten by `pm` to a fixed point.
UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, CtxRef ctx = {},
                     const RewriteOptions& opts = {});

/// `root` with every node that is a key of `map` replaced by its value (one pass: the
/// replacements are not searched again).
UOpPtr substitute(const UOpPtr& root, const std::unordered_map<const UOp*, UOpPtr>& map);

} // namespace beamlab

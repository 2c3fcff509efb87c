// The verifier: IR invariants as a rule set, checked between passes.
//
// A Spec is a rule set whose callbacks check a matched node and return an error message, or
// nothing when the node is valid. Every node of a graph must be matched by some rule of the
// spec (the first matching rule decides); a node no rule matches is itself an error. Passes
// run it on their output in tests and in builds with assertions (BEAMLAB_VERIFY overrides).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/rewrite/pattern_matcher.hpp"

namespace beamlab {

/// A check on a matched node: an error message, or nullopt if the node is valid.
using CheckFn = std::function<std::optional<std::string>(const Match&)>;

class Spec : public RuleSet<CheckFn> {
public:
  Spec(std::string name, std::vector<Rule<CheckFn>> rules)
      : RuleSet(std::move(rules)), name_(std::move(name)) {}
  const std::string& name() const { return name_; }

private:
  std::string name_;
};

/// One message per invalid node of the graph under `root`, in topological order.
std::vector<std::string> verify(const UOpPtr& root, const Spec& spec);

/// Throws an InternalError listing the invalid nodes, naming the step that produced them.
void verify_or_throw(const UOpPtr& root, const Spec& spec, std::string_view step);

/// Whether passes verify their output: BEAMLAB_VERIFY if set, else on unless NDEBUG.
bool verification_enabled();

/// Scalar and index arithmetic: constants, variables, ranges, ALU ops, casts, vectors, SINK.
const Spec& spec_scalar();

/// Kernel ASTs and kernel graphs: spec_scalar plus buffers (DEFINE_GLOBAL), registers
/// (DEFINE_REG), INDEX, LOAD, STORE, END and REDUCE.
const Spec& spec_kernel();

} // namespace beamlab

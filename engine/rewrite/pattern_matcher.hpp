// Rule sets: rows of (pattern, callback), indexed by the root op.
//
// A PatternMatcher rewrites one node: the first rule whose pattern matches and whose callback
// returns a node wins; a callback returns null for "no rewrite". Callbacks are pure: their
// only state is the explicit context passed to the rewrite (CtxRef), never a global. Rule sets
// combine with `+` (rules of the left operand first). Each rule remembers where it was
// written, so a rewrite loop can name the rule that caused it.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "engine/rewrite/upat.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

/// A type-checked reference to a rewrite's context object (or none).
class CtxRef {
public:
  CtxRef() = default;
  template <class T>
    requires(!std::is_same_v<std::remove_cv_t<T>, CtxRef>) // copies stay copies
  CtxRef(T& ctx) : ptr_(&ctx), type_(&typeid(T)) {}        // NOLINT(google-explicit-constructor)

  template <class T>
  T& get() const {
    internal_assert(ptr_ && *type_ == typeid(T))
        << "rewrite context is " << (ptr_ ? type_->name() : "absent") << ", rule wants "
        << typeid(T).name();
    return *static_cast<T*>(ptr_);
  }

private:
  void* ptr_ = nullptr;
  const std::type_info* type_ = nullptr;
};

/// What a callback sees: the matched node, its captures and the context.
struct Match {
  const UOpPtr& root;
  const Captures& caps;
  CtxRef ctx;
  const UOpPtr& operator[](std::string_view name) const { return caps[name]; }
};

/// One row of a rule set.
template <class Fn>
struct Rule {
  Rule(UPat pattern, Fn callback, std::source_location where = std::source_location::current())
      : pat(std::move(pattern)), fn(std::move(callback)), origin(describe(where)) {}
  UPat pat;
  Fn fn;
  std::string origin; ///< "file.cpp:line", for error messages

  static std::string describe(const std::source_location& loc) {
    std::string_view file = loc.file_name();
    if (size_t slash = file.rfind('/'); slash != std::string_view::npos)
      file.remove_prefix(slash + 1);
    return std::string(file) + ":" + std::to_string(loc.line());
  }
};

/// Rules indexed by the op of the node they can match.
template <class Fn>
class RuleSet {
public:
  RuleSet() = default;
  RuleSet(std::vector<Rule<Fn>> rules) : rules_(std::move(rules)) { reindex(); } // NOLINT

  /// Indices of the rules that may match a node of `op`, in order.
  const std::vector<uint32_t>& candidates(Op op) const { return by_op_[static_cast<size_t>(op)]; }
  const Rule<Fn>& rule(uint32_t i) const { return rules_[i]; }
  size_t size() const { return rules_.size(); }

  friend RuleSet operator+(const RuleSet& a, const RuleSet& b) {
    std::vector<Rule<Fn>> all = a.rules_;
    all.insert(all.end(), b.rules_.begin(), b.rules_.end());
    return RuleSet(std::move(all));
  }

private:
  void reindex() {
    for (uint32_t i = 0; i < rules_.size(); ++i)
      for (int op = 0; op < kNumOps; ++op)
        if (rules_[i].pat.any_op() || rules_[i].pat.root_ops().contains(static_cast<Op>(op)))
          by_op_[op].push_back(i);
  }
  std::vector<Rule<Fn>> rules_;
  std::array<std::vector<uint32_t>, kNumOps> by_op_; // indices, so copies stay valid
};

using RewriteFn = std::function<UOpPtr(const Match&)>;

/// A rule set whose callbacks return a replacement node, or null for no rewrite.
class PatternMatcher : public RuleSet<RewriteFn> {
public:
  using RuleSet::RuleSet;
  PatternMatcher(RuleSet<RewriteFn> rules) : RuleSet(std::move(rules)) {} // NOLINT

  /// The first rule's rewrite of `u`, or null; `fired` names the rule that produced it.
  UOpPtr rewrite(const UOpPtr& u, CtxRef ctx = {}, const Rule<RewriteFn>** fired = nullptr) const;
};

inline PatternMatcher operator+(const PatternMatcher& a, const PatternMatcher& b) {
  return PatternMatcher(static_cast<const RuleSet<RewriteFn>&>(a) +
                        static_cast<const RuleSet<RewriteFn>&>(b));
}

} // namespace beamlab

// UPat: patterns over UOps, as data.
//
// A pattern constrains a node's op (a set), dtype (a list), arg (a value or a predicate) and
// sources (exact, in any order for commutative ops, or "every source matches one pattern"),
// and may capture the node under a name. A name captured twice must bind the same node, so
// `x + x` matches only a sum of a node with itself. Arithmetic operators on UPats build ALU
// patterns, commutative where the op is:  UPat::var("x") * UPat::cvar("c")
// matches both x*4 and 4*x.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

/// Named nodes bound by a successful match.
class Captures {
public:
  /// The node bound to `name`, or null.
  const UOpPtr* find(std::string_view name) const;
  /// The node bound to `name`; asserts it is bound.
  const UOpPtr& operator[](std::string_view name) const;

private:
  friend class UPat;
  std::vector<std::pair<std::string, UOpPtr>> bound_;
};

class UPat {
public:
  /// How a pattern's sources are matched against a node's.
  enum class SrcMode : uint8_t {
    Any,     ///< sources unconstrained
    Exact,   ///< same count, in order
    Permute, ///< same count, in any order (commutative ops)
    Each,    ///< any count (>= 1); every source matches the single source pattern
  };

  UPat() = default;
  explicit UPat(OpSet ops, std::vector<UPat> src = {}, SrcMode mode = SrcMode::Exact);
  explicit UPat(Op op, std::vector<UPat> src = {}, SrcMode mode = SrcMode::Exact)
      : UPat(OpSet{op}, std::move(src), mode) {}

  /// Anything; captured as `name` when non-empty.
  static UPat var(std::string name = "");
  /// A constant; captured as `name`.
  static UPat cvar(std::string name = "");
  /// The integer or bool constant `v`.
  static UPat const_value(int64_t v);
  /// A node of `ops` with any sources.
  static UPat ops(OpSet ops, std::string name = "");

  UPat& named(std::string name);
  UPat& dtypes(std::vector<DType> dtypes);
  /// The node's dtype satisfies `pred` (e.g. is_int).
  UPat& dtype_if(std::function<bool(DType)> pred);
  UPat& arg(Arg a);
  UPat& arg_if(std::function<bool(const Arg&)> pred);

  /// Matches `u`, adding captures to `caps`; on failure `caps` is as it was.
  bool match(const UOpPtr& u, Captures& caps) const;

  /// The ops this pattern's root can match; empty means any op.
  const OpSet& root_ops() const { return ops_; }
  bool any_op() const { return ops_.empty(); }

private:
  bool match_self(const UOpPtr& u) const;
  bool match_sources(const UOpPtr& u, Captures& caps) const;
  bool match_permuted(const std::vector<UOpPtr>& src, std::vector<bool>& used, size_t i,
                      Captures& caps) const;

  OpSet ops_;
  std::vector<DType> dtypes_;
  std::function<bool(DType)> dtype_pred_;
  std::optional<Arg> arg_;
  std::function<bool(const Arg&)> arg_pred_;
  std::vector<UPat> src_;
  SrcMode mode_ = SrcMode::Any;
  std::string name_;
};

// ALU patterns; commutative ops match their sources in either order.
UPat alu_pat(Op op, std::vector<UPat> src);
UPat operator+(const UPat& a, const UPat& b);
UPat operator-(const UPat& a, const UPat& b);
UPat operator*(const UPat& a, const UPat& b);
UPat operator/(const UPat& a, const UPat& b); ///< IDIV
UPat operator%(const UPat& a, const UPat& b);

} // namespace beamlab

// UOp: the one IR node of beamlab, immutable and hash-consed.
//
// A UOp is (op, dtype, sources, arg). UOp::make interns nodes: building a structurally equal
// node twice returns the same object, so pointer equality is structural equality and graphs
// share every common subexpression. Nodes live while someone holds a UOpPtr; the intern table
// only keeps weak references.
//
// Every node carries a stable structural hash (same in every process and on every machine; it
// keys the tuning cache) and, for integer, index and bool dtypes, bounds [vmin, vmax] on its
// value, computed from its sources when it is built (see bounds.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/ir/arg.hpp"
#include "engine/ir/dtype.hpp"
#include "engine/ir/op.hpp"

namespace beamlab {

class UOp;
using UOpPtr = std::shared_ptr<const UOp>;

class UOp : public std::enable_shared_from_this<UOp> {
public:
  /// The interned node (op, dtype, src, arg). The source count must be within op_arity(op).
  static UOpPtr make(Op op, DType dtype, std::vector<UOpPtr> src = {}, Arg arg = {});

  Op op() const { return op_; }
  DType dtype() const { return dtype_; }
  const std::vector<UOpPtr>& src() const { return src_; }
  const UOpPtr& src(size_t i) const { return src_.at(i); }
  const Arg& arg() const { return arg_; }
  /// Stable structural hash (see engine/support/hash.hpp for the stability contract).
  uint64_t hash() const { return hash_; }

  /// Bounds of the value for integer, index and bool dtypes (bool as 0/1). For other dtypes
  /// they are INT64_MIN and INT64_MAX and mean nothing.
  int64_t vmin() const { return vmin_; }
  int64_t vmax() const { return vmax_; }
  /// vmin() == vmax(): the value is known.
  bool is_known() const { return vmin_ == vmax_; }

  /// The same node with other sources (interned again).
  UOpPtr replace_src(std::vector<UOpPtr> src) const;
  UOpPtr ptr() const { return shared_from_this(); }

  // Constants and leaves.
  static UOpPtr const_int(DType dtype, int64_t v);
  static UOpPtr const_float(DType dtype, double v);
  static UOpPtr const_bool(bool v);
  /// A constant of `dtype` equal to `v`, converted as C would.
  static UOpPtr const_like(DType dtype, double v);
  /// A symbolic integer variable with inclusive bounds [lo, hi].
  static UOpPtr variable(const std::string& name, int64_t lo, int64_t hi,
                         DType dtype = Scalar::Index);
  /// A loop variable 0 <= r < end, with an axis id.
  static UOpPtr range(const UOpPtr& end, int64_t axis_id);

  bool is_const() const { return op_ == Op::Const; }
  /// The value of an int or bool constant (asserts is_const()).
  int64_t const_value() const;

  ~UOp();
  UOp(const UOp&) = delete;
  UOp& operator=(const UOp&) = delete;

private:
  UOp(Op op, DType dtype, std::vector<UOpPtr> src, Arg arg, uint64_t hash);
  bool same_as(Op op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg) const;
  friend struct InternTable;
  friend void release_uop(const UOp*);

  Op op_;
  DType dtype_;
  std::vector<UOpPtr> src_;
  Arg arg_;
  uint64_t hash_;
  int64_t vmin_;
  int64_t vmax_;
};

/// Number of interned nodes alive now (for tests and leak checks).
size_t live_uop_count();

/// Bounds of a node about to be built; used by UOp::make. Defined in bounds.cpp.
struct Bounds {
  int64_t lo;
  int64_t hi;
};
Bounds compute_bounds(Op op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg);

// Builders for ALU nodes. Binary ops take the first operand's dtype (comparisons give bool);
// the operands must agree (see the verifier). Integer literals become constants of the
// other operand's dtype.
UOpPtr alu(Op op, const UOpPtr& a);
UOpPtr alu(Op op, const UOpPtr& a, const UOpPtr& b);
UOpPtr alu(Op op, const UOpPtr& a, const UOpPtr& b, const UOpPtr& c);
UOpPtr operator+(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator+(const UOpPtr& a, int64_t b);
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator-(const UOpPtr& a, int64_t b);
UOpPtr operator-(const UOpPtr& a);
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator*(const UOpPtr& a, int64_t b);
/// Integer operands: C division, truncating toward zero (IDIV). Floats: FDIV.
UOpPtr operator/(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator/(const UOpPtr& a, int64_t b);
/// C remainder: the sign follows the dividend (MOD).
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator%(const UOpPtr& a, int64_t b);
UOpPtr maximum(const UOpPtr& a, const UOpPtr& b);
UOpPtr minimum(const UOpPtr& a, const UOpPtr& b); ///< built as -max(-a, -b)
UOpPtr lt(const UOpPtr& a, const UOpPtr& b);
UOpPtr lt(const UOpPtr& a, int64_t b);
UOpPtr ne(const UOpPtr& a, const UOpPtr& b);
UOpPtr eq(const UOpPtr& a, const UOpPtr& b);
UOpPtr where(const UOpPtr& cond, const UOpPtr& a, const UOpPtr& b);
UOpPtr cast(const UOpPtr& a, DType to);
UOpPtr sink(std::vector<UOpPtr> src);

} // namespace beamlab

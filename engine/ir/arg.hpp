// Arg: the non-UOp payload of a UOp (a constant's value, a range's axis id, a variable's
// bounds, a reduction's op, a shape).
//
// A small tagged value: none, bool, int, float, string, op, or a tuple of args. Floats
// compare and hash by bit pattern, so NaN equals itself and 0.0 differs from -0.0, which is
// what hash-consing needs. Text form (read back exactly by the IR parser): `true`, `-3`,
// `1.5`, `inf`, `nan` (other NaN payloads as `nan_0x` and their 16 hex bits), `"name"`, `ADD`,
// `(1, "x", (2, 3))`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/op.hpp"
#include "engine/support/hash.hpp"

namespace beamlab {

class Arg {
public:
  enum class Kind : uint8_t { None, Bool, Int, Float, Str, Op, Tuple };

  Arg() = default;
  Arg(bool v) : kind_(Kind::Bool), int_(v) {}      // NOLINT(google-explicit-constructor)
  Arg(int v) : kind_(Kind::Int), int_(v) {}        // NOLINT(google-explicit-constructor)
  Arg(int64_t v) : kind_(Kind::Int), int_(v) {}    // NOLINT(google-explicit-constructor)
  Arg(double v) : kind_(Kind::Float), float_(v) {} // NOLINT(google-explicit-constructor)
  Arg(std::string v) : kind_(Kind::Str), str_(std::move(v)) {}          // NOLINT
  Arg(const char* v) : Arg(std::string(v)) {}                           // NOLINT
  Arg(Op v) : kind_(Kind::Op), int_(static_cast<int64_t>(v)) {}         // NOLINT
  Arg(std::vector<Arg> v) : kind_(Kind::Tuple), items_(std::move(v)) {} // NOLINT
  Arg(std::initializer_list<Arg> v) : kind_(Kind::Tuple), items_(v) {}

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }

  // Accessors assert the kind (an internal error otherwise).
  bool as_bool() const;
  int64_t as_int() const;
  double as_float() const;
  const std::string& as_str() const;
  Op as_op() const;
  const std::vector<Arg>& items() const;

  /// Feeds the arg into a stable hash (kind tag, then payload; ops by name).
  void hash_into(StableHasher& h) const;
  /// The text form (see the file comment).
  std::string str() const;

  friend bool operator==(const Arg& a, const Arg& b);

private:
  Kind kind_ = Kind::None;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;
  std::vector<Arg> items_;
};

/// Shortest text that reads back to the same double ("inf", "-inf", "nan" for specials).
std::string format_double(double v);

} // namespace beamlab

// Data types: scalars, short vectors of them, and pointers to either.
//
// A DType is a small value: a scalar kind, a lane count (1 for scalars), and for pointers
// an address space and an optional element count. `index` is the symbolic integer type of
// index arithmetic (lowered to int32 or int64 in codegen); `void` types statements.
// Promotion follows tinygrad's lattice (itself JAX's): least_upper_dtype(int8, uint8) is
// int16, (float16, bfloat16) is float32, and ints meet floats at the float.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace beamlab {

enum class Scalar : uint8_t {
  Void,
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Index,
};

enum class AddrSpace : uint8_t { Global, Local, Reg };

/// A scalar, vector or pointer type. Cheap to copy; compare with ==.
class DType {
public:
  constexpr DType() = default;
  constexpr DType(Scalar s) : scalar_(s) {} // NOLINT(google-explicit-constructor)

  Scalar scalar() const { return scalar_; }
  int lanes() const { return lanes_; }
  bool is_ptr() const { return is_ptr_; }
  AddrSpace addr_space() const { return space_; }
  /// Number of elements a pointer addresses, or -1 when unknown.
  int64_t ptr_size() const { return ptr_size_; }

  /// This type with `n` lanes (n >= 1). Pointers are to vectors: use base().vec(n).ptr().
  DType vec(int n) const;
  /// The scalar type of one lane.
  DType scalar_type() const { return DType(scalar_); }
  /// A pointer to this (scalar or vector) type.
  DType ptr(AddrSpace space = AddrSpace::Global, int64_t size = -1) const;
  /// What a pointer points to.
  DType base() const;

  bool is_bool() const { return !is_ptr_ && scalar_ == Scalar::Bool; }
  bool is_int() const;      ///< signed, unsigned or index (not bool), scalar or vector
  bool is_unsigned() const; ///< uint8 .. uint64
  bool is_float() const;    ///< float16, bfloat16, float32, float64
  bool is_void() const { return !is_ptr_ && scalar_ == Scalar::Void; }
  /// Bytes of one element (of all lanes); pointers are 8.
  int itemsize() const;
  /// Bits of one lane of a non-pointer type.
  int bits() const;

  /// Smallest and largest value of an integer or bool scalar type. index is int64's range;
  /// uint64's maximum is clamped to INT64_MAX (callers doing range analysis skip uint64).
  int64_t int_min() const;
  int64_t int_max() const;

  /// Text form, read back exactly by parse_dtype: "float32", "int8x4", "float32*",
  /// "float32x4*local[16]".
  std::string str() const;

  friend bool operator==(const DType&, const DType&) = default;

private:
  Scalar scalar_ = Scalar::Void;
  bool is_ptr_ = false;
  AddrSpace space_ = AddrSpace::Global;
  uint16_t lanes_ = 1;
  int64_t ptr_size_ = -1;
};

/// Scalar names in their text form ("float32", "index", ...).
std::string_view scalar_name(Scalar s);

/// Reads the text form written by DType::str(); nullopt on anything else.
std::optional<DType> parse_dtype(std::string_view text);

/// The smallest type every argument promotes to, by tinygrad's lattice. All arguments must be
/// scalar non-pointer types other than void and index.
DType least_upper_dtype(std::span<const DType> types);
inline DType least_upper_dtype(DType a, DType b) {
  DType both[] = {a, b};
  return least_upper_dtype(both);
}
/// The float type an op like exp or sqrt computes in: `t` itself if float, else float32.
DType least_upper_float(DType t);

/// Largest lane count a vector type may have.
inline constexpr int kMaxLanes = 1024;

} // namespace beamlab

// Builders for the nodes of tensor-level graphs, and the shapes of those nodes.
//
// A tensor graph is what the Tensor API builds and the scheduler turns into kernels. Its leaves
// are BUFFERs (device memory, flat) and scalar CONSTs (shape ()); its inner nodes are
// elementwise ALU ops over equal shapes (the API broadcasts explicitly), movement ops that only
// change how elements are addressed, REDUCE_AXIS, and CONTIGUOUS (a realization point).
//
//   BUFFER              arg (id, size)       shape (size,)   a fresh id per buffer
//   RESHAPE(x)          arg (dims...)        same element count
//   EXPAND(x)           arg (dims...)        size-1 dims of x grown
//   PERMUTE(x)          arg (perm...)        dims reordered: out[i] = x.dims[perm[i]]
//   PAD(x)              arg (b0, a0, ...)    dim i grown by b_i before and a_i after, with 0
//   SHRINK(x)           arg (b0, e0, ...)    dim i cut to [b_i, e_i)
//   FLIP(x)             arg (f0, f1, ...)    dim i reversed where f_i is 1
//   REDUCE_AXIS(x)      arg (op, (axes...))  reduced dims become 1 (op ADD, MUL or MAX)
//
// The dims of RESHAPE and EXPAND and the bounds of SHRINK may be symbolic (a Dim: a number times
// variables, written into the arg as (coefficient, (name, lo, hi)...)). A symbolic node's
// buffer is sized at its largest; BUFFER's size is that capacity.
#pragma once

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

/// A symbolic size and the values it may take, [lo, hi] (tinygrad's Variable("seq", 1, 512)).
struct Variable {
  std::string name;
  int64_t lo = 0, hi = 0;
};

/// Values of symbolic variables (DEFINE_VARs: a size known only when the program runs), by name.
using VarValues = std::map<std::string, int64_t>;

/// One dimension of a shape: a number, or a number times variables (`seq`, `768*seq`,
/// `batch*seq`). Kept a monomial, so equal sizes compare equal, and products and exact
/// quotients (a reshape's -1, a head split) stay dims; a sum of a variable and a number is
/// refused by name. Code that needs a number converts implicitly: a symbolic dim there is a
/// UserError naming it (the op takes fixed sizes only), never a wrong size.
class Dim {
public:
  Dim() = default;
  template <std::integral T>
  Dim(T v) : coeff_(static_cast<int64_t>(v)) {} // NOLINT(google-explicit-constructor)
  Dim(const Variable& v);                       // NOLINT(google-explicit-constructor)

  bool is_const() const { return vars_.empty(); }
  /// The number (a UserError when symbolic).
  int64_t value() const;
  operator int64_t() const { return value(); } // NOLINT(google-explicit-constructor)
  /// The smallest and largest values over the variables' ranges.
  int64_t min() const;
  int64_t max() const;
  /// The value at `values` (a UserError when one of its variables has none).
  int64_t at(const VarValues& values) const;
  /// An Index expression: a CONST, or the product of the DEFINE_VARs and the number.
  UOpPtr expr() const;
  /// The DEFINE_VARs it multiplies, by name (a variable twice for its square).
  const std::vector<UOpPtr>& vars() const { return vars_; }
  int64_t coefficient() const { return coeff_; }
  /// "768", "seq", "768*seq".
  std::string str() const;
  /// Stored in a movement op's arg: an int, or (coefficient, (name, lo, hi)...).
  Arg to_arg() const;
  static Dim from_arg(const Arg& a);

  friend bool operator==(const Dim& a, const Dim& b) {
    return a.coeff_ == b.coeff_ && (a.coeff_ == 0 || a.vars_ == b.vars_);
  }
  template <std::integral T>
  friend bool operator==(const Dim& a, T b) {
    return a == Dim(b);
  }
  friend Dim operator*(const Dim& a, const Dim& b);
  template <std::integral T>
  friend Dim operator*(const Dim& a, T b) {
    return a * Dim(b);
  }
  template <std::integral T>
  friend Dim operator*(T a, const Dim& b) {
    return Dim(a) * b;
  }
  /// The exact quotient; a UserError when `b` doesn't divide `a`.
  friend Dim operator/(const Dim& a, const Dim& b);
  template <std::integral T>
  friend Dim operator/(const Dim& a, T b) {
    return a / Dim(b);
  }
  /// Sums and differences stay dims when one side is 0 or both are numbers.
  friend Dim operator+(const Dim& a, const Dim& b);
  template <std::integral T>
  friend Dim operator+(const Dim& a, T b) {
    return a + Dim(b);
  }
  template <std::integral T>
  friend Dim operator+(T a, const Dim& b) {
    return Dim(a) + b;
  }
  friend Dim operator-(const Dim& a, const Dim& b);
  template <std::integral T>
  friend Dim operator-(const Dim& a, T b) {
    return a - Dim(b);
  }
  template <std::integral T>
  friend Dim operator-(T a, const Dim& b) {
    return Dim(a) - b;
  }
  template <std::integral T>
  friend Dim operator/(T a, const Dim& b) {
    return Dim(a) / b;
  }
  Dim& operator+=(const Dim& b) { return *this = *this + b; }
  Dim& operator-=(const Dim& b) { return *this = *this - b; }
  Dim& operator*=(const Dim& b) { return *this = *this * b; }
  Dim& operator/=(const Dim& b) { return *this = *this / b; }
  /// Whether `a` divides `b` exactly at every value.
  friend bool divides(const Dim& a, const Dim& b);
  friend std::ostream& operator<<(std::ostream& os, const Dim& d);

private:
  int64_t coeff_ = 0;
  std::vector<UOpPtr> vars_;
};

/// A tensor's dims. Converts to and from a list of numbers (every dim a number, else a
/// UserError naming the symbolic one), so code of fixed sizes reads as it did.
class Shape : public std::vector<Dim> {
public:
  using std::vector<Dim>::vector;
  Shape() = default;
  Shape(const std::vector<int64_t>& dims) // NOLINT
      : std::vector<Dim>(dims.begin(), dims.end()) {}
  Shape(std::vector<Dim> dims) : std::vector<Dim>(std::move(dims)) {} // NOLINT
  operator std::vector<int64_t>() const;                              // NOLINT
};

/// "(2, 3, 4)", "(seq, 768)".
std::string shape_str(const Shape& shape);
/// The product of the dims (1 for a scalar).
Dim shape_numel(const Shape& shape);
/// Row-major strides of `shape`, in elements.
std::vector<Dim> contiguous_strides(const Shape& shape);
/// Whether a dim is a variable's.
bool is_symbolic(const Shape& shape);
/// The variables of a shape's dims, by name.
std::vector<Variable> shape_variables(const Shape& shape);
/// The shape at `values` (a UserError naming a variable with no value).
std::vector<int64_t> shape_at(const Shape& shape, const VarValues& values);

/// A new BUFFER of `size` elements of `dtype`, with an id no other buffer of this process has.
UOpPtr tensor_buffer(DType dtype, int64_t size);
/// The id of a BUFFER node.
int64_t buffer_id(const UOp& buffer);
/// The element count of a BUFFER node.
int64_t buffer_size(const UOp& buffer);

UOpPtr tensor_reshape(const UOpPtr& x, const Shape& shape);
UOpPtr tensor_expand(const UOpPtr& x, const Shape& shape);
UOpPtr tensor_permute(const UOpPtr& x, const std::vector<int64_t>& perm);
UOpPtr tensor_pad(const UOpPtr& x, const std::vector<std::pair<int64_t, int64_t>>& pads);
UOpPtr tensor_shrink(const UOpPtr& x, const std::vector<std::pair<Dim, Dim>>& bounds);
UOpPtr tensor_flip(const UOpPtr& x, const std::vector<bool>& flip);
UOpPtr tensor_reduce(const UOpPtr& x, Op op, const std::vector<int64_t>& axes);
UOpPtr tensor_contiguous(const UOpPtr& x);

/// The integers of a movement op's arg (a UserError for a symbolic one).
std::vector<int64_t> int_args(const UOp& u);
/// The dims of a movement op's arg (RESHAPE, EXPAND, SHRINK).
std::vector<Dim> dim_args(const UOp& u);
/// A REDUCE_AXIS node's op and axes.
Op reduce_op(const UOp& u);
std::vector<int64_t> reduce_axes(const UOp& u);
bool is_movement(Op op);

/// Memoized shapes of the nodes of tensor graphs; an InternalError for a malformed node (the
/// Tensor API checks user input before building one).
class ShapeCache {
public:
  const Shape& of(const UOpPtr& u);

private:
  Shape compute(const UOpPtr& u);
  std::unordered_map<const UOp*, Shape> memo_;
  std::vector<UOpPtr> keep_; // memo keys stay alive, so no address is reused
};

} // namespace beamlab

// The expression front-end's values and calls, shared by its files: what an expression
// evaluates to, how a call's arguments bind to a method's parameters, and the method table.
// Private to frontends/expr.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontends/expr/syntax_internal.hpp"

namespace beamlab::expr {

enum class Kind {
  Tensor,
  Int,
  Float,
  Bool,
  None,
  String,
  DType,
  Tuple,
  List,
  Ellipsis,
  TensorClass,
  DTypes
};

/// What an expression evaluates to: a tensor, a Python scalar, a tuple or list, a dtype, or
/// one of the namespaces `Tensor` and `dtypes`. `pos` is where its text starts.
struct Value {
  Kind kind = Kind::None;
  Pos pos;
  std::optional<Tensor> tensor;
  int64_t i = 0;            ///< Int, and Bool as 0 or 1
  double f = 0;             ///< Float
  std::string s;            ///< String
  DType dtype;              ///< DType
  std::vector<Value> items; ///< Tuple, List

  Value() = default;
  Value(Tensor t) : kind(Kind::Tensor), tensor(std::move(t)) {} // NOLINT: adapters return Tensors
  static Value integer(int64_t v);
  static Value real(double v);
  static Value boolean(bool v);
  static Value sequence(Kind kind, std::vector<Value> items);

  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_integral() const { return kind == Kind::Int || kind == Kind::Bool; }
  bool is_sequence() const { return kind == Kind::Tuple || kind == Kind::List; }
  double number() const { return kind == Kind::Float ? f : static_cast<double>(i); }
};

/// "a tensor of shape (2, 3)", "the integer 3", "a tuple", ... for messages.
std::string describe(const Value& v);

/// The dtype named `name` in tinygrad's spelling ("float16", "half", "int", "bool", ...).
std::optional<DType> dtype_named(std::string_view name);
/// Every dtype name dtype_named() knows, for suggestions.
std::vector<std::string_view> dtype_names();

/// Whether `shape` (ignoring dims below 1) has at most `limit` elements, without overflow.
bool fits(const Shape& shape, int64_t limit);

/// A keyword argument as written.
struct Keyword {
  std::string name;
  Pos pos;
  Value value;
};

struct Method;

/// One call's arguments, bound to the method's parameters the way Python binds them, with
/// typed getters that name the parameter and its column when a value has the wrong type.
class Args {
public:
  Args(const Method& method, Pos at, std::optional<Tensor> self, std::vector<Value> positional,
       std::vector<Keyword> keywords, const Limits& limits);

  const std::string& name() const { return name_; }
  Pos at() const { return at_; }
  const Limits& limits() const { return limits_; }
  const Tensor& self() const { return *self_; }

  /// The value bound to `param` (its first name), or null if it was left out or None.
  const Value* get(std::string_view param) const;
  bool given(std::string_view param) const { return get(param) != nullptr; }

  Tensor tensor(std::string_view param) const;
  std::optional<Tensor> optional_tensor(std::string_view param) const;
  /// A tensor, or a number as a scalar of `like`'s kind (Tensor::scalar_like).
  Tensor operand(std::string_view param, const Tensor& like) const;
  /// The tensors of a `*param` (or of one tuple or list passed to it).
  std::vector<Tensor> tensors(std::string_view param) const;
  int64_t integer(std::string_view param, int64_t fallback = 0) const;
  std::optional<int64_t> optional_integer(std::string_view param) const;
  /// An integer, a tuple or list of them, or a `*param`'s values.
  std::vector<int64_t> integers(std::string_view param) const;
  /// Reduction axes: None or left out for all, an integer, or a tuple of them.
  std::vector<int64_t> axes(std::string_view param) const;
  /// integers() checked to describe at most Limits::max_elements elements (-1 dims skipped).
  Shape shape(std::string_view param) const;
  /// An integer, or a pair of equal integers (beamlab's 2-D windows are square).
  int64_t square(std::string_view param, int64_t fallback) const;
  double number(std::string_view param, double fallback) const;
  std::optional<double> optional_number(std::string_view param) const;
  bool flag(std::string_view param, bool fallback) const;
  DType dtype(std::string_view param, DType fallback) const;
  std::string string(std::string_view param) const;

  /// `v` as an integer argument of `param`: an Int within +-Limits::max_elements.
  int64_t integer_of(const Value& v, std::string_view param) const;
  /// Throws "NAME: 'param' needs NEED, not <what v is>" at v's column.
  [[noreturn]] void reject(const Value& v, std::string_view param, std::string_view need) const;
  /// Throws "NAME: the result would have more than N elements ..." unless `shape` fits.
  void check_size(const Shape& shape) const;

private:
  struct Param {
    std::vector<std::string_view> names;
    bool optional = false;
    bool rest = false;
  };
  static std::vector<Param> parse_params(std::string_view spec);
  void bind_keyword(Keyword& kw);
  size_t slot(std::string_view param) const;
  std::string signature() const;

  std::string name_;
  Pos at_;
  std::optional<Tensor> self_;
  const Limits& limits_;
  std::vector<Param> params_;
  std::vector<std::optional<Value>> slots_;
};

/// A row of the method table: a name, its parameters and an adapter onto Tensor's API.
/// `params` lists names Python-style: "axis|dim?, keepdim?" ('|' separates aliases, '?' marks
/// an optional parameter, '*' one that collects the remaining positional arguments).
struct Method {
  std::string_view name;
  std::string_view params;
  Value (*call)(const Args& args);
};

/// The row of `table` called `name`; null if there is none.
inline const Method* find_named(std::span<const Method> table, std::string_view name) {
  for (const Method& m : table)
    if (m.name == name) return &m;
  return nullptr;
}
/// The names in `table`, in order.
inline std::vector<std::string_view> names_of(std::span<const Method> table) {
  std::vector<std::string_view> out;
  for (const Method& m : table) out.push_back(m.name);
  return out;
}

/// The method `x.name(...)` of a tensor; null if there is none.
const Method* find_method(std::string_view name);
/// The function `Tensor.name(...)` (cat, stack, einsum, arange, zeros, ...); null if none.
const Method* find_function(std::string_view name);
/// `Tensor(data, dtype=None)`: a tensor from a number or nested lists of numbers.
const Method& constructor();
/// The names of the methods (or functions), for suggestions.
std::vector<std::string_view> method_names();
std::vector<std::string_view> function_names();

/// Runs `method` on `args`; a UserError from Tensor's API gets the call's position (and the
/// method's name if the message doesn't start with it), and a tensor result is size-checked.
Value invoke(const Method& method, const Args& args);

/// `op` ("-", "+", "~") on `v`; numbers fold as in Python.
Value apply_unary(const std::string& op, const Value& v, Pos at);
/// `a op b` for Python's binary operators; numbers fold, a number with a tensor becomes a
/// scalar of the tensor's kind.
Value apply_binary(const std::string& op, const Value& a, const Value& b, Pos at,
                   const Limits& limits);

/// One item of a subscript: an integer, a slice, None (a new axis) or '...'.
struct IndexItem {
  enum class Kind { Int, Slice, NewAxis, Ellipsis } kind = Kind::Int;
  Pos pos;
  int64_t i = 0;
  std::optional<int64_t> start, stop, step;
};

/// x[items] by Python's basic indexing: shrink, flip, strided views and reshapes.
Tensor index_tensor(const Tensor& x, const std::vector<IndexItem>& items, Pos at);

} // namespace beamlab::expr

// Python's operators on expression values: on tensors they call Tensor's operators and
// methods (a number with a tensor becomes a scalar of the tensor's kind, as Tensor's double
// overloads do); on numbers they fold as Python would, with overflow and division by zero as
// errors. Comparisons give bool tensors, as in tinygrad.
#include "frontends/expr/value_internal.hpp"

#include <cmath>
#include <limits>

namespace beamlab::expr {
namespace {

bool is_comparison(const std::string& op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
}

std::string pair_of(const Value& a, const Value& b) { return describe(a) + " and " + describe(b); }

[[noreturn]] void overflow(Pos at, const std::string& op) {
  fail(at, "integer overflow in " + quoted(op) + " (use floats for large numbers)");
}

int64_t int_power(int64_t base, int64_t exp, Pos at) {
  int64_t out = 1;
  for (; exp > 0; exp >>= 1) {
    if ((exp & 1) && __builtin_mul_overflow(out, base, &out)) overflow(at, "**");
    if (exp > 1 && __builtin_mul_overflow(base, base, &base)) overflow(at, "**");
  }
  return out;
}

// Python's // and % on integers round toward -inf.
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Value fold_bits(const std::string& op, const Value& a, const Value& b, Pos at) {
  if (!a.is_integral() || !b.is_integral())
    fail(at, quoted(op) + " needs integers, not " + pair_of(a, b));
  if (op == "&" || op == "|" || op == "^") {
    int64_t r = op == "&" ? (a.i & b.i) : op == "|" ? (a.i | b.i) : (a.i ^ b.i);
    return a.kind == Kind::Bool && b.kind == Kind::Bool ? Value::boolean(r != 0)
                                                        : Value::integer(r);
  }
  if (b.i < 0) fail(at, "negative shift count " + std::to_string(b.i));
  if (op == ">>") return Value::integer(b.i >= 63 ? (a.i < 0 ? -1 : 0) : a.i >> b.i);
  if (a.i == 0) return Value::integer(0);
  if (b.i >= 63 || (a.i > 0 ? a.i > (INT64_MAX >> b.i) : a.i < (INT64_MIN >> b.i)))
    overflow(at, "<<");
  return Value::integer(static_cast<int64_t>(static_cast<uint64_t>(a.i) << b.i));
}

Value fold_ints(const std::string& op, int64_t a, int64_t b, Pos at) {
  int64_t r = 0;
  if (op == "+" && !__builtin_add_overflow(a, b, &r)) return Value::integer(r);
  if (op == "-" && !__builtin_sub_overflow(a, b, &r)) return Value::integer(r);
  if (op == "*" && !__builtin_mul_overflow(a, b, &r)) return Value::integer(r);
  if (op == "+" || op == "-" || op == "*") overflow(at, op);
  if (b == 0) fail(at, "integer division or modulo by zero");
  if (a == INT64_MIN && b == -1) overflow(at, op);
  return Value::integer(op == "//" ? floor_div(a, b) : floor_mod(a, b));
}

Value fold_floats(const std::string& op, double a, double b, Pos at) {
  if (op == "+") return Value::real(a + b);
  if (op == "-") return Value::real(a - b);
  if (op == "*") return Value::real(a * b);
  if (op == "**") {
    if (a == 0 && b < 0) fail(at, "0.0 cannot be raised to a negative power");
    if (a < 0 && std::isfinite(b) && b != std::floor(b))
      fail(at, "a negative number to a fractional power is complex");
    return Value::real(std::pow(a, b));
  }
  if (b == 0) fail(at, "float division by zero");
  if (op == "/") return Value::real(a / b);
  if (op == "//") return Value::real(std::floor(a / b));
  double r = std::fmod(a, b);
  return Value::real(r != 0 && ((r < 0) != (b < 0)) ? r + b : r);
}

Value fold(const std::string& op, const Value& a, const Value& b, Pos at) {
  if (is_comparison(op)) {
    double x = a.number(), y = b.number();
    bool ints = a.is_integral() && b.is_integral();
    auto cmp = [&](auto l, auto r) {
      return op == "<"    ? l < r
             : op == "<=" ? l <= r
             : op == ">"  ? l > r
             : op == ">=" ? l >= r
             : op == "==" ? l == r
                          : l != r;
    };
    return Value::boolean(ints ? cmp(a.i, b.i) : cmp(x, y));
  }
  if (op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>")
    return fold_bits(op, a, b, at);
  if (op == "@") fail(at, "'@' needs tensors, not " + pair_of(a, b));
  bool ints = a.is_integral() && b.is_integral();
  if (ints && op == "**" && b.i >= 0) return Value::integer(int_power(a.i, b.i, at));
  if (ints && op != "/" && op != "**") return fold_ints(op, a.i, b.i, at);
  return fold_floats(op, a.number(), b.number(), at);
}

// A number next to tensor `like`, as a scalar of its kind.
Tensor scalar(const Value& v, const Tensor& like) { return like.scalar_like(v.number()); }

Tensor shift(const std::string& op, const Value& a, const Value& b, Pos at) {
  if (a.kind != Kind::Tensor || b.kind != Kind::Int)
    fail(at, quoted(op) + " shifts a tensor by an integer, not " + pair_of(a, b));
  if (b.i < 0 || b.i > 64) fail(at, "shift count " + std::to_string(b.i) + " is not in 0..64");
  return op == "<<" ? a.tensor->lshift(b.i) : a.tensor->rshift(b.i);
}

Tensor arithmetic(const std::string& op, const Value& a, const Value& b) {
  const bool ta = a.kind == Kind::Tensor, tb = b.kind == Kind::Tensor;
  auto apply = [&](auto f) {
    if (!ta) return f(a.number(), *b.tensor);
    if (!tb) return f(*a.tensor, b.number());
    return f(*a.tensor, *b.tensor);
  };
  if (op == "+") return apply([](const auto& x, const auto& y) { return x + y; });
  if (op == "-") return apply([](const auto& x, const auto& y) { return x - y; });
  if (op == "*") return apply([](const auto& x, const auto& y) { return x * y; });
  return apply([](const auto& x, const auto& y) { return x / y; });
}

Tensor on_tensors(const std::string& op, const Value& a, const Value& b, Pos at) {
  if (op == "+" || op == "-" || op == "*" || op == "/") return arithmetic(op, a, b);
  if (op == "<<" || op == ">>") return shift(op, a, b, at);
  if (op == "**" && a.kind == Kind::Tensor && b.is_number()) return a.tensor->pow(b.number());
  const Tensor& like = a.kind == Kind::Tensor ? *a.tensor : *b.tensor;
  Tensor x = a.kind == Kind::Tensor ? *a.tensor : scalar(a, like);
  Tensor y = b.kind == Kind::Tensor ? *b.tensor : scalar(b, like);
  if (op == "**") return x.pow(y);
  if (op == "//") return x.floordiv(y);
  if (op == "%") return x.mod(y);
  if (op == "@") return x.matmul(y);
  if (op == "<") return x.lt(y);
  if (op == "<=") return x.le(y);
  if (op == ">") return x.gt(y);
  if (op == ">=") return x.ge(y);
  if (op == "==") return x.eq(y);
  if (op == "!=") return x.ne(y);
  if (op == "&") return x & y;
  if (op == "|") return x | y;
  return x ^ y;
}

} // namespace

Value apply_unary(const std::string& op, const Value& v, Pos at) {
  if (v.kind == Kind::Tensor) {
    try {
      if (op == "-") return v.tensor->neg();
      if (op == "~") return v.tensor->bitwise_not();
      return v;
    } catch (const UserError& e) {
      fail(at, e.what());
    }
  }
  if (!v.is_number())
    fail(at, "unary " + quoted(op) + " needs a number or a tensor, not " + describe(v));
  if (op == "+") return v.kind == Kind::Bool ? Value::integer(v.i) : v;
  if (op == "~") {
    if (!v.is_integral()) fail(at, "'~' needs an integer or a tensor, not " + describe(v));
    return Value::integer(~v.i);
  }
  if (v.kind == Kind::Float) return Value::real(-v.f);
  if (v.i == INT64_MIN) overflow(at, "-");
  return Value::integer(-v.i);
}

Value apply_binary(const std::string& op, const Value& a, const Value& b, Pos at,
                   const Limits& limits) {
  bool tensors = a.kind == Kind::Tensor || b.kind == Kind::Tensor;
  bool operands =
      (a.kind == Kind::Tensor || a.is_number()) && (b.kind == Kind::Tensor || b.is_number());
  if (!operands) fail(at, quoted(op) + " needs numbers or tensors, not " + pair_of(a, b));
  if (!tensors) return fold(op, a, b, at);
  Tensor out = [&] {
    try {
      return on_tensors(op, a, b, at);
    } catch (const PositionedError&) {
      throw;
    } catch (const UserError& e) {
      fail(at, e.what());
    }
  }();
  if (!fits(out.shape(), limits.max_elements))
    fail(at, quoted(op) + ": the result would have more than " +
                 std::to_string(limits.max_elements) + " elements, the limit for an expression");
  return out;
}

} // namespace beamlab::expr

// Every user error of the expression front-end, with its exact message and column; then
// random token soup and random bytes, which must only ever raise one-line UserErrors.
#include <gtest/gtest.h>

#include <iterator>
#include <random>

#include "tests/expr/expr_helpers.hpp"

namespace beamlab::expr::testing {
namespace {

struct ErrorCase {
  std::string text;
  std::string message;
};

void expect_errors(const std::vector<ErrorCase>& cases,
                   const std::map<std::string, Tensor>& inputs = Inputs().map()) {
  for (const ErrorCase& c : cases) EXPECT_EQ(error_of(c.text, inputs), c.message) << c.text;
}

TEST(ExprErrors, Tokens) {
  expect_errors({
      {"x $ y", "expr:1:3: unexpected character '$'"},
      {"!x", "expr:1:1: unexpected character '!' (write ~x or x.logical_not() for 'not')"},
      {"x \xc3\x97 2", "expr:1:3: unexpected character '\\xc3'"},
      {"x * 1e", "expr:1:5: malformed number '1e'"},
      {"x * 3x", "expr:1:5: malformed number '3x'"},
      {"x * 99999999999999999999",
       "expr:1:5: the integer 99999999999999999999 does not fit in 64 bits"},
      {"x.cast('float16)", "expr:1:8: unterminated string (close it with ')"},
      {"x.cast('a\tb')", "expr:1:10: a control character in a string"},
  });
}

TEST(ExprErrors, Syntax) {
  expect_errors({
      {"", "expr:1:1: the expression is empty"},
      {"  # only a comment", "expr:1:19: the expression is empty"},
      {"a*(b + c", "expr:1:9: expected ')' to close '(' at 1:3"},
      {"x[1, 2", "expr:1:7: expected ']' to close '[' at 1:2"},
      {"x.sum(0, 1", "expr:1:11: expected ')' to close '(' at 1:6"},
      {"[a, b", "expr:1:6: expected ']' to close '[' at 1:1"},
      {"x y",
       "expr:1:3: unexpected 'y' after a complete expression (is an operator or a comma missing?)"},
      {"x +", "expr:1:4: expected an expression, found the end of the text"},
      {"x + )", "expr:1:5: expected an expression, found ')'"},
      {"x.", "expr:1:3: expected a name after '.', found the end of the text"},
      {"x[]", "expr:1:3: expected an index inside '[]'"},
      {"x.sum(*x.shape)", "expr:1:7: unpacking arguments with * is not supported"},
      {"a and b", "expr:1:3: 'and' does not apply to tensors: use & or logical_and()"},
      {"a or b", "expr:1:3: 'or' does not apply to tensors: use | or logical_or()"},
      {"not a", "expr:1:1: 'not' does not apply to tensors: use ~x or x.logical_not()"},
      {"a if m else b", "expr:1:3: 'if' is not part of tensor expressions"},
      {"a < b < a",
       "expr:1:7: chained comparisons (a < b < c) are not supported: write (a < b) & (b < c)"},
      {"x.sum(axis=0, axis=1)", "expr:1:15: the keyword argument 'axis' is given twice"},
      {"x.sum(axis=0, 1)",
       "expr:1:15: a positional argument follows a keyword argument (put it before the keywords)"},
      {"a +\n  b.relux()", "expr:2:5: unknown method 'relux' (did you mean 'relu'?)"},
  });
}

TEST(ExprErrors, Names) {
  expect_errors({{"q + a", "expr:1:1: unknown input 'q' (the inputs: a, b)"},
                 {"q(1)", "expr:1:1: unknown input 'q' (the inputs: a, b)"},
                 {"a +\n  relux(b)", "expr:2:3: unknown input 'relux' (the inputs: a, b)"}},
                {{"a", Tensor::zeros({2})}, {"b", Tensor::zeros({2})}});
  expect_errors({{"wieght * 2", "expr:1:1: unknown input 'wieght' (did you mean 'weight'?)"}},
                {{"weight", Tensor::zeros({2})}});
  expect_errors({{"x", "expr:1:1: unknown input 'x' (no inputs were given)"}}, {});
  expect_errors({
      {"x.relux()", "expr:1:3: unknown method 'relux' (did you mean 'relu'?)"},
      {"(a.matmul(w) + bias).relux()", "expr:1:22: unknown method 'relux' (did you mean 'relu'?)"},
      {"x.frobnicate()", "expr:1:3: unknown method 'frobnicate'"},
      {"x.shap", "expr:1:3: unknown attribute 'shap' (did you mean 'shape'?)"},
      {"x.relu + 1", "expr:1:3: 'relu' is a method: call it, .relu()"},
      {"x.shape()", "expr:1:3: 'shape' is an attribute: write .shape without ()"},
      {"x.T()", "expr:1:3: 'T' is an attribute: write .T without ()"},
      {"a(1)", "expr:1:1: only methods (x.relu()), Tensor's functions (Tensor.cat(...)) and "
               "Tensor(...) can be called"},
      {"Tensor.foo(1)", "expr:1:8: Tensor has no function 'foo'"},
      {"Tensor.relux(x)", "expr:1:8: Tensor has no function 'relux' (did you mean 'relu'?)"},
      {"Tensor.relu(1)", "expr:1:8: Tensor.relu needs a tensor as its first argument"},
      {"Tensor.cat", "expr:1:8: Tensor.cat is a function: call it, Tensor.cat(...)"},
      {"(3).relu()", "expr:1:5: 'relu' is a tensor method, and this is the integer 3 (make a "
                     "tensor of it with Tensor(...))"},
      {"x.shape.index(3)", "expr:1:9: a tuple has no method 'index'"},
      {"x.cast(dtypes.flaot16)", "expr:1:15: unknown dtype 'flaot16' (did you mean 'float16'?)"},
      {"dtypes.float16(1)", "expr:1:8: dtypes.float16 is not callable"},
      {"Tensor.foo", "expr:1:8: Tensor has no function 'foo'"},
      {"(2).foo", "expr:1:5: the integer 2 has no attribute 'foo'"},
      {"(3).frob()", "expr:1:5: the integer 3 has no method 'frob'"},
  });
}

TEST(ExprErrors, Arguments) {
  expect_errors({
      {"x.sum(axs=0)", "expr:1:7: sum has no parameter 'axs' (did you mean 'axis'?)"},
      {"x.sum(foo=0)", "expr:1:7: sum has no parameter 'foo' (it takes sum([axis], [keepdim]))"},
      {"x.sum(0, dim=1)", "expr:1:10: sum: 'axis' is given twice"},
      {"x.sum(0, True, 3)", "expr:1:16: sum: too many arguments (it takes sum([axis], [keepdim]))"},
      {"x.matmul()", "expr:1:3: matmul is missing the argument 'x' (it takes matmul(x, [dtype]))"},
      {"x.where(m)", "expr:1:3: where is missing the argument 'y' (it takes where(x, y))"},
      {"x.sum(keepdim=2)", "expr:1:15: sum: 'keepdim' needs True or False, not the integer 2"},
      {"x.sum(axis='a')", "expr:1:12: sum: 'axis' needs an integer, not the string 'a'"},
      {"x.reshape(4, 'a')", "expr:1:14: reshape: 'shape' needs an integer, not the string 'a'"},
      {"x.cast('flaot16')", "expr:1:8: cast: unknown dtype 'flaot16' (did you mean 'float16'?)"},
      {"x.cast(3)",
       "expr:1:8: cast: 'dtype' needs a dtype (dtypes.float16 or 'float16'), not the integer 3"},
      {"x.pow('a')", "expr:1:7: pow: 'x' needs a tensor, not the string 'a'"},
      {"x.lshift(a)", "expr:1:10: lshift: 'x' needs an integer, not a tensor of shape (2, 3)"},
      {"img.conv2d(k, groups=2.5)", "expr:1:22: conv2d: 'groups' needs an integer, not a float"},
      {"Tensor.cat(a, 1)", "expr:1:15: cat: 'tensors' needs tensors, not the integer 1"},
      {"Tensor([1, [2]])", "expr:1:12: Tensor: 'data' needs nested lists of one shape (this one is "
                           "ragged), not a list"},
      {"Tensor([])", "expr:1:8: Tensor: 'data' needs a non-empty list (empty tensors are not "
                     "supported), not a list"},
      {"Tensor.rand(2, seed=-1)",
       "expr:1:21: rand: 'seed' needs an integer of at least 0, not the integer -1"},
      {"x.layernorm(0, weight=y[0], bias=y[1])",
       "expr:1:13: layernorm: 'axis' needs -1 with weight and bias (they apply to the last axis), "
       "not the integer 0"},
      {"img.avg_pool2d(2, dilation=2)",
       "expr:1:28: avg_pool2d: 'dilation' needs 1 (avg_pool2d has none), not the integer 2"},
      {"img.max_pool2d(kernel_size=(2, 3))",
       "expr:1:28: max_pool2d: 'kernel_size' needs an integer or a pair of equal integers (windows "
       "are square), not a tuple"},
      {"x.pad((1, 2, 3))", "expr:1:7: pad: 'padding' needs a (before, after) pair per dim, or an "
                           "even count of at most 4 integers (the last dim first), not a tuple"},
      {"x.matmul(None)", "expr:1:3: matmul: 'x' needs a tensor, not None"},
      {"Tensor(None)", "expr:1:1: Tensor: 'data' needs a number or a list of numbers, not None"},
      {"Tensor.einsum(None, a)", "expr:1:8: einsum: 'formula' needs a string, not None"},
      {"Tensor.einsum(1, a)", "expr:1:15: einsum: 'formula' needs a string, not the integer 1"},
      {"Tensor.full((2, 2))", "expr:1:8: full is missing the argument 'fill_value' (it takes "
                              "full(shape, fill_value, [dtype]))"},
      {"x.shrink(((0, 1), 2))",
       "expr:1:19: shrink: 'arg' needs a pair of integers or None, not the integer 2"},
      {"x.shrink(3)",
       "expr:1:10: shrink: 'arg' needs a tuple of pairs, one per dimension, not the integer 3"},
      {"x.scaled_dot_product_attention(x, y, dropout_p=0.1)",
       "expr:1:48: scaled_dot_product_attention: 'dropout_p' needs 0 (inference has no dropout), "
       "not a float"},
  });
}

// Errors the Tensor API raises while building, prefixed with the call's or operator's column.
TEST(ExprErrors, FromTheTensorApi) {
  expect_errors({
      {"x.reshape(5, 7)",
       "expr:1:3: reshape: cannot reshape (4, 6) (24 elements) to (5, 7) (35 elements)"},
      {"a + w", "expr:1:3: add: shapes (2, 3) and (3, 4) do not broadcast (dimension 0: 2 vs 3)"},
      {"a @ w.T", "expr:1:3: matmul: (2, 3) @ (4, 3): inner dimensions differ (3 vs 4)"},
      {"x.softmax(5)", "expr:1:3: softmax: max: axis 5 is out of range for shape (4, 6)"},
      {"x & x", "expr:1:3: bitwise_and: not defined for dtype float32 (shape (4, 6)); bitwise ops "
                "take integers and bools"},
      {"bias.T", "expr:1:6: T: transpose: axis -2 is out of range for shape (4,)"},
      {"-m", "expr:1:1: neg: not defined for dtype bool (shape (2, 3)); use logical_not for bools"},
      {"Tensor.cat(a, w)",
       "expr:1:8: cat: shapes (2, 3) and (3, 4) differ on axis 1 (only axis 0 may differ)"},
      {"Tensor.cat()", "expr:1:8: cat: no tensors"},
      {"x.topk(7)", "expr:1:3: topk: k = 7 is not in [1, 6] (axis -1 of shape (4, 6))"},
      {"a.scatter(1, i, b, reduce='sum')",
       "expr:1:3: scatter: reduce must be none, add, mul, max or min, not 'sum'"},
      {"Tensor.arange(0, 1, 0)", "expr:1:8: arange: step is 0"},
      {"x.reshape(-1, -1)", "expr:1:3: reshape: (-1, -1) has more than one -1"},
      {"x[1:3].reshape(7)",
       "expr:1:8: reshape: cannot reshape (2, 6) (12 elements) to (7,) (7 elements)"},
  });
}

TEST(ExprErrors, Indexing) {
  expect_errors({
      {"x[5]", "expr:1:3: index 5 is out of range for dim 0 of size 4"},
      {"x[:, -7]", "expr:1:6: index -7 is out of range for dim 1 of size 6"},
      {"x[1:1]", "expr:1:3: the slice selects nothing from a dim of size 4 (empty tensors are not "
                 "supported)"},
      {"x[::0]", "expr:1:3: a slice step cannot be zero"},
      {"x[1, 2, 3]", "expr:1:2: too many indices (3) for a tensor of shape (4, 6)"},
      {"x[..., ...]", "expr:1:8: an index can have only one '...'"},
      {"x[a]", "expr:1:3: indexing with a tensor is not supported (use gather)"},
      {"x[1.5]", "expr:1:3: an index needs an integer, a slice, None or '...', not a float"},
      {"x[:'a']", "expr:1:4: a slice bound needs an integer or None, not the string 'a'"},
      {"x.shape[2]", "expr:1:9: index 2 is out of range for a tuple of 2"},
      {"x.shape[0:1]", "expr:1:8: a tuple takes one integer index"},
      {"(2.5)[0]", "expr:1:6: a float cannot be indexed"},
  });
}

TEST(ExprErrors, Values) {
  expect_errors({
      {"x * (1 // 0)", "expr:1:8: integer division or modulo by zero"},
      {"x * 2 ** 64", "expr:1:7: integer overflow in '**' (use floats for large numbers)"},
      {"x * (1.0 / 0)", "expr:1:10: float division by zero"},
      {"x * (1 << 64)", "expr:1:8: integer overflow in '<<' (use floats for large numbers)"},
      {"x * (-8) ** 0.5", "expr:1:10: a negative number to a fractional power is complex"},
      {"(1, 2)", "expr:1:1: the expression is a tuple, not a tensor"},
      {"'abc'", "expr:1:1: the expression is the string 'abc', not a tensor"},
      {"x + 'a'",
       "expr:1:3: '+' needs numbers or tensors, not a tensor of shape (4, 6) and the string 'a'"},
      {"x << a", "expr:1:3: '<<' shifts a tensor by an integer, not a tensor of shape (4, 6) and a "
                 "tensor of shape (2, 3)"},
      {"1.5 & x", "expr:1:5: bitwise_and: not defined for dtype float32 (shape ()); bitwise ops "
                  "take integers and bools"},
      {"2 @ 3", "expr:1:3: '@' needs tensors, not the integer 2 and the integer 3"},
      {"~1.5", "expr:1:1: '~' needs an integer or a tensor, not a float"},
      {"-x.shape", "expr:1:1: unary '-' needs a number or a tensor, not a tuple"},
      {"x * (1 << -1)", "expr:1:8: negative shift count -1"},
      {"x * 0.0 ** -1", "expr:1:9: 0.0 cannot be raised to a negative power"},
      {"x * (1.5 & 1)", "expr:1:10: '&' needs integers, not a float and the integer 1"},
      {"i << 65", "expr:1:3: shift count 65 is not in 0..64"},
      {"x * -(-9223372036854775807 - 1)",
       "expr:1:5: integer overflow in '-' (use floats for large numbers)"},
      {"x.shape['a']", "expr:1:9: an index of a tuple needs an integer, not the string 'a'"},
      {"x[1:2, 0:1:2]", "no error"},
  });
}

TEST(ExprErrors, Limits) {
  std::string parens = std::string(150, '(') + "x" + std::string(150, ')');
  std::string minuses = std::string(150, '-') + "x";
  std::string chain = "x";
  for (int i = 0; i < 300; ++i) chain += "+x";
  std::string methods = "x";
  for (int i = 0; i < 300; ++i) methods += ".relu()";
  const std::string nests =
      "the expression nests more than 100 levels of brackets or unary operators";
  const std::string deep =
      "the expression is more than 256 operations deep; split it into several expressions";
  expect_errors({
      {parens, "expr:1:101: " + nests},
      {minuses, "expr:1:101: " + nests},
      {chain, "expr:1:512: " + deep},
      {methods, "expr:1:892: " + deep},
      {"x.expand(100000, 100000, 4, 6)", "expr:1:3: expand: the result would have more than "
                                         "2147483648 elements, the limit for an expression"},
      {"x.reshape(2 ** 40, -1)",
       "expr:1:11: reshape: 'shape' is 1099511627776, out of range (at most 2147483648)"},
      {"Tensor.arange(1e12)", "expr:1:8: arange: [0, 1e+12) with step 1 has more than 2147483648 "
                              "elements, the limit for an expression"},
      {"x.pad(((0, 2 ** 31), (0, 0)))", "expr:1:3: pad: the result would have more than 2147483648 "
                                        "elements, the limit for an expression"},
      {"x.repeat(2 ** 20, 2 ** 20)", "expr:1:3: repeat: the result would have more than 2147483648 "
                                     "elements, the limit for an expression"},
      {"Tensor.eye(100000)", "expr:1:8: eye: the result would have more than 2147483648 elements, "
                             "the limit for an expression"},
      {"Tensor.zeros(32768, 65536) * x.sum()", "no error"},
      {"Tensor.zeros(32768, 65536, 2) + 1", "expr:1:8: zeros: the result would have more than "
                                            "2147483648 elements, the limit for an expression"},
  });
  Limits small;
  small.max_elements = 1000;
  EXPECT_EQ(error_of("x.reshape(1, 24).expand(50, 24)", Inputs().map(), small),
            "expr:1:18: expand: the result would have more than 1000 elements, the limit for an "
            "expression");
  EXPECT_EQ(error_of("x * Tensor.ones(10, 10, 10, 10)", Inputs().map(), small),
            "expr:1:12: ones: the result would have more than 1000 elements, the limit for an "
            "expression");
}

// Nothing but one-line UserErrors, whatever the text: random token soup and random bytes.
TEST(ExprErrors, RandomTextNeverCrashes) {
  static constexpr const char* kTokens[] = {
      "a",   "w",       "x",   "i",     "m",      "Tensor", "dtypes", "float16", "relu",
      "sum", "reshape", "cat", "where", "matmul", "conv2d", "pad",    "shape",   "T",
      "(",   ")",       "[",   "]",     ",",      ".",      ":",      "=",       "+",
      "-",   "*",       "**",  "/",     "//",     "%",      "@",      "<",       "==",
      "&",   "|",       "^",   "~",     "<<",     "...",    "0",      "1",       "-1",
      "2",   "1e-5",    "0.5", "True",  "None",   "'f'",    "axis",   "keepdim", " "};
  std::mt19937 rng(7);
  Inputs in;
  auto inputs = in.map();
  int built = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string text;
    size_t len = std::uniform_int_distribution<size_t>(1, 14)(rng);
    for (size_t k = 0; k < len; ++k)
      text += kTokens[std::uniform_int_distribution<size_t>(0, std::size(kTokens) - 1)(rng)];
    if (n % 3 == 0)
      text[std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng)] =
          static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    std::string message = error_of(text, inputs);
    if (message == "no error") {
      ++built;
      continue;
    }
    EXPECT_EQ(message.rfind("expr:", 0), 0u) << text << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << text << " -> " << message;
  }
  EXPECT_GT(built, 10); // some of the soup is valid, and builds
}

} // namespace
} // namespace beamlab::expr::testing

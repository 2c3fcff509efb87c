// Randomized differential test: random expression trees over three inputs, each written as
// text with only the parentheses Python's precedence needs and built directly with the Tensor
// API; evaluate(text) must give the directly built tensor's shape, dtype and values.
#include <gtest/gtest.h>

#include <random>

#include "tests/expr/expr_helpers.hpp"

namespace beamlab::expr::testing {
namespace {

// Python's precedence levels, as the generator needs them to place parentheses.
enum Prec {
  PrecCompare = 1,
  PrecAnd = 4,
  PrecAdd = 6,
  PrecMul = 7,
  PrecUnary = 8,
  PrecPow = 9,
  PrecAtom = 10
};

// A generated expression: its text, its precedence, and the tensor (or the number) it means.
struct Gen {
  std::string text;
  int prec = PrecAtom;
  std::optional<Tensor> tensor;
  double number = 0;
};

class TreeGenerator {
public:
  TreeGenerator(uint32_t seed, const std::map<std::string, Tensor>& inputs)
      : rng_(seed), inputs_(inputs) {}

  Gen tensor(int depth) {
    if (depth == 0 || pick(6) == 0) return input();
    switch (pick(10)) {
    case 0:
    case 1: return arithmetic(depth);
    case 2: return divide(depth);
    case 3: return power(depth);
    case 4: return negate(depth);
    case 5: return unary_method(depth);
    case 6: return extremum(depth);
    case 7: return where(depth);
    case 8: return reduce(depth);
    default: return movement(depth);
    }
  }

private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  static std::string wrap(const Gen& g, int min_prec) {
    return g.prec < min_prec ? "(" + g.text + ")" : g.text;
  }
  static Gen make(std::string text, int prec, Tensor t) { return Gen{std::move(text), prec, t, 0}; }

  Gen input() {
    static constexpr const char* kNames[] = {"a", "b", "c"};
    const char* name = kNames[pick(3)];
    return make(name, PrecAtom, inputs_.at(name));
  }

  Gen number() {
    static constexpr std::pair<const char*, double> kNumbers[] = {
        {"2", 2}, {"3", 3}, {"0.5", 0.5}, {"1e-1", 0.1}, {"1.5", 1.5}, {".25", 0.25}};
    auto [text, value] = kNumbers[pick(6)];
    return Gen{text, PrecAtom, std::nullopt, value};
  }

  // l op r for + - * with either side possibly a number, left-associative.
  Gen arithmetic(int depth) {
    static constexpr const char* kOps[] = {"+", "-", "*"};
    std::string op = kOps[pick(3)];
    int prec = op == "*" ? PrecMul : PrecAdd;
    Gen l = pick(4) == 0 ? number() : tensor(depth - 1);
    Gen r = l.tensor && pick(4) == 0 ? number() : tensor(depth - 1);
    std::string text = wrap(l, prec) + " " + op + " " + wrap(r, prec + 1);
    auto apply = [&](const auto& x, const auto& y) {
      return op == "+" ? x + y : op == "-" ? x - y : x * y;
    };
    if (!l.tensor) return make(text, prec, apply(l.number, *r.tensor));
    if (!r.tensor) return make(text, prec, apply(*l.tensor, r.number));
    return make(text, prec, apply(*l.tensor, *r.tensor));
  }

  // l / (r.abs() + 1): a denominator away from zero.
  Gen divide(int depth) {
    Gen l = tensor(depth - 1), r = tensor(depth - 1);
    std::string den = "(" + wrap(r, PrecAtom) + ".abs() + 1)";
    return make(wrap(l, PrecMul) + " / " + den, PrecMul, *l.tensor / (r.tensor->abs() + 1.0));
  }

  Gen power(int depth) {
    Gen base = tensor(depth - 1);
    int e = 2 + static_cast<int>(pick(2));
    return make(wrap(base, PrecPow + 1) + " ** " + std::to_string(e), PrecPow,
                base.tensor->pow(static_cast<double>(e)));
  }

  Gen negate(int depth) {
    Gen x = tensor(depth - 1);
    return make("-" + wrap(x, PrecUnary), PrecUnary, -*x.tensor);
  }

  Gen unary_method(int depth) {
    using F = Tensor (Tensor::*)() const;
    static constexpr std::pair<const char*, F> kMethods[] = {
        {"relu", &Tensor::relu},   {"tanh", &Tensor::tanh},     {"sigmoid", &Tensor::sigmoid},
        {"abs", &Tensor::abs},     {"square", &Tensor::square}, {"sin", &Tensor::sin},
        {"floor", &Tensor::floor}, {"silu", &Tensor::silu},     {"relu6", &Tensor::relu6}};
    auto [name, f] = kMethods[pick(9)];
    Gen x = tensor(depth - 1);
    return make(wrap(x, PrecAtom) + "." + name + "()", PrecAtom, (*x.tensor.*f)());
  }

  Gen extremum(int depth) {
    bool max = pick(2) == 0;
    Gen x = tensor(depth - 1);
    Gen y = pick(3) == 0 ? number() : tensor(depth - 1);
    std::string text = wrap(x, PrecAtom) + (max ? ".maximum(" : ".minimum(") + y.text + ")";
    if (!y.tensor)
      return make(text, PrecAtom, max ? x.tensor->maximum(y.number) : x.tensor->minimum(y.number));
    return make(text, PrecAtom, max ? x.tensor->maximum(*y.tensor) : x.tensor->minimum(*y.tensor));
  }

  Gen comparison(int depth) {
    Gen l = tensor(depth - 1);
    bool less = pick(2) == 0;
    Gen r = pick(2) == 0 ? number() : tensor(depth - 1);
    std::string text = wrap(l, PrecCompare + 1) + (less ? " < " : " > ") + wrap(r, PrecCompare + 1);
    Tensor rt = r.tensor ? *r.tensor : l.tensor->scalar_like(r.number);
    return make(text, PrecCompare, less ? l.tensor->lt(rt) : l.tensor->gt(rt));
  }

  Gen where(int depth) {
    Gen cond = comparison(depth);
    if (pick(3) == 0) {
      Gen other = comparison(depth);
      cond = make(wrap(cond, PrecAnd + 1) + " & " + wrap(other, PrecAnd + 1), PrecAnd,
                  *cond.tensor & *other.tensor);
    }
    Gen x = tensor(depth - 1), y = tensor(depth - 1);
    return make(wrap(cond, PrecAtom) + ".where(" + x.text + ", " + y.text + ")", PrecAtom,
                cond.tensor->where(*x.tensor, *y.tensor));
  }

  Gen reduce(int depth) {
    Gen x = tensor(depth - 1);
    if (x.tensor->ndim() != 2) return x;
    int64_t axis = static_cast<int64_t>(pick(2)) - 2; // -2 or -1
    std::string base = wrap(x, PrecAtom);
    switch (pick(3)) {
    case 0:
      return make(base + ".sum(" + std::to_string(axis) + ", keepdim=True)", PrecAtom,
                  x.tensor->sum({axis}, true));
    case 1:
      return make(base + ".max(axis=" + std::to_string(axis) + ", keepdim=True)", PrecAtom,
                  x.tensor->max({axis}, true));
    default: return make(base + ".mean()", PrecAtom, x.tensor->mean());
    }
  }

  Gen movement(int depth) {
    Gen x = tensor(depth - 1);
    if (x.tensor->ndim() != 2) return x;
    std::string base = wrap(x, PrecAtom);
    bool square = x.tensor->shape() == Shape{4, 4};
    switch (pick(4)) {
    case 0: return make(base + ".T", PrecAtom, x.tensor->transpose());
    case 1: return make(base + "[::-1]", PrecAtom, x.tensor->flip({0}));
    case 2: return make(base + ".permute(1, 0)", PrecAtom, x.tensor->permute({1, 0}));
    default: break;
    }
    if (!square) return x;
    Gen y = tensor(depth - 1);
    if (y.tensor->shape() != Shape{4, 4}) return x;
    return make(wrap(x, PrecMul) + " @ " + wrap(y, PrecMul + 1), PrecMul,
                x.tensor->matmul(*y.tensor));
  }

  std::mt19937 rng_;
  const std::map<std::string, Tensor>& inputs_;
};

class ExprRandomTrees : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ExprRandomTrees, MatchTheTensorApi) {
  const std::map<std::string, Tensor> inputs = {{"a", Tensor::rand({4, 4}, 11) * 2.0 - 1.0},
                                                {"b", Tensor::rand({4, 4}, 12) * 2.0 - 1.0},
                                                {"c", Tensor::rand({4, 4}, 13) * 2.0 - 1.0}};
  TreeGenerator gen(GetParam(), inputs);
  for (int n = 0; n < 25; ++n) {
    Gen g = gen.tensor(4);
    SCOPED_TRACE(g.text);
    Tensor got = evaluate(g.text, inputs);
    EXPECT_TRUE(same_values(got, *g.tensor));
    for (const std::string& name : input_names(g.text)) EXPECT_TRUE(inputs.count(name)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ExprRandomTrees, ::testing::Range(1u, 9u));

} // namespace
} // namespace beamlab::expr::testing

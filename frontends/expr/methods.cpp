// The method table: Tensor's methods by their tinygrad names, each with its parameters and a
// small adapter that reads the arguments and calls beamlab::Tensor. Where tinygrad's positional
// order differs from the C++ API (conv2d, the pools), the table follows tinygrad. Methods that
// return two tensors (topk, sort) give a tuple. To support a new Tensor method, add a row here
// (methods are x.name(...)) or in functions.cpp (functions are Tensor.name(...)).
#include "frontends/expr/value_internal.hpp"

#include <algorithm>
#include <cmath>

namespace beamlab::expr {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

template <Tensor (Tensor::*F)() const>
Value unary(const Args& a) {
  return (a.self().*F)();
}
template <Tensor (Tensor::*F)(const Tensor&) const>
Value binary(const Args& a) {
  return (a.self().*F)(a.operand("x", a.self()));
}
template <Tensor (Tensor::*F)(std::vector<int64_t>, bool) const>
Value reduction(const Args& a) {
  return (a.self().*F)(a.axes("axis"), a.flag("keepdim", false));
}
template <Tensor (Tensor::*F)(std::vector<int64_t>, bool, int64_t) const>
Value spread(const Args& a) {
  return (a.self().*F)(a.axes("axis"), a.flag("keepdim", false), a.integer("correction", 1));
}
template <Tensor (Tensor::*F)(std::optional<int64_t>, bool) const>
Value arg_reduction(const Args& a) {
  return (a.self().*F)(a.optional_integer("axis"), a.flag("keepdim", false));
}
template <Scalar S>
Value cast_to(const Args& a) {
  return a.self().cast(S);
}

Value where(const Args& a) {
  const Value *x = a.get("x"), *y = a.get("y");
  if (x && y && x->is_number() && y->is_number()) return a.self().where(x->number(), y->number());
  if (x && x->is_number()) {
    Tensor other = a.tensor("y");
    return a.self().where(other.scalar_like(x->number()), other);
  }
  Tensor t = a.tensor("x");
  return a.self().where(t, a.operand("y", t));
}

// tinygrad's flat padding: (before, after) of the last dim, then of the one before, ...
Pairs flat_pads(const Args& a, const Value& v) {
  auto n = static_cast<size_t>(a.self().ndim());
  if (v.items.size() % 2 != 0 || v.items.size() > 2 * n)
    a.reject(v, "padding",
             "a (before, after) pair per dim, or an even count of at most " +
                 std::to_string(2 * n) + " integers (the last dim first)");
  Pairs out(n, {0, 0});
  for (size_t k = 0; k < v.items.size() / 2; ++k)
    out[n - 1 - k] = {a.integer_of(v.items[2 * k], "padding"),
                      a.integer_of(v.items[2 * k + 1], "padding")};
  return out;
}

// One (lo, hi) pair per dim, None for "leave this dim": (0, 0) to pad, (0, dim) to shrink.
Pairs pairs(const Args& a, std::string_view param, bool shrink) {
  const Value* v = a.get(param);
  if (!v || !v->is_sequence()) {
    if (!v) fail(a.at(), a.name() + ": " + quoted(param) + " needs a pair per dimension, not None");
    a.reject(*v, param, "a tuple of pairs, one per dimension");
  }
  bool flat = !v->items.empty() && std::all_of(v->items.begin(), v->items.end(),
                                               [](const Value& i) { return i.kind == Kind::Int; });
  if (flat && !shrink) return flat_pads(a, *v);
  Pairs out;
  const Shape& shape = a.self().shape();
  for (size_t i = 0; i < v->items.size(); ++i) {
    const Value& p = v->items[i];
    int64_t dim = i < shape.size() ? shape[i].value() : 0;
    if (p.kind == Kind::None) {
      out.emplace_back(0, shrink ? dim : 0);
      continue;
    }
    if (!p.is_sequence() || p.items.size() != 2) a.reject(p, param, "a pair of integers or None");
    out.emplace_back(a.integer_of(p.items[0], param), a.integer_of(p.items[1], param));
  }
  return out;
}

Value pad(const Args& a) {
  Pairs pads = pairs(a, "padding", false);
  Shape out = a.self().shape();
  for (size_t i = 0; i < out.size() && i < pads.size(); ++i)
    out[i] += std::max<int64_t>(0, pads[i].first) + std::max<int64_t>(0, pads[i].second);
  a.check_size(out);
  return a.self().pad(pads, a.number("value", 0));
}

Value expand(const Args& a) {
  Shape want = a.integers("shape");
  const Shape& have = a.self().shape();
  Shape sized = want;
  for (size_t i = 0; i < want.size(); ++i) {
    size_t from_end = want.size() - i;
    if (want[i] == -1 && from_end <= have.size()) sized[i] = have[have.size() - from_end];
  }
  a.check_size(sized);
  return a.self().expand(want);
}

Value repeat(const Args& a) {
  Shape all = a.integers("repeats");
  all.insert(all.end(), a.self().shape().begin(), a.self().shape().end());
  a.check_size(all);
  return a.self().repeat(a.integers("repeats"));
}

Value cat_method(const Args& a) {
  std::vector<Tensor> ts = a.tensors("tensors");
  ts.insert(ts.begin(), a.self());
  return Tensor::cat(ts, a.integer("dim", 0));
}
Value stack_method(const Args& a) {
  std::vector<Tensor> ts = a.tensors("tensors");
  ts.insert(ts.begin(), a.self());
  return Tensor::stack(ts, a.integer("dim", 0));
}

Value conv2d(const Args& a) {
  return a.self().conv2d(a.tensor("weight"), a.optional_tensor("bias"), a.square("stride", 1),
                         a.square("padding", 0), a.square("dilation", 1), a.integer("groups", 1));
}

Value max_pool2d(const Args& a) {
  std::optional<int64_t> stride;
  if (a.given("stride")) stride = a.square("stride", 1);
  return a.self().max_pool2d(a.square("kernel_size", 2), stride, a.square("padding", 0),
                             a.square("dilation", 1));
}

Value avg_pool2d(const Args& a) {
  if (a.square("dilation", 1) != 1)
    a.reject(*a.get("dilation"), "dilation", "1 (avg_pool2d has none)");
  std::optional<int64_t> stride;
  if (a.given("stride")) stride = a.square("stride", 1);
  return a.self().avg_pool2d(a.square("kernel_size", 2), stride, a.square("padding", 0));
}

Value layernorm(const Args& a) {
  double eps = a.number("eps", 1e-5);
  if (!a.given("weight") && !a.given("bias")) return a.self().layernorm(a.integer("axis", -1), eps);
  if (a.integer("axis", -1) != -1)
    a.reject(*a.get("axis"), "axis", "-1 with weight and bias (they apply to the last axis)");
  return a.self().layernorm(a.tensor("weight"), a.tensor("bias"), eps);
}

Value matmul(const Args& a) {
  Tensor w = a.operand("x", a.self());
  if (!a.given("dtype")) return a.self().matmul(w);
  return a.self().matmul(w, a.dtype("dtype", {}));
}

Value pair(std::pair<Tensor, Tensor> p) {
  std::vector<Value> items;
  items.emplace_back(std::move(p.first));
  items.emplace_back(std::move(p.second));
  return Value::sequence(Kind::Tuple, std::move(items));
}

Value attention(const Args& a) {
  if (a.number("dropout_p", 0) != 0)
    a.reject(*a.get("dropout_p"), "dropout_p", "0 (inference has no dropout)");
  return a.self().scaled_dot_product_attention(a.tensor("key"), a.tensor("value"),
                                               a.optional_tensor("attn_mask"),
                                               a.flag("is_causal", false));
}

// clang-format off
constexpr Method kMethods[] = {
    // elementwise, one operand
    {"neg", "", unary<&Tensor::neg>}, {"abs", "", unary<&Tensor::abs>},
    {"sqrt", "", unary<&Tensor::sqrt>}, {"rsqrt", "", unary<&Tensor::rsqrt>},
    {"reciprocal", "", unary<&Tensor::reciprocal>}, {"exp", "", unary<&Tensor::exp>},
    {"log", "", unary<&Tensor::log>}, {"exp2", "", unary<&Tensor::exp2>},
    {"log2", "", unary<&Tensor::log2>}, {"sin", "", unary<&Tensor::sin>},
    {"cos", "", unary<&Tensor::cos>}, {"tan", "", unary<&Tensor::tan>},
    {"tanh", "", unary<&Tensor::tanh>}, {"sigmoid", "", unary<&Tensor::sigmoid>},
    {"erf", "", unary<&Tensor::erf>}, {"floor", "", unary<&Tensor::floor>},
    {"ceil", "", unary<&Tensor::ceil>}, {"round", "", unary<&Tensor::round>},
    {"trunc", "", unary<&Tensor::trunc>}, {"square", "", unary<&Tensor::square>},
    {"sign", "", unary<&Tensor::sign>}, {"logical_not", "", unary<&Tensor::logical_not>},
    {"bitwise_not", "", unary<&Tensor::bitwise_not>}, {"contiguous", "", unary<&Tensor::contiguous>},
    // activations
    {"relu", "", unary<&Tensor::relu>}, {"relu6", "", unary<&Tensor::relu6>},
    {"gelu", "", unary<&Tensor::gelu>}, {"silu", "", unary<&Tensor::silu>},
    {"swish", "", unary<&Tensor::silu>}, {"hardswish", "", unary<&Tensor::hardswish>},
    {"mish", "", unary<&Tensor::mish>},
    {"softplus", "beta?", [](const Args& a) -> Value { return a.self().softplus(a.number("beta", 1)); }},
    {"leaky_relu", "neg_slope|slope?",
     [](const Args& a) -> Value { return a.self().leaky_relu(a.number("neg_slope", 0.01)); }},
    // elementwise, two operands (a number becomes a scalar of x's kind)
    {"add", "x|other", [](const Args& a) -> Value { return a.self() + a.operand("x", a.self()); }},
    {"sub", "x|other", [](const Args& a) -> Value { return a.self() - a.operand("x", a.self()); }},
    {"mul", "x|other", [](const Args& a) -> Value { return a.self() * a.operand("x", a.self()); }},
    {"div", "x|other", binary<&Tensor::div>}, {"floordiv", "x|other", binary<&Tensor::floordiv>},
    {"mod", "x|other", binary<&Tensor::mod>},
    {"pow", "x|exponent", [](const Args& a) -> Value {
       const Value* e = a.get("x");
       if (e && e->is_number()) return a.self().pow(e->number());
       return a.self().pow(a.tensor("x"));
     }},
    {"maximum", "x|other", binary<&Tensor::maximum>}, {"minimum", "x|other", binary<&Tensor::minimum>},
    {"eq", "x|other", binary<&Tensor::eq>}, {"ne", "x|other", binary<&Tensor::ne>},
    {"lt", "x|other", binary<&Tensor::lt>}, {"le", "x|other", binary<&Tensor::le>},
    {"gt", "x|other", binary<&Tensor::gt>}, {"ge", "x|other", binary<&Tensor::ge>},
    {"logical_and", "x|other", binary<&Tensor::logical_and>},
    {"logical_or", "x|other", binary<&Tensor::logical_or>},
    {"bitwise_and", "x|other", binary<&Tensor::bitwise_and>},
    {"bitwise_or", "x|other", binary<&Tensor::bitwise_or>},
    {"bitwise_xor", "x|other", binary<&Tensor::bitwise_xor>},
    {"lshift", "x|bits", [](const Args& a) -> Value { return a.self().lshift(a.integer("x")); }},
    {"rshift", "x|bits", [](const Args& a) -> Value { return a.self().rshift(a.integer("x")); }},
    {"where", "x|input, y|other", where},
    {"clamp", "min_|min?, max_|max?", [](const Args& a) -> Value {
       return a.self().clamp(a.optional_number("min_"), a.optional_number("max_"));
     }},
    {"clip", "min_|min?, max_|max?", [](const Args& a) -> Value {
       return a.self().clamp(a.optional_number("min_"), a.optional_number("max_"));
     }},
    // dtypes
    {"cast", "dtype", [](const Args& a) -> Value { return a.self().cast(a.dtype("dtype", {})); }},
    {"bitcast", "dtype", [](const Args& a) -> Value { return a.self().bitcast(a.dtype("dtype", {})); }},
    {"float", "", cast_to<Scalar::Float32>}, {"half", "", cast_to<Scalar::Float16>},
    {"double", "", cast_to<Scalar::Float64>}, {"int", "", cast_to<Scalar::Int32>},
    {"long", "", cast_to<Scalar::Int64>}, {"bool", "", cast_to<Scalar::Bool>},
    // reductions
    {"sum", "axis|dim?, keepdim?", reduction<&Tensor::sum>},
    {"prod", "axis|dim?, keepdim?", reduction<&Tensor::prod>},
    {"max", "axis|dim?, keepdim?", reduction<&Tensor::max>},
    {"min", "axis|dim?, keepdim?", reduction<&Tensor::min>},
    {"mean", "axis|dim?, keepdim?", reduction<&Tensor::mean>},
    {"any", "axis|dim?, keepdim?", reduction<&Tensor::any>},
    {"all", "axis|dim?, keepdim?", reduction<&Tensor::all>},
    {"var", "axis|dim?, keepdim?, correction?", spread<&Tensor::var>},
    {"std", "axis|dim?, keepdim?, correction?", spread<&Tensor::std>},
    {"argmax", "axis|dim?, keepdim?", arg_reduction<&Tensor::argmax>},
    {"argmin", "axis|dim?, keepdim?", arg_reduction<&Tensor::argmin>},
    {"cumsum", "axis|dim?", [](const Args& a) -> Value { return a.self().cumsum(a.integer("axis", 0)); }},
    {"logsumexp", "axis|dim?, keepdim?", [](const Args& a) -> Value {
       return a.self().logsumexp(a.integer("axis", -1), a.flag("keepdim", false));
     }},
    {"softmax", "axis|dim?", [](const Args& a) -> Value { return a.self().softmax(a.integer("axis", -1)); }},
    {"log_softmax", "axis|dim?",
     [](const Args& a) -> Value { return a.self().log_softmax(a.integer("axis", -1)); }},
    // movement
    {"reshape", "*shape", [](const Args& a) -> Value { return a.self().reshape(a.shape("shape")); }},
    {"view", "*shape", [](const Args& a) -> Value { return a.self().reshape(a.shape("shape")); }},
    {"permute", "*order|dims", [](const Args& a) -> Value { return a.self().permute(a.integers("order")); }},
    {"transpose", "dim0?, dim1?", [](const Args& a) -> Value {
       return a.self().transpose(a.integer("dim0", -2), a.integer("dim1", -1));
     }},
    {"expand", "*shape|sizes", expand},
    {"pad", "padding|pad, value?", pad},
    {"shrink", "arg", [](const Args& a) -> Value { return a.self().shrink(pairs(a, "arg", true)); }},
    {"slice", "axis|dim, start, stop", [](const Args& a) -> Value {
       return a.self().slice(a.integer("axis"), a.integer("start"), a.integer("stop"));
     }},
    {"flip", "*axis|dims", [](const Args& a) -> Value { return a.self().flip(a.integers("axis")); }},
    {"squeeze", "dim|axis?", [](const Args& a) -> Value { return a.self().squeeze(a.optional_integer("dim")); }},
    {"unsqueeze", "dim|axis", [](const Args& a) -> Value { return a.self().unsqueeze(a.integer("dim")); }},
    {"flatten", "start_dim?, end_dim?", [](const Args& a) -> Value {
       return a.self().flatten(a.integer("start_dim", 0), a.integer("end_dim", -1));
     }},
    {"repeat", "*repeats", repeat},
    {"gather", "dim|axis, index", [](const Args& a) -> Value {
       return a.self().gather(a.integer("dim"), a.tensor("index"));
     }},
    {"take", "index|indices, axis|dim?", [](const Args& a) -> Value {
       return a.self().take(a.tensor("index"), a.integer("axis", 0));
     }},
    {"scatter", "dim|axis, index, src, reduce?", [](const Args& a) -> Value {
       std::string reduce = a.given("reduce") ? a.string("reduce") : "none";
       return a.self().scatter(a.integer("dim"), a.tensor("index"), a.tensor("src"), reduce);
     }},
    {"one_hot", "num_classes", [](const Args& a) -> Value { return a.self().one_hot(a.integer("num_classes")); }},
    {"triu", "diagonal|k?", [](const Args& a) -> Value { return a.self().triu(a.integer("diagonal", 0)); }},
    {"tril", "diagonal|k?", [](const Args& a) -> Value { return a.self().tril(a.integer("diagonal", 0)); }},
    {"topk", "k, dim|axis?, largest?", [](const Args& a) -> Value {
       return pair(a.self().topk(a.integer("k"), a.integer("dim", -1), a.flag("largest", true)));
     }},
    {"sort", "dim|axis?, descending?", [](const Args& a) -> Value {
       return pair(a.self().sort(a.integer("dim", -1), a.flag("descending", false)));
     }},
    {"cat", "*tensors, dim|axis?", cat_method},
    {"stack", "*tensors, dim|axis?", stack_method},
    // composite
    {"matmul", "x|w|other, dtype?", matmul}, {"dot", "x|w|other, dtype?", matmul},
    {"linear", "weight, bias?", [](const Args& a) -> Value {
       return a.self().linear(a.tensor("weight"), a.optional_tensor("bias"));
     }},
    {"conv2d", "weight, bias?, groups?, stride?, dilation?, padding?", conv2d},
    {"max_pool2d", "kernel_size?, stride?, dilation?, padding?", max_pool2d},
    {"avg_pool2d", "kernel_size?, stride?, dilation?, padding?", avg_pool2d},
    {"layernorm", "axis?, eps?, weight?, bias?", layernorm},
    {"batchnorm", "weight, bias, running_mean|mean, running_var|var, eps?", [](const Args& a) -> Value {
       return a.self().batchnorm(a.tensor("weight"), a.tensor("bias"), a.tensor("running_mean"),
                                 a.tensor("running_var"), a.number("eps", 1e-5));
     }},
    {"scaled_dot_product_attention", "key|k, value|v, attn_mask|mask?, dropout_p?, is_causal?",
     attention},
    // creation from a tensor, and what it is
    {"zeros_like", "dtype?", [](const Args& a) -> Value {
       return Tensor::zeros(a.self().shape(), a.dtype("dtype", a.self().dtype()));
     }},
    {"ones_like", "dtype?", [](const Args& a) -> Value {
       return Tensor::ones(a.self().shape(), a.dtype("dtype", a.self().dtype()));
     }},
    {"full_like", "fill_value, dtype?", [](const Args& a) -> Value {
       return Tensor::full(a.self().shape(), a.number("fill_value", 0), a.dtype("dtype", a.self().dtype()));
     }},
    {"numel", "", [](const Args& a) -> Value { return Value::integer(a.self().numel()); }},
};
// clang-format on

} // namespace

const Method* find_method(std::string_view name) { return find_named(kMethods, name); }

std::vector<std::string_view> method_names() { return names_of(kMethods); }

Value invoke(const Method& method, const Args& args) {
  Value out;
  try {
    out = method.call(args);
  } catch (const PositionedError&) {
    throw;
  } catch (const UserError& e) {
    std::string msg = e.what(), name(method.name);
    fail(args.at(), msg.rfind(name + ":", 0) == 0 ? msg : name + ": " + msg);
  }
  if (out.kind == Kind::Tensor) args.check_size(out.tensor->shape());
  return out;
}

} // namespace beamlab::expr

// Elementwise ONNX ops: arithmetic, comparisons, logic, math functions, activations, casts.
// Each is a short composition of Tensor ops; inverse trigonometry, which the engine has no
// primitive for, goes through one atan built from argument halving and a series.
#include <cmath>
#include <limits>
#include <numbers>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {
namespace {

using Unary = Tensor (*)(const Tensor&);

Converter unary(Unary f) {
  return [f](const Node& n) { return std::vector<Value>{f(n.in(0))}; };
}

// Integer division truncates (C's, as ONNX runtimes do); floats divide.
Tensor divide(const Tensor& a, const Tensor& b) {
  if (least_upper_dtype(a.dtype(), b.dtype()).is_float()) return a / b;
  return Tensor::binary(Op::Idiv, a, b, "Div");
}

// atan(x): for |x| > 1 use pi/2 - atan(1/|x|); halve the angle twice
// (atan x = 2 atan(x / (1 + sqrt(1 + x^2)))) so |x| <= tan(pi/16), then an odd series.
Tensor atan(const Tensor& x0) {
  Tensor x = x0.cast(float_of(x0.dtype())), ax = x.abs();
  Tensor big = ax > 1.0;
  Tensor t = big.where(ax.reciprocal(), ax);
  for (int i = 0; i < 2; ++i) t = t / (1.0 + (1.0 + t * t).sqrt());
  Tensor t2 = t * t, series = x.scalar_like(0);
  for (int k = 8; k >= 0; --k) series = series * t2 + (k % 2 ? -1.0 : 1.0) / (2 * k + 1);
  Tensor r = series * t * 4.0;
  r = big.where(std::numbers::pi / 2 - r, r);
  return x.sign() * r;
}
Tensor asin(const Tensor& x) { return atan(x / (1.0 - x * x).sqrt()); }
Tensor acos(const Tensor& x) { return std::numbers::pi / 2 - asin(x); }

Tensor variadic(const Node& n, Tensor (*f)(const Tensor&, const Tensor&)) {
  std::vector<Tensor> xs = n.all_inputs();
  user_assert(!xs.empty()) << "needs at least one input";
  Tensor acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) acc = f(acc, xs[i]);
  return acc;
}

void add_math(ConverterTable& t) {
  t["Abs"] = unary([](const Tensor& x) { return x.dtype().is_unsigned() ? x : x.abs(); });
  t["Neg"] = unary([](const Tensor& x) { return x.neg(); });
  t["Sqrt"] = unary([](const Tensor& x) { return x.sqrt(); });
  t["Reciprocal"] = unary([](const Tensor& x) { return x.reciprocal(); });
  t["Exp"] = unary([](const Tensor& x) { return x.exp(); });
  t["Log"] = unary([](const Tensor& x) { return x.log(); });
  t["Sin"] = unary([](const Tensor& x) { return x.sin(); });
  t["Cos"] = unary([](const Tensor& x) { return x.cos(); });
  t["Tan"] = unary([](const Tensor& x) { return x.tan(); });
  t["Tanh"] = unary([](const Tensor& x) { return x.tanh(); });
  t["Atan"] = unary(atan);
  t["Asin"] = unary(asin);
  t["Acos"] = unary(acos);
  t["Sinh"] = unary([](const Tensor& x) { return (x.exp() - (-x).exp()) * 0.5; });
  t["Cosh"] = unary([](const Tensor& x) { return (x.exp() + (-x).exp()) * 0.5; });
  t["Asinh"] = unary([](const Tensor& x) { return (x + (x * x + 1.0).sqrt()).log(); });
  t["Acosh"] = unary([](const Tensor& x) { return (x + (x * x - 1.0).sqrt()).log(); });
  t["Atanh"] = unary([](const Tensor& x) { return ((1.0 + x) / (1.0 - x)).log() * 0.5; });
  t["Erf"] = unary([](const Tensor& x) { return x.erf(); });
  t["Floor"] = unary([](const Tensor& x) { return x.floor(); });
  t["Ceil"] = unary([](const Tensor& x) { return x.ceil(); });
  t["Round"] = unary([](const Tensor& x) { return x.round(); });
  t["Sign"] = unary([](const Tensor& x) { return x.sign(); });
  t["IsNaN"] = unary([](const Tensor& x) { return x.ne(x); });
  t["IsInf"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    double inf = std::numeric_limits<double>::infinity();
    bool pos = n.attr_int("detect_positive", 1) != 0, neg = n.attr_int("detect_negative", 1) != 0;
    Tensor r = x.eq(x.scalar_like(inf)).logical_and(Tensor(pos, Scalar::Bool));
    r = r.logical_or(x.eq(x.scalar_like(-inf)).logical_and(Tensor(neg, Scalar::Bool)));
    return std::vector<Value>{r};
  };
  t["Add"] = [](const Node& n) { return std::vector<Value>{n.in(0) + n.in(1)}; };
  t["Sub"] = [](const Node& n) { return std::vector<Value>{n.in(0) - n.in(1)}; };
  t["Mul"] = [](const Node& n) { return std::vector<Value>{n.in(0) * n.in(1)}; };
  t["Div"] = [](const Node& n) { return std::vector<Value>{divide(n.in(0), n.in(1))}; };
  t["Pow"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    return std::vector<Value>{
        x.pow(n.in(1).cast(x.dtype().is_float() ? x.dtype() : n.in(1).dtype())).cast(x.dtype())};
  };
  t["Mod"] = [](const Node& n) {
    const Tensor &a = n.in(0), &b = n.in(1);
    if (n.attr_int("fmod", 0) == 0) return std::vector<Value>{a.mod(b)};
    if (a.dtype().is_float()) return std::vector<Value>{a - (a / b).trunc() * b};
    return std::vector<Value>{Tensor::binary(Op::Mod, a, b, "Mod")};
  };
  t["Max"] = [](const Node& n) {
    return std::vector<Value>{
        variadic(n, [](const Tensor& a, const Tensor& b) { return a.maximum(b); })};
  };
  t["Min"] = [](const Node& n) {
    return std::vector<Value>{
        variadic(n, [](const Tensor& a, const Tensor& b) { return a.minimum(b); })};
  };
  t["Sum"] = [](const Node& n) {
    return std::vector<Value>{variadic(n, [](const Tensor& a, const Tensor& b) { return a + b; })};
  };
  t["Mean"] = [](const Node& n) {
    Tensor s = variadic(n, [](const Tensor& a, const Tensor& b) { return a + b; });
    return std::vector<Value>{s / static_cast<double>(n.all_inputs().size())};
  };
}

void add_logic(ConverterTable& t) {
  t["Equal"] = [](const Node& n) { return std::vector<Value>{n.in(0).eq(n.in(1))}; };
  t["Less"] = [](const Node& n) { return std::vector<Value>{n.in(0).lt(n.in(1))}; };
  t["Greater"] = [](const Node& n) { return std::vector<Value>{n.in(0).gt(n.in(1))}; };
  t["LessOrEqual"] = [](const Node& n) { return std::vector<Value>{n.in(0).le(n.in(1))}; };
  t["GreaterOrEqual"] = [](const Node& n) { return std::vector<Value>{n.in(0).ge(n.in(1))}; };
  t["And"] = [](const Node& n) { return std::vector<Value>{n.in(0).logical_and(n.in(1))}; };
  t["Or"] = [](const Node& n) { return std::vector<Value>{n.in(0).logical_or(n.in(1))}; };
  t["Xor"] = [](const Node& n) { return std::vector<Value>{n.in(0).ne(n.in(1))}; };
  t["Not"] = unary([](const Tensor& x) { return x.logical_not(); });
  t["BitwiseAnd"] = [](const Node& n) { return one(n.in(0).bitwise_and(n.in(1))); };
  t["BitwiseOr"] = [](const Node& n) { return one(n.in(0).bitwise_or(n.in(1))); };
  t["BitwiseXor"] = [](const Node& n) { return one(n.in(0).bitwise_xor(n.in(1))); };
  t["BitwiseNot"] = unary([](const Tensor& x) { return x.bitwise_not(); });
  t["BitShift"] = [](const Node& n) {
    std::string dir = n.attr_string("direction", "");
    user_assert(dir == "LEFT" || dir == "RIGHT")
        << "attribute 'direction' must be LEFT or RIGHT, not '" << dir << "'";
    Op op = dir == "LEFT" ? Op::Shl : Op::Shr;
    return std::vector<Value>{Tensor::binary(op, n.in(0), n.in(1), "BitShift")};
  };
  t["Where"] = [](const Node& n) {
    return std::vector<Value>{n.in(0).cast(Scalar::Bool).where(n.in(1), n.in(2))};
  };
}

void add_activations(ConverterTable& t) {
  t["Relu"] = unary([](const Tensor& x) { return x.relu(); });
  t["Sigmoid"] = unary([](const Tensor& x) { return x.sigmoid(); });
  t["Softplus"] = unary([](const Tensor& x) { return x.softplus(); });
  t["Softsign"] = unary([](const Tensor& x) { return x / (1.0 + x.abs()); });
  t["HardSwish"] = unary([](const Tensor& x) { return x.hardswish(); });
  t["Mish"] = unary([](const Tensor& x) { return x.mish(); });
  // Gelu (opset 20): x Phi(x) with the normal CDF exactly (erf), or tanh's approximation.
  t["Gelu"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    std::string approximate = n.attr_string("approximate", "none");
    user_assert(approximate == "none" || approximate == "tanh")
        << "attribute 'approximate' must be none or tanh, not '" << approximate << "'";
    Tensor f = x.cast(float_of(x.dtype()));
    Tensor y = approximate == "tanh" ? f.gelu() : 0.5 * f * (1.0 + (f * M_SQRT1_2).erf());
    return one(y.cast(x.dtype()));
  };
  t["LeakyRelu"] = [](const Node& n) {
    return std::vector<Value>{n.in(0).leaky_relu(n.attr_float("alpha", 0.01))};
  };
  t["Elu"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    double alpha = n.attr_float("alpha", 1.0);
    return std::vector<Value>{(x < 0).where((x.exp() - 1.0) * alpha, x)};
  };
  t["Celu"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    double alpha = n.attr_float("alpha", 1.0);
    return std::vector<Value>{x.relu() + ((x / alpha).exp() - 1.0).minimum(0.0) * alpha};
  };
  t["Selu"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    double alpha = n.attr_float("alpha", 1.67326319217681884765625);
    double gamma = n.attr_float("gamma", 1.05070102214813232421875);
    return std::vector<Value>{x.le(x.scalar_like(0)).where((x.exp() - 1.0) * alpha, x) * gamma};
  };
  t["ThresholdedRelu"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    return std::vector<Value>{(x > n.attr_float("alpha", 1.0)).where(x, x.scalar_like(0))};
  };
  t["HardSigmoid"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    double alpha = n.attr_float("alpha", 0.2), beta = n.attr_float("beta", 0.5);
    return std::vector<Value>{(x * alpha + beta).clamp(0.0, 1.0)};
  };
  t["PRelu"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    Tensor slope = n.in(1);
    // Before opset 7 a 1-D slope of C values broadcasts along the channel axis.
    if (n.opset() < 7 && slope.ndim() == 1 && x.ndim() > 2 && slope.numel() == x.shape()[1]) {
      Shape s(static_cast<size_t>(x.ndim() - 1), 1);
      s[0] = slope.numel();
      slope = slope.reshape(s);
    }
    return std::vector<Value>{(x < 0).where(x * slope, x)};
  };
  t["Shrink"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    double lambd = n.attr_float("lambd", 0.5), bias = n.attr_float("bias", 0.0);
    Tensor zero = x.scalar_like(0);
    Tensor r = (x < -lambd).where(x + bias, (x > lambd).where(x - bias, zero));
    return std::vector<Value>{r.cast(x.dtype())};
  };
  t["Clip"] = [](const Node& n) {
    Tensor x = n.in(0);
    if (n.opset() < 11) {
      double inf = std::numeric_limits<double>::infinity();
      return std::vector<Value>{
          x.clamp(n.attr_float("min", -inf), n.attr_float("max", inf)).cast(x.dtype())};
    }
    if (n.has(1)) x = x.maximum(n.in(1).cast(x.dtype()));
    if (n.has(2)) x = x.minimum(n.in(2).cast(x.dtype()));
    return std::vector<Value>{x};
  };
}

void add_casts(ConverterTable& t) {
  t["Cast"] = [](const Node& n) {
    DType to = dtype_of(static_cast<int>(n.attr_int("to")), "attribute 'to'");
    return std::vector<Value>{n.in(0).cast(to)};
  };
  t["CastLike"] = [](const Node& n) { return std::vector<Value>{n.in(0).cast(n.in(1).dtype())}; };
  t["Identity"] = [](const Node& n) { return std::vector<Value>{n.in(0)}; };
  // Inference: dropout passes its input through; the mask is all true. Training mode
  // drops at random, which no reference can check, unless the ratio is 0.
  t["Dropout"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    bool training = n.has(2) && n.host_ints(2)[0] != 0;
    double ratio = n.has(1) ? n.host_floats(1)[0] : n.attr_float("ratio", 0.5);
    user_assert(!training || ratio == 0)
        << "training_mode=1 drops at random, which beamlab does not do (it runs inference)";
    return std::vector<Value>{x, Tensor::full(x.shape(), 1, Scalar::Bool)};
  };
}

} // namespace

void add_elementwise_ops(ConverterTable& table) {
  add_math(table);
  add_logic(table);
  add_activations(table);
  add_casts(table);
}

} // namespace beamlab::onnx

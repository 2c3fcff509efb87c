// Tensor elementwise ops, reductions and movement; see tensor.hpp.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "engine/tensor/tensor.hpp"

namespace beamlab {
namespace {

DType float_of(DType t) { return t.is_float() ? t : DType(Scalar::Float32); }

void require(bool ok, const char* op, const Tensor& t, const char* what) {
  user_assert(ok) << op << ": not defined for dtype " << t.dtype().str() << " (shape "
                  << shape_str(t.shape()) << "); " << what;
}

bool is_integral(double v) { return std::isfinite(v) && v == std::floor(v); }

constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

} // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  // A symbolic dim is never taken for 1: it broadcasts only with 1 and itself.
  for (size_t i = 0; i < n; ++i) {
    Dim da = i < n - a.size() ? Dim(1) : a[i - (n - a.size())];
    Dim db = i < n - b.size() ? Dim(1) : b[i - (n - b.size())];
    user_assert(da == db || da == 1 || db == 1)
        << op << ": shapes " << shape_str(a) << " and " << shape_str(b)
        << " do not broadcast (dimension " << i << ": " << da << " vs " << db << ")";
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t Tensor::resolve_axis(int64_t axis, const char* op) const {
  int64_t rank = ndim();
  int64_t a = axis < 0 ? axis + rank : axis;
  user_assert(a >= 0 && a < rank) << op << ": axis " << axis << " is out of range for shape "
                                  << shape_str(shape_);
  return a;
}

Tensor Tensor::scalar_like(double v) const {
  DType dt = dtype();
  if (!is_integral(v))
    dt = float_of(dt);
  else if (dt.is_bool() && v != 0 && v != 1)
    dt = Scalar::Int32;
  return Tensor(v, dt);
}

Tensor Tensor::binary(Op op, const Tensor& a, const Tensor& b, const char* name) {
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  DType dt = least_upper_dtype(a.dtype(), b.dtype());
  auto prepare = [&](const Tensor& t) {
    Tensor c = t.cast(dt);
    if (c.uop()->op() == Op::Const) return c.uop(); // scalars stay scalars in the graph
    return c.expand(shape).uop();
  };
  UOpPtr x = prepare(a), y = prepare(b);
  DType out = is_comparison(op) ? DType(Scalar::Bool) : dt;
  return Tensor(UOp::make(op, out, {x, y}), shape, join({&a, &b}));
}

Tensor Tensor::unary(Op op) const {
  return Tensor(UOp::make(op, dtype(), {uop_}), shape_, lineage_);
}

Tensor Tensor::cast(DType to) const {
  if (to == dtype()) return *this;
  user_assert(!to.is_ptr() && to.lanes() == 1 && !to.is_void() && to.scalar() != Scalar::Index)
      << "cast: " << to.str() << " is not an element dtype";
  if (uop_->op() == Op::Const)
    return Tensor(UOp::const_like(to, uop_->arg().kind() == Arg::Kind::Float
                                          ? uop_->arg().as_float()
                                          : static_cast<double>(uop_->const_value())),
                  shape_, lineage_);
  return Tensor(::beamlab::cast(uop_, to), shape_, lineage_);
}

Tensor Tensor::bitcast(DType to) const {
  user_assert(to.itemsize() == dtype().itemsize() && !to.is_bool() && !dtype().is_bool())
      << "bitcast: " << dtype().str() << " and " << to.str()
      << " differ in size (or one is bool); bitcast keeps the bits of each element";
  return Tensor(UOp::make(Op::Bitcast, to, {uop_}), shape_, lineage_);
}

// ---------------------------------------------------------------- elementwise

Tensor operator+(const Tensor& a, const Tensor& b) { return Tensor::binary(Op::Add, a, b, "add"); }
Tensor operator-(const Tensor& a, const Tensor& b) { return Tensor::binary(Op::Sub, a, b, "sub"); }
Tensor operator*(const Tensor& a, const Tensor& b) { return Tensor::binary(Op::Mul, a, b, "mul"); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator+(const Tensor& a, double b) { return a + a.scalar_like(b); }
Tensor operator-(const Tensor& a, double b) { return a - a.scalar_like(b); }
Tensor operator*(const Tensor& a, double b) { return a * a.scalar_like(b); }
Tensor operator/(const Tensor& a, double b) { return a.div(a.scalar_like(b)); }
Tensor operator+(double a, const Tensor& b) { return b.scalar_like(a) + b; }
Tensor operator-(double a, const Tensor& b) { return b.scalar_like(a) - b; }
Tensor operator*(double a, const Tensor& b) { return b.scalar_like(a) * b; }
Tensor operator/(double a, const Tensor& b) { return b.scalar_like(a).div(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return a.lt(b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return a.gt(b); }
Tensor operator<(const Tensor& a, double b) { return a.lt(a.scalar_like(b)); }
Tensor operator>(const Tensor& a, double b) { return a.gt(a.scalar_like(b)); }
Tensor operator&(const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }
Tensor operator!(const Tensor& a) { return a.logical_not(); }

Tensor Tensor::neg() const {
  require(!dtype().is_bool(), "neg", *this, "use logical_not for bools");
  return unary(Op::Neg);
}
Tensor Tensor::abs() const { return (*this < 0).where(neg(), *this); }
Tensor Tensor::sign() const {
  return (*this < 0).where(scalar_like(-1), (*this > 0).where(scalar_like(1), scalar_like(0)));
}
Tensor Tensor::sqrt() const { return cast(float_of(dtype())).unary(Op::Sqrt); }
Tensor Tensor::reciprocal() const { return cast(float_of(dtype())).unary(Op::Recip); }
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::exp2() const { return cast(float_of(dtype())).unary(Op::Exp2); }
Tensor Tensor::log2() const { return cast(float_of(dtype())).unary(Op::Log2); }
Tensor Tensor::exp() const { return (cast(float_of(dtype())) * kLog2E).exp2(); }
Tensor Tensor::log() const { return log2() * kLn2; }
Tensor Tensor::sin() const { return cast(float_of(dtype())).unary(Op::Sin); }
Tensor Tensor::cos() const { return (std::numbers::pi / 2 - cast(float_of(dtype()))).sin(); }
Tensor Tensor::tan() const { return sin() / cos(); }
Tensor Tensor::sigmoid() const { return (1.0 + (-cast(float_of(dtype()))).exp()).reciprocal(); }
Tensor Tensor::tanh() const { return 2.0 * (2.0 * cast(float_of(dtype()))).sigmoid() - 1.0; }

// Abramowitz and Stegun 7.1.26: |error| < 1.5e-7.
Tensor Tensor::erf() const {
  Tensor x = cast(float_of(dtype()));
  Tensor t = (1.0 + 0.3275911 * x.abs()).reciprocal();
  Tensor poly =
      ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t;
  return x.sign() * (1.0 - poly * (-(x * x)).exp());
}

Tensor Tensor::trunc() const {
  if (!dtype().is_float()) return *this;
  return unary(Op::Trunc);
}
Tensor Tensor::floor() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return lt(t).where(t - 1.0, t);
}
Tensor Tensor::ceil() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return gt(t).where(t + 1.0, t);
}
Tensor Tensor::round() const {
  if (!dtype().is_float()) return *this;
  Tensor f = floor(), d = *this - f;
  Tensor f_even = (f - 2.0 * (f * 0.5).floor()).eq(scalar_like(0));
  return (d > 0.5).where(f + 1.0, (d < 0.5).where(f, f_even.where(f, f + 1.0)));
}

Tensor Tensor::pow(const Tensor& e) const {
  DType dt = least_upper_dtype(dtype(), e.dtype());
  if (dt.is_float()) return binary(Op::Pow, cast(dt), e.cast(dt), "pow");
  require(!dt.is_bool(), "pow", *this, "cast to a number first");
  return binary(Op::Pow, cast(Scalar::Float64), e.cast(Scalar::Float64), "pow").round().cast(dt);
}
Tensor Tensor::pow(double e) const {
  if (e == 2) return *this * *this;
  if (e == 0.5) return sqrt();
  return pow(scalar_like(e));
}

Tensor Tensor::maximum(const Tensor& o) const { return binary(Op::Max, *this, o, "maximum"); }
Tensor Tensor::minimum(const Tensor& o) const { return lt(o).where(*this, o); }
Tensor Tensor::maximum(double o) const { return maximum(scalar_like(o)); }
Tensor Tensor::minimum(double o) const { return minimum(scalar_like(o)); }
Tensor Tensor::clamp(std::optional<double> lo, std::optional<double> hi) const {
  Tensor out = *this;
  if (lo) out = out.maximum(*lo);
  if (hi) out = out.minimum(*hi);
  return out;
}

Tensor Tensor::where(const Tensor& a, const Tensor& b) const {
  Tensor cond = dtype().is_bool() ? *this : ne(scalar_like(0));
  Shape shape =
      broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  DType dt = least_upper_dtype(a.dtype(), b.dtype());
  auto prep = [&](const Tensor& t, DType d) {
    Tensor c = t.cast(d);
    return c.uop()->op() == Op::Const ? c.uop() : c.expand(shape).uop();
  };
  UOpPtr u = UOp::make(Op::Where, dt, {prep(cond, Scalar::Bool), prep(a, dt), prep(b, dt)});
  return Tensor(u, shape, join({&cond, &a, &b}));
}
Tensor Tensor::where(double a, double b) const {
  Tensor ta(a), tb(b);
  if (is_integral(a) && is_integral(b)) ta = ta.cast(Scalar::Int32), tb = tb.cast(Scalar::Int32);
  return where(ta, tb);
}

Tensor Tensor::div(const Tensor& o) const {
  DType dt = float_of(least_upper_dtype(dtype(), o.dtype()));
  return binary(Op::Fdiv, cast(dt), o.cast(dt), "div");
}

Tensor Tensor::floordiv(const Tensor& o) const {
  DType dt = least_upper_dtype(dtype(), o.dtype());
  if (dt.is_float()) return div(o).floor();
  require(!dt.is_bool(), "floordiv", *this, "cast to an integer first");
  Tensor q = binary(Op::Idiv, *this, o, "floordiv"), r = binary(Op::Mod, *this, o, "floordiv");
  Tensor adjust = r.ne(r.scalar_like(0)).logical_and((r < 0).ne(o < 0));
  return adjust.where(q - 1.0, q);
}

Tensor Tensor::mod(const Tensor& o) const {
  DType dt = least_upper_dtype(dtype(), o.dtype());
  if (dt.is_float()) return cast(dt) - div(o).floor() * o.cast(dt);
  require(!dt.is_bool(), "mod", *this, "cast to an integer first");
  Tensor r = binary(Op::Mod, *this, o, "mod");
  Tensor adjust = r.ne(r.scalar_like(0)).logical_and((r < 0).ne(o < 0));
  return adjust.where(r + o, r);
}

Tensor Tensor::eq(const Tensor& o) const { return binary(Op::CmpEq, *this, o, "eq"); }
Tensor Tensor::ne(const Tensor& o) const { return binary(Op::CmpNe, *this, o, "ne"); }
Tensor Tensor::lt(const Tensor& o) const { return binary(Op::CmpLt, *this, o, "lt"); }
Tensor Tensor::gt(const Tensor& o) const { return binary(Op::CmpLt, o, *this, "gt"); }
Tensor Tensor::le(const Tensor& o) const { return gt(o).logical_not(); }
Tensor Tensor::ge(const Tensor& o) const { return lt(o).logical_not(); }

Tensor Tensor::logical_not() const {
  Tensor b = dtype().is_bool() ? *this : ne(scalar_like(0));
  return b.ne(Tensor(1.0, Scalar::Bool));
}
Tensor Tensor::logical_and(const Tensor& o) const {
  return binary(Op::And, cast(Scalar::Bool), o.cast(Scalar::Bool), "logical_and");
}
Tensor Tensor::logical_or(const Tensor& o) const {
  return binary(Op::Or, cast(Scalar::Bool), o.cast(Scalar::Bool), "logical_or");
}

namespace {
void require_bits(const Tensor& a, const Tensor& b, const char* op) {
  for (const Tensor* t : {&a, &b})
    user_assert(!t->dtype().is_float())
        << op << ": not defined for dtype " << t->dtype().str() << " (shape "
        << shape_str(t->shape()) << "); bitwise ops take integers and bools";
}
} // namespace

Tensor Tensor::bitwise_and(const Tensor& o) const {
  require_bits(*this, o, "bitwise_and");
  return binary(Op::And, *this, o, "bitwise_and");
}
Tensor Tensor::bitwise_or(const Tensor& o) const {
  require_bits(*this, o, "bitwise_or");
  return binary(Op::Or, *this, o, "bitwise_or");
}
Tensor Tensor::bitwise_xor(const Tensor& o) const {
  require_bits(*this, o, "bitwise_xor");
  return binary(Op::Xor, *this, o, "bitwise_xor");
}
Tensor Tensor::bitwise_not() const {
  require_bits(*this, *this, "bitwise_not");
  if (dtype().is_bool()) return logical_not();
  // ~x = x ^ all ones, which for unsigned types is no constant the IR holds (-1 doesn't fit
  // them, and 2^64 - 1 no double): 0 - x - 1, wrapping.
  if (dtype().is_unsigned())
    return binary(Op::Sub, binary(Op::Sub, Tensor(0.0, dtype()), *this, "bitwise_not"),
                  Tensor(1.0, dtype()), "bitwise_not");
  return binary(Op::Xor, *this, Tensor(-1.0, dtype()), "bitwise_not");
}
Tensor Tensor::lshift(int64_t bits) const {
  require_bits(*this, *this, "lshift");
  return binary(Op::Shl, *this, Tensor(static_cast<double>(bits), dtype()), "lshift");
}
Tensor Tensor::rshift(int64_t bits) const {
  require_bits(*this, *this, "rshift");
  return binary(Op::Shr, *this, Tensor(static_cast<double>(bits), dtype()), "rshift");
}

Tensor Tensor::square() const { return *this * *this; }
Tensor Tensor::relu() const { return maximum(0.0); }
Tensor Tensor::relu6() const { return relu().minimum(6.0); }
Tensor Tensor::gelu() const {
  Tensor x = cast(float_of(dtype()));
  return 0.5 * x * (1.0 + (0.7978845608028654 * (x + 0.044715 * x * x * x)).tanh());
}
Tensor Tensor::silu() const { return *this * sigmoid(); }
Tensor Tensor::softplus(double beta) const {
  return (1.0 + (*this * beta).exp()).log() * (1 / beta);
}
Tensor Tensor::leaky_relu(double slope) const { return (*this < 0).where(*this * slope, *this); }
Tensor Tensor::hardswish() const { return *this * (*this + 3.0).relu6() * (1.0 / 6); }
Tensor Tensor::mish() const { return *this * softplus().tanh(); }

// ---------------------------------------------------------------- reductions

Tensor Tensor::reduce(Op op, std::vector<int64_t> axes, bool keepdim, const char* name) const {
  if (axes.empty())
    for (int64_t i = 0; i < ndim(); ++i) axes.push_back(i);
  for (int64_t& a : axes) a = resolve_axis(a, name);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Shape kept = shape_;
  for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
  Tensor r = axes.empty() ? *this : Tensor(tensor_reduce(uop_, op, axes), kept, lineage_);
  if (keepdim) return r;
  Shape out;
  for (size_t i = 0; i < shape_.size(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i)))
      out.push_back(shape_[i]);
  return r.reshape(out);
}

namespace {
// Sums and products of small integers accumulate in 32 bits; of half floats, in float32.
DType accumulator(DType t) {
  if (t.is_bool() || ((t.is_int()) && t.itemsize() < 4))
    return t.is_unsigned() ? DType(Scalar::UInt32) : DType(Scalar::Int32);
  if (t.is_float() && t.itemsize() < 4) return Scalar::Float32;
  return t;
}
DType sum_result(DType t) { return t.is_float() ? t : accumulator(t); }
} // namespace

Tensor Tensor::sum(std::vector<int64_t> axes, bool keepdim) const {
  return cast(accumulator(dtype()))
      .reduce(Op::Add, std::move(axes), keepdim, "sum")
      .cast(sum_result(dtype()));
}
Tensor Tensor::prod(std::vector<int64_t> axes, bool keepdim) const {
  return cast(accumulator(dtype()))
      .reduce(Op::Mul, std::move(axes), keepdim, "prod")
      .cast(sum_result(dtype()));
}
Tensor Tensor::max(std::vector<int64_t> axes, bool keepdim) const {
  return reduce(Op::Max, std::move(axes), keepdim, "max");
}
Tensor Tensor::min(std::vector<int64_t> axes, bool keepdim) const {
  if (dtype().is_float()) return -neg().max(std::move(axes), keepdim);
  return bitwise_not().max(std::move(axes), keepdim).bitwise_not();
}
// `s`, the sum of `x` over `axes` (kept with `keepdim`), divided by the elements each of its
// results sums, less `correction` (floored at 0): a multiplication by the reciprocal where the
// reduced axes are fixed (a layernorm's over the features of a symbolic sequence), else a
// division by the count taken at run time, the sum of ones over the same axes (a mean over a
// sequence of any length), fused into the sum's kernel as a second reduction.
static Tensor per_element(const Tensor& s, const Tensor& x, const std::vector<int64_t>& axes,
                          bool keepdim, int64_t correction = 0) {
  Dim n = shape_numel(x.shape()) / shape_numel(s.shape());
  if (n.is_const()) return s * (1.0 / std::max(0.0, static_cast<double>(n.value() - correction)));
  Tensor count = Tensor::full(x.shape(), 1, Scalar::Float32).sum(axes, keepdim); // exact
  if (correction != 0) count = (count - static_cast<double>(correction)).relu();
  return s.div(count.cast(s.dtype()));
}
Tensor Tensor::mean(std::vector<int64_t> axes, bool keepdim) const {
  return per_element(cast(float_of(dtype())).sum(axes, keepdim), *this, axes, keepdim);
}
Tensor Tensor::var(std::vector<int64_t> axes, bool keepdim, int64_t correction) const {
  Tensor x = cast(float_of(dtype()));
  Tensor d = x - x.mean(axes, true);
  return per_element((d * d).sum(axes, keepdim), *this, axes, keepdim, correction);
}
Tensor Tensor::std(std::vector<int64_t> axes, bool keepdim, int64_t correction) const {
  return var(std::move(axes), keepdim, correction).sqrt();
}
Tensor Tensor::any(std::vector<int64_t> axes, bool keepdim) const {
  return cast(Scalar::Bool).max(std::move(axes), keepdim);
}
Tensor Tensor::all(std::vector<int64_t> axes, bool keepdim) const {
  return logical_not().any(std::move(axes), keepdim).logical_not();
}

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0);
  int64_t a = resolve_axis(*axis, "argmax");
  int64_t n = shape_[static_cast<size_t>(a)];
  Shape along(shape_.size(), 1);
  along[static_cast<size_t>(a)] = n;
  Tensor countdown = arange(static_cast<double>(n), 0, -1).reshape(along);
  Tensor hit = eq(max({a}, true)).where(countdown, Tensor(0.0, Scalar::Int32));
  return (static_cast<double>(n) - hit.max({a}, keepdim)).cast(Scalar::Int32);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  return (dtype().is_float() ? neg() : bitwise_not()).argmax(axis, keepdim);
}

Tensor Tensor::cumsum(int64_t axis) const {
  int64_t a = resolve_axis(axis, "cumsum");
  int64_t n = shape_[static_cast<size_t>(a)];
  Tensor x = transpose(a, -1); // (..., n)
  Tensor i = arange(n);
  Tensor lower = i.reshape({1, n}).le(i.reshape({n, 1})); // [out, in]: in <= out
  Tensor terms = lower.where(x.unsqueeze(-2), Tensor(0.0, dtype()));
  return terms.sum({-1}).transpose(a, -1);
}

// ---------------------------------------------------------------- movement

Tensor Tensor::reshape(Shape shape) const {
  Dim known = 1, n = shape_numel(shape_);
  int64_t infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      user_assert(infer < 0) << "reshape: " << shape_str(shape) << " has more than one -1";
      infer = static_cast<int64_t>(i);
    } else {
      user_assert(shape[i].min() >= 1 || (!shape[i].is_const() && shape[i].coefficient() >= 1))
          << "reshape: bad dimension " << shape[i] << " in " << shape_str(shape);
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    user_assert(divides(known, n)) << "reshape: cannot reshape " << shape_str(shape_) << " (" << n
                                   << " elements) to " << shape_str(shape);
    shape[static_cast<size_t>(infer)] = n / known;
  }
  user_assert(shape_numel(shape) == n)
      << "reshape: cannot reshape " << shape_str(shape_) << " (" << n << " elements) to "
      << shape_str(shape) << " (" << shape_numel(shape) << " elements)";
  if (shape == shape_) return *this;
  if (uop_->op() == Op::Reshape) // reshapes compose
    return Tensor(tensor_reshape(uop_->src(0), shape), shape, lineage_);
  return Tensor(tensor_reshape(uop_, shape), shape, lineage_);
}

Tensor Tensor::permute(std::vector<int64_t> order) const {
  user_assert(static_cast<int64_t>(order.size()) == ndim())
      << "permute: order has " << order.size() << " axes but shape " << shape_str(shape_) << " has "
      << ndim();
  std::vector<bool> seen(order.size());
  Shape out;
  for (int64_t& o : order) {
    o = resolve_axis(o, "permute");
    user_assert(!seen[static_cast<size_t>(o)]) << "permute: axis " << o << " appears twice";
    seen[static_cast<size_t>(o)] = true;
    out.push_back(shape_[static_cast<size_t>(o)]);
  }
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == static_cast<int64_t>(i);
  if (identity) return *this;
  return Tensor(tensor_permute(uop_, order), out, lineage_);
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  a = resolve_axis(a, "transpose");
  b = resolve_axis(b, "transpose");
  std::vector<int64_t> order(static_cast<size_t>(ndim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
  return permute(order);
}

Tensor Tensor::expand(Shape shape) const {
  user_assert(shape.size() >= shape_.size()) << "expand: cannot expand " << shape_str(shape_)
                                             << " to fewer dimensions " << shape_str(shape);
  size_t extra = shape.size() - shape_.size();
  Shape src(extra, 1);
  src.insert(src.end(), shape_.begin(), shape_.end());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) shape[i] = src[i];
    user_assert(src[i] == shape[i] || src[i] == 1)
        << "expand: cannot expand " << shape_str(shape_) << " to " << shape_str(shape)
        << " (dimension " << i << " is " << src[i] << ", not 1)";
  }
  Tensor r = reshape(src);
  if (shape == src) return r;
  return Tensor(tensor_expand(r.uop_, shape), shape, lineage_);
}

Tensor Tensor::pad(std::vector<std::pair<int64_t, int64_t>> pads, double value) const {
  user_assert(static_cast<int64_t>(pads.size()) == ndim())
      << "pad: " << pads.size() << " (before, after) pairs for shape " << shape_str(shape_);
  Shape out = shape_;
  bool none = true;
  for (size_t i = 0; i < pads.size(); ++i) {
    user_assert(pads[i].first >= 0 && pads[i].second >= 0)
        << "pad: negative padding on axis " << i << " (use shrink to cut)";
    out[i] += pads[i].first + pads[i].second;
    none &= pads[i].first == 0 && pads[i].second == 0;
  }
  if (none) return *this;
  Tensor padded(tensor_pad(uop_, pads), out, lineage_);
  if (value == 0) return padded;
  Tensor inside(tensor_pad(full(shape_, 1, Scalar::Bool).uop(), pads), out, nullptr);
  return inside.where(padded, Tensor(value, dtype()));
}

// Whether [b, e) is a non-empty range inside [0, n) at every value of their variables: a
// symbolic end (x[:seq]) within a fixed or equal dim, a fixed one within every value of n.
static bool within(const Dim& b, const Dim& e, const Dim& n) {
  if (!b.is_const() || b.value() < 0) return false;
  if (e == n) return b.value() < e.min();
  return b.value() < e.min() && e.max() <= n.min();
}

Tensor Tensor::shrink(std::vector<std::pair<Dim, Dim>> bounds) const {
  user_assert(static_cast<int64_t>(bounds.size()) == ndim())
      << "shrink: " << bounds.size() << " (begin, end) pairs for shape " << shape_str(shape_);
  Shape out;
  bool none = true;
  for (size_t i = 0; i < bounds.size(); ++i) {
    auto [b, e] = bounds[i];
    user_assert(within(b, e, shape_[i]))
        << "shrink: [" << b << ", " << e << ") is not a non-empty range of axis " << i
        << " of shape " << shape_str(shape_);
    out.push_back(e - b);
    none &= b == 0 && e == shape_[i];
  }
  if (none) return *this;
  return Tensor(tensor_shrink(uop_, bounds), out, lineage_);
}

Tensor Tensor::slice(int64_t axis, int64_t start, int64_t stop) const {
  int64_t a = resolve_axis(axis, "slice"), n = shape_[static_cast<size_t>(a)];
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  std::vector<std::pair<Dim, Dim>> bounds;
  for (const Dim& d : shape_) bounds.emplace_back(0, d);
  bounds[static_cast<size_t>(a)] = {start, std::min(stop, n)};
  return shrink(bounds);
}

Tensor Tensor::flip(std::vector<int64_t> axes) const {
  std::vector<bool> f(shape_.size());
  for (int64_t a : axes) f[static_cast<size_t>(resolve_axis(a, "flip"))] = true;
  if (std::none_of(f.begin(), f.end(), [](bool b) { return b; })) return *this;
  return Tensor(tensor_flip(uop_, f), shape_, lineage_);
}

Tensor Tensor::squeeze(std::optional<int64_t> axis) const {
  Shape out;
  if (axis) {
    int64_t a = resolve_axis(*axis, "squeeze");
    user_assert(shape_[static_cast<size_t>(a)] == 1)
        << "squeeze: axis " << *axis << " of shape " << shape_str(shape_) << " is not 1";
    out = shape_;
    out.erase(out.begin() + a);
  } else {
    for (int64_t d : shape_)
      if (d != 1) out.push_back(d);
  }
  return reshape(out);
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  int64_t a = axis < 0 ? axis + ndim() + 1 : axis;
  user_assert(a >= 0 && a <= ndim())
      << "unsqueeze: axis " << axis << " is out of range for shape " << shape_str(shape_);
  Shape out = shape_;
  out.insert(out.begin() + a, 1);
  return reshape(out);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (ndim() == 0) return reshape({1});
  int64_t s = resolve_axis(start, "flatten"), e = resolve_axis(end, "flatten");
  user_assert(s <= e) << "flatten: start axis " << start << " is after end axis " << end;
  Shape out(shape_.begin(), shape_.begin() + s);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= shape_[static_cast<size_t>(i)];
  out.push_back(n);
  out.insert(out.end(), shape_.begin() + e + 1, shape_.end());
  return reshape(out);
}

Tensor Tensor::repeat(std::vector<int64_t> repeats) const {
  user_assert(static_cast<int64_t>(repeats.size()) >= ndim())
      << "repeat: " << repeats.size() << " repeats for shape " << shape_str(shape_);
  Shape base(repeats.size() - shape_.size(), 1);
  base.insert(base.end(), shape_.begin(), shape_.end());
  Shape ones_then, grown, out;
  for (size_t i = 0; i < base.size(); ++i) {
    user_assert(repeats[i] >= 1) << "repeat: count " << repeats[i] << " is below 1";
    ones_then.insert(ones_then.end(), {1, base[i]});
    grown.insert(grown.end(), {repeats[i], base[i]});
    out.push_back(repeats[i] * base[i]);
  }
  return reshape(ones_then).expand(grown).reshape(out);
}

Tensor Tensor::contiguous() const { return Tensor(tensor_contiguous(uop_), shape_, lineage_); }

Tensor Tensor::cat(std::span<const Tensor> tensors, int64_t axis) {
  user_assert(!tensors.empty()) << "cat: no tensors";
  const Tensor& first = tensors[0];
  int64_t a = first.resolve_axis(axis, "cat");
  DType dt = first.dtype();
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    user_assert(t.ndim() == first.ndim()) << "cat: shapes " << shape_str(first.shape()) << " and "
                                          << shape_str(t.shape()) << " differ in rank";
    for (int64_t i = 0; i < t.ndim(); ++i)
      user_assert(i == a ||
                  t.shape()[static_cast<size_t>(i)] == first.shape()[static_cast<size_t>(i)])
          << "cat: shapes " << shape_str(first.shape()) << " and " << shape_str(t.shape())
          << " differ on axis " << i << " (only axis " << a << " may differ)";
    total += t.shape()[static_cast<size_t>(a)];
    dt = least_upper_dtype(dt, t.dtype());
  }
  std::optional<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    std::vector<std::pair<int64_t, int64_t>> pads(static_cast<size_t>(t.ndim()), {0, 0});
    int64_t len = t.shape()[static_cast<size_t>(a)];
    pads[static_cast<size_t>(a)] = {offset, total - offset - len};
    Tensor p = t.cast(dt).pad(pads);
    out = !out ? p : (dt.is_bool() ? out->logical_or(p) : *out + p);
    offset += len;
  }
  return *out;
}

Tensor Tensor::stack(std::span<const Tensor> tensors, int64_t axis) {
  user_assert(!tensors.empty()) << "stack: no tensors";
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    user_assert(t.shape() == tensors[0].shape())
        << "stack: shapes " << shape_str(tensors[0].shape()) << " and " << shape_str(t.shape())
        << " differ";
    parts.push_back(t.unsqueeze(axis));
  }
  return cat(parts, axis);
}

} // namespace beamlab

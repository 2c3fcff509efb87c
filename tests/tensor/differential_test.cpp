// Randomized differential test of the Tensor API against the plain-loop reference
// (tests/tensor/reference.hpp): random programs of movement chains, elementwise ops,
// broadcasting binaries, reductions and matmuls, built on both, realized and compared element
// by element. The second test realizes the same programs with a random Opt list per kernel.
//
// Every value carries, next to its exact (double) reference, a bound on the error float32
// evaluation may have accumulated: each op's rounding plus what its inputs' errors become
// through it (a sum of n terms adds n*2u*sum|x|, a product |a|e_b + |b|e_a + e_a e_b, ...). A
// comparison whose operands lie within their bounds of each other may go either way, so its
// bound is 1. An element agrees when |got - ref| <= 1e-4 + 1e-4 |ref| + 2 bound.
//
// Knobs: BEAMLAB_TENSOR_CASES (default 300), BEAMLAB_TENSOR_OPT_CASES (default 150),
// BEAMLAB_TENSOR_SEED (default 1), BEAMLAB_TENSOR_CASE=i (only case i; prints its program).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <functional>
#include <iostream>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>

#include <beamlab/beamlab.hpp>

#include "engine/support/knobs.hpp"
#include "tests/tensor/reference.hpp"
#include "tests/tensor/scoped_env.hpp"

namespace beamlab {
namespace {

namespace nd = ::beamlab::testing;
using nd::NdArray;
using nd::ReduceOp;

constexpr int64_t kMaxInputNumel = 2048;
constexpr int64_t kMaxNumel = 6144;
constexpr int64_t kMaxMatmulWork = 200000; // output elements times the inner dimension
constexpr double kUnit = 0x1p-24;          // float32's unit roundoff
constexpr double kOpRel = 1e-6;            // one transcendental op's relative rounding
constexpr double kMaxMagnitude = 64;       // larger values are scaled down by a power of 2

using Pads = std::vector<std::pair<int64_t, int64_t>>;

std::string num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
}

template <class T>
std::string list(const std::vector<T>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

std::string pairs(const Pads& p) {
  std::string s = "{";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? ", {" : "{") + std::to_string(p[i].first) + ", " + std::to_string(p[i].second) + "}";
  return s + "}";
}

/// One value of a program, on both sides.
struct Value {
  Tensor t;
  NdArray ref; ///< exact
  NdArray err; ///< bound on |float32 result - ref|
  std::string name;
  const Shape& shape() const { return ref.shape; }
  int64_t rank() const { return ref.rank(); }
};

// The bound after an elementwise op of one input: f(x, e, result) per element.
NdArray unary_error(const Value& v, const NdArray& out,
                    const std::function<double(double, double, double)>& f) {
  NdArray e = out;
  for (size_t i = 0; i < e.values.size(); ++i)
    e.values[i] = f(v.ref.values[i], v.err.values[i], out.values[i]);
  return e;
}

// The bound after an elementwise op of two broadcast inputs: f(xa, xb, ea, eb, result).
NdArray binary_error(const Value& a, const Value& b, const NdArray& out,
                     const std::function<double(double, double, double, double, double)>& f) {
  NdArray xa = nd::expand(a.ref, out.shape), xb = nd::expand(b.ref, out.shape);
  NdArray ea = nd::expand(a.err, out.shape), eb = nd::expand(b.err, out.shape);
  NdArray e = out;
  for (size_t i = 0; i < e.values.size(); ++i)
    e.values[i] = f(xa.values[i], xb.values[i], ea.values[i], eb.values[i], out.values[i]);
  return e;
}

// A comparison may flip where its operands are within their error bounds of each other.
double comparison_error(double x, double y, double ex, double ey) {
  double e = ex + ey;
  return e > 0 && std::fabs(x - y) <= e ? 1.0 : 0.0;
}

/// Builds a random program on Tensors and on the reference side by side.
class ProgramGen {
public:
  explicit ProgramGen(uint64_t seed) : rng_(seed) {}

  /// The program's outputs: the values no later op reads (inputs aside).
  std::vector<Value> build() {
    int64_t inputs = pick(1, 3);
    for (int64_t i = 0; i < inputs; ++i) input(random_shape());
    int64_t steps = pick(2, 8);
    for (int64_t s = 0; s < steps; ++s) {
      for (int attempt = 0; attempt < 20 && !step(); ++attempt) {
      }
      rescale();
    }
    together_ = chance(0.5);
    std::vector<Value> outputs;
    std::string names;
    for (size_t i = 0; i < pool_.size(); ++i) {
      if (read_[i] || is_input_[i]) continue;
      outputs.push_back(pool_[i]);
      names += (names.empty() ? "" : ", ") + pool_[i].name;
    }
    lines_.push_back(
        "// outputs " + names +
        (together_ ? ", realized together (realize_all)" : ", realized one at a time"));
    return outputs;
  }

  /// Whether the outputs are realized in one schedule.
  bool together() const { return together_; }

  /// The program as Tensor API code, one op per line, with each value's shape.
  std::string text() const {
    std::string s;
    for (const std::string& l : lines_) s += "  " + l + "\n";
    return s;
  }

  /// The values of the inputs with few elements (for writing a reproducer).
  std::string small_inputs() const {
    std::string s;
    for (const auto& [name, data] : input_data_) {
      if (data.size() > 64) continue;
      s += "  float " + name + "[] = {";
      for (size_t i = 0; i < data.size(); ++i) s += (i ? ", " : "") + num(data[i]) + "f";
      s += "};\n";
    }
    return s;
  }

private:
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  // A random index into a container of `n` elements.
  size_t index(size_t n) { return static_cast<size_t>(pick(0, static_cast<int64_t>(n) - 1)); }
  template <class T>
  T one_of(std::initializer_list<T> xs) {
    return *(xs.begin() + pick(0, static_cast<int64_t>(xs.size()) - 1));
  }

  // Mostly 1-9; sometimes sizes that fill vectors and leave remainders.
  int64_t dim() { return chance(0.12) ? one_of<int64_t>({16, 17, 32}) : pick(1, 9); }
  // A dim a broadcast grows to.
  int64_t grown_dim() { return chance(0.15) ? one_of<int64_t>({16, 17}) : pick(2, 5); }

  Shape random_shape() {
    for (;;) {
      Shape s(static_cast<size_t>(pick(1, 4)));
      for (Dim& d : s) d = dim();
      if (shape_numel(s) <= kMaxInputNumel) return s;
    }
  }

  // An axis, written negative half the time.
  int64_t spell_axis(int64_t a, int64_t rank) { return chance(0.5) ? a - rank : a; }

  // Each axis with probability p, each spelled at random; possibly none.
  std::vector<int64_t> some_axes(int64_t rank, double p) {
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < rank; ++a)
      if (chance(p)) axes.push_back(spell_axis(a, rank));
    return axes;
  }

  const Value& emit(const std::string& expr, Tensor t, NdArray ref, NdArray err) {
    std::string name = "v" + std::to_string(pool_.size());
    lines_.push_back("Tensor " + name + " = " + expr + ";  // " + shape_str(ref.shape));
    if (t.shape() != ref.shape)
      throw std::runtime_error(name + ": the Tensor's shape is " + shape_str(t.shape()) +
                               ", the reference's " + shape_str(ref.shape));
    // The operands are the names "v<i>" in the expression.
    for (size_t i = 0; i < expr.size(); ++i)
      if (expr[i] == 'v' && (i == 0 || !std::isalnum(static_cast<unsigned char>(expr[i - 1]))) &&
          i + 1 < expr.size() && std::isdigit(static_cast<unsigned char>(expr[i + 1])))
        read_[std::stoul(expr.substr(i + 1))] = true;
    pool_.push_back(Value{std::move(t), std::move(ref), std::move(err), name});
    read_.push_back(false);
    is_input_.push_back(expr.starts_with("Tensor(in"));
    return pool_.back();
  }

  // Uniform in [-1, 1), or small integers (exact ties for comparisons and max).
  const Value& input(const Shape& shape) {
    bool ints = chance(0.2);
    std::vector<float> data(static_cast<size_t>(shape_numel(shape)));
    for (float& x : data)
      x = ints ? static_cast<float>(pick(-3, 3))
               : static_cast<float>(std::uniform_real_distribution<double>(-1, 1)(rng_));
    std::string in = "in" + std::to_string(input_data_.size());
    input_data_.emplace_back(in, data);
    NdArray ref(shape, std::vector<double>(data.begin(), data.end()));
    return emit("Tensor(" + in + ", " + list(shape) + ")",
                Tensor(std::span<const float>(data), shape), ref, NdArray::full(shape, 0));
  }

  // Mostly the newest value, sometimes an older one.
  Value operand() {
    if (pool_.size() == 1 || chance(0.7)) return pool_.back();
    return pool_[index(pool_.size())];
  }

  // One op family, by weight; false when it doesn't apply to the operand it drew.
  bool step() {
    int64_t r = pick(0, 13);
    if (r < 3) return movement_chain();
    if (r < 5) return unary();
    if (r < 6) return scalar_binary();
    if (r < 9) return binary();
    if (r < 11) return reduction();
    if (r < 12) return against_own_reduction();
    return matmul();
  }

  // Values far from 1 are scaled by a power of 2 (exact), so no op overflows or underflows.
  void rescale() {
    const Value& v = pool_.back();
    double m = 0;
    for (double x : v.ref.values) m = std::max(m, std::fabs(x));
    if (m <= kMaxMagnitude) return;
    double s = std::exp2(-std::ceil(std::log2(m / (kMaxMagnitude / 4))));
    auto scale = [s](double x) { return x * s; };
    emit(v.name + " * " + num(s), v.t * s, nd::map(v.ref, scale), nd::map(v.err, scale));
  }

  // ---------------------------------------------------------------- movement

  bool movement_chain() {
    int64_t n = pick(1, 4), done = 0;
    for (int attempt = 0; attempt < 12 && done < n; ++attempt) {
      bool ok = false;
      switch (pick(0, 6)) {
      case 0: ok = permute(); break;
      case 1: ok = reshape(); break;
      case 2: ok = expand(); break;
      case 3: ok = pad(); break;
      case 4: ok = shrink(); break;
      case 5: ok = flip(); break;
      default: ok = contiguous(); break;
      }
      done += ok;
    }
    return done > 0;
  }

  bool permute() {
    Value v = operand();
    if (v.rank() < 2) return false;
    std::vector<int64_t> order(static_cast<size_t>(v.rank()));
    std::iota(order.begin(), order.end(), 0);
    while (std::is_sorted(order.begin(), order.end()))
      std::shuffle(order.begin(), order.end(), rng_);
    std::vector<int64_t> spelled = order;
    for (int64_t& a : spelled) a = spell_axis(a, v.rank());
    emit(v.name + ".permute(" + list(spelled) + ")", v.t.permute(spelled),
         nd::permute(v.ref, order), nd::permute(v.err, order));
    return true;
  }

  bool reshape() {
    Value v = operand();
    Shape s = v.shape(), out = s;
    switch (pick(0, 2)) {
    case 0: { // merge two neighbours
      if (s.size() < 2) return false;
      size_t i = index(s.size() - 1);
      out[i] *= out[i + 1];
      out.erase(out.begin() + static_cast<long>(i) + 1);
      break;
    }
    case 1: { // split a dim into two factors, or insert a 1
      if (s.size() >= 4) return false;
      std::vector<int64_t> factors;
      size_t j = s.empty() ? 0 : index(s.size());
      if (!s.empty())
        for (int64_t f = 2; f < s[j]; ++f)
          if (s[j] % f == 0) factors.push_back(f);
      if (factors.empty() || chance(0.25)) {
        out.insert(out.begin() + pick(0, static_cast<int64_t>(s.size())), 1);
        break;
      }
      int64_t f = factors[index(factors.size())];
      out[j] = f;
      out.insert(out.begin() + static_cast<long>(j) + 1, s[j] / f);
      break;
    }
    default: { // the element count's prime factors dealt to 1-4 dims
      std::vector<int64_t> primes;
      int64_t n = v.ref.numel();
      for (int64_t p = 2; p * p <= n; ++p)
        while (n % p == 0) primes.push_back(p), n /= p;
      if (n > 1) primes.push_back(n);
      out.assign(static_cast<size_t>(pick(1, 4)), 1);
      for (int64_t p : primes) out[index(out.size())] *= p;
      break;
    }
    }
    if (out == s) return false;
    Shape spelled = out;
    if (chance(0.3)) spelled[index(out.size())] = -1;
    emit(v.name + ".reshape(" + list(spelled) + ")", v.t.reshape(spelled), nd::reshape(v.ref, out),
         nd::reshape(v.err, out));
    return true;
  }

  bool expand() {
    Value v = operand();
    Shape s = v.shape(), target = s;
    bool grown = false;
    for (Dim& d : target)
      if (d == 1 && chance(0.7)) d = grown_dim(), grown = true;
    if (s.size() < 4 && (!grown || chance(0.3))) {
      target.insert(target.begin(), grown_dim());
      grown = true;
    }
    if (!grown || shape_numel(target) > kMaxNumel) return false;
    Shape spelled = target;
    size_t extra = target.size() - s.size();
    for (size_t i = extra; i < target.size(); ++i)
      if (target[i] == s[i - extra] && chance(0.3)) spelled[i] = -1;
    emit(v.name + ".expand(" + list(spelled) + ")", v.t.expand(spelled), nd::expand(v.ref, target),
         nd::expand(v.err, target));
    return true;
  }

  bool pad() {
    Value v = operand();
    if (v.rank() == 0) return false;
    Pads pads(static_cast<size_t>(v.rank()), {0, 0});
    for (auto& p : pads)
      if (chance(0.5)) p = {pick(0, 2), pick(0, 2)};
    auto& forced = pads[index(pads.size())];
    if (forced.first + forced.second == 0) forced = chance(0.5) ? std::pair{1, 0} : std::pair{0, 2};
    Shape out = v.shape();
    for (size_t i = 0; i < out.size(); ++i) out[i] += pads[i].first + pads[i].second;
    if (shape_numel(out) > kMaxNumel) return false;
    double value = one_of({0.0, 0.0, -1.0, 0.5, 3.0});
    std::string args = pairs(pads) + (value == 0 && chance(0.5) ? "" : ", " + num(value));
    emit(v.name + ".pad(" + args + ")", v.t.pad(pads, value), nd::pad(v.ref, pads, value),
         nd::pad(v.err, pads, 0));
    return true;
  }

  bool shrink() {
    Value v = operand();
    Shape s = v.shape();
    if (std::none_of(s.begin(), s.end(), [](int64_t d) { return d >= 2; })) return false;
    Pads bounds;
    bool cut = false;
    for (int64_t d : s) {
      int64_t b = 0, e = d;
      if (d >= 2 && chance(0.6)) {
        b = pick(0, d - 1);
        e = pick(b + 1, d);
      }
      cut |= b != 0 || e != d;
      bounds.emplace_back(b, e);
    }
    if (!cut) return false;
    emit(v.name + ".shrink(" + pairs(bounds) + ")", v.t.shrink(bounds), nd::shrink(v.ref, bounds),
         nd::shrink(v.err, bounds));
    return true;
  }

  bool flip() {
    Value v = operand();
    if (v.rank() == 0) return false;
    std::vector<int64_t> axes = some_axes(v.rank(), 0.5);
    if (axes.empty()) axes.push_back(pick(0, v.rank() - 1));
    emit(v.name + ".flip(" + list(axes) + ")", v.t.flip(axes), nd::flip(v.ref, axes),
         nd::flip(v.err, axes));
    return true;
  }

  bool contiguous() {
    Value v = operand();
    emit(v.name + ".contiguous()", v.t.contiguous(), v.ref, v.err);
    return true;
  }

  // ---------------------------------------------------------------- elementwise

  bool unary() {
    Value v = operand();
    switch (pick(0, 6)) {
    case 0: emit("-" + v.name, -v.t, nd::neg(v.ref), v.err); return true;
    case 1: emit(v.name + ".relu()", v.t.relu(), nd::relu(v.ref), v.err); return true;
    case 2: {
      NdArray r = nd::sigmoid(v.ref);
      emit(v.name + ".sigmoid()", v.t.sigmoid(), r,
           unary_error(v, r, [](double, double e, double) { return 0.25 * e + kOpRel; }));
      return true;
    }
    case 3: tanh(v); return true;
    case 4: {
      // exp only of bounded values: after tanh or a clamp.
      Value w = v;
      if (chance(0.5)) {
        w = tanh(v);
      } else {
        NdArray r = nd::map(v.ref, [](double x) { return std::clamp(x, -3.0, 3.0); });
        w = emit(v.name + ".clamp(-3.0, 3.0)", v.t.clamp(-3.0, 3.0), r, v.err);
      }
      NdArray r = nd::exp(w.ref);
      emit(w.name + ".exp()", w.t.exp(), r, unary_error(w, r, [](double, double e, double y) {
             return y * std::expm1(e) + kOpRel * y;
           }));
      return true;
    }
    case 5: {
      NdArray r = nd::log_abs1(v.ref);
      emit("(" + v.name + ".abs() + 1.0).log()", (v.t.abs() + 1.0).log(), r,
           unary_error(v, r, [](double, double e, double y) { return e + kOpRel * (y + 1); }));
      return true;
    }
    default: {
      NdArray r = nd::sqrt_abs(v.ref);
      emit(v.name + ".abs().sqrt()", v.t.abs().sqrt(), r,
           unary_error(v, r, [](double, double e, double y) {
             double through = y > 0 ? std::min(std::sqrt(e), e / (2 * y)) : std::sqrt(e);
             return through + kOpRel * y;
           }));
      return true;
    }
    }
  }

  // tanh is 2 sigmoid(2x) - 1: absolute rounding, also near 0.
  Value tanh(const Value& v) {
    NdArray r = nd::tanh(v.ref);
    return emit(v.name + ".tanh()", v.t.tanh(), r,
                unary_error(v, r, [](double, double e, double) { return e + 4 * kOpRel; }));
  }

  bool scalar_binary() {
    Value v = operand();
    double c = one_of({-2.0, -1.5, -0.5, 0.0, 0.25, 0.5, 1.0, 3.0});
    switch (pick(0, 5)) {
    case 0: {
      NdArray r = nd::map(v.ref, [c](double x) { return x + c; });
      emit(v.name + " + " + num(c), v.t + c, r, unary_error(v, r, [](double, double e, double y) {
             return e + 2 * kUnit * std::fabs(y);
           }));
      return true;
    }
    case 1: {
      NdArray r = nd::map(v.ref, [c](double x) { return x * c; });
      emit(v.name + " * " + num(c), v.t * c, r, unary_error(v, r, [c](double, double e, double y) {
             return std::fabs(c) * e + 2 * kUnit * std::fabs(y);
           }));
      return true;
    }
    case 2: {
      NdArray r = nd::map(v.ref, [c](double x) { return c - x; });
      emit(num(c) + " - " + v.name, c - v.t, r, unary_error(v, r, [](double, double e, double y) {
             return e + 2 * kUnit * std::fabs(y);
           }));
      return true;
    }
    case 3:
      emit(v.name + ".maximum(" + num(c) + ")", v.t.maximum(c),
           nd::map(v.ref, [c](double x) { return std::max(x, c); }), v.err);
      return true;
    default: {
      bool less = chance(0.5);
      NdArray r =
          nd::map(v.ref, [c, less](double x) { return (less ? x < c : x > c) ? 1.0 : 0.0; });
      Tensor t = (less ? v.t < c : v.t > c).cast(dtypes::float32);
      emit("(" + v.name + (less ? " < " : " > ") + num(c) + ").cast(dtypes::float32)", t, r,
           unary_error(v, r,
                       [c](double x, double e, double) { return comparison_error(x, c, e, 0); }));
      return true;
    }
    }
  }

  // Two values made broadcast-compatible: b is reduced over some of its axes until its element
  // count is that of some subset S of a's dims, then reshaped to a's shape with the dims
  // outside S set to 1 (leading 1s maybe dropped). Sometimes a is reduced (keepdim) along a
  // dim of S, so the broadcast goes both ways.
  bool binary() {
    Value a = operand();
    Value b = pool_[index(pool_.size())];
    struct Match {
      unsigned reduced, kept;
      int weight;
    };
    std::vector<Match> matches;
    int total = 0;
    for (unsigned t = 0; t < (1u << b.rank()); ++t)
      for (unsigned s = 0; s < (1u << a.rank()); ++s) {
        int64_t pb = 1, pa = 1;
        for (int64_t i = 0; i < b.rank(); ++i)
          if (!(t >> i & 1)) pb *= b.shape()[static_cast<size_t>(i)];
        for (int64_t i = 0; i < a.rank(); ++i)
          if (s >> i & 1) pa *= a.shape()[static_cast<size_t>(i)];
        if (pa != pb) continue;
        int w = (t == 0 ? 4 : 1) * (pa > 1 ? 3 : 1);
        matches.push_back({t, s, w});
        total += w;
      }
    int roll = static_cast<int>(pick(0, total - 1));
    Match m = matches.front();
    for (const Match& x : matches)
      if ((roll -= x.weight) < 0) {
        m = x;
        break;
      }
    if (m.reduced != 0) {
      std::vector<int64_t> axes;
      for (int64_t i = 0; i < b.rank(); ++i)
        if (m.reduced >> i & 1) axes.push_back(spell_axis(i, b.rank()));
      b = reduce(b, axes, chance(0.5), random_reduce_op());
    }
    Shape target = a.shape();
    for (int64_t i = 0; i < a.rank(); ++i)
      if (!(m.kept >> i & 1)) target[static_cast<size_t>(i)] = 1;
    if (chance(0.5))
      while (!target.empty() && target.front() == 1) target.erase(target.begin());
    if (target != b.shape())
      b = emit(b.name + ".reshape(" + list(target) + ")", b.t.reshape(target),
               nd::reshape(b.ref, target), nd::reshape(b.err, target));
    std::vector<int64_t> both;
    for (int64_t i = 0; i < a.rank(); ++i)
      if ((m.kept >> i & 1) && a.shape()[static_cast<size_t>(i)] > 1) both.push_back(i);
    if (!both.empty() && chance(0.3))
      a = reduce(a, {both[index(both.size())]}, true, random_reduce_op());
    if (chance(0.5)) std::swap(a, b);
    apply_binary(a, b);
    return true;
  }

  // v against a keepdim reduction of itself, as softmax and layernorm do (x - x.max(-1, true)).
  bool against_own_reduction() {
    Value v = operand();
    if (v.rank() == 0) return false;
    std::vector<int64_t> axes = some_axes(v.rank(), 0.4);
    if (axes.empty()) axes.push_back(spell_axis(v.rank() - 1, v.rank()));
    Value r = reduce(v, axes, true, random_reduce_op());
    if (chance(0.3)) std::swap(v, r);
    apply_binary(v, r);
    return true;
  }

  void apply_binary(const Value& a, const Value& b) {
    auto rounding = [](double, double, double ea, double eb, double y) {
      return ea + eb + 2 * kUnit * std::fabs(y);
    };
    switch (pick(0, 5)) {
    case 0: {
      NdArray r = nd::add(a.ref, b.ref);
      emit(a.name + " + " + b.name, a.t + b.t, r, binary_error(a, b, r, rounding));
      return;
    }
    case 1: {
      NdArray r = nd::sub(a.ref, b.ref);
      emit(a.name + " - " + b.name, a.t - b.t, r, binary_error(a, b, r, rounding));
      return;
    }
    case 2: {
      NdArray r = nd::mul(a.ref, b.ref);
      emit(a.name + " * " + b.name, a.t * b.t, r,
           binary_error(a, b, r, [](double x, double y, double ex, double ey, double z) {
             return std::fabs(x) * ey + std::fabs(y) * ex + ex * ey + 2 * kUnit * std::fabs(z);
           }));
      return;
    }
    case 3: {
      NdArray r = nd::maximum(a.ref, b.ref);
      emit(a.name + ".maximum(" + b.name + ")", a.t.maximum(b.t), r,
           binary_error(a, b, r, [](double, double, double ex, double ey, double) {
             return std::max(ex, ey);
           }));
      return;
    }
    default: {
      struct Cmp {
        const char* name;
        NdArray (*ref)(const NdArray&, const NdArray&);
        Tensor (Tensor::*op)(const Tensor&) const;
      };
      static const Cmp cmps[] = {{"lt", nd::lt, &Tensor::lt}, {"gt", nd::gt, &Tensor::gt},
                                 {"le", nd::le, &Tensor::le}, {"ge", nd::ge, &Tensor::ge},
                                 {"eq", nd::eq, &Tensor::eq}, {"ne", nd::ne, &Tensor::ne}};
      const Cmp& c = cmps[pick(0, 5)];
      NdArray r = c.ref(a.ref, b.ref);
      Tensor bools = (a.t.*c.op)(b.t);
      bool cast = chance(0.5);
      Tensor t = cast ? bools.cast(dtypes::float32) : bools.where(Tensor(1.0), Tensor(0.0));
      std::string expr = a.name + "." + c.name + "(" + b.name + ")" +
                         (cast ? ".cast(dtypes::float32)" : ".where(Tensor(1.0), Tensor(0.0))");
      emit(expr, t, r, binary_error(a, b, r, [](double x, double y, double ex, double ey, double) {
             return comparison_error(x, y, ex, ey);
           }));
      return;
    }
    }
  }

  // ---------------------------------------------------------------- reductions

  ReduceOp random_reduce_op() { return one_of({ReduceOp::Sum, ReduceOp::Max, ReduceOp::Mean}); }

  bool reduction() {
    Value v = operand();
    if (v.rank() == 0) return false;
    std::vector<int64_t> axes;
    if (!chance(0.15)) {
      axes = some_axes(v.rank(), 0.4);
      if (axes.empty()) axes.push_back(spell_axis(pick(0, v.rank() - 1), v.rank()));
    }
    reduce(v, axes, chance(0.5), random_reduce_op());
    return true;
  }

  Value reduce(const Value& v, const std::vector<int64_t>& axes, bool keepdim, ReduceOp op) {
    NdArray r = nd::reduce(v.ref, op, axes, keepdim);
    std::string args =
        axes.empty() && !keepdim ? "()" : "(" + list(axes) + (keepdim ? ", true)" : ", false)");
    if (op == ReduceOp::Max)
      return emit(v.name + ".max" + args, v.t.max(axes, keepdim), r, nd::max(v.err, axes, keepdim));
    // A sum of n terms: the terms' errors, plus n roundings of at most 2u sum|x| each.
    double n = static_cast<double>(v.ref.numel()) / static_cast<double>(r.numel());
    NdArray magnitude = nd::sum(nd::abs(v.ref), axes, keepdim);
    NdArray err = nd::zip(nd::sum(v.err, axes, keepdim), magnitude,
                          [n](double e, double s) { return e + n * 2 * kUnit * s; });
    if (op == ReduceOp::Sum) return emit(v.name + ".sum" + args, v.t.sum(axes, keepdim), r, err);
    err = nd::zip(err, r, [n](double e, double y) { return e / n + 2 * kUnit * std::fabs(y); });
    return emit(v.name + ".mean" + args, v.t.mean(axes, keepdim), r, err);
  }

  // ---------------------------------------------------------------- matmul

  // a @ w with w a fresh input or a pool value reshaped to (k, n); sometimes w @ a.
  bool matmul() {
    Value a = operand();
    if (a.rank() == 0) return false;
    if (a.rank() >= 2 && chance(0.25)) {
      int64_t k = a.shape()[a.shape().size() - 2];
      Shape left = {dim(), k};
      if (!fits(left, a.shape())) return false;
      multiply(input(left), a);
      return true;
    }
    int64_t k = a.shape().back();
    if (chance(0.35)) {
      Value b = pool_[index(pool_.size())];
      int64_t n = b.ref.numel() / k;
      if (b.ref.numel() % k == 0 && n <= 40 && fits(a.shape(), {k, n})) {
        Shape w = {k, n};
        if (w != b.shape())
          b = emit(b.name + ".reshape(" + list(w) + ")", b.t.reshape(w), nd::reshape(b.ref, w),
                   nd::reshape(b.err, w));
        multiply(a, b);
        return true;
      }
    }
    Shape w = {k, dim()};
    if (chance(0.15)) {
      w = {k};
    } else if (a.rank() >= 3 && chance(0.5)) {
      Shape batch(a.shape().begin() + static_cast<long>(chance(0.3)), a.shape().end() - 2);
      for (Dim& d : batch)
        if (chance(0.25)) d = 1;
      w.insert(w.begin(), batch.begin(), batch.end());
    } else if (a.rank() == 2 && chance(0.2)) {
      w.insert(w.begin(), pick(2, 3));
    }
    if (!fits(a.shape(), w)) return false;
    multiply(a, input(w));
    return true;
  }

  // Whether x @ y stays small.
  static bool fits(const Shape& x, const Shape& y) {
    NdArray out = nd::matmul(NdArray::full(x, 0), NdArray::full(y, 0));
    return out.numel() <= kMaxNumel && out.numel() * x.back() <= kMaxMatmulWork;
  }

  void multiply(const Value& x, const Value& y) {
    NdArray r = nd::matmul(x.ref, y.ref);
    NdArray ax = nd::abs(x.ref), ay = nd::abs(y.ref);
    double k = static_cast<double>(x.shape().back());
    NdArray err =
        nd::add(nd::add(nd::matmul(ax, y.err), nd::matmul(x.err, ay)), nd::matmul(x.err, y.err));
    err =
        nd::zip(err, nd::matmul(ax, ay), [k](double e, double s) { return e + k * 2 * kUnit * s; });
    emit(x.name + ".matmul(" + y.name + ")", x.t.matmul(y.t), r, err);
  }

  std::mt19937_64 rng_;
  std::deque<Value> pool_;
  std::vector<std::string> lines_;
  std::vector<std::pair<std::string, std::vector<float>>> input_data_;
  std::vector<bool> read_, is_input_; // per pool value
  bool together_ = false;
};

/// Up to 4 Opts drawn from candidate_actions, seeded from the case and the kernel's key, so a
/// case reruns with the same Opts. Logs what it chose.
class RandomOptPolicy : public OptPolicy {
public:
  explicit RandomOptPolicy(uint64_t seed) : seed_(seed) {}

  std::vector<Opt> opts_for(const ScheduleItem& kernel, int threads) const override {
    std::mt19937_64 rng(seed_ ^ (kernel.key * 0x9E3779B97F4A7C15ull));
    std::vector<Opt> opts;
    int64_t n = std::uniform_int_distribution<int64_t>(0, 4)(rng);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<Opt> candidates = candidate_actions(kernel.ast, opts, threads);
      if (candidates.empty()) break;
      opts.push_back(
          candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng)]);
    }
    log_ += "  " + kernel.name + ": " + (opts.empty() ? "(none)" : to_string(opts)) + "\n";
    return opts;
  }
  const std::string& log() const { return log_; }

private:
  uint64_t seed_;
  mutable std::string log_;
};

// "" when `got` agrees with v's reference, else the first element that doesn't.
std::string compare(const Value& v, const std::vector<float>& got) {
  if (static_cast<int64_t>(got.size()) != v.ref.numel())
    return "result has " + std::to_string(got.size()) + " elements, the reference " +
           std::to_string(v.ref.numel());
  int64_t bad = 0, first = -1;
  for (int64_t e = 0; e < v.ref.numel(); ++e) {
    double r = v.ref.values[static_cast<size_t>(e)], bound = v.err.values[static_cast<size_t>(e)];
    double tol = 1e-4 + 1e-4 * std::fabs(r) + 2 * bound;
    if (std::fabs(got[static_cast<size_t>(e)] - r) <= tol) continue;
    if (bad++ == 0) first = e;
  }
  if (bad == 0) return "";
  size_t f = static_cast<size_t>(first);
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << v.ref.numel() << " elements differ; first " << v.name
     << nd::index_str(v.shape(), first) << " (flat " << first << "): got " << got[f]
     << ", reference " << v.ref.values[f] << ", error bound " << v.err.values[f];
  return os.str();
}

// Builds and runs case `c`; "" if it passes, else the failure, the program and how to rerun.
std::string run_case(int64_t seed, int64_t c, bool random_opts, bool print) {
  uint64_t case_seed = static_cast<uint64_t>(seed) * 1000003 + static_cast<uint64_t>(c);
  ProgramGen gen(case_seed);
  RandomOptPolicy policy(case_seed);
  RealizeOptions options;
  if (random_opts) {
    options.threads = static_cast<int>(1 << (case_seed % 3)); // 1, 2 or 4
    options.policy = &policy;
  }
  std::string failure;
  try {
    std::vector<Value> outputs = gen.build();
    std::vector<Tensor> results;
    for (const Value& v : outputs) results.push_back(v.t);
    std::vector<Tensor*> all;
    for (Tensor& t : results) all.push_back(&t);
    if (gen.together())
      Tensor::realize_all(all, options);
    else
      for (Tensor* t : all) t->realize(options);
    for (size_t i = 0; i < outputs.size() && failure.empty(); ++i)
      failure = compare(outputs[i], results[i].to_vector<float>());
  } catch (const std::exception& e) {
    failure = std::string("threw: ") + e.what();
  }
  std::string program = "program:\n" + gen.text() + gen.small_inputs();
  if (random_opts)
    program += "opts (threads " + std::to_string(options.threads) + "):\n" + policy.log();
  if (print) std::cout << "case " << c << ", seed " << seed << "\n" << program;
  if (failure.empty()) return "";
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return "case " + std::to_string(c) + ", seed " + std::to_string(seed) + ": " + failure + "\n" +
         program + "rerun with BEAMLAB_TENSOR_SEED=" + std::to_string(seed) +
         " BEAMLAB_TENSOR_CASE=" + std::to_string(c) +
         " beamlab_tensor_tests --gtest_filter=" + test->test_suite_name() + "." + test->name();
}

void run_cases(const char* cases_knob, int64_t default_cases, bool random_opts) {
  int64_t cases = knob_int(cases_knob, default_cases);
  int64_t seed = knob_int("BEAMLAB_TENSOR_SEED", 1);
  int64_t only = knob_int("BEAMLAB_TENSOR_CASE", -1);
  int64_t ran = 0, failures = 0;
  for (int64_t c = only >= 0 ? only : 0; c < (only >= 0 ? only + 1 : cases); ++c) {
    ++ran;
    std::string failure = run_case(seed, c, random_opts, only >= 0);
    if (failure.empty()) continue;
    ADD_FAILURE() << failure;
    if (++failures == 3) break;
  }
  std::cout << "[ differential ] " << ran << " cases, seed " << seed << ", " << failures
            << " failed\n";
}

TEST(Differential, TensorProgramsMatchTheReference) {
  run_cases("BEAMLAB_TENSOR_CASES", 300, false);
}

TEST(Differential, RandomOptsMatchTheReference) {
  run_cases("BEAMLAB_TENSOR_OPT_CASES", 150, true);
}

} // namespace
} // namespace beamlab

// ---------------------------------------------------------------- window and indexing ops
//
// Random cases of conv (1-3 spatial dims, groups, stride, dilation, asymmetric pads, non-square
// kernels, bias), conv_transpose (with output_padding and pads beyond the kernel), max / avg /
// Lp pooling (ceil_mode, count_include_pad), topk and sort (ties, NaN), scatter (every reduce,
// duplicates, negative and out-of-range indices), gather and take, each against the plain-loop
// reference. Knobs: BEAMLAB_TENSOR_WINDOW_CASES (per op, default 40), BEAMLAB_TENSOR_SEED.
namespace beamlab {
namespace {

namespace nd = ::beamlab::testing;
using nd::NdArray;

/// A tensor and its reference.
struct Both {
  Tensor t;
  NdArray ref;
};

/// Draws the inputs and settings of one case, and writes down what it drew.
class CaseGen {
public:
  explicit CaseGen(uint64_t seed) : rng_(seed) {}

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  /// Uniform in [-1, 1), or small integers (ties) with probability `ties`.
  Both input(const Shape& shape, double ties = 0.2, double nans = 0) {
    bool ints = chance(ties);
    std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
    for (double& x : v) {
      x = ints ? static_cast<double>(pick(-3, 3))
               : static_cast<double>(
                     static_cast<float>(std::uniform_real_distribution<double>(-1, 1)(rng_)));
      if (chance(nans)) x = std::numeric_limits<double>::quiet_NaN();
    }
    note("input " + shape_str(shape) + (ints ? " (integers)" : ""));
    return {Tensor(std::span<const double>(v), shape), NdArray(shape, v)};
  }

  /// int64 indices in [lo, hi].
  Both indices(const Shape& shape, int64_t lo, int64_t hi) {
    std::vector<int64_t> v(static_cast<size_t>(shape_numel(shape)));
    std::vector<double> d;
    for (int64_t& x : v) d.push_back(static_cast<double>(x = pick(lo, hi)));
    note("index " + shape_str(shape) + " " + list(v));
    return {Tensor(std::span<const int64_t>(v), shape), NdArray(shape, d)};
  }

  /// A per-dim list as WindowArgs takes it: empty when all are `fill`, one value when all
  /// agree (sometimes), else one per dim.
  std::vector<int64_t> spelled(const std::vector<int64_t>& v, int64_t fill) {
    if (std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == fill; }) && chance(0.5))
      return {};
    if (std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; }) && chance(0.5))
      return {v[0]};
    return v;
  }

  void note(const std::string& s) { text_ += "  " + s + "\n"; }
  const std::string& text() const { return text_; }

private:
  std::mt19937_64 rng_;
  std::string text_;
};

/// Window settings drawn for `nd` dims, on both sides.
struct DrawnWindow {
  WindowArgs args;
  nd::WindowSpec spec;
};

DrawnWindow draw_window(CaseGen& g, std::vector<int64_t> kernel, int64_t max_stride,
                        int64_t max_dilation, int64_t max_pad) {
  nd::WindowSpec s{.kernel = kernel};
  for (size_t i = 0; i < kernel.size(); ++i) {
    s.stride.push_back(g.pick(1, max_stride));
    s.dilation.push_back(g.pick(1, max_dilation));
    s.pads.emplace_back(g.pick(0, max_pad), g.pick(0, max_pad));
  }
  WindowArgs a{.stride = g.spelled(s.stride, 1), .dilation = g.spelled(s.dilation, 1)};
  bool no_pads = std::all_of(s.pads.begin(), s.pads.end(),
                             [](auto p) { return p.first == 0 && p.second == 0; });
  if (!no_pads || g.chance(0.5)) a.padding = s.pads;
  g.note("kernel " + list(kernel) + " stride " + list(s.stride) + " dilation " + list(s.dilation) +
         " pads " + pairs(s.pads));
  return {a, s};
}

// Spatial sizes in which windows of `s` fit (after padding), small enough to stay quick.
Shape fitting_sizes(CaseGen& g, const nd::WindowSpec& s, int64_t extra) {
  Shape in;
  for (size_t i = 0; i < s.kernel.size(); ++i) {
    int64_t span = s.dilation[i] * (s.kernel[i] - 1) + 1;
    in.push_back(std::max<int64_t>(1, span - s.pads[i].first - s.pads[i].second) +
                 g.pick(0, extra));
  }
  return in;
}

// "" when `got` equals `ref` within tol (1 + |ref|) (NaN and infinities exactly), else the
// first element that doesn't.
std::string mismatch(const std::vector<double>& got, const NdArray& ref, double tol) {
  if (static_cast<int64_t>(got.size()) != ref.numel())
    return std::to_string(got.size()) + " elements, the reference has " +
           std::to_string(ref.numel());
  for (size_t e = 0; e < got.size(); ++e) {
    double r = ref.values[e], x = got[e];
    bool same = std::isnan(r)   ? std::isnan(x)
                : std::isinf(r) ? x == r
                                : std::fabs(x - r) <= tol * (1 + std::fabs(r));
    if (same) continue;
    std::ostringstream os;
    os.precision(9);
    os << "element " << nd::index_str(ref.shape, static_cast<int64_t>(e)) << ": got " << x
       << ", reference " << r;
    return os.str();
  }
  return "";
}

// Runs `one_case(gen)` for each case: it returns the failure or "".
void run_window_cases(const std::function<std::string(CaseGen&)>& one_case) {
  int64_t cases = knob_int("BEAMLAB_TENSOR_WINDOW_CASES", 40);
  int64_t seed = knob_int("BEAMLAB_TENSOR_SEED", 1), failures = 0;
  for (int64_t c = 0; c < cases && failures < 3; ++c) {
    CaseGen gen(static_cast<uint64_t>(seed) * 7919 + static_cast<uint64_t>(c));
    std::string failure;
    try {
      failure = one_case(gen);
    } catch (const std::exception& e) {
      failure = std::string("threw: ") + e.what();
    }
    if (failure.empty()) continue;
    ++failures;
    ADD_FAILURE() << "case " << c << ", seed " << seed << ": " << failure << "\n" << gen.text();
  }
}

TEST(WindowOps, ConvMatchesTheReference) {
  run_window_cases([](CaseGen& g) {
    auto nd_ = static_cast<size_t>(g.pick(1, 3));
    int64_t groups = g.pick(1, 3), cg = g.pick(1, 3), cog = g.pick(1, 3), n = g.pick(1, 2);
    std::vector<int64_t> kernel;
    for (size_t i = 0; i < nd_; ++i) kernel.push_back(g.pick(1, nd_ == 3 ? 2 : 3));
    DrawnWindow w = draw_window(g, kernel, 3, 2, 2);
    Shape xs = {n, cg * groups}, ws = {cog * groups, cg};
    Shape in = fitting_sizes(g, w.spec, nd_ == 3 ? 2 : 5);
    xs.insert(xs.end(), in.begin(), in.end());
    ws.insert(ws.end(), kernel.begin(), kernel.end());
    Both x = g.input(xs), wt = g.input(ws);
    std::optional<Both> bias;
    if (g.chance(0.5)) bias = g.input({cog * groups});
    g.note("groups " + std::to_string(groups));
    Tensor out = x.t.conv(wt.t, bias ? std::optional(bias->t) : std::nullopt, groups, w.args);
    NdArray want = nd::conv(x.ref, wt.ref, bias ? &bias->ref : nullptr, groups, w.spec);
    return mismatch(out.to_vector<double>(), want, 1e-5 * static_cast<double>(shape_numel(ws)));
  });
}

// The Winograd tile a schedule computes a convolution with (its GEMMs over 16 or 36 points of
// the transform domain: r_16_... or r_36_...), 0 for none.
int winograd_tile(const Schedule& s) {
  for (const ScheduleItem& k : s.items) {
    if (k.name.starts_with("r_16_")) return 2;
    if (k.name.starts_with("r_36_")) return 4;
  }
  return 0;
}

// Winograd F(2x2, 3x3) and F(4x4, 3x3) on every 3x3 stride-1 convolution (BEAMLAB_WINOGRAD=2
// and 4): odd and even sizes, maps smaller than a tile, asymmetric pads, batches and bias,
// against the direct reference. The transforms' rounding grows with the channels like the
// direct sum's; F(4x4)'s larger constants (up to 8 in At, 5 in Bt) round 4x more.
TEST(WindowOps, WinogradConvMatchesTheReference) {
  for (int tile : {2, 4}) {
    SCOPED_TRACE("F(" + std::to_string(tile) + "x" + std::to_string(tile) + ", 3x3)");
    test::ScopedEnv winograd("BEAMLAB_WINOGRAD", std::to_string(tile).c_str());
    run_window_cases([&](CaseGen& g) {
      int64_t n = g.pick(1, 2), c = g.pick(1, 6), cout = g.pick(1, 6);
      nd::WindowSpec spec{.kernel = {3, 3}, .stride = {1, 1}, .dilation = {1, 1}};
      for (int i = 0; i < 2; ++i) spec.pads.emplace_back(g.pick(0, 2), g.pick(0, 2));
      Shape xs = {n, c};
      for (const auto& [b, e] : spec.pads)
        xs.push_back(std::max<int64_t>(1, 3 - b - e) + g.pick(0, 9));
      g.note("pads " + pairs(spec.pads));
      Both x = g.input(xs), wt = g.input({cout, c, 3, 3});
      std::optional<Both> bias;
      if (g.chance(0.5)) bias = g.input({cout});
      Tensor out =
          x.t.conv(wt.t, bias ? std::optional(bias->t) : std::nullopt, 1, {.padding = spec.pads});
      if (int got = winograd_tile(out.schedule()); got != tile)
        return "tile " + std::to_string(got) + " among the kernels, not " + std::to_string(tile);
      NdArray want = nd::conv(x.ref, wt.ref, bias ? &bias->ref : nullptr, 1, spec);
      double rounding = tile == 4 ? 4e-5 : 1e-5;
      return mismatch(out.to_vector<double>(), want, rounding * static_cast<double>(9 * c));
    });
  }
}

// Which convolutions take Winograd by default, and with which tile: dense 3x3 stride-1 ones with
// 64 channels or more in and out and at least 32 tiles of 2x2 outputs when the weight is a
// constant (ResNet-18's 56, 28 and 14-wide layers, not its 7x7 ones, its stride-2 ones or a
// 32-channel layer), 256 when it is not (its transform then runs on every run); 4x4 tiles where
// both output sides are multiples of 4 with as many of them (the 56 and 28-wide layers).
TEST(WindowOps, WinogradIsChosenWhereItPays) {
  auto winograd = [](int64_t c, int64_t hw, int64_t stride, int64_t groups, bool constant) {
    Tensor x = Tensor::rand({1, c, hw, hw}, 1);
    auto storage = std::make_shared<Buffer>(static_cast<size_t>(c * c / groups * 9) * 4);
    if (constant) storage->mark_constant();
    Tensor w = Tensor::from_storage(storage, {c, c / groups, 3, 3}, Scalar::Float32);
    return winograd_tile(x.conv2d(w, std::nullopt, stride, 1, 1, groups).schedule());
  };
  EXPECT_EQ(winograd(64, 56, 1, 1, true), 4);
  EXPECT_EQ(winograd(128, 28, 1, 1, true), 4);
  EXPECT_EQ(winograd(256, 14, 1, 1, true), 2);
  EXPECT_EQ(winograd(64, 16, 1, 1, true), 2); // 16 tiles of 4x4, 64 of 2x2
  EXPECT_EQ(winograd(512, 7, 1, 1, true), 0);
  EXPECT_EQ(winograd(64, 56, 2, 1, true), 0);
  EXPECT_EQ(winograd(32, 56, 1, 1, true), 0);
  EXPECT_EQ(winograd(64, 56, 1, 64, true), 0);
  EXPECT_EQ(winograd(64, 56, 1, 1, false), 2);  // 784 tiles of 2x2, 196 of 4x4
  EXPECT_EQ(winograd(64, 64, 1, 1, false), 4);  // 256 of 4x4
  EXPECT_EQ(winograd(256, 14, 1, 1, false), 0); // 49
  {
    test::ScopedEnv off("BEAMLAB_WINOGRAD", "0");
    EXPECT_EQ(winograd(64, 56, 1, 1, true), 0);
  }
  test::ScopedEnv bad("BEAMLAB_WINOGRAD", "3");
  try {
    winograd(64, 56, 1, 1, true);
    ADD_FAILURE() << "BEAMLAB_WINOGRAD=3 was taken";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("BEAMLAB_WINOGRAD=3: use 0 (off), 1"), std::string::npos)
        << e.what();
  }
}

// Convolutions on channel blocks (the ONNX import's depthwise and 1x1 layers): to_channel_blocks,
// conv_blocked and from_channel_blocks together against the direct reference, with channel
// counts that leave a block part-filled, strides, dilations, pads, batches and bias; the
// blocks' channels past Cout must come out zero (the next convolution's zero weights cancel
// only finite values).
TEST(WindowOps, ChannelBlockedConvMatchesTheReference) {
  run_window_cases([](CaseGen& g) {
    bool depthwise = g.chance(0.5);
    int64_t n = g.pick(1, 2), c = g.pick(depthwise ? 2 : 1, 40),
            cout = depthwise ? c : g.pick(1, 40);
    DrawnWindow w = depthwise ? draw_window(g, {g.pick(1, 3), g.pick(1, 3)}, 2, 2, 2)
                              : DrawnWindow{{},
                                            {.kernel = {1, 1},
                                             .stride = {1, 1},
                                             .dilation = {1, 1},
                                             .pads = {{0, 0}, {0, 0}}}};
    Shape xs = {n, c}, ws = {cout, depthwise ? 1 : c};
    Shape in = fitting_sizes(g, w.spec, 6);
    xs.insert(xs.end(), in.begin(), in.end());
    ws.insert(ws.end(), w.spec.kernel.begin(), w.spec.kernel.end());
    Both x = g.input(xs), wt = g.input(ws);
    std::optional<Both> bias;
    if (g.chance(0.5)) bias = g.input({cout});
    int64_t groups = depthwise ? c : 1;
    g.note((depthwise ? "depthwise, " : "1x1, ") + std::to_string(c) + " -> " +
           std::to_string(cout) + " channels");
    if (!Tensor::conv_blocked_supported(x.t.shape(), wt.t, groups, w.args))
      return std::string("conv_blocked_supported says no");
    Tensor blocks = x.t.to_channel_blocks().conv_blocked(
        wt.t, bias ? std::optional(bias->t) : std::nullopt, groups, w.args);
    std::vector<double> all = blocks.to_vector<double>();
    const Shape& bs = blocks.shape(); // (N, Cob, Ho, Wo, 16)
    int64_t plane = bs[2] * bs[3];
    for (size_t i = 0; i < all.size(); ++i) {
      auto e = static_cast<int64_t>(i);
      int64_t channel = (e / (plane * 16)) % bs[1] * 16 + e % 16;
      if (channel >= cout && all[i] != 0)
        return "channel " + std::to_string(channel) + " past " + std::to_string(cout) + " holds " +
               std::to_string(all[i]);
    }
    NdArray want = nd::conv(x.ref, wt.ref, bias ? &bias->ref : nullptr, groups, w.spec);
    return mismatch(blocks.from_channel_blocks(cout).to_vector<double>(), want,
                    1e-5 * static_cast<double>(shape_numel(ws)));
  });
}

TEST(WindowOps, ConvTransposeMatchesTheReference) {
  run_window_cases([](CaseGen& g) {
    auto nd_ = static_cast<size_t>(g.pick(1, 3));
    int64_t groups = g.pick(1, 2), cig = g.pick(1, 3), cog = g.pick(1, 3);
    std::vector<int64_t> kernel, output_padding;
    for (size_t i = 0; i < nd_; ++i) kernel.push_back(g.pick(1, 3));
    DrawnWindow w = draw_window(g, kernel, 3, 2, 3);
    Shape xs = {g.pick(1, 2), cig * groups}, ws = {cig * groups, cog};
    for (size_t i = 0; i < nd_; ++i) {
      int64_t in = g.pick(1, nd_ == 3 ? 3 : 5);
      output_padding.push_back(g.pick(0, std::max(w.spec.stride[i], w.spec.dilation[i]) - 1));
      int64_t out = (in - 1) * w.spec.stride[i] - w.spec.pads[i].first - w.spec.pads[i].second +
                    w.spec.dilation[i] * (kernel[i] - 1) + output_padding[i] + 1;
      if (out < 1) in += (1 - out + w.spec.stride[i] - 1) / w.spec.stride[i];
      xs.push_back(in);
    }
    ws.insert(ws.end(), kernel.begin(), kernel.end());
    Both x = g.input(xs), wt = g.input(ws);
    std::optional<Both> bias;
    if (g.chance(0.5)) bias = g.input({cog * groups});
    g.note("groups " + std::to_string(groups) + " output_padding " + list(output_padding));
    Tensor out = x.t.conv_transpose(wt.t, bias ? std::optional(bias->t) : std::nullopt, groups,
                                    w.args, g.spelled(output_padding, 0));
    NdArray want = nd::conv_transpose(x.ref, wt.ref, bias ? &bias->ref : nullptr, groups, w.spec,
                                      output_padding);
    return mismatch(out.to_vector<double>(), want, 1e-5 * static_cast<double>(shape_numel(ws)));
  });
}

TEST(WindowOps, PoolingMatchesTheReference) {
  run_window_cases([](CaseGen& g) {
    auto nd_ = static_cast<size_t>(g.pick(1, 3));
    std::vector<int64_t> kernel;
    for (size_t i = 0; i < nd_; ++i) kernel.push_back(g.pick(1, 3));
    DrawnWindow w = draw_window(g, kernel, 3, 2, 1);
    w.args.ceil_mode = w.spec.ceil_mode = g.chance(0.4);
    auto op = static_cast<nd::PoolOp>(g.pick(0, 3));
    w.args.count_include_pad = op == nd::PoolOp::AvgIncludePad;
    double p = static_cast<double>(g.pick(1, 3));
    Shape xs(static_cast<size_t>(g.pick(0, 2)), 2);
    Shape in = fitting_sizes(g, w.spec, nd_ == 3 ? 3 : 6);
    xs.insert(xs.end(), in.begin(), in.end());
    Both x = g.input(xs);
    static const char* const kNames[] = {"max", "avg", "avg (count_include_pad)", "lp"};
    g.note(std::string(kNames[static_cast<int>(op)]) + " p " + std::to_string(p) +
           (w.args.ceil_mode ? " ceil_mode" : ""));
    NdArray want = nd::pool(x.ref, op, w.spec, p);
    if (std::any_of(want.values.begin(), want.values.end(), [](double v) { return std::isnan(v); }))
      return std::string(); // a window of pads only: nothing to average
    Tensor out = op == nd::PoolOp::Max  ? x.t.max_pool(kernel, w.args)
                 : op == nd::PoolOp::Lp ? x.t.lp_pool(kernel, p, w.args)
                                        : x.t.avg_pool(kernel, w.args);
    return mismatch(out.to_vector<double>(), want, 1e-5);
  });
}

TEST(WindowOps, TopkAndSortMatchTheReference) {
  run_window_cases([](CaseGen& g) {
    Shape shape(static_cast<size_t>(g.pick(1, 3)));
    for (Dim& d : shape) d = g.pick(1, 7);
    Both x = g.input(shape, 0.5, g.chance(0.2) ? 0.15 : 0);
    auto rank = static_cast<int64_t>(shape.size());
    int64_t axis = g.pick(-rank, rank - 1),
            n = shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
    bool descending = g.chance(0.5), sort = g.chance(0.3);
    int64_t k = sort ? n : g.pick(1, n);
    g.note((sort ? "sort axis " : "topk k " + std::to_string(k) + " axis ") + std::to_string(axis) +
           (descending ? " descending" : " ascending"));
    auto [values, indices] = sort ? x.t.sort(axis, descending) : x.t.topk(k, axis, descending);
    auto [want_values, want_indices] = nd::topk(x.ref, k, axis, descending);
    std::string bad = mismatch(values.to_vector<double>(), want_values, 0);
    if (!bad.empty()) return "values: " + bad;
    bad = mismatch(indices.to_vector<double>(), want_indices, 0);
    return bad.empty() ? bad : "indices: " + bad;
  });
}

// A shape of rank 1-3 with dims 1-5, an axis of it (possibly negative), that axis resolved,
// and its length.
struct ShapeAndAxis {
  Shape shape;
  int64_t rank, axis, a, n;
};
ShapeAndAxis shape_and_axis(CaseGen& g) {
  Shape shape(static_cast<size_t>(g.pick(1, 3)));
  for (Dim& d : shape) d = g.pick(1, 5);
  auto rank = static_cast<int64_t>(shape.size());
  int64_t axis = g.pick(-rank, rank - 1), a = axis < 0 ? axis + rank : axis;
  return {shape, rank, axis, a, shape[static_cast<size_t>(a)]};
}

TEST(WindowOps, ScatterMatchesTheReference) {
  run_window_cases([](CaseGen& g) {
    auto [shape, rank, axis, a, n] = shape_and_axis(g);
    Shape is = shape;
    for (int64_t i = 0; i < rank; ++i)
      is[static_cast<size_t>(i)] =
          i == a ? g.pick(1, n + 2) : g.pick(1, shape[static_cast<size_t>(i)]);
    static const char* const kReduce[] = {"none", "add", "mul", "max", "min"};
    std::string reduce = kReduce[g.pick(0, 4)];
    g.note("scatter axis " + std::to_string(axis) + " reduce " + reduce);
    Both x = g.input(shape), idx = g.indices(is, -n - 1, n), src = g.input(is);
    Tensor out = x.t.scatter(axis, idx.t, src.t, reduce);
    return mismatch(out.to_vector<double>(), nd::scatter(x.ref, axis, idx.ref, src.ref, reduce),
                    1e-6);
  });
}

TEST(WindowOps, GatherAndTakeMatchTheReference) {
  run_window_cases([](CaseGen& g) {
    auto [shape, rank, axis, a, n] = shape_and_axis(g);
    Both x = g.input(shape);
    if (g.chance(0.5)) {
      Shape is(static_cast<size_t>(g.pick(0, 2)));
      for (Dim& d : is) d = g.pick(1, 4);
      g.note("take axis " + std::to_string(axis));
      Both idx = g.indices(is, -n, n - 1);
      return mismatch(x.t.take(idx.t, axis).to_vector<double>(), nd::take(x.ref, idx.ref, axis), 0);
    }
    Shape is = shape;
    for (int64_t i = 0; i < rank; ++i)
      is[static_cast<size_t>(i)] = i == a ? g.pick(1, 6) : g.pick(1, shape[static_cast<size_t>(i)]);
    g.note("gather axis " + std::to_string(axis));
    Both idx = g.indices(is, -n, n - 1);
    return mismatch(x.t.gather(axis, idx.t).to_vector<double>(), nd::gather(x.ref, axis, idx.ref),
                    0);
  });
}

} // namespace
} // namespace beamlab

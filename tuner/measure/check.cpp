// Inputs, sentinels and output comparison; see check.hpp.
#include "tuner/measure/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace beamlab::tuner {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += kGolden);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void set_element(DType dt, void* data, int64_t i, double v) {
  auto put = [&](auto x) {
    std::memcpy(static_cast<char*>(data) + i * static_cast<int64_t>(sizeof x), &x, sizeof x);
  };
  switch (dt.scalar()) {
  case Scalar::Float32: return put(static_cast<float>(v));
  case Scalar::Float64: return put(v);
  case Scalar::Float16: return put(static_cast<_Float16>(v));
  case Scalar::BFloat16: {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return put(static_cast<uint16_t>(bits >> 16)); // truncation: inputs need no rounding
  }
  case Scalar::Bool: return put(static_cast<uint8_t>(v != 0));
  case Scalar::Int8: return put(static_cast<int8_t>(v));
  case Scalar::Int16: return put(static_cast<int16_t>(v));
  case Scalar::Int32: return put(static_cast<int32_t>(v));
  case Scalar::Int64: return put(static_cast<int64_t>(v));
  case Scalar::UInt8: return put(static_cast<uint8_t>(v));
  case Scalar::UInt16: return put(static_cast<uint16_t>(v));
  case Scalar::UInt32: return put(static_cast<uint32_t>(v));
  case Scalar::UInt64: return put(static_cast<uint64_t>(v));
  default: return;
  }
}

double epsilon(DType dt) {
  switch (dt.scalar()) {
  case Scalar::Float16: return 9.8e-4;
  case Scalar::BFloat16: return 7.9e-3;
  case Scalar::Float64: return 2.3e-16;
  default: return 1.2e-7;
  }
}

// A random or small-integer input value from the hash `r`.
double plain_value(InputKind kind, uint64_t r, bool is_float, bool is_signed) {
  if (kind == InputKind::random)
    return is_float ? static_cast<double>(r >> 11) * 0x1.0p-52 - 1.0
                    : static_cast<double>(r % 201) - (is_signed ? 100.0 : 0.0);
  return static_cast<double>(r % 7) - (is_signed || is_float ? 3 : 0);
}

} // namespace

std::string_view to_string(InputKind k) {
  switch (k) {
  case InputKind::random: return "random";
  case InputKind::small_ints: return "small_ints";
  case InputKind::special: return "special";
  case InputKind::special_finite: return "special_finite";
  }
  return "?";
}

std::optional<InputKind> parse_input_kind(std::string_view s) {
  for (InputKind k :
       {InputKind::random, InputKind::small_ints, InputKind::special, InputKind::special_finite})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

void fill_input(DType dt, InputKind kind, uint64_t seed, void* data, int64_t count) {
  uint64_t state = seed * kGolden + static_cast<uint64_t>(kind);
  // float32 random and small-integer inputs, the bulk of what a tuner fills, in a loop the
  // compiler vectorizes: the same values as the general loop below (splitmix64 is a counter
  // hash, so element i needs no state from element i-1).
  if (dt.scalar() == Scalar::Float32 &&
      (kind == InputKind::random || kind == InputKind::small_ints)) {
    auto* out = static_cast<float*>(data);
    for (int64_t i = 0; i < count; ++i) {
      uint64_t at = state + static_cast<uint64_t>(i) * kGolden; // the state before element i
      out[i] = static_cast<float>(plain_value(kind, splitmix64(at), true, true));
    }
    return;
  }
  bool is_float = dt.is_float(), is_signed = dt.is_int() && !dt.is_unsigned();
  static constexpr double kSpecialFloats[] = {0.0,  -0.0,  1.0,    -1.0, 0.5,   -0.5, 2.0,
                                              -2.0, 1e-20, -1e-20, 1e20, -1e20, 3.0,  0.25};
  for (int64_t i = 0; i < count; ++i) {
    uint64_t r = splitmix64(state);
    double v = 0;
    switch (kind) {
    case InputKind::random:
    case InputKind::small_ints: v = plain_value(kind, r, is_float, is_signed); break;
    case InputKind::special:
    case InputKind::special_finite:
      if (is_float) {
        v = kSpecialFloats[r % std::size(kSpecialFloats)];
        if (kind == InputKind::special_finite && std::abs(v) > 1e4) v = v > 0 ? 3.0 : -3.0;
        if (dt.scalar() == Scalar::Float16 && std::abs(v) > 1e4) v = v > 0 ? 6e4 : -6e4;
        if (dt.scalar() == Scalar::Float16 && v != 0 && std::abs(v) < 1e-4)
          v = v > 0 ? 1e-4 : -1e-4;
      } else if (!dt.is_bool()) {
        int64_t picks[] = {0, 1, dt.int_min(), dt.int_max(), is_signed ? -1 : 2};
        int64_t iv = picks[r % std::size(picks)];
        if (dt.itemsize() == 8) { // a double can't hold the 64-bit extremes: write the integer
          std::memcpy(static_cast<char*>(data) + i * 8, &iv, 8);
          continue;
        }
        v = static_cast<double>(iv);
      }
      break;
    }
    if (dt.is_bool()) v = static_cast<double>(r & 1);
    set_element(dt, data, i, v);
  }
}

DivisionDomain division_domain(const UOpPtr& ast, size_t buffers) {
  DivisionDomain d;
  d.divisor.assign(buffers, false);
  for (const UOpPtr& u : toposort(ast)) {
    bool int_division = (u->op() == Op::Idiv || u->op() == Op::Mod) && u->dtype().is_int();
    if (!int_division || u->dtype().scalar() == Scalar::Index) continue;
    d.divides = true;
    for (const UOpPtr& v : toposort(u->src(1))) {
      if (v->op() != Op::Load || v->src(0)->op() != Op::Index) continue;
      const UOpPtr& base = v->src(0)->src(0);
      if (base->op() != Op::DefineGlobal) continue;
      auto slot = static_cast<size_t>(base->arg().as_int());
      if (slot < buffers) d.divisor[slot] = true;
    }
  }
  return d;
}

namespace {
template <class T>
void keep_in_domain(T* p, int64_t count, bool divisor) {
  for (int64_t i = 0; i < count; ++i) {
    if (std::is_signed_v<T> && p[i] == std::numeric_limits<T>::min()) ++p[i];
    if (divisor && p[i] == 0) p[i] = 1;
  }
}
} // namespace

void keep_in_domain(DType dt, void* data, int64_t count, bool divisor) {
  switch (dt.scalar()) {
  case Scalar::Int8: return keep_in_domain(static_cast<int8_t*>(data), count, divisor);
  case Scalar::Int16: return keep_in_domain(static_cast<int16_t*>(data), count, divisor);
  case Scalar::Int32: return keep_in_domain(static_cast<int32_t*>(data), count, divisor);
  case Scalar::Int64: return keep_in_domain(static_cast<int64_t*>(data), count, divisor);
  case Scalar::UInt8: return keep_in_domain(static_cast<uint8_t*>(data), count, divisor);
  case Scalar::UInt16: return keep_in_domain(static_cast<uint16_t*>(data), count, divisor);
  case Scalar::UInt32: return keep_in_domain(static_cast<uint32_t*>(data), count, divisor);
  case Scalar::UInt64: return keep_in_domain(static_cast<uint64_t*>(data), count, divisor);
  default: return; // floats divide by zero without a trap
  }
}

void fill_sentinel(DType dt, void* data, int64_t count) {
  auto bytes = static_cast<size_t>(count) * static_cast<size_t>(dt.itemsize());
  std::memset(data, dt.is_float() ? 0xFF : 0xA5, bytes); // all-ones floats are NaNs
}

// The common case, fast (a candidate is compared on millions of elements per check): every
// element of a float32/float64 output within tolerance, or NaN in both, and none infinite. False
// sends the comparison down the exact path, which classifies each element.
template <class T>
bool all_close(const T* got, const T* want, int64_t count, double rtol, double& scale,
               double& max_error) {
  T s = 0;
  for (int64_t i = 0; i < count; ++i) {
    T a = std::abs(want[i]);
    s = a > s && a <= std::numeric_limits<T>::max() ? a : s; // finite magnitudes only
  }
  scale = static_cast<double>(s);
  T r = static_cast<T>(rtol), biggest = 0;
  bool ok = true;
  for (int64_t i = 0; i < count; ++i) {
    T err = std::abs(got[i] - want[i]);
    // false for infinities, and for NaN unless both are (an element neither plan writes, as
    // the border of a padded output, keeps the sentinel in both)
    bool nan_in_both = std::isnan(got[i]) && std::isnan(want[i]);
    ok &= err <= r * (std::abs(want[i]) + s) || nan_in_both;
    if (!nan_in_both) biggest = std::max(biggest, err);
  }
  max_error = static_cast<double>(biggest);
  return ok;
}

Comparison compare_outputs(DType dt, const void* got, const void* want, int64_t count,
                           int64_t reduce_length) {
  Comparison c;
  bool exact = !dt.is_float();
  double scale = 0;
  double rtol =
      4 * epsilon(dt) * std::sqrt(static_cast<double>(std::max<int64_t>(1, reduce_length)));
  if (dt.scalar() == Scalar::Float32 &&
      all_close(static_cast<const float*>(got), static_cast<const float*>(want), count, rtol, scale,
                c.max_error)) {
    c.tolerance = rtol * 2 * scale;
    return c;
  }
  if (dt.scalar() == Scalar::Float64 &&
      all_close(static_cast<const double*>(got), static_cast<const double*>(want), count, rtol,
                scale, c.max_error)) {
    c.tolerance = rtol * 2 * scale;
    return c;
  }
  c.max_error = 0;
  scale = 0;
  if (!exact)
    for (int64_t i = 0; i < count; ++i)
      if (double w = element_value(want, dt, i); std::isfinite(w))
        scale = std::max(scale, std::abs(w));
  c.tolerance = rtol * 2 * scale;
  for (int64_t i = 0; i < count; ++i) {
    double g = element_value(got, dt, i), w = element_value(want, dt, i);
    bool ok;
    if (exact) {
      ok = dt.scalar() == Scalar::Int64 || dt.scalar() == Scalar::UInt64
               ? std::memcmp(static_cast<const char*>(got) + i * 8,
                             static_cast<const char*>(want) + i * 8, 8) == 0
               : g == w;
    } else if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      ok = g == w;
    } else {
      double err = std::abs(g - w);
      c.max_error = std::max(c.max_error, err);
      ok = err <= rtol * (std::abs(w) + scale);
    }
    if (ok) continue;
    if (c.mismatches++ == 0) {
      c.first = i;
      c.got = g;
      c.want = w;
    }
  }
  return c;
}

nlohmann::json buffer_json(const KernelBufferSpec& b) {
  nlohmann::json j = {{"dtype", b.dtype.str()}, {"count", b.count}};
  if (b.constant) j["constant"] = true;
  return j;
}

void evict_constants(const std::vector<KernelBufferSpec>& specs,
                     const std::vector<void*>& buffers) {
  for (size_t s = 1; s < buffers.size() && s < specs.size(); ++s)
    if (specs[s].constant) evict_from_caches(buffers[s], static_cast<size_t>(specs[s].bytes()));
}

} // namespace beamlab::tuner

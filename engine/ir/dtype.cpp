// Data types and promotion; see dtype.hpp.
#include "engine/ir/dtype.hpp"

#include <array>
#include <charconv>
#include <limits>

#include "engine/support/error.hpp"

namespace beamlab {
namespace {

struct ScalarInfo {
  std::string_view name;
  int bits;
  int priority; // orders the promotion lattice's meet, as in tinygrad
};

constexpr std::array<ScalarInfo, 15> kScalars = {{
    {"void", 0, -1},
    {"bool", 1, 0},
    {"int8", 8, 1},
    {"int16", 16, 3},
    {"int32", 32, 5},
    {"int64", 64, 7},
    {"uint8", 8, 2},
    {"uint16", 16, 4},
    {"uint32", 32, 6},
    {"uint64", 64, 8},
    {"float16", 16, 11},
    {"bfloat16", 16, 12},
    {"float32", 32, 13},
    {"float64", 64, 14},
    {"index", 64, -1},
}};

const ScalarInfo& info(Scalar s) { return kScalars[static_cast<size_t>(s)]; }

// Direct promotions of the lattice: each type to the next types it may widen to.
std::span<const Scalar> promotes_to(Scalar s) {
  using S = Scalar;
  static constexpr S kBool[] = {S::Int8, S::UInt8};
  static constexpr S kI8[] = {S::Int16};
  static constexpr S kI16[] = {S::Int32};
  static constexpr S kI32[] = {S::Int64};
  static constexpr S kI64[] = {S::Float16, S::BFloat16};
  static constexpr S kU8[] = {S::Int16, S::UInt16};
  static constexpr S kU16[] = {S::Int32, S::UInt32};
  static constexpr S kU32[] = {S::Int64, S::UInt64};
  static constexpr S kU64[] = {S::Float16, S::BFloat16};
  static constexpr S kF16[] = {S::Float32};
  static constexpr S kF32[] = {S::Float64};
  switch (s) {
  case S::Bool: return kBool;
  case S::Int8: return kI8;
  case S::Int16: return kI16;
  case S::Int32: return kI32;
  case S::Int64: return kI64;
  case S::UInt8: return kU8;
  case S::UInt16: return kU16;
  case S::UInt32: return kU32;
  case S::UInt64: return kU64;
  case S::Float16:
  case S::BFloat16: return kF16;
  case S::Float32: return kF32;
  default: return {};
  }
}

// Bitmask over Scalar of every type `s` promotes to, itself included.
uint32_t upward_closure(Scalar s) {
  uint32_t mask = 1u << static_cast<int>(s);
  for (Scalar next : promotes_to(s)) mask |= upward_closure(next);
  return mask;
}

} // namespace

std::string_view scalar_name(Scalar s) { return info(s).name; }

DType DType::vec(int n) const {
  internal_assert(!is_ptr_ && n >= 1 && n <= kMaxLanes) << "bad vec(" << n << ") of " << str();
  DType out = *this;
  out.lanes_ = static_cast<uint16_t>(n);
  return out;
}

DType DType::ptr(AddrSpace space, int64_t size) const {
  internal_assert(!is_ptr_) << "pointer to pointer " << str();
  DType out = *this;
  out.is_ptr_ = true;
  out.space_ = space;
  out.ptr_size_ = size;
  return out;
}

DType DType::base() const {
  internal_assert(is_ptr_) << "base() of non-pointer " << str();
  DType out = *this;
  out.is_ptr_ = false;
  out.space_ = AddrSpace::Global;
  out.ptr_size_ = -1;
  return out;
}

bool DType::is_int() const {
  if (is_ptr_) return false;
  return (scalar_ >= Scalar::Int8 && scalar_ <= Scalar::UInt64) || scalar_ == Scalar::Index;
}

bool DType::is_unsigned() const {
  return !is_ptr_ && scalar_ >= Scalar::UInt8 && scalar_ <= Scalar::UInt64;
}

bool DType::is_float() const {
  return !is_ptr_ && scalar_ >= Scalar::Float16 && scalar_ <= Scalar::Float64;
}

int DType::bits() const { return info(scalar_).bits; }

int DType::itemsize() const {
  if (is_ptr_) return 8;
  return (std::max(bits(), 8) / 8) * lanes_;
}

int64_t DType::int_min() const {
  if (is_bool() || is_unsigned()) return 0;
  internal_assert(is_int()) << "int_min of " << str();
  if (bits() == 64) return std::numeric_limits<int64_t>::min(); // int64 and index
  return -(int64_t{1} << (bits() - 1));
}

int64_t DType::int_max() const {
  if (is_bool()) return 1;
  internal_assert(is_int()) << "int_max of " << str();
  if (scalar_ == Scalar::Index || scalar_ == Scalar::UInt64 || scalar_ == Scalar::Int64)
    return std::numeric_limits<int64_t>::max();
  if (is_unsigned()) return (int64_t{1} << bits()) - 1;
  return (int64_t{1} << (bits() - 1)) - 1;
}

std::string DType::str() const {
  std::string out(scalar_name(scalar_));
  if (lanes_ != 1) out += "x" + std::to_string(lanes_);
  if (!is_ptr_) return out;
  out += "*";
  if (space_ == AddrSpace::Local) out += "local";
  if (space_ == AddrSpace::Reg) out += "reg";
  if (ptr_size_ >= 0) out += "[" + std::to_string(ptr_size_) + "]";
  return out;
}

std::optional<DType> parse_dtype(std::string_view text) {
  // Longest scalar name that prefixes the text ("int8" must not win over "int8x4"'s "int8").
  std::optional<Scalar> scalar;
  size_t used = 0;
  for (size_t i = 0; i < kScalars.size(); ++i) {
    std::string_view name = kScalars[i].name;
    if (text.starts_with(name) && name.size() > used) {
      scalar = static_cast<Scalar>(i);
      used = name.size();
    }
  }
  if (!scalar) return std::nullopt;
  text.remove_prefix(used);
  // Only the canonical spelling str() writes: digits, no sign, no leading zero.
  auto take_number = [&text](int64_t& out) {
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;
    if (text[0] == '0' && text.size() > 1 && text[1] >= '0' && text[1] <= '9') return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || end == text.data()) return false;
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    return true;
  };
  DType out(*scalar);
  if (text.starts_with("x")) {
    text.remove_prefix(1);
    int64_t lanes = 0;
    if (!take_number(lanes) || lanes < 2 || lanes > kMaxLanes || out.is_void()) return std::nullopt;
    out = out.vec(static_cast<int>(lanes));
  }
  if (text.empty()) return out;
  if (!text.starts_with("*")) return std::nullopt;
  text.remove_prefix(1);
  AddrSpace space = AddrSpace::Global;
  if (text.starts_with("local"))
    space = AddrSpace::Local, text.remove_prefix(5);
  else if (text.starts_with("reg"))
    space = AddrSpace::Reg, text.remove_prefix(3);
  int64_t size = -1;
  if (text.starts_with("[")) {
    text.remove_prefix(1);
    if (!take_number(size) || size < 0 || !text.starts_with("]")) return std::nullopt;
    text.remove_prefix(1);
  }
  if (!text.empty()) return std::nullopt;
  return out.ptr(space, size);
}

DType least_upper_dtype(std::span<const DType> types) {
  internal_assert(!types.empty()) << "least_upper_dtype of nothing";
  uint32_t common = ~0u;
  for (DType t : types) {
    internal_assert(!t.is_ptr() && t.lanes() == 1 && !t.is_void() && t.scalar() != Scalar::Index)
        << "least_upper_dtype of " << t.str();
    common &= upward_closure(t.scalar());
  }
  // The meet is the lowest-priority type every argument can reach; the lattice always has one.
  std::optional<Scalar> best;
  for (size_t i = 0; i < kScalars.size(); ++i) {
    if (!(common & (1u << i))) continue;
    auto s = static_cast<Scalar>(i);
    if (!best || info(s).priority < info(*best).priority) best = s;
  }
  internal_assert(best) << "promotion lattice has no meet";
  return DType(*best);
}

DType least_upper_float(DType t) { return t.is_float() ? t : DType(Scalar::Float32); }

} // namespace beamlab

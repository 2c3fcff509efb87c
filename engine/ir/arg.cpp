// Arg values; see arg.hpp.
#include "engine/ir/arg.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/support/error.hpp"

namespace beamlab {

bool Arg::as_bool() const {
  internal_assert(kind_ == Kind::Bool) << "arg " << str() << " is not a bool";
  return int_ != 0;
}

int64_t Arg::as_int() const {
  internal_assert(kind_ == Kind::Int) << "arg " << str() << " is not an int";
  return int_;
}

double Arg::as_float() const {
  internal_assert(kind_ == Kind::Float) << "arg " << str() << " is not a float";
  return float_;
}

const std::string& Arg::as_str() const {
  internal_assert(kind_ == Kind::Str) << "arg " << str() << " is not a string";
  return str_;
}

Op Arg::as_op() const {
  internal_assert(kind_ == Kind::Op) << "arg " << str() << " is not an op";
  return static_cast<Op>(int_);
}

const std::vector<Arg>& Arg::items() const {
  internal_assert(kind_ == Kind::Tuple) << "arg " << str() << " is not a tuple";
  return items_;
}

bool operator==(const Arg& a, const Arg& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
  case Arg::Kind::None: return true;
  case Arg::Kind::Bool:
  case Arg::Kind::Int:
  case Arg::Kind::Op: return a.int_ == b.int_;
  case Arg::Kind::Float:
    return std::bit_cast<uint64_t>(a.float_) == std::bit_cast<uint64_t>(b.float_);
  case Arg::Kind::Str: return a.str_ == b.str_;
  case Arg::Kind::Tuple: return a.items_ == b.items_;
  }
  return false;
}

void Arg::hash_into(StableHasher& h) const {
  h.add_u64(static_cast<uint64_t>(kind_));
  switch (kind_) {
  case Kind::None: break;
  case Kind::Bool:
  case Kind::Int: h.add_i64(int_); break;
  case Kind::Float: h.add_f64(float_); break;
  case Kind::Str: h.add_str(str_); break;
  case Kind::Op: h.add_str(op_name(as_op())); break;
  case Kind::Tuple:
    h.add_u64(items_.size());
    for (const Arg& a : items_) a.hash_into(h);
    break;
  }
}

std::string format_double(double v) {
  if (std::isnan(v)) {
    // The default quiet NaN reads as "nan"; any other payload is kept by its bits.
    uint64_t bits = std::bit_cast<uint64_t>(v);
    if ((bits & ~(uint64_t{1} << 63)) == std::bit_cast<uint64_t>(std::nan("")))
      return std::signbit(v) ? "-nan" : "nan";
    char hex[32];
    std::snprintf(hex, sizeof hex, "nan_0x%016llx", static_cast<unsigned long long>(bits));
    return hex;
  }
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  internal_assert(ec == std::errc()) << "to_chars failed";
  std::string out(buf, end);
  // Keep floats recognisable as floats when read back: "2" would parse as an int.
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

namespace {

void append_quoted(std::string& out, const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

} // namespace

std::string Arg::str() const {
  switch (kind_) {
  case Kind::None: return "none";
  case Kind::Bool: return int_ ? "true" : "false";
  case Kind::Int: return std::to_string(int_);
  case Kind::Float: return format_double(float_);
  case Kind::Op: return std::string(op_name(as_op()));
  case Kind::Str: {
    std::string out;
    append_quoted(out, str_);
    return out;
  }
  case Kind::Tuple: {
    std::string out = "(";
    for (size_t i = 0; i < items_.size(); ++i) {
      if (i) out += ", ";
      out += items_[i].str();
    }
    // A one-element tuple keeps a trailing comma so it reads back as a tuple.
    if (items_.size() == 1) out += ",";
    return out + ")";
  }
  }
  return "?";
}

} // namespace beamlab

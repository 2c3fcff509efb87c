// Float conversion helpers for generated code; see float_helpers.hpp.
#include "engine/runtime/float_helpers.hpp"

#include <bit>
#include <cmath>

namespace beamlab {

uint16_t float_to_bfloat16_bits(float f) {
  auto bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40); // quiet
  bits += 0x7fff + ((bits >> 16) & 1);                                  // to nearest, ties to even
  return static_cast<uint16_t>(bits >> 16);
}

uint16_t double_to_bfloat16_bits(double d) {
  auto f = static_cast<float>(d);
  if (!std::isnan(d) && static_cast<double>(f) != d) {
    // Round to odd: step toward zero if float rounded away from it, then set the lowest bit,
    // so the second rounding can't land on a false tie.
    auto bits = std::bit_cast<uint32_t>(f);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) bits -= 1;
    f = std::bit_cast<float>(bits | 1);
  }
  return float_to_bfloat16_bits(f);
}

extern "C" float beamlab_truncsfbf2(float f) {
  return std::bit_cast<float>(uint32_t{float_to_bfloat16_bits(f)});
}

extern "C" float beamlab_truncdfbf2(double d) {
  return std::bit_cast<float>(uint32_t{double_to_bfloat16_bits(d)});
}

} // namespace beamlab

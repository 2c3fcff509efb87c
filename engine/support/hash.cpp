// Stable hashing; see hash.hpp.
#include "engine/support/hash.hpp"

#include <bit>

#include <fmt/format.h>

namespace beamlab {

void StableHasher::add_byte(uint8_t b) {
  state_ ^= b;
  state_ *= 0x100000001b3ULL; // FNV-1a prime
}

StableHasher& StableHasher::add_u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) add_byte(static_cast<uint8_t>(v >> (8 * i)));
  return *this;
}

StableHasher& StableHasher::add_f64(double v) { return add_u64(std::bit_cast<uint64_t>(v)); }

StableHasher& StableHasher::add_str(std::string_view s) {
  add_u64(s.size());
  for (char c : s) add_byte(static_cast<uint8_t>(c));
  return *this;
}

uint64_t StableHasher::finish() const {
  // FNV-1a mixes its last bytes poorly; a final avalanche spreads them over all bits.
  uint64_t h = state_;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

std::string hash_hex(uint64_t h) { return fmt::format("{:016x}", h); }

} // namespace beamlab

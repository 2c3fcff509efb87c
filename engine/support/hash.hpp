// A structural hash that is the same in every process, run and machine.
//
// Kernel and UOp hashes key the tuning cache and the database, so they must not depend on
// pointer values, std::hash, enum numbering or the host's endianness. StableHasher feeds
// explicitly little-endian bytes through 64-bit FNV-1a and finishes with a murmur-style
// avalanche. The algorithm is versioned: anything stored on disk records kHashVersion.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace beamlab {

/// Bumped whenever StableHasher or the UOp hash recipe changes; stored next to hashes on disk.
inline constexpr int kHashVersion = 1;

/// Incremental, platform-independent 64-bit hash.
class StableHasher {
public:
  StableHasher& add_u64(uint64_t v);
  StableHasher& add_i64(int64_t v) { return add_u64(static_cast<uint64_t>(v)); }
  StableHasher& add_f64(double v); ///< by bit pattern, so -0.0 and 0.0 differ and NaN hashes
  /// Length-prefixed, so ("ab","c") and ("a","bc") differ.
  StableHasher& add_str(std::string_view s);
  uint64_t finish() const;

private:
  void add_byte(uint8_t b);
  uint64_t state_ = 0xcbf29ce484222325ULL; // FNV-1a offset basis
};

/// 16 lowercase hex digits.
std::string hash_hex(uint64_t h);

} // namespace beamlab

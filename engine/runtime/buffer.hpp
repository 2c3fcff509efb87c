// Buffer: a block of device (host) memory holding a tensor's elements.
//
// 64-byte aligned (a cache line, and the widest vector register), so kernels may use aligned
// vector loads at the start of a buffer. Move-only; freed with the object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "engine/support/error.hpp"

namespace beamlab {

class Buffer {
public:
  static constexpr size_t kAlignment = 64;

  Buffer() = default;
  /// `bytes` bytes, zero-filled; a RuntimeFailure if the allocation fails.
  explicit Buffer(size_t bytes);
  /// `bytes` bytes left untouched: a page is placed (on its NUMA node) by the first thread
  /// that writes it, as the machine-limit measurements want. Contents are unspecified.
  static Buffer untouched(size_t bytes);
  /// `bytes` bytes at `data`, owned elsewhere (a numpy array's, say) and kept alive by
  /// `owner` as long as the buffer lives; nothing is copied. The memory must be aligned and
  /// padded as this class's own is: `data` to kAlignment, `bytes` a multiple of it (a
  /// RuntimeFailure otherwise: a kernel's vector accesses may touch every aligned line).
  static Buffer borrowed(void* data, size_t bytes, std::shared_ptr<const void> owner);

  /// Marks the contents as fixed from now on (a model's weights): a plan copies such an input
  /// into a kernel's layout (PACK), and runs the kernels that read only constants (a Winograd
  /// filter transform), once before its first run instead of on every run. Writing a constant
  /// buffer afterwards leaves what they made from it stale.
  void mark_constant() { constant_ = true; }
  bool constant() const { return constant_; }
  /// Marks the contents as rewritten between runs of one plan (a compiled model's input
  /// storage, written in place before each request): what a graph computes from them must
  /// not be read while the graph is built (an ONNX Reshape's shape), only when a plan runs.
  void mark_varying() { varying_ = true; }
  bool varying() const { return varying_; }

  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  size_t bytes() const { return bytes_; }

  /// The contents as elements of T; the size must be a multiple of sizeof(T).
  template <class T>
  std::span<T> as() {
    internal_assert(bytes_ % sizeof(T) == 0)
        << "buffer of " << bytes_ << " bytes viewed as " << sizeof(T) << "-byte elements";
    return {static_cast<T*>(data()), bytes_ / sizeof(T)};
  }
  template <class T>
  std::span<const T> as() const {
    return const_cast<Buffer*>(this)->as<T>();
  }

private:
  Buffer(size_t bytes, bool zero);
  struct Free {
    std::shared_ptr<const void> owner; ///< a borrowed buffer's: released instead of freeing
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  size_t bytes_ = 0;
  bool constant_ = false;
  bool varying_ = false;
};

/// Writes the `bytes` bytes at `data` back from every level of the caches and drops them there
/// (CLFLUSHOPT per line where the CPU has it, CLFLUSH otherwise): the next read comes from
/// memory, as a real run's first read of a model's weights does, the last one being a whole
/// run of other kernels ago. The memory must be readable; nothing is changed. A no-op on other
/// architectures.
void evict_from_caches(const void* data, size_t bytes);

/// This machine's physical memory in bytes: what no tensor, input or program may need half of.
double machine_memory_bytes();

} // namespace beamlab

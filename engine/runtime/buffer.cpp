// Aligned buffers; see buffer.hpp.
#include "engine/runtime/buffer.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace beamlab {

void Buffer::Free::operator()(void* p) const {
  if (!owner) std::free(p);
}

Buffer::Buffer(size_t bytes) : Buffer(bytes, true) {}

Buffer Buffer::untouched(size_t bytes) { return Buffer(bytes, false); }

Buffer Buffer::borrowed(void* data, size_t bytes, std::shared_ptr<const void> owner) {
  if (reinterpret_cast<uintptr_t>(data) % kAlignment != 0 || bytes % kAlignment != 0)
    runtime_error_report << "cannot borrow " << bytes << " bytes at " << data << ": memory must be "
                         << kAlignment << "-byte aligned and a multiple of " << kAlignment
                         << " bytes long";
  Buffer b;
  b.data_ = std::unique_ptr<void, Free>(data, Free{std::move(owner)});
  b.bytes_ = bytes;
  return b;
}

Buffer::Buffer(size_t bytes, bool zero) : bytes_(bytes) {
  // aligned_alloc needs a size that is a multiple of the alignment; at least one line.
  if (bytes > SIZE_MAX - kAlignment)
    runtime_error_report << "a buffer of " << bytes << " bytes is larger than memory can hold";
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p) runtime_error_report << "out of memory allocating a buffer of " << bytes << " bytes";
  if (zero) std::memset(p, 0, rounded);
  data_.reset(p);
}

double machine_memory_bytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

} // namespace beamlab

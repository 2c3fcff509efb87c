// Aligned buffers; see buffer.hpp.
#include "engine/runtime/buffer.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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

#if defined(__x86_64__)
namespace {

bool has_clflushopt() { // CPUID leaf 7, EBX bit 23
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) != 0;
}

__attribute__((target("clflushopt"))) void flush_lines_opt(char* first, const char* end) {
  for (char* p = first; p < end; p += Buffer::kAlignment) _mm_clflushopt(p);
}

void flush_lines(char* first, const char* end) {
  for (char* p = first; p < end; p += Buffer::kAlignment) _mm_clflush(p);
}

} // namespace
#endif

void evict_from_caches(const void* data, size_t bytes) {
#if defined(__x86_64__)
  if (bytes == 0) return;
  auto at = reinterpret_cast<uintptr_t>(data);
  // The instructions take a plain pointer; they read nothing and write nothing.
  char* first = reinterpret_cast<char*>(at / Buffer::kAlignment * Buffer::kAlignment);
  const char* end = static_cast<const char*>(data) + bytes;
  static const bool opt = has_clflushopt();
  if (opt)
    flush_lines_opt(first, end);
  else
    flush_lines(first, end);
  _mm_mfence(); // the lines are gone before whatever is timed next starts
#else
  (void)data, (void)bytes;
#endif
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

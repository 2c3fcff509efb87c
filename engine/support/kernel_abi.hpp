// The calling convention between generated kernels and the runtime. It lives in support, the
// layer below both the code generator (which emits the entry point) and the runtime (which
// calls it).
//
// Every kernel is compiled to one C-ABI entry point:
//   void entry(void* const* buffers, const int64_t* vars, int64_t begin, int64_t end);
// `buffers[i]` is the i-th DEFINE_GLOBAL, `vars` the values of the DEFINE_VARs in order, and
// [begin, end) the part of the kernel's parallel range this call computes (kernels without a
// parallel range are called once with [0, 1)). Distinct buffers never alias.
#pragma once

#include <cstdint>

namespace beamlab {

using KernelEntry = void (*)(void* const* buffers, const int64_t* vars, int64_t begin, int64_t end);

/// The symbol name of every kernel's entry point inside its object file.
inline constexpr const char* kKernelEntryName = "beamlab_kernel";

/// Calls a kernel. Generated code carries no UBSan function-type prologue, and UBSan's
/// -fsanitize=function check reads the bytes before the callee (which may be unmapped when a
/// kernel starts a page), so this one indirect call is exempt from it.
#if defined(__clang__)
[[clang::no_sanitize("function")]]
#endif
inline void call_kernel(KernelEntry entry, void* const* buffers, const int64_t* vars, int64_t begin,
                        int64_t end) {
  entry(buffers, vars, begin, end);
}

} // namespace beamlab

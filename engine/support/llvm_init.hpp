// One lock for LLVM's target registry, shared by the layers that initialize it.
//
// llvm::InitializeNativeTarget() registers targets in an unsynchronized global registry; the
// code generator and the JIT loader may each do it first, from different threads. Both take
// this lock around it. (No LLVM header is needed to declare a mutex.)
#pragma once

#include <mutex>

namespace beamlab {

/// Held while initializing LLVM targets.
inline std::mutex& llvm_target_registry_mutex() {
  static std::mutex m;
  return m;
}

} // namespace beamlab

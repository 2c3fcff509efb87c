// JitLoader: links compiled kernel objects into this process with LLVM's ORC JIT.
//
// The code generator hands over relocatable object code (bytes), not LLVM objects, so the
// same bytes can be hashed, cached, or shipped to a sandboxed worker process. Each object is
// linked into its own JITDylib, so every kernel may use the same entry symbol. Kernels stay
// valid while the loader lives. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/runtime/kernel_abi.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

class JitLoader {
public:
  JitLoader();
  ~JitLoader();
  JitLoader(const JitLoader&) = delete;
  JitLoader& operator=(const JitLoader&) = delete;

  /// Links `object` (an ELF relocatable object for this host) and returns its entry point,
  /// or why it could not be linked.
  Expected<KernelEntry> load(std::span<const char> object, const std::string& name);

  /// The process-wide loader (created on first use).
  static JitLoader& instance();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace beamlab

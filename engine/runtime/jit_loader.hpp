// JitLoader: links compiled kernel objects into this process with LLVM's ORC JIT.
//
// The code generator hands over relocatable object code (bytes), not LLVM objects, so the
// same bytes can be hashed, cached, or shipped to a sandboxed worker process. Each object is
// linked into its own JITDylib, so every kernel may use the same entry symbol, and is unlinked
// when the last handle to it is dropped. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/support/error.hpp"
#include "engine/support/kernel_abi.hpp"

namespace beamlab {

class LoadedKernel;

class JitLoader {
public:
  JitLoader();
  ~JitLoader();
  JitLoader(const JitLoader&) = delete;
  JitLoader& operator=(const JitLoader&) = delete;

  /// Links `object` (an ELF relocatable object for this host); the kernel stays loaded while
  /// the returned handle (or a copy) lives. On failure, why it could not be linked.
  Expected<std::shared_ptr<const LoadedKernel>> load(std::span<const char> object,
                                                     const std::string& name);

  /// Kernels linked and not yet unlinked.
  size_t loaded_count() const;

  /// The process-wide loader: created on first use and never destroyed, so kernels held by
  /// static objects stay valid until exit.
  static JitLoader& instance();

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

/// A linked kernel. Its code is unlinked when the last handle goes.
class LoadedKernel {
public:
  KernelEntry entry() const { return entry_; }
  const std::string& name() const { return name_; }
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

private:
  friend class JitLoader;
  LoadedKernel(std::shared_ptr<JitLoader::Impl> owner, void* dylib, KernelEntry entry,
               std::string name)
      : owner_(std::move(owner)), dylib_(dylib), entry_(entry), name_(std::move(name)) {}
  std::shared_ptr<JitLoader::Impl> owner_; // keeps the JIT alive while the code is in use
  void* dylib_;                            // the kernel's llvm::orc::JITDylib
  KernelEntry entry_;
  std::string name_;
};

} // namespace beamlab

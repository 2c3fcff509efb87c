// Linking kernel objects with ORC; see jit_loader.hpp.
#include "engine/runtime/jit_loader.hpp"

#include "engine/runtime/float_helpers.hpp"
#include "engine/support/llvm_init.hpp"

#include <mutex>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

namespace beamlab {

struct JitLoader::Impl {
  mutable std::mutex mutex;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  uint64_t next_id = 0;
  size_t loaded = 0;
};

JitLoader::JitLoader() : impl_(std::make_shared<Impl>()) {
  static std::once_flag init;
  std::call_once(init, [] {
    std::lock_guard registry(llvm_target_registry_mutex());
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    runtime_error_report << "cannot start the LLVM JIT: " << llvm::toString(jit.takeError());
  impl_->jit = std::move(*jit);
}

JitLoader::~JitLoader() = default;

JitLoader& JitLoader::instance() {
  static auto* loader = new JitLoader(); // NOLINT: intentionally immortal, see the header
  return *loader;
}

size_t JitLoader::loaded_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->loaded;
}

Expected<std::shared_ptr<const LoadedKernel>> JitLoader::load(std::span<const char> object,
                                                              const std::string& name) {
  std::lock_guard lock(impl_->mutex);
  llvm::orc::LLJIT& jit = *impl_->jit;
  auto dylib = jit.createJITDylib("kernel" + std::to_string(impl_->next_id++) + "_" + name);
  if (!dylib)
    return make_unexpected("cannot create a JITDylib: " + llvm::toString(dylib.takeError()));
  auto unlink = [&] { llvm::consumeError(jit.getExecutionSession().removeJITDylib(*dylib)); };
  // Conversions to bfloat16 call helpers the process may lack: bind ours.
  llvm::orc::MangleAndInterner mangle(jit.getExecutionSession(), jit.getDataLayout());
  auto helper = [](auto* fn) {
    return llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(fn),
                                        llvm::JITSymbolFlags::Exported);
  };
  if (llvm::Error err = dylib->define(
          llvm::orc::absoluteSymbols({{mangle("__truncsfbf2"), helper(&beamlab_truncsfbf2)},
                                      {mangle("__truncdfbf2"), helper(&beamlab_truncdfbf2)}}))) {
    unlink();
    return make_unexpected("cannot define runtime helpers: " + llvm::toString(std::move(err)));
  }
  // Kernels call libm (expf, sinf, ...) and memset/memcpy: resolve them from the process.
  dylib->addGenerator(cantFail(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit.getDataLayout().getGlobalPrefix())));
  auto buffer =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), name);
  if (llvm::Error err = jit.addObjectFile(*dylib, std::move(buffer))) {
    unlink();
    return make_unexpected("cannot link kernel '" + name + "': " + llvm::toString(std::move(err)));
  }
  auto sym = jit.lookup(*dylib, kKernelEntryName);
  if (!sym) {
    std::string why = llvm::toString(sym.takeError());
    unlink();
    return make_unexpected("kernel '" + name + "' has no entry point: " + why);
  }
  ++impl_->loaded;
  return std::shared_ptr<const LoadedKernel>(
      new LoadedKernel(impl_, &*dylib, sym->toPtr<KernelEntry>(), name));
}

LoadedKernel::~LoadedKernel() {
  std::lock_guard lock(owner_->mutex);
  auto* dylib = static_cast<llvm::orc::JITDylib*>(dylib_);
  llvm::consumeError(owner_->jit->getExecutionSession().removeJITDylib(*dylib));
  --owner_->loaded;
}

} // namespace beamlab

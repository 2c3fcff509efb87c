// The LLVM pieces every emitter in codegen shares: the host's target machine, the O3
// pipeline, object and assembly emission, and the lock around them. Private to codegen (the
// only layer besides the runtime's JIT loader that includes LLVM).
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "engine/codegen/compile.hpp"

namespace beamlab::codegen_internal {

/// The host target (its CPU and every feature it has, FMA contraction on), created once:
/// LLVM's target registry is global.
llvm::TargetMachine& host_target();

/// Whether the host target has the named LLVM feature ("avx512f", "avx512vl", ...).
bool host_has_feature(std::string_view name);

/// Runs LLVM's O3 module pipeline for `tm`.
void optimize(llvm::Module& mod, llvm::TargetMachine& tm);

/// The module as an object file or as assembly text.
std::string emit_file(llvm::Module& mod, llvm::TargetMachine& tm, llvm::CodeGenFileType type);

/// The last steps of every emitter, under llvm_mutex(): verifies `mod` (invalid IR is an
/// internal error), optimizes it at O3, keeps or prints its IR and assembly as `opts` and the
/// BEAMLAB_PRINT_* knobs ask, and fills `out`'s object and code hash.
void finish_module(llvm::Module& mod, const CompileOptions& opts, CompiledKernel& out);

/// Held while building, optimizing or emitting: LLVM's TargetMachine and pass pipelines are
/// not safe to share between threads.
std::mutex& llvm_mutex();

} // namespace beamlab::codegen_internal

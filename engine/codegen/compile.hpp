// Compiling a kernel graph to machine code for this host.
//
// emit_kernel is the lowering pipeline's emit step (engine/realize/pipeline.hpp): from a
// linearized kernel (linearize.hpp) it builds LLVM IR with IRBuilder, optimizes it at O3 for the
// host CPU (with FMA contraction), and emits a relocatable object. The object's bytes are what the
// runtime's JitLoader links, what BEAM dedups candidates by (code_hash), and what a sandboxed
// worker can be sent. Knobs: BEAMLAB_PRINT_LLVM=1 prints the optimized IR, BEAMLAB_PRINT_ASM=1 the
// assembly, to stderr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/uop.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

struct CompileOptions {
  std::string name = "kernel"; ///< for messages and the JIT's symbol tables
  bool keep_llvm_ir = false;   ///< fill CompiledKernel::llvm_ir
  bool keep_assembly = false;  ///< fill CompiledKernel::assembly
};

struct CompiledKernel {
  std::string name;
  std::vector<char> object;      ///< ELF relocatable object for this host
  uint64_t code_hash = 0;        ///< stable hash of `object`
  double compile_ms = 0;         ///< wall time of the whole pipeline
  int64_t parallel_extent = -1;  ///< iterations of the parallel range, -1 if there is none
  int buffer_count = 0;          ///< DEFINE_GLOBALs (entry's buffers[0..n))
  std::vector<std::string> vars; ///< DEFINE_VAR names, in the order of entry's vars[]
  std::string llvm_ir;           ///< optimized LLVM IR, if asked for
  std::string assembly;          ///< host assembly, if asked for
};

/// Compiles a linearized kernel; the reason on failure (an unsupported node, an LLVM error).
Expected<CompiledKernel> emit_kernel(const std::vector<UOpPtr>& program,
                                     const CompileOptions& opts = {});

/// linearize, then emit_kernel: for a kernel graph built by hand (the code generator's tests).
Expected<CompiledKernel> compile_kernel(const UOpPtr& sink, const CompileOptions& opts = {});

/// The host's CPU name and feature string LLVM targets (e.g. "skylake-avx512", "+avx2,...").
std::string host_cpu_description();

/// The LLVM release the code generator was built with, e.g. "19.1.7".
std::string llvm_version();

} // namespace beamlab

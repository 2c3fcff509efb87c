// The lowering pipeline: a kernel AST and its Opts to machine code that runs, in named steps.
// Everything that compiles a kernel goes through here: realize (the plans programs run), the
// tuner's sandboxed worker (KernelCandidate) and the GUI's code view.
//
//   step        what it makes                                        where
//   schedule    the tensor graph's fused kernels, one AST each       engine/schedule (before)
//   apply_opts  the Opts applied: one optimized AST per stage        engine/opt
//   partition   padded loops cut: whole iterations without gates     engine/codegen/partition
//   expand      upcast and unroll axes as vector lanes               engine/codegen/expand
//   lower       REDUCEs as accumulators, loops closed by END         engine/codegen/lower
//   split       vectors no register lines up with in register pieces engine/codegen/split_vectors
//   linearize   the kernel graph as a program in order               engine/codegen/linearize
//   emit        LLVM IR, optimized at O3, and an object              engine/codegen/llvm_emitter
//   link        the object loaded into the JIT, callable             engine/runtime/jit_loader
//
// BEAMLAB_PRINT_AFTER=<step>[,<step>...] (or `all`) prints what a step made to stderr: the
// ASTs (schedule, apply_opts, partition, expand, lower, split), the program with its loops
// indented (linearize), the optimized LLVM IR (emit), the symbol and code size (link). The rewrite passes inside the
// steps have names of their own for it too (symbolic, lower_reduce, close_loops, ...).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/codegen/compile.hpp"
#include "engine/opt/opt.hpp"
#include "engine/runtime/jit_loader.hpp"

namespace beamlab {

/// Step apply_opts: the optimized kernel, or the reason the Opts don't apply.
Expected<OptimizedKernel> optimize_kernel(const UOpPtr& ast, const std::vector<Opt>& opts);

/// Steps expand, lower, linearize and emit for one stage of an optimized kernel. The compile
/// time covers them all.
Expected<CompiledKernel> generate_code(const UOpPtr& stage, const CompileOptions& options);

/// Step link: the object loaded into the process's JIT.
Expected<std::shared_ptr<const LoadedKernel>> link_code(const CompiledKernel& kernel);

/// The name of stage `i` of `optimized`: the kernel's own for its main stage, "_pack0",
/// "_pack1", ... for PACK's copies before it and "_combine" for GROUP's stage after it.
std::string stage_name(const std::string& kernel, const OptimizedKernel& optimized, size_t i);

} // namespace beamlab

// The host target and the emission steps shared by codegen's emitters; see llvm_host.hpp.
#include "engine/codegen/llvm_host.hpp"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "engine/support/error.hpp"
#include "engine/support/hash.hpp"
#include "engine/support/knobs.hpp"
#include "engine/support/llvm_init.hpp"

namespace beamlab::codegen_internal {

// The host target, created once: LLVM's target registry is global.
llvm::TargetMachine& host_target() {
  static std::once_flag init;
  static std::unique_ptr<llvm::TargetMachine> tm;
  std::call_once(init, [] {
    std::lock_guard registry(llvm_target_registry_mutex());
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    std::string triple = llvm::sys::getProcessTriple();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
    internal_assert(target) << "LLVM has no target for " << triple << ": " << error;
    llvm::SubtargetFeatures features;
    for (const auto& [name, on] : llvm::sys::getHostCPUFeatures()) features.AddFeature(name, on);
    llvm::TargetOptions options;
    options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
    // Assembly for reading names each block's IR block ("# %body") and marks loop headers and
    // their depth: the GUI's code view correlates the two by them. Object code is unchanged.
    options.MCOptions.AsmVerbose = true;
    tm.reset(target->createTargetMachine(triple, llvm::sys::getHostCPUName(), features.getString(),
                                         options, llvm::Reloc::PIC_, std::nullopt,
                                         llvm::CodeGenOptLevel::Aggressive));
  });
  return *tm;
}

bool host_has_feature(std::string_view name) {
  static const std::string features =
      "," + std::string(host_target().getTargetFeatureString()) + ",";
  return features.find(",+" + std::string(name) + ",") != std::string::npos;
}

void optimize(llvm::Module& mod, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(mod, mam);
}

std::string emit_file(llvm::Module& mod, llvm::TargetMachine& tm, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager pm;
  internal_assert(!tm.addPassesToEmitFile(pm, os, nullptr, type))
      << "LLVM can't emit this file type";
  pm.run(mod);
  return std::string(bytes.begin(), bytes.end());
}

std::mutex& llvm_mutex() {
  static std::mutex m;
  return m;
}

void finish_module(llvm::Module& mod, const CompileOptions& opts, CompiledKernel& out) {
  llvm::TargetMachine& tm = host_target();
  std::string broken;
  llvm::raw_string_ostream err(broken);
  internal_assert(!llvm::verifyModule(mod, &err))
      << "the LLVM emitter built invalid IR for '" << opts.name << "': " << broken;
  optimize(mod, tm);
  bool print_ir =
           knob_int("BEAMLAB_PRINT_LLVM", 0) != 0 || knob_lists("BEAMLAB_PRINT_AFTER", "emit"),
       print_asm = knob_int("BEAMLAB_PRINT_ASM", 0) != 0;
  if (opts.keep_llvm_ir || print_ir) {
    llvm::raw_string_ostream os(out.llvm_ir);
    mod.print(os, nullptr);
    if (print_ir) llvm::errs() << "; kernel " << opts.name << "\n" << out.llvm_ir;
  }
  if (opts.keep_assembly || print_asm) {
    out.assembly = emit_file(mod, tm, llvm::CodeGenFileType::AssemblyFile);
    if (print_asm) llvm::errs() << "# kernel " << opts.name << "\n" << out.assembly;
  }
  std::string object = emit_file(mod, tm, llvm::CodeGenFileType::ObjectFile);
  out.object.assign(object.begin(), object.end());
  out.code_hash = StableHasher().add_str(object).finish();
}

} // namespace beamlab::codegen_internal

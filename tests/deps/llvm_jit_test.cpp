// The toolchain the code generator will stand on: build a function with LLVM 19's IRBuilder,
// compile it with the ORC JIT in this process, and call it.
#include <gtest/gtest.h>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/TargetSelect.h>

namespace {

// JIT code has no UBSan function-type prologue; see engine/support/kernel_abi.hpp.
#if defined(__clang__)
[[clang::no_sanitize("function")]]
#endif
int call(int (*fn)(int, int), int a, int b) {
  return fn(a, b);
}

TEST(DepsLlvm, OrcJitCompilesAndRunsAnIrBuilderFunction) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>("smoke", *ctx);
  llvm::IRBuilder<> b(*ctx);
  auto* i32 = b.getInt32Ty();
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(i32, {i32, i32}, false),
                                    llvm::Function::ExternalLinkage, "mul_add", *mod);
  b.SetInsertPoint(llvm::BasicBlock::Create(*ctx, "entry", fn));
  llvm::Value* a = fn->getArg(0);
  llvm::Value* c = fn->getArg(1);
  b.CreateRet(b.CreateAdd(b.CreateMul(a, c), b.getInt32(7)));
  ASSERT_FALSE(llvm::verifyFunction(*fn, &llvm::errs()));

  auto jit = llvm::orc::LLJITBuilder().create();
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  ASSERT_FALSE((*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))));
  auto sym = (*jit)->lookup("mul_add");
  ASSERT_TRUE(static_cast<bool>(sym)) << llvm::toString(sym.takeError());
  auto* mul_add = sym->toPtr<int (*)(int, int)>();
  EXPECT_EQ(call(mul_add, 6, 7), 49);
  EXPECT_EQ(call(mul_add, -3, 5), -8);
}

} // namespace

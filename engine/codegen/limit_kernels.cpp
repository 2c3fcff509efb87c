// The machine-measuring kernels; see limit_kernels.hpp.
#include "engine/codegen/limit_kernels.hpp"

#include <chrono>
#include <functional>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include "engine/codegen/llvm_host.hpp"
#include "engine/support/kernel_abi.hpp"

namespace beamlab {
namespace {

using Values = std::vector<llvm::Value*>;
using LoopBody = std::function<Values(llvm::Value* index, const Values& carried)>;

// for (i = lo; i < hi; i += step) carried = body(i, carried); the carried values after it.
Values counted_loop(llvm::IRBuilder<>& b, llvm::Value* lo, llvm::Value* hi, int64_t step,
                    const Values& init, const LoopBody& body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx, "loop", fn);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx, "after", fn);
  b.CreateCondBr(b.CreateICmpSLT(lo, hi), head, after);
  b.SetInsertPoint(head);
  llvm::PHINode* index = b.CreatePHI(b.getInt64Ty(), 2, "i");
  index->addIncoming(lo, before);
  std::vector<llvm::PHINode*> phis;
  for (llvm::Value* v : init) {
    phis.push_back(b.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, before);
  }
  Values next = body(index, Values(phis.begin(), phis.end()));
  llvm::BasicBlock* latch = b.GetInsertBlock(); // the body may have opened loops of its own
  llvm::Value* stepped = b.CreateAdd(index, b.getInt64(step));
  index->addIncoming(stepped, latch);
  for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(next[k], latch);
  b.CreateCondBr(b.CreateICmpSLT(stepped, hi), head, after);
  b.SetInsertPoint(after);
  Values out;
  for (size_t k = 0; k < init.size(); ++k) {
    llvm::PHINode* merged = b.CreatePHI(init[k]->getType(), 2);
    merged->addIncoming(init[k], before);
    merged->addIncoming(next[k], latch);
    out.push_back(merged);
  }
  return out;
}

// Builds one limit kernel's entry point into a module.
class LimitEmitter {
public:
  LimitEmitter(llvm::Module& mod, LimitKernel kind)
      : b_(mod.getContext()), kind_(kind),
        scalar_(kind == LimitKernel::fma_f64 ? b_.getDoubleTy() : b_.getFloatTy()),
        lanes_(host_vector_bytes() / (kind == LimitKernel::fma_f64 ? 8 : 4)),
        vector_(llvm::FixedVectorType::get(scalar_, lanes_)) {
    llvm::Type* ptr = b_.getPtrTy();
    auto* type = llvm::FunctionType::get(b_.getVoidTy(),
                                         {ptr, ptr, b_.getInt64Ty(), b_.getInt64Ty()}, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, kKernelEntryName, mod);
    // Keep the full-width vectors legal where the target prefers narrower ones.
    fn_->addFnAttr("min-legal-vector-width", std::to_string(host_vector_bytes() * 8));
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    b_.SetInsertPoint(llvm::BasicBlock::Create(mod.getContext(), "entry", fn_));
  }

  void emit() {
    llvm::Value* begin = fn_->getArg(2);
    llvm::Value* end = fn_->getArg(3);
    counted_loop(b_, begin, end, 1, {}, [&](llvm::Value* part, const Values&) {
      switch (kind_) {
      case LimitKernel::fma_f32:
      case LimitKernel::fma_f64: emit_fma(part); break;
      case LimitKernel::fill: emit_fill(part); break;
      case LimitKernel::read: emit_read(part); break;
      case LimitKernel::triad:
      case LimitKernel::triad_nontemporal: emit_triad(part); break;
      }
      return Values{};
    });
    b_.CreateRetVoid();
  }

private:
  llvm::Value* buffer(int slot) {
    llvm::Value* at = b_.CreateConstGEP1_64(b_.getPtrTy(), fn_->getArg(0), slot);
    return b_.CreateAlignedLoad(b_.getPtrTy(), at, llvm::Align(8));
  }
  llvm::Value* var(int slot) {
    llvm::Value* at = b_.CreateConstGEP1_64(b_.getInt64Ty(), fn_->getArg(1), slot);
    return b_.CreateAlignedLoad(b_.getInt64Ty(), at, llvm::Align(8));
  }
  llvm::Value* element(llvm::Value* base, llvm::Value* index) {
    return b_.CreateGEP(scalar_, base, index);
  }
  llvm::Value* load_vector(llvm::Value* base, llvm::Value* index) {
    return b_.CreateAlignedLoad(vector_, element(base, index), llvm::Align(host_vector_bytes()));
  }
  llvm::Value* splat(double x) {
    return b_.CreateVectorSplat(lanes_, llvm::ConstantFP::get(scalar_, x));
  }
  // The part's slice starts at part * per_part elements.
  llvm::Value* slice(llvm::Value* base, llvm::Value* part, llvm::Value* per_part) {
    return element(base, b_.CreateMul(part, per_part));
  }
  llvm::Value* sum_to_scalar(const Values& accumulators) {
    llvm::Value* total = accumulators[0];
    for (size_t k = 1; k < accumulators.size(); ++k) total = b_.CreateFAdd(total, accumulators[k]);
    return b_.CreateFAddReduce(llvm::ConstantFP::get(scalar_, 0.0), total);
  }

  // kFmaAccumulators chains of acc = acc * 0.999999 + 1e-7 (bounded, never denormal).
  void emit_fma(llvm::Value* part) {
    llvm::Value* seeds = buffer(0);
    llvm::Value* at = element(seeds, part);
    llvm::Value* seed = b_.CreateVectorSplat(lanes_, b_.CreateLoad(scalar_, at));
    Values acc;
    for (int k = 0; k < kFmaAccumulators; ++k) acc.push_back(b_.CreateFAdd(seed, splat(0.01 * k)));
    llvm::Value *x = splat(0.999999), *y = splat(1e-7);
    acc = counted_loop(b_, b_.getInt64(0), var(0), 1, acc, [&](llvm::Value*, const Values& in) {
      Values out;
      for (llvm::Value* a : in)
        out.push_back(b_.CreateIntrinsic(llvm::Intrinsic::fma, {vector_}, {a, x, y}));
      return out;
    });
    b_.CreateStore(sum_to_scalar(acc), at);
  }

  void emit_fill(llvm::Value* part) {
    llvm::Value* n = var(0);
    llvm::Value* base = slice(buffer(0), part, n);
    counted_loop(b_, b_.getInt64(0), n, lanes_, {}, [&](llvm::Value* i, const Values&) {
      b_.CreateAlignedStore(splat(1.0), element(base, i), llvm::Align(host_vector_bytes()));
      return Values{};
    });
  }

  void emit_read(llvm::Value* part) {
    llvm::Value* n = var(0);
    llvm::Value* base = slice(buffer(0), part, n);
    Values zero(kFmaAccumulators, splat(0.0));
    // Each thread reads its slice as kReadStreams streams side by side: one sequential stream
    // a core keeps too few lines in flight to reach DRAM's bandwidth (measured on Zen 5: 28
    // GB/s with one stream a core, while a 16-way grouped sum read 97).
    constexpr int kReadStreams = 4, kPerStream = kFmaAccumulators / kReadStreams;
    llvm::Value* stream = b_.CreateUDiv(n, b_.getInt64(kReadStreams));
    Values acc =
        counted_loop(b_, b_.getInt64(0), var(1), 1, zero, [&](llvm::Value*, const Values& in) {
          return counted_loop(b_, b_.getInt64(0), stream, int64_t{lanes_} * kPerStream, in,
                              [&](llvm::Value* i, const Values& sums) {
                                Values out;
                                for (int k = 0; k < kFmaAccumulators; ++k) {
                                  llvm::Value* start =
                                      b_.CreateMul(stream, b_.getInt64(k / kPerStream));
                                  llvm::Value* j =
                                      b_.CreateAdd(b_.CreateAdd(start, i),
                                                   b_.getInt64(int64_t{k % kPerStream} * lanes_));
                                  out.push_back(b_.CreateFAdd(sums[k], load_vector(base, j)));
                                }
                                return out;
                              });
        });
    b_.CreateStore(sum_to_scalar(acc), element(buffer(1), part));
  }

  void emit_triad(llvm::Value* part) {
    llvm::Value* n = var(0);
    llvm::Value *a = slice(buffer(0), part, n), *b = slice(buffer(1), part, n),
                *c = slice(buffer(2), part, n);
    llvm::Value* s = splat(0.5);
    constexpr int kUnroll = 4;
    counted_loop(b_, b_.getInt64(0), var(1), 1, {}, [&](llvm::Value*, const Values&) {
      counted_loop(
          b_, b_.getInt64(0), n, int64_t{lanes_} * kUnroll, {}, [&](llvm::Value* i, const Values&) {
            for (int u = 0; u < kUnroll; ++u) {
              llvm::Value* j = b_.CreateAdd(i, b_.getInt64(int64_t{u} * lanes_));
              llvm::Value* v = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vector_},
                                                  {s, load_vector(c, j), load_vector(b, j)});
              llvm::StoreInst* st =
                  b_.CreateAlignedStore(v, element(a, j), llvm::Align(host_vector_bytes()));
              if (kind_ == LimitKernel::triad_nontemporal) mark_nontemporal(st);
            }
            return Values{};
          });
      return Values{};
    });
  }

  void mark_nontemporal(llvm::StoreInst* st) {
    llvm::LLVMContext& ctx = b_.getContext();
    llvm::Metadata* one = llvm::ConstantAsMetadata::get(b_.getInt32(1));
    st->setMetadata(llvm::LLVMContext::MD_nontemporal, llvm::MDNode::get(ctx, one));
  }

  llvm::IRBuilder<> b_;
  LimitKernel kind_;
  llvm::Type* scalar_;
  int lanes_;
  llvm::FixedVectorType* vector_;
  llvm::Function* fn_ = nullptr;
};

// A kind's symbol-table name and its ABI: buffers and the names of its vars.
struct KindInfo {
  const char* name;
  int buffers;
  std::vector<std::string> vars;
};

KindInfo info(LimitKernel kind) {
  switch (kind) {
  case LimitKernel::fma_f32: return {"limit_fma_f32", 1, {"iterations"}};
  case LimitKernel::fma_f64: return {"limit_fma_f64", 1, {"iterations"}};
  case LimitKernel::fill: return {"limit_fill", 1, {"n"}};
  case LimitKernel::read: return {"limit_read", 2, {"n", "repetitions"}};
  case LimitKernel::triad: return {"limit_triad", 3, {"n", "repetitions"}};
  case LimitKernel::triad_nontemporal: return {"limit_triad_nontemporal", 3, {"n", "repetitions"}};
  }
  internal_error << "unknown limit kernel";
  return {};
}

} // namespace

int host_vector_bytes() {
  using codegen_internal::host_has_feature;
  if (host_has_feature("avx512f")) return 64;
  if (host_has_feature("avx")) return 32;
  return 16;
}

int64_t limit_block_elements() { return int64_t{kFmaAccumulators} * host_vector_bytes() / 4; }

int64_t fma_flops_per_iteration(LimitKernel kind) {
  int64_t lanes = host_vector_bytes() / (kind == LimitKernel::fma_f64 ? 8 : 4);
  return 2 * lanes * kFmaAccumulators;
}

Expected<CompiledKernel> emit_limit_kernel(LimitKernel kind, const CompileOptions& opts) {
  auto start = std::chrono::steady_clock::now();
  CompiledKernel out;
  KindInfo k = info(kind);
  out.name = k.name;
  out.buffer_count = k.buffers;
  out.vars = k.vars;
  std::lock_guard lock(codegen_internal::llvm_mutex());
  llvm::TargetMachine& tm = codegen_internal::host_target();
  llvm::LLVMContext ctx;
  llvm::Module mod(out.name, ctx);
  mod.setDataLayout(tm.createDataLayout());
  mod.setTargetTriple(tm.getTargetTriple().str());
  LimitEmitter(mod, kind).emit();
  CompileOptions named = opts;
  named.name = out.name;
  codegen_internal::finish_module(mod, named, out);
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace beamlab

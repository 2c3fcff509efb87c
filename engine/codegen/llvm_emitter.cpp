// The LLVM back end: linear kernel IR -> LLVM IR (IRBuilder) -> O3 -> object code.
//
// Emission walks the linear order once. Values map 1:1 to LLVM values; a RANGE opens a loop
// (header with a phi, body) and its END closes it (increment, back edge, exit). The parallel
// RANGE runs over the entry's [begin, end). Index math is 64-bit; integers wrap (no nsw/nuw);
// float ops allow contraction into FMAs. A LOAD or STORE of an n-lane value touches n
// consecutive elements at its INDEX, which becomes one vector load or store.
#include "engine/codegen/compile.hpp"

#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "engine/codegen/linearize.hpp"
#include "engine/codegen/llvm_host.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/support/hash.hpp"
#include "engine/support/kernel_abi.hpp"
#include "engine/support/knobs.hpp"
#include "engine/support/llvm_init.hpp"

namespace beamlab {
namespace {

using codegen_internal::finish_module;
using codegen_internal::host_target;
using codegen_internal::llvm_mutex;

struct Unsupported {
  std::string reason;
};

// Throws out of emission with a reason; compile_kernel turns it into an Expected error.
[[noreturn]] void unsupported(const UOp& u, const std::string& why) {
  throw Unsupported{std::string(op_name(u.op())) + " " + u.dtype().str() + ": " + why};
}

struct Loop {
  const UOp* range;
  llvm::PHINode* var;
  llvm::BasicBlock* header;
  llvm::BasicBlock* exit;
  llvm::Value* end;
};

class Emitter {
public:
  Emitter(llvm::LLVMContext& ctx, llvm::Module& mod) : ctx_(ctx), mod_(mod), b_(ctx) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }

  void emit(const std::vector<UOpPtr>& program, CompiledKernel& out) {
    auto* ptr = b_.getPtrTy();
    auto* i64 = b_.getInt64Ty();
    auto* fn_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64}, false);
    fn_ = llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, kKernelEntryName, mod_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    collect_vars(program, out);
    for (const UOpPtr& u : program) values_[u.get()] = emit_node(*u, out);
    internal_assert(loops_.empty()) << "loops left open";
    b_.CreateRetVoid();
  }

private:
  void collect_vars(const std::vector<UOpPtr>& program, CompiledKernel& out) {
    std::map<std::string, const UOp*> by_name;
    for (const UOpPtr& u : program) {
      if (u->op() != Op::DefineVar) continue;
      auto [it, fresh] = by_name.emplace(u->arg().items()[0].as_str(), u.get());
      if (!fresh)
        unsupported(*u, "two variables are named '" + it->first + "' with different bounds");
    }
    for (const auto& [name, u] : by_name) {
      var_index_[u] = out.vars.size();
      out.vars.push_back(name);
    }
  }

  llvm::Type* scalar_type(DType dt) {
    switch (dt.scalar()) {
    case Scalar::Bool: return b_.getInt1Ty();
    case Scalar::Int8:
    case Scalar::UInt8: return b_.getInt8Ty();
    case Scalar::Int16:
    case Scalar::UInt16: return b_.getInt16Ty();
    case Scalar::Int32:
    case Scalar::UInt32: return b_.getInt32Ty();
    case Scalar::Int64:
    case Scalar::UInt64:
    case Scalar::Index: return b_.getInt64Ty();
    case Scalar::Float16: return b_.getHalfTy();
    case Scalar::BFloat16: return b_.getBFloatTy();
    case Scalar::Float32: return b_.getFloatTy();
    case Scalar::Float64: return b_.getDoubleTy();
    case Scalar::Void: return b_.getVoidTy();
    }
    return nullptr;
  }

  // Bools live in memory as bytes.
  llvm::Type* memory_scalar(DType dt) { return dt.is_bool() ? b_.getInt8Ty() : scalar_type(dt); }

  llvm::Type* value_type(DType dt) {
    if (dt.is_ptr()) return b_.getPtrTy();
    llvm::Type* s = scalar_type(dt);
    return dt.lanes() == 1 ? s : llvm::FixedVectorType::get(s, dt.lanes());
  }

  llvm::Value* v(const UOpPtr& u) {
    auto it = values_.find(u.get());
    internal_assert(it != values_.end() && it->second) << "no value for " << op_name(u->op());
    return it->second;
  }

  llvm::Value* emit_node(const UOp& u, CompiledKernel& out) {
    switch (u.op()) {
    case Op::Sink:
    case Op::Noop: return nullptr;
    case Op::DefineGlobal: return emit_buffer(u, out);
    case Op::DefineVar: return emit_var(u);
    case Op::DefineReg: return emit_register(u);
    case Op::Const: return emit_const(u);
    case Op::Range: return open_loop(u, out);
    case Op::End: return close_loop(u);
    case Op::Index: return emit_index(u);
    case Op::Load: return emit_load(u);
    case Op::Store: return emit_store(u);
    case Op::Cast: return emit_cast(v(u.src(0)), u.src(0)->dtype(), u.dtype());
    case Op::Bitcast: return b_.CreateBitCast(v(u.src(0)), value_type(u.dtype()));
    case Op::Vectorize: return emit_vectorize(u);
    case Op::Gep: return emit_gep(u);
    default: break;
    }
    if (is_alu(u.op())) return emit_alu(u);
    unsupported(u, "the LLVM back end has no lowering for this op");
  }

  llvm::Value* emit_buffer(const UOp& u, CompiledKernel& out) {
    int64_t slot = u.arg().as_int();
    out.buffer_count = std::max<int>(out.buffer_count, static_cast<int>(slot) + 1);
    llvm::IRBuilder<>::InsertPointGuard guard(b_);
    b_.SetInsertPoint(entry_);
    llvm::Value* addr =
        b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), fn_->getArg(0), static_cast<uint64_t>(slot));
    auto* p =
        b_.CreateAlignedLoad(b_.getPtrTy(), addr, llvm::Align(8), "buf" + std::to_string(slot));
    return p;
  }

  llvm::Value* emit_var(const UOp& u) {
    llvm::IRBuilder<>::InsertPointGuard guard(b_);
    b_.SetInsertPoint(entry_);
    llvm::Value* addr =
        b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), fn_->getArg(1), var_index_.at(&u));
    llvm::Value* val =
        b_.CreateAlignedLoad(b_.getInt64Ty(), addr, llvm::Align(8), u.arg().items()[0].as_str());
    return b_.CreateSExtOrTrunc(val, value_type(u.dtype()));
  }

  llvm::Value* emit_register(const UOp& u) {
    DType dt = u.dtype();
    int64_t size = std::max<int64_t>(dt.ptr_size(), 1);
    llvm::IRBuilder<> entry(entry_, entry_->begin()); // allocas at the top, for mem2reg
    auto* array = llvm::ArrayType::get(memory_scalar(dt.base()),
                                       static_cast<uint64_t>(size * dt.base().lanes()));
    return entry.CreateAlloca(array, nullptr, "reg");
  }

  llvm::Value* emit_const(const UOp& u) {
    DType dt = u.dtype();
    llvm::Type* t = value_type(dt);
    const Arg& a = u.arg();
    if (dt.is_float()) return llvm::ConstantFP::get(t, a.as_float());
    if (dt.is_bool()) return b_.getInt1(a.as_bool());
    return llvm::ConstantInt::get(t, static_cast<uint64_t>(a.as_int()), !dt.is_unsigned());
  }

  llvm::Value* open_loop(const UOp& u, CompiledKernel& out) {
    bool parallel = loop_kind(u) == LoopKind::Parallel;
    llvm::Value* begin = b_.getInt64(0);
    llvm::Value* end = b_.CreateSExt(v(u.src(0)), b_.getInt64Ty());
    if (parallel) {
      if (!loops_.empty()) unsupported(u, "the parallel range must be the outermost loop");
      if (out.parallel_extent >= 0) unsupported(u, "a kernel has at most one parallel range");
      if (!u.src(0)->is_const()) unsupported(u, "the parallel range needs a constant extent");
      out.parallel_extent = u.src(0)->const_value();
      begin = fn_->getArg(2);
      end = fn_->getArg(3);
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* body = llvm::BasicBlock::Create(ctx_, "body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* var = b_.CreatePHI(b_.getInt64Ty(), 2, "r");
    var->addIncoming(begin, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(var, end), body, exit);
    b_.SetInsertPoint(body);
    loops_.push_back({&u, var, header, exit, end});
    return b_.CreateSExtOrTrunc(var, value_type(u.dtype()));
  }

  llvm::Value* close_loop(const UOp& u) {
    const UOp* range = u.src().back().get();
    internal_assert(!loops_.empty() && loops_.back().range == range) << "END out of order";
    Loop loop = loops_.back();
    loops_.pop_back();
    llvm::Value* next = b_.CreateAdd(loop.var, b_.getInt64(1));
    loop.var->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(loop.header);
    b_.SetInsertPoint(loop.exit);
    return nullptr;
  }

  // A gated INDEX is an ordinary address; the LOAD or STORE through it checks the gate.
  llvm::Value* emit_index(const UOp& u) {
    DType buf = u.src(0)->dtype();
    llvm::Value* idx = b_.CreateSExtOrTrunc(v(u.src(1)), b_.getInt64Ty());
    return b_.CreateGEP(memory_scalar(buf.base()), v(u.src(0)), idx);
  }

  // A value's type in memory: bools as bytes.
  llvm::Type* memory_type(DType dt) {
    llvm::Type* mem = memory_scalar(dt);
    return dt.lanes() == 1 ? mem : llvm::FixedVectorType::get(mem, dt.lanes());
  }

  static const UOp* gate_of(const UOp& address) {
    return address.src().size() == 3 ? address.src(2).get() : nullptr;
  }

  // The per-lane mask of a gated vector access: the gate's lanes, or a scalar gate for all.
  llvm::Value* lane_mask(const UOp& gate, int lanes) {
    llvm::Value* g = values_.at(&gate);
    if (gate.dtype().lanes() == 1) return b_.CreateVectorSplat(static_cast<unsigned>(lanes), g);
    internal_assert(gate.dtype().lanes() == lanes) << "gate lanes do not match the access";
    return g;
  }

  // A gated load reads 0 when its gate is off. It stays branchless: with the gate off it reads
  // the buffer's first element, always a valid address, and selects 0 instead.
  llvm::Value* emit_load(const UOp& u) {
    DType dt = u.dtype();
    llvm::Type* t = memory_type(dt);
    auto align = llvm::Align(std::max(1, dt.scalar_type().itemsize()));
    llvm::Value* ptr = v(u.src(0));
    const UOp* gate = gate_of(*u.src(0));
    if (gate && dt.lanes() != 1) { // lanes whose gate is off are not read at all
      llvm::Value* val = b_.CreateMaskedLoad(t, ptr, align, lane_mask(*gate, dt.lanes()),
                                             llvm::Constant::getNullValue(t));
      return dt.is_bool() ? b_.CreateICmpNE(val, llvm::Constant::getNullValue(t)) : val;
    }
    llvm::Value* val =
        guarded_load(t, ptr, v(u.src(0)->src(0)), gate ? values_.at(gate) : nullptr, align);
    return dt.is_bool() ? b_.CreateICmpNE(val, llvm::Constant::getNullValue(t)) : val;
  }

  // A scalar load of `ptr` that gives 0 where `on` (if any) is false; branchless, it reads
  // `base` (the buffer's first element, always valid) then.
  llvm::Value* guarded_load(llvm::Type* t, llvm::Value* ptr, llvm::Value* base, llvm::Value* on,
                            llvm::Align align) {
    if (on) ptr = b_.CreateSelect(on, ptr, base);
    llvm::Value* val = b_.CreateAlignedLoad(t, ptr, align);
    return on ? b_.CreateSelect(on, val, llvm::Constant::getNullValue(t)) : val;
  }

  // A gated store is skipped when its gate is off.
  llvm::Value* emit_store(const UOp& u) {
    DType dt = u.src(1)->dtype();
    llvm::Value* val = v(u.src(1));
    if (dt.is_bool()) val = b_.CreateZExt(val, memory_type(dt));
    auto align = llvm::Align(std::max(1, dt.scalar_type().itemsize()));
    const UOp* gate = gate_of(*u.src(0));
    if (gate && dt.lanes() != 1) {
      b_.CreateMaskedStore(val, v(u.src(0)), align, lane_mask(*gate, dt.lanes()));
      return nullptr;
    }
    llvm::BasicBlock* after = nullptr;
    if (gate) {
      auto* then = llvm::BasicBlock::Create(ctx_, "store", fn_);
      after = llvm::BasicBlock::Create(ctx_, "stored", fn_);
      b_.CreateCondBr(values_.at(gate), then, after);
      b_.SetInsertPoint(then);
    }
    b_.CreateAlignedStore(val, v(u.src(0)), align);
    if (after) {
      b_.CreateBr(after);
      b_.SetInsertPoint(after);
    }
    return nullptr;
  }

  llvm::Value* emit_vectorize(const UOp& u) {
    llvm::Value* vec = llvm::PoisonValue::get(value_type(u.dtype()));
    for (size_t i = 0; i < u.src().size(); ++i)
      vec = b_.CreateInsertElement(vec, v(u.src(i)), b_.getInt64(i));
    return vec;
  }

  llvm::Value* emit_gep(const UOp& u) {
    const auto& lanes = u.arg().items();
    if (llvm::Value* b = broadcast_loaded_lanes(u)) return b;
    llvm::Value* src = v(u.src(0));
    if (u.src(0)->dtype().lanes() == 1)
      return lanes.size() == 1 ? src
                               : b_.CreateVectorSplat(static_cast<unsigned>(lanes.size()), src);
    if (lanes.size() == 1)
      return b_.CreateExtractElement(src, b_.getInt64(static_cast<uint64_t>(lanes[0].as_int())));
    llvm::SmallVector<int> mask;
    for (const Arg& l : lanes) mask.push_back(static_cast<int>(l.as_int()));
    return b_.CreateShuffleVector(src, mask);
  }

  // Lanes of a vector load each repeated across a run of at least kMinBroadcast lanes (a
  // convolution's input row under output channels in lanes): each loaded lane is read again as
  // a scalar and splat, which x86 does in one load (vbroadcastss, or an FMA's {1toN} operand)
  // where the shuffle from the loaded vector costs one or two shuffles per run.
  llvm::Value* broadcast_loaded_lanes(const UOp& u) {
    constexpr size_t kMinBroadcast = 8;
    const UOp& ld = *u.src(0);
    const auto& lanes = u.arg().items();
    if (ld.op() != Op::Load || ld.dtype().lanes() == 1 || ld.dtype().is_bool()) return nullptr;
    std::vector<std::pair<int64_t, size_t>> runs; // (source lane, length)
    for (const Arg& l : lanes) {
      if (!runs.empty() && runs.back().first == l.as_int())
        ++runs.back().second;
      else
        runs.emplace_back(l.as_int(), 1);
    }
    if (std::any_of(runs.begin(), runs.end(),
                    [](const auto& r) { return r.second < kMinBroadcast; }))
      return nullptr;
    DType dt = ld.dtype().scalar_type();
    llvm::Type* t = memory_type(dt);
    auto align = llvm::Align(std::max(1, dt.itemsize()));
    const UOp& address = *ld.src(0);
    const UOp* gate = gate_of(address);
    llvm::Value* mask = gate ? lane_mask(*gate, ld.dtype().lanes()) : nullptr;
    std::vector<llvm::Value*> parts;
    for (auto [lane, length] : runs) {
      llvm::Value* ptr =
          b_.CreateGEP(t, values_.at(&address), b_.getInt64(static_cast<uint64_t>(lane)));
      llvm::Value* on =
          mask ? b_.CreateExtractElement(mask, b_.getInt64(static_cast<uint64_t>(lane))) : nullptr;
      llvm::Value* x = guarded_load(t, ptr, v(address.src(0)), on, align);
      parts.push_back(b_.CreateVectorSplat(static_cast<unsigned>(length), x));
    }
    return concatenate(parts);
  }

  // The vectors `parts` one after another, joined pairwise.
  llvm::Value* concatenate(std::vector<llvm::Value*> parts) {
    while (parts.size() > 1) {
      std::vector<llvm::Value*> next;
      for (size_t i = 0; i + 1 < parts.size(); i += 2) {
        llvm::Value *a = parts[i], *b = parts[i + 1];
        int na = lanes_of(a), nb = lanes_of(b), n = std::max(na, nb);
        if (na < n) a = b_.CreateShuffleVector(a, widening_mask(na, n));
        if (nb < n) b = b_.CreateShuffleVector(b, widening_mask(nb, n));
        llvm::SmallVector<int> mask;
        for (int l = 0; l < na; ++l) mask.push_back(l);
        for (int l = 0; l < nb; ++l) mask.push_back(n + l);
        next.push_back(b_.CreateShuffleVector(a, b, mask));
      }
      if (parts.size() % 2) next.push_back(parts.back());
      parts = std::move(next);
    }
    return parts[0];
  }

  static int lanes_of(llvm::Value* x) {
    return static_cast<int>(llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements());
  }
  // Lanes 0..from-1 kept, the rest up to `to` undefined.
  static llvm::SmallVector<int> widening_mask(int from, int to) {
    llvm::SmallVector<int> mask;
    for (int l = 0; l < to; ++l) mask.push_back(l < from ? l : -1);
    return mask;
  }

  llvm::Value* emit_cast(llvm::Value* x, DType from, DType to) {
    llvm::Type* t = value_type(to);
    if (from == to) return x;
    if (to.is_bool()) {
      if (from.is_float()) return b_.CreateFCmpUNE(x, llvm::Constant::getNullValue(x->getType()));
      return b_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    }
    bool from_signed = !from.is_unsigned() && !from.is_bool();
    if (from.scalar() == Scalar::Float64 && to.scalar() == Scalar::BFloat16)
      return double_to_bfloat(x, to);
    if (from.is_float() && to.is_float()) {
      // half and bfloat have the same width but neither holds the other: go through float.
      if (from.bits() == 16 && to.bits() == 16 && from.scalar() != to.scalar())
        x = b_.CreateFPExt(x, value_type(DType(Scalar::Float32).vec(from.lanes())));
      return b_.CreateFPCast(x, t);
    }
    if (from.is_float()) return to.is_unsigned() ? b_.CreateFPToUI(x, t) : b_.CreateFPToSI(x, t);
    if (to.scalar() == Scalar::BFloat16) {
      // Through double (exact for integers up to 2^53), then rounded once; LLVM's own
      // lowering goes through float and rounds twice.
      llvm::Type* f64 = value_type(DType(Scalar::Float64).vec(to.lanes()));
      return double_to_bfloat(from_signed ? b_.CreateSIToFP(x, f64) : b_.CreateUIToFP(x, f64), to);
    }
    if (to.is_float()) return from_signed ? b_.CreateSIToFP(x, t) : b_.CreateUIToFP(x, t);
    return b_.CreateIntCast(x, t, from_signed);
  }

  // double -> bfloat16 rounded once: to float with round-to-odd (if float is inexact, step
  // toward zero and set the lowest bit), then float -> bfloat16 to nearest even. Bit
  // operations, so no pass can fold it back into a double rounding.
  llvm::Value* double_to_bfloat(llvm::Value* d, DType to) {
    DType f32 = DType(Scalar::Float32).vec(to.lanes()), i32 = DType(Scalar::Int32).vec(to.lanes());
    llvm::Value* f = b_.CreateFPTrunc(d, value_type(f32));
    llvm::Value* back = b_.CreateFPExt(f, d->getType());
    llvm::Value* inexact = b_.CreateFCmpONE(back, d);
    llvm::Value* away = b_.CreateFCmpOGT(intrinsic(llvm::Intrinsic::fabs, d->getType(), {back}),
                                         intrinsic(llvm::Intrinsic::fabs, d->getType(), {d}));
    llvm::Type* it = value_type(i32);
    llvm::Value* bits = b_.CreateBitCast(f, it);
    bits = b_.CreateSub(bits, b_.CreateZExt(b_.CreateAnd(inexact, away), it));
    bits = b_.CreateOr(bits, b_.CreateZExt(inexact, it));
    return b_.CreateFPTrunc(b_.CreateBitCast(bits, value_type(f32)), value_type(to));
  }

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Type* t, llvm::ArrayRef<llvm::Value*> args) {
    return b_.CreateIntrinsic(id, {t}, args);
  }

  // 2^x for float32 (scalar or vector) inline, so it vectorizes (the libm call would be made
  // once per lane): x = n + f with n = round(x), |f| <= 1/2; 2^f by a degree-6 polynomial
  // (Cephes exp2f's coefficients, relative error below 2e-7) and the product p * 2^n scaled
  // exactly (scale_by_pow2). Exact at the edges: -inf and x < -150 give 0, x >= 128 gives
  // inf. The clamp is two compare-selects that pass a NaN through (c < x ? c : x), and a NaN
  // stays NaN through every step after it, so no separate NaN test is needed.
  llvm::Value* emit_exp2_f32(llvm::Value* x, DType dt) {
    llvm::Type* ft = value_type(dt);
    auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
    llvm::Value* xc = b_.CreateSelect(b_.CreateFCmpOLT(c(128), x), c(128), x);
    xc = b_.CreateSelect(b_.CreateFCmpOGT(c(-151), xc), c(-151), xc);
    llvm::Value* n = intrinsic(llvm::Intrinsic::rint, ft, {xc});
    llvm::Value* fr = b_.CreateFSub(xc, n);
    static constexpr double kP[] = {1.535336188319500e-4, 1.339887440266574e-3,
                                    9.618437357674640e-3, 5.550332471162809e-2,
                                    2.402264791363012e-1, 6.931472028550421e-1};
    llvm::Value* p = c(kP[0]);
    for (size_t i = 1; i < std::size(kP); ++i) p = b_.CreateFAdd(b_.CreateFMul(p, fr), c(kP[i]));
    p = b_.CreateFAdd(b_.CreateFMul(p, fr), c(1.0));
    return scale_by_pow2(p, n, dt);
  }

  // p * 2^n for float32 p and an integral float32 n in [-151, 128], rounded once, subnormal
  // and infinite results included. With AVX-512 that is one VSCALEFPS per 16 lanes (the value
  // widened to whole 512-bit vectors and cut back); elsewhere 2^n is built in the exponent
  // bits as two factors, so results down to the subnormals are right.
  llvm::Value* scale_by_pow2(llvm::Value* p, llvm::Value* n, DType dt) {
    constexpr int kLanes = 16;
    int lanes = dt.lanes(), wide = (lanes + kLanes - 1) / kLanes * kLanes;
    if (codegen_internal::host_has_feature("avx512f")) {
      auto widen = [&](llvm::Value* v) -> llvm::Value* {
        if (lanes == 1) v = b_.CreateVectorSplat(1, v);
        return lanes == wide ? v : b_.CreateShuffleVector(v, widening_mask(lanes, wide));
      };
      llvm::Value *wp = widen(p), *wn = widen(n);
      std::vector<llvm::Value*> chunks;
      for (int at = 0; at < wide; at += kLanes) {
        llvm::SmallVector<int> pick;
        for (int l = 0; l < kLanes; ++l) pick.push_back(at + l);
        llvm::Value* cp = wide == kLanes ? wp : b_.CreateShuffleVector(wp, pick);
        llvm::Value* cn = wide == kLanes ? wn : b_.CreateShuffleVector(wn, pick);
        chunks.push_back(b_.CreateIntrinsic(
            llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
            {cp, cn, cp, b_.getInt16(0xffff), b_.getInt32(4 /* the current rounding */)}));
      }
      llvm::Value* r = concatenate(std::move(chunks));
      if (lanes == 1) return b_.CreateExtractElement(r, uint64_t{0});
      // (lanes 0..lanes-1 of the whole vectors: the widening mask's identity part)
      return lanes == wide ? r : b_.CreateShuffleVector(r, widening_mask(lanes, lanes));
    }
    llvm::Type* ft = value_type(dt);
    llvm::Type* it = value_type(DType(Scalar::Int32).vec(dt.lanes()));
    auto ci = [&](int64_t v) { return llvm::ConstantInt::get(it, static_cast<uint64_t>(v), true); };
    llvm::Value* ni = b_.CreateFPToSI(n, it);
    llvm::Value* half = b_.CreateAShr(ni, ci(1));
    auto pow2 = [&](llvm::Value* e) {
      return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(e, ci(127)), ci(23)), ft);
    };
    // Two factors reach the subnormals; the clamp's ends round to 0 (2^-151) and to inf (2^128).
    return b_.CreateFMul(b_.CreateFMul(p, pow2(half)), pow2(b_.CreateSub(ni, half)));
  }

  llvm::Value* emit_alu(const UOp& u) {
    DType dt = u.op() == Op::Where ? u.src(1)->dtype() : u.src(0)->dtype();
    bool f = dt.is_float(), is_unsigned = dt.is_unsigned() || dt.is_bool();
    llvm::Type* t = value_type(dt);
    auto a = [&] { return v(u.src(0)); };
    auto b = [&] { return v(u.src(1)); };
    switch (u.op()) {
    case Op::Neg: return f ? b_.CreateFNeg(a()) : b_.CreateNeg(a());
    case Op::Exp2:
      return dt.scalar() == Scalar::Float32 ? emit_exp2_f32(a(), dt)
                                            : intrinsic(llvm::Intrinsic::exp2, t, {a()});
    case Op::Log2: return intrinsic(llvm::Intrinsic::log2, t, {a()});
    case Op::Sin: return intrinsic(llvm::Intrinsic::sin, t, {a()});
    case Op::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, t, {a()});
    case Op::Trunc: return intrinsic(llvm::Intrinsic::trunc, t, {a()});
    case Op::Recip: return b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), a());
    case Op::Add: return f ? b_.CreateFAdd(a(), b()) : b_.CreateAdd(a(), b());
    case Op::Sub: return f ? b_.CreateFSub(a(), b()) : b_.CreateSub(a(), b());
    case Op::Mul: return f ? b_.CreateFMul(a(), b()) : b_.CreateMul(a(), b());
    case Op::Fdiv: return b_.CreateFDiv(a(), b());
    case Op::Idiv: return is_unsigned ? b_.CreateUDiv(a(), b()) : b_.CreateSDiv(a(), b());
    case Op::Mod: return is_unsigned ? b_.CreateURem(a(), b()) : b_.CreateSRem(a(), b());
    case Op::Pow: return intrinsic(llvm::Intrinsic::pow, t, {a(), b()});
    case Op::Max:
      // NaN-propagating, like the constant folder (maxnum would drop the NaN): a NaN `a` is
      // kept; otherwise a > b ? a : b, which yields a NaN `b`. Two instructions on x86
      // (llvm.maximum also orders -0 below +0, at three times the cost in a reduction's chain).
      if (f) {
        llvm::Value *x = a(), *y = b();
        return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x,
                               b_.CreateSelect(b_.CreateFCmpOGT(x, y), x, y));
      }
      return intrinsic(is_unsigned ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, t, {a(), b()});
    case Op::CmpLt:
      return f ? b_.CreateFCmpOLT(a(), b())
               : (is_unsigned ? b_.CreateICmpULT(a(), b()) : b_.CreateICmpSLT(a(), b()));
    case Op::CmpNe: return f ? b_.CreateFCmpUNE(a(), b()) : b_.CreateICmpNE(a(), b());
    case Op::CmpEq: return f ? b_.CreateFCmpOEQ(a(), b()) : b_.CreateICmpEQ(a(), b());
    case Op::And: return b_.CreateAnd(a(), b());
    case Op::Or: return b_.CreateOr(a(), b());
    case Op::Xor: return b_.CreateXor(a(), b());
    case Op::Shl: return b_.CreateShl(a(), b());
    case Op::Shr: return is_unsigned ? b_.CreateLShr(a(), b()) : b_.CreateAShr(a(), b());
    case Op::Where: return b_.CreateSelect(a(), b(), v(u.src(2)));
    case Op::MulAcc:
      if (f) return intrinsic(llvm::Intrinsic::fmuladd, t, {a(), b(), v(u.src(2))});
      return b_.CreateAdd(b_.CreateMul(a(), b()), v(u.src(2)));
    default: break;
    }
    unsupported(u, "no LLVM lowering for this ALU op");
  }

  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::unordered_map<const UOp*, llvm::Value*> values_;
  std::unordered_map<const UOp*, uint64_t> var_index_;
  std::vector<Loop> loops_;
};

} // namespace

std::string host_cpu_description() {
  llvm::TargetMachine& tm = host_target();
  return std::string(tm.getTargetCPU()) + " " + std::string(tm.getTargetFeatureString());
}

std::string llvm_version() { return LLVM_VERSION_STRING; }

Expected<CompiledKernel> compile_kernel(const UOpPtr& sink, const CompileOptions& opts) {
  return emit_kernel(linearize(sink), opts);
}

Expected<CompiledKernel> emit_kernel(const std::vector<UOpPtr>& program,
                                     const CompileOptions& opts) {
  auto start = std::chrono::steady_clock::now();
  CompiledKernel out;
  out.name = opts.name;
  std::lock_guard lock(llvm_mutex());
  llvm::TargetMachine& tm = host_target();
  llvm::LLVMContext ctx;
  llvm::Module mod(opts.name, ctx);
  mod.setDataLayout(tm.createDataLayout());
  mod.setTargetTriple(tm.getTargetTriple().str());
  try {
    Emitter(ctx, mod).emit(program, out);
  } catch (const Unsupported& u) {
    return make_unexpected("cannot compile kernel '" + opts.name + "': " + u.reason);
  }
  finish_module(mod, opts, out);
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace beamlab

// Realization; see realize.hpp.
#include "engine/realize/realize.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <unordered_set>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/realize/pipeline.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/runtime/float_helpers.hpp"
#include "engine/runtime/launch.hpp"
#include "engine/support/hash.hpp"
#include "engine/support/statistics.hpp"

namespace beamlab {
namespace {

struct CompileCache {
  std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<const CompiledStage>> stages;
  CompileCacheStats stats;
};

CompileCache& compile_cache() {
  static auto* cache = new CompileCache(); // immortal: kernels may run from static objects
  return *cache;
}

/// The mean time in ms of `n` back-to-back calls of `body`.
template <typename F>
double mean_ms(F&& body, int n) {
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < n; ++k) body();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count() /
         n;
}

/// How many back-to-back calls of `body` take at least `min_ms` (1 without a minimum), found by
/// doubling; the doubling doubles as a warm-up.
template <typename F>
int calibrate_batch(F&& body, double min_ms) {
  int n = 1;
  while (min_ms > 0 && n < (1 << 20) && mean_ms(body, n) * n < min_ms) n *= 2;
  return n;
}

size_t bytes_of(const UOp& buffer) {
  return static_cast<size_t>(buffer_size(buffer)) *
         static_cast<size_t>(std::max(1, buffer.dtype().scalar_type().itemsize()));
}

} // namespace

void put_element(void* base, DType dtype, size_t i, double v, int64_t exact) {
  auto* p = static_cast<char*>(base) + i * static_cast<size_t>(dtype.itemsize());
  auto write = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (dtype.scalar()) {
  case Scalar::Bool: write(static_cast<uint8_t>(v != 0)); break;
  case Scalar::Int8: write(static_cast<int8_t>(exact)); break;
  case Scalar::Int16: write(static_cast<int16_t>(exact)); break;
  case Scalar::Int32: write(static_cast<int32_t>(exact)); break;
  case Scalar::Int64: write(static_cast<int64_t>(exact)); break;
  case Scalar::UInt8: write(static_cast<uint8_t>(exact)); break;
  case Scalar::UInt16: write(static_cast<uint16_t>(exact)); break;
  case Scalar::UInt32: write(static_cast<uint32_t>(exact)); break;
  case Scalar::UInt64: write(static_cast<uint64_t>(exact)); break;
  case Scalar::Float16: write(static_cast<_Float16>(v)); break;
  case Scalar::BFloat16: write(double_to_bfloat16_bits(v)); break;
  case Scalar::Float32: write(static_cast<float>(v)); break;
  case Scalar::Float64: write(v); break;
  default: user_error << "cannot hold elements of dtype " << dtype.str();
  }
}

void fill_buffer(Buffer& buffer, const UOp& value) {
  DType dt = value.dtype();
  const Arg& v = value.arg();
  double d = v.is_float() ? v.as_float() : static_cast<double>(value.const_value());
  int64_t exact = v.is_float() ? 0 : value.const_value();
  size_t count = buffer.bytes() / static_cast<size_t>(dt.itemsize());
  for (size_t i = 0; i < count; ++i) put_element(buffer.data(), dt, i, d, exact);
}

std::vector<Opt> HeuristicPolicy::opts_for(const ScheduleItem& kernel, int threads) const {
  for (const std::string& k : {kernel.name, hash_hex(kernel.key), std::string("*")})
    if (auto it = overrides_.find(k); it != overrides_.end()) return it->second;
  return heuristic_opts(kernel.ast, threads);
}

Expected<std::shared_ptr<const CompiledStage>> compile_stage(const UOpPtr& stage,
                                                             const std::string& name) {
  CompileCache& cache = compile_cache();
  {
    std::lock_guard lock(cache.mu);
    if (auto it = cache.stages.find(stage->hash()); it != cache.stages.end()) {
      ++cache.stats.hits;
      return it->second;
    }
  }
  Expected<CompiledKernel> k = generate_code(stage, {.name = name});
  if (!k) return make_unexpected(k.error());
  auto code = link_code(*k);
  if (!code) return make_unexpected(code.error());
  auto compiled = std::make_shared<const CompiledStage>(CompiledStage{std::move(*k), *code});
  std::lock_guard lock(cache.mu);
  ++cache.stats.misses;
  return cache.stages.emplace(stage->hash(), std::move(compiled)).first->second;
}

CompileCacheStats compile_cache_stats() {
  CompileCache& cache = compile_cache();
  std::lock_guard lock(cache.mu);
  CompileCacheStats s = cache.stats;
  s.entries = cache.stages.size();
  return s;
}

KernelCost kernel_cost(const ScheduleItem& kernel, const VarValues& values) {
  KernelCost cost;
  std::unordered_map<const UOp*, UOpPtr> bound;
  for (const UOpPtr& v : variables_of(kernel.ast))
    if (auto it = values.find(v->arg().items()[0].as_str()); it != values.end())
      bound.emplace(v.get(), UOp::const_int(v->dtype(), it->second));
  // A loop's extent at these values (a symbolic one not given: at its most).
  std::unordered_map<const UOp*, int64_t> extents;
  auto extent = [&](const UOp* r) {
    auto [it, fresh] = extents.emplace(r, 0);
    if (fresh)
      it->second = bound.empty() || r->src(0)->is_const() ? max_extent(*r)
                                                          : substitute(r->src(0), bound)->vmax();
    return it->second;
  };
  // Per buffer slot, the share of it read or written: over its accesses, the most iterations
  // of the loops indexing it at these values, against at the loops' largest extents.
  std::vector<double> share(kernel.buffers.size(), bound.empty() ? 1.0 : 0.0);
  std::unordered_map<const UOp*, std::set<const UOp*>> ranges;
  for (const UOpPtr& u : toposort(kernel.ast)) {
    std::set<const UOp*>& mine = ranges[u.get()];
    if (u->op() == Op::Range) mine.insert(u.get());
    for (const UOpPtr& s : u->src()) {
      const std::set<const UOp*>& theirs = ranges.at(s.get());
      mine.insert(theirs.begin(), theirs.end());
    }
    bool arithmetic = u->dtype().scalar() != Scalar::Index && !u->dtype().is_ptr() &&
                      !u->dtype().is_bool() && u->op() != Op::Where;
    if (arithmetic && (is_alu(u->op()) || u->op() == Op::Reduce)) {
      int64_t iterations = 1;
      for (const UOp* r : mine) iterations *= extent(r);
      cost.flops += iterations;
    }
    // A reduction's result no longer varies with the loops it reduces.
    if (u->op() == Op::Reduce)
      for (size_t i = 1; i < u->src().size(); ++i) mine.erase(u->src(i).get());
    if (!bound.empty() && u->op() == Op::Index && u->src(0)->op() == Op::DefineGlobal) {
      auto slot = static_cast<size_t>(u->src(0)->arg().as_int());
      double reached = 1;
      for (const UOp* r : mine)
        reached *= static_cast<double>(extent(r)) /
                   static_cast<double>(std::max<int64_t>(1, max_extent(*r)));
      if (slot < share.size()) share[slot] = std::max(share[slot], std::min(1.0, reached));
    }
  }
  for (size_t s = 0; s < kernel.buffers.size(); ++s)
    cost.bytes += std::llround(share[s] * static_cast<double>(bytes_of(*kernel.buffers[s])));
  return cost;
}

namespace {

// Bytes of a scratch buffer an Opt (GROUP) asks for.
size_t scratch_bytes(const ScratchBuffer& s) {
  return static_cast<size_t>(s.size) * static_cast<size_t>(s.dtype.scalar_type().itemsize());
}

// Compiles every stage of an optimized kernel (PACK's copies, the kernel, GROUP's combining
// stage).
Expected<std::vector<std::shared_ptr<const CompiledStage>>>
compile_stages(const OptimizedKernel& k, const std::string& name) {
  std::vector<std::shared_ptr<const CompiledStage>> out;
  for (size_t s = 0; s < k.stages.size(); ++s) {
    auto stage = compile_stage(k.stages[s], stage_name(name, k, s));
    if (!stage) return make_unexpected(stage.error());
    out.push_back(*stage);
  }
  return out;
}

} // namespace

Expected<KernelCandidate, KernelCandidate::Error>
KernelCandidate::build(const UOpPtr& ast, const std::vector<Opt>& opts, const std::string& name) {
  Expected<OptimizedKernel> optimized = optimize_kernel(ast, opts);
  if (!optimized) return make_unexpected(Error{true, optimized.error()});
  KernelCandidate c;
  StableHasher code;
  c.optimized_ = std::move(*optimized);
  for (const ScratchBuffer& s : c.optimized_.scratch)
    c.scratch_.push_back(std::make_shared<Buffer>(scratch_bytes(s)));
  auto stages = compile_stages(c.optimized_, name);
  if (!stages) return make_unexpected(Error{false, stages.error()});
  c.stages_ = std::move(*stages);
  for (const auto& stage : c.stages_) {
    code.add_u64(stage->kernel.code_hash);
    c.code_bytes_ += stage->kernel.object.size();
    c.compile_ms_ += stage->kernel.compile_ms;
  }
  c.code_hash_ = code.finish();
  return c;
}

namespace {

// A stage's vars[]: the value of each variable it names, in its order (compile.hpp).
std::vector<int64_t> stage_vars(const CompiledKernel& kernel, const VarValues& values) {
  std::vector<int64_t> out;
  for (const std::string& name : kernel.vars) {
    auto it = values.find(name);
    user_assert(it != values.end()) << "kernel " << kernel.name << " runs over the variable '"
                                    << name << "', which has no value; bind one";
    out.push_back(it->second);
  }
  return out;
}

} // namespace

void KernelCandidate::run(const std::vector<void*>& buffers, int threads,
                          const VarValues& vars) const {
  std::vector<void*> ptrs = buffers;
  for (const auto& s : scratch_) ptrs.push_back(s->data());
  for (const auto& stage : stages_) {
    std::vector<int64_t> values = stage_vars(stage->kernel, vars);
    launch(stage->code->entry(), ptrs.data(), values.data(), stage->kernel.parallel_extent,
           threads);
  }
}

namespace {
std::atomic<const OptPolicy*> g_default_policy{nullptr};

// The one DEFINE_GLOBAL slot a stage stores to (-1: none, or several).
int64_t stored_slot(const UOpPtr& stage) {
  int64_t slot = -1;
  int stores = 0;
  for (const UOpPtr& u : toposort(stage))
    if (u->op() == Op::Store && u->src(0)->op() == Op::Index)
      slot = ++stores == 1 ? u->src(0)->src(0)->arg().as_int() : -1;
  return slot;
}
} // namespace

void set_default_policy(const OptPolicy* policy) { g_default_policy.store(policy); }

const OptPolicy& default_policy() {
  static const HeuristicPolicy heuristic;
  const OptPolicy* p = g_default_policy.load();
  return p ? *p : heuristic;
}

ExecutionPlan ExecutionPlan::prepare(const Schedule& schedule, const BufferMap& inputs,
                                     const RealizeOptions& options) {
  const OptPolicy& policy = options.policy ? *options.policy : default_policy();
  ExecutionPlan plan;
  plan.threads_ = options.threads > 0 ? options.threads : default_threads();
  // Liveness of every buffer: the kernel that writes it first and the last that reads it.
  std::unordered_map<int64_t, std::pair<size_t, size_t>> live;
  for (size_t i = 0; i < schedule.items.size(); ++i)
    for (const UOpPtr& b : schedule.items[i].buffers) {
      auto [it, fresh] = live.emplace(buffer_id(*b), std::make_pair(i, i));
      it->second.second = i;
    }
  auto add_buffer = [&](std::shared_ptr<Buffer> b) {
    plan.buffers_.push_back(std::move(b));
    return static_cast<int>(plan.buffers_.size() - 1);
  };
  for (const UOpPtr& o : schedule.outputs) {
    int64_t id = buffer_id(*o);
    if (plan.slot_of_id_.count(id)) continue;
    auto in = inputs.find(id);
    plan.slot_of_id_[id] =
        add_buffer(in != inputs.end() ? in->second : std::make_shared<Buffer>(bytes_of(*o)));
  }
  // Intermediates share storage: one is placed in a free storage (its last reader ran before
  // this kernel) that is big enough, the smallest such. A bordered buffer (its kernel writes
  // only its interior) shares only with buffers of its layout, filled once when allocated.
  struct Storage {
    int slot;
    size_t bytes;
    size_t free_after;
    std::string layout; // a bordered buffer's; empty for the others
  };
  std::unordered_map<int64_t, const BorderedBuffer*> bordered;
  for (const BorderedBuffer& b : schedule.bordered) bordered.emplace(buffer_id(*b.buffer), &b);
  std::vector<Storage> storages;
  auto place = [&](size_t bytes, size_t first, size_t last, const BorderedBuffer* border) {
    std::string layout = border ? border->layout : "";
    Storage* best = nullptr;
    for (Storage& s : storages)
      if (s.free_after < first && s.bytes >= bytes && s.layout == layout &&
          (!best || s.bytes < best->bytes))
        best = &s;
    if (!best) {
      auto buffer = std::make_shared<Buffer>(bytes);
      if (border && border->fill) fill_buffer(*buffer, *border->fill);
      storages.push_back({add_buffer(std::move(buffer)), bytes, 0, layout});
      plan.intermediate_bytes_ += bytes;
      best = &storages.back();
    }
    best->free_after = last;
    return best->slot;
  };
  // A kernel that reads only constant buffers writes a constant: it runs once, before the
  // first run, into a buffer of its own (a shared one would be overwritten by a later kernel).
  std::unordered_set<int64_t> outputs;
  for (const UOpPtr& o : schedule.outputs) outputs.insert(buffer_id(*o));
  auto bound = [&](const UOpPtr& b) -> const Buffer* { // the storage of a BUFFER read so far
    int64_t id = buffer_id(*b);
    if (auto in = inputs.find(id); in != inputs.end()) return in->second.get();
    auto slot = plan.slot_of_id_.find(id);
    return slot == plan.slot_of_id_.end() ? nullptr
                                          : plan.buffers_[static_cast<size_t>(slot->second)].get();
  };
  // Whether every input is bound to constants (k.item.constant_slots, filled below), and the
  // result is the same at every value of the variables (it runs once).
  auto constant_kernel = [&](const ScheduleItem& item) {
    int64_t id = buffer_id(*item.buffers[0]);
    if (item.buffers.size() < 2 || outputs.count(id) || bordered.count(id) ||
        !variables_of(item.ast).empty())
      return false;
    return std::all_of(item.constant_slots.begin() + 1, item.constant_slots.end(),
                       [](bool constant) { return constant; });
  };
  for (size_t i = 0; i < schedule.items.size(); ++i) {
    const ScheduleItem& item = schedule.items[i];
    PlannedKernel k;
    k.item = item;
    for (const UOpPtr& b : item.buffers) {
      const Buffer* buffer = bound(b);
      k.item.constant_slots.push_back(b != item.buffers[0] && buffer && buffer->constant());
    }
    k.once = constant_kernel(k.item);
    if (k.once) {
      auto buffer = std::make_shared<Buffer>(bytes_of(*item.buffers[0]));
      buffer->mark_constant();
      plan.intermediate_bytes_ += buffer->bytes();
      ++plan.intermediate_count_;
      ++plan.storage_count_;
      plan.slot_of_id_[buffer_id(*item.buffers[0])] = add_buffer(std::move(buffer));
    }
    k.opts = k.once ? policy.opts_for_once(k.item, plan.threads_)
                    : policy.opts_for(k.item, plan.threads_);
    Expected<OptimizedKernel> optimized = optimize_kernel(item.ast, k.opts);
    if (!optimized) user_error << "kernel " << item.name << ": " << optimized.error();
    k.optimized = std::move(*optimized);
    for (const UOpPtr& b : item.buffers) {
      int64_t id = buffer_id(*b);
      if (!plan.slot_of_id_.count(id)) {
        auto in = inputs.find(id);
        if (in != inputs.end()) {
          plan.slot_of_id_[id] = add_buffer(in->second);
        } else {
          internal_assert(live.at(id).first == i && item.buffers[0] == b)
              << "buffer " << id << " is read before any kernel writes it";
          auto border = bordered.find(id);
          plan.slot_of_id_[id] = place(bytes_of(*b), i, live.at(id).second,
                                       border == bordered.end() ? nullptr : border->second);
          ++plan.intermediate_count_;
        }
      }
      k.slots.push_back(plan.slot_of_id_.at(id));
    }
    // A PACK of constants is copied once, before the first run, into a scratch buffer of its own.
    k.prepared.assign(k.optimized.stages.size(), k.once);
    std::vector<bool> kept(k.optimized.scratch.size(), false);
    for (size_t s = 0; s < k.optimized.main && !k.once; ++s) {
      const auto own = static_cast<int64_t>(item.buffers.size());
      std::vector<int64_t> reads = input_slots(k.optimized.stages[s]);
      int64_t writes = stored_slot(k.optimized.stages[s]);
      bool constant =
          !reads.empty() && writes >= own && variables_of(k.optimized.stages[s]).empty();
      for (int64_t r : reads)
        constant &= r < own &&
                    plan.buffers_[static_cast<size_t>(k.slots[static_cast<size_t>(r)])]->constant();
      if (!constant) continue;
      k.prepared[s] = true;
      kept[static_cast<size_t>(writes - own)] = true;
    }
    for (size_t s = 0; s < k.optimized.scratch.size(); ++s) {
      size_t bytes = scratch_bytes(k.optimized.scratch[s]);
      if (!kept[s]) {
        k.slots.push_back(place(bytes, i, i, nullptr));
        continue;
      }
      // Its own storage: a freed one would be written again by the earlier kernel that used it.
      k.slots.push_back(add_buffer(std::make_shared<Buffer>(bytes)));
      plan.intermediate_bytes_ += bytes;
    }
    auto stages = compile_stages(k.optimized, item.name);
    if (!stages)
      user_error << "kernel " << item.name << " with opts '" << to_string(k.opts)
                 << "' failed to compile: " << stages.error();
    k.stages = std::move(*stages);
    plan.kernels_.push_back(std::move(k));
  }
  plan.storage_count_ += storages.size(); // and one per kernel of constants
  for (const PlannedKernel& k : plan.kernels_)
    for (const UOpPtr& v : variables_of(k.item.ast)) {
      Variable var{v->arg().items()[0].as_str(), v->vmin(), v->vmax()};
      auto same = std::find_if(plan.variables_.begin(), plan.variables_.end(),
                               [&](const Variable& w) { return w.name == var.name; });
      if (same == plan.variables_.end()) {
        plan.variables_.push_back(var);
        continue;
      }
      user_assert(same->lo == var.lo && same->hi == var.hi)
          << "the variable '" << var.name << "' has two ranges, [" << same->lo << ", " << same->hi
          << "] and [" << var.lo << ", " << var.hi << "] (kernel " << k.item.name
          << "); give each range its own name";
    }
  plan.bind(options.vars);
  return plan;
}

void ExecutionPlan::bind(const VarValues& values) {
  check_values(variables_, values);
  for (const auto& [name, value] : values) values_[name] = value;
}

void check_values(const std::vector<Variable>& variables, const VarValues& values) {
  for (const auto& [name, value] : values) {
    auto var = std::find_if(variables.begin(), variables.end(),
                            [&](const Variable& v) { return v.name == name; });
    if (var == variables.end()) {
      std::string known;
      for (const Variable& v : variables) known += (known.empty() ? "" : ", ") + v.name;
      user_error << "the program has no variable '" << name << "' ("
                 << (known.empty() ? "its shapes are all fixed" : "its variables: " + known) << ")";
    }
    user_assert(value >= var->lo && value <= var->hi)
        << "the variable '" << name << "' is " << value << ", outside its range [" << var->lo
        << ", " << var->hi << "]";
  }
}

void ExecutionPlan::run_stages(const PlannedKernel& k, bool prepared,
                               std::vector<ThreadSpan>* trace) {
  std::vector<void*> ptrs;
  ptrs.reserve(k.slots.size());
  for (int s : k.slots) ptrs.push_back(buffers_[static_cast<size_t>(s)]->data());
  for (size_t s = 0; s < k.stages.size(); ++s) {
    if (k.prepared[s] != prepared) continue;
    const CompiledKernel& kernel = k.stages[s]->kernel;
    std::vector<int64_t> vars = stage_vars(kernel, values_); // empty (no allocation) mostly
    launch(k.stages[s]->code->entry(), ptrs.data(), vars.data(), kernel.parallel_extent, threads_,
           trace);
  }
}

void ExecutionPlan::run_kernel(const PlannedKernel& k, std::vector<ThreadSpan>* trace) {
  if (!prepared_ran_) { // on the first run, not in prepare: a plan only described runs nothing
    prepared_ran_ = true;
    for (const PlannedKernel& each : kernels_) run_stages(each, true);
  }
  run_stages(k, false, trace);
}

void ExecutionPlan::run() {
  for (const PlannedKernel& k : kernels_) run_kernel(k);
}

std::vector<KernelProfile> ExecutionPlan::profile(int repeats, double min_sample_ms) {
  run();
  std::vector<int> launches;
  for (const PlannedKernel& k : kernels_)
    launches.push_back(k.once ? 1 : calibrate_batch([&] { run_kernel(k); }, min_sample_ms));
  std::vector<std::vector<double>> samples(kernels_.size());
  for (int r = 0; r < std::max(1, repeats); ++r)
    for (size_t i = 0; i < kernels_.size(); ++i)
      samples[i].push_back(
          kernels_[i].once ? 0.0 : mean_ms([&] { run_kernel(kernels_[i]); }, launches[i]));
  std::vector<KernelProfile> out;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    KernelProfile p = describe(kernels_[i]);
    p.ms = quantile(samples[i], 0.5);
    p.samples_ms = std::move(samples[i]);
    p.launches_per_sample = launches[i];
    if (p.ms > 0) {
      p.gflops = static_cast<double>(p.cost.flops) / (p.ms * 1e6);
      p.gbps = static_cast<double>(p.cost.bytes) / (p.ms * 1e6);
    }
    out.push_back(p);
  }
  return out;
}

KernelProfile ExecutionPlan::describe(const PlannedKernel& k) const {
  KernelProfile p;
  p.name = k.item.name;
  p.key = k.item.key;
  p.opts = to_string(k.opts);
  p.cost = kernel_cost(k.item, values_); // a symbolic kernel's at the values bound
  for (const auto& s : k.stages) p.compile_ms += s->kernel.compile_ms;
  p.split = parallel_profile(k.optimized, threads_);
  p.once = k.once;
  return p;
}

std::vector<KernelProfile> ExecutionPlan::describe() const {
  std::vector<KernelProfile> out;
  for (const PlannedKernel& k : kernels_) out.push_back(describe(k));
  return out;
}

std::vector<double> ExecutionPlan::sample(int repeats, double min_sample_ms) {
  run();
  int batch = calibrate_batch([&] { run(); }, min_sample_ms);
  std::vector<double> out;
  for (int r = 0; r < std::max(1, repeats); ++r) out.push_back(mean_ms([&] { run(); }, batch));
  return out;
}

std::vector<KernelTrace> ExecutionPlan::trace() {
  run();
  auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  std::vector<KernelTrace> out(kernels_.size());
  int64_t start = now_ns();
  for (size_t i = 0; i < kernels_.size(); ++i) {
    out[i].begin_ns = now_ns();
    run_kernel(kernels_[i], &out[i].spans);
    out[i].end_ns = now_ns();
  }
  // Launch records steady_clock's absolute times; rebase everything on the execution's start.
  for (KernelTrace& k : out) {
    k.begin_ns -= start;
    k.end_ns -= start;
    for (ThreadSpan& s : k.spans) {
      s.begin_ns -= start;
      s.end_ns -= start;
    }
  }
  return out;
}

std::shared_ptr<Buffer> ExecutionPlan::buffer(const UOp& buffer_node) const {
  auto it = slot_of_id_.find(buffer_id(buffer_node));
  internal_assert(it != slot_of_id_.end())
      << "buffer " << buffer_id(buffer_node) << " is not in the plan";
  return buffers_[static_cast<size_t>(it->second)];
}

} // namespace beamlab

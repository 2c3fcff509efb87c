// The built-in workloads; see beamlab/workloads.hpp.
//
// Each is a builder from its parameters and a dtype to a lazy tensor. Inputs are
// Tensor::rand/randn of that dtype with fixed seeds (the tests rebuild them from the same
// seeds); weights are scaled by 1/sqrt(fan in) so values stay in range for half floats.
#include <beamlab/workloads.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include <fmt/ranges.h>

#include "engine/support/did_you_mean.hpp"

namespace beamlab {
namespace {

using Params = std::map<std::string, int64_t>;

struct Workload {
  WorkloadInfo info;
  std::function<Tensor(const Params&, DType)> build;
  std::vector<std::string> may_be_zero = {}; ///< parameters allowed to be 0 (padding)
};

// Every float dtype the engine computes end to end; the default first.
std::vector<DType> float_dtypes() {
  return {Scalar::Float32, Scalar::Float64, Scalar::Float16, Scalar::BFloat16};
}

double inv_sqrt(int64_t n) { return 1.0 / std::sqrt(static_cast<double>(n)); }

// ResNet basic block (inference, batchnorm folded into a per-channel scale and shift):
// relu(bn2(conv3x3(relu(bn1(conv3x3(x))))) + x). Seeds: x 1; conv1 2, scale1 3, shift1 4;
// conv2 5, scale2 6, shift2 7.
Tensor resnet_block(const Params& p, DType dt) {
  int64_t c = p.at("C");
  Tensor x = Tensor::randn({p.at("N"), c, p.at("H"), p.at("W")}, 1, dt);
  auto conv_bn = [&](const Tensor& in, uint64_t seed) {
    Tensor w = Tensor::randn({c, c, 3, 3}, seed, dt) * inv_sqrt(9 * c);
    Tensor scale = Tensor::rand({c}, seed + 1, dt).reshape({1, c, 1, 1});
    Tensor shift = Tensor::randn({c}, seed + 2, dt).reshape({1, c, 1, 1});
    return in.conv2d(w, std::nullopt, 1, 1) * scale + shift;
  };
  return (conv_bn(conv_bn(x, 2).relu(), 5) + x).relu();
}

// A pre-norm transformer encoder block: x += attn(ln1(x)); x += mlp(ln2(x)), attention over H
// heads of D/H without a mask, the MLP D -> F (gelu) -> D. Seeds: x 1; ln1 2, 3; q 4, 5;
// k 6, 7; v 8, 9; out 10, 11; ln2 12, 13; mlp 14, 15 and 16, 17 (weight, bias each).
Tensor transformer_block(const Params& p, DType dt) {
  int64_t b = p.at("B"), l = p.at("L"), d = p.at("D"), h = p.at("H"), f = p.at("F");
  user_assert(d % h == 0) << "D = " << d << " must be a multiple of the head count H = " << h;
  auto linear = [&](const Tensor& in, int64_t out_dim, uint64_t seed) {
    int64_t in_dim = in.shape().back();
    Tensor w = Tensor::randn({out_dim, in_dim}, seed, dt) * inv_sqrt(in_dim);
    return in.linear(w, Tensor::randn({out_dim}, seed + 1, dt) * 0.1);
  };
  auto layernorm = [&](const Tensor& in, uint64_t seed) {
    return in.layernorm(Tensor::rand({d}, seed, dt) + 0.5, Tensor::randn({d}, seed + 1, dt) * 0.1);
  };
  auto heads = [&](const Tensor& t) { return t.reshape({b, l, h, d / h}).transpose(1, 2); };
  Tensor x = Tensor::randn({b, l, d}, 1, dt);
  Tensor n1 = layernorm(x, 2);
  Tensor q = heads(linear(n1, d, 4)), k = heads(linear(n1, d, 6)), v = heads(linear(n1, d, 8));
  Tensor a = q.scaled_dot_product_attention(k, v).transpose(1, 2).reshape({b, l, d});
  x = x + linear(a, d, 10);
  return x + linear(linear(layernorm(x, 12), f, 14).gelu(), d, 16);
}

const std::vector<Workload>& registry() {
  static const std::vector<Workload> all = {
      {{"matmul",
        "C = A @ B, (M x K) @ (K x N)",
        {{"M", 1024}, {"N", 1024}, {"K", 1024}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         return Tensor::rand({p.at("M"), p.at("K")}, 1, dt)
             .matmul(Tensor::rand({p.at("K"), p.at("N")}, 2, dt));
       }},
      {{"batched_matmul",
        "B independent (M x K) @ (K x N)",
        {{"B", 8}, {"M", 256}, {"N", 256}, {"K", 256}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         return Tensor::rand({p.at("B"), p.at("M"), p.at("K")}, 1, dt)
             .matmul(Tensor::rand({p.at("B"), p.at("K"), p.at("N")}, 2, dt));
       }},
      {{"conv2d",
        "NCHW conv2d with C_out filters of R x R, stride S, padding P",
        {{"N", 1}, {"C", 64}, {"H", 56}, {"W", 56}, {"C_out", 64}, {"R", 3}, {"S", 1}, {"P", 1}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         Tensor x = Tensor::rand({p.at("N"), p.at("C"), p.at("H"), p.at("W")}, 1, dt);
         Tensor w = Tensor::rand({p.at("C_out"), p.at("C"), p.at("R"), p.at("R")}, 2, dt);
         return x.conv2d(w, std::nullopt, p.at("S"), p.at("P"));
       },
       {"P"}},
      {{"depthwise_conv2d",
        "NCHW depthwise conv2d: each of C channels with its own R x R filter, stride S, "
        "padding P",
        {{"N", 1}, {"C", 128}, {"H", 56}, {"W", 56}, {"R", 3}, {"S", 1}, {"P", 1}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         int64_t c = p.at("C");
         Tensor x = Tensor::rand({p.at("N"), c, p.at("H"), p.at("W")}, 1, dt);
         Tensor w = Tensor::rand({c, 1, p.at("R"), p.at("R")}, 2, dt);
         return x.conv2d(w, std::nullopt, p.at("S"), p.at("P"), 1, c);
       },
       {"P"}},
      {{"resnet_block",
        "ResNet basic block on N x C x H x W: two 3x3 convs, each with batchnorm folded into a "
        "per-channel scale and shift, relu between, identity residual, relu",
        {{"N", 1}, {"C", 64}, {"H", 28}, {"W", 28}},
        float_dtypes()},
       resnet_block},
      {{"softmax",
        "softmax over the last axis of ROWS x COLS",
        {{"ROWS", 4096}, {"COLS", 1024}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         return Tensor::randn({p.at("ROWS"), p.at("COLS")}, 1, dt).softmax(-1);
       }},
      {{"layernorm",
        "layernorm over the last axis of ROWS x COLS, with weight and bias",
        {{"ROWS", 4096}, {"COLS", 1024}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         int64_t c = p.at("COLS");
         return Tensor::randn({p.at("ROWS"), c}, 1, dt)
             .layernorm(Tensor::rand({c}, 2, dt), Tensor::rand({c}, 3, dt));
       }},
      {{"attention",
        "scaled dot-product attention, B x H heads of L x D",
        {{"B", 1}, {"H", 8}, {"L", 256}, {"D", 64}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         Shape s = {p.at("B"), p.at("H"), p.at("L"), p.at("D")};
         return Tensor::randn(s, 1, dt).scaled_dot_product_attention(Tensor::randn(s, 2, dt),
                                                                     Tensor::randn(s, 3, dt));
       }},
      {{"transformer_block",
        "pre-norm transformer block on B x L x D: layernorm, QKV projections, attention over H "
        "heads, output projection, residual; layernorm, MLP D -> F (gelu) -> D, residual",
        {{"B", 1}, {"L", 128}, {"D", 256}, {"H", 4}, {"F", 1024}},
        float_dtypes()},
       transformer_block},
      {{"reduce_sum", "sum of N elements", {{"N", 1 << 24}}, float_dtypes()},
       [](const Params& p, DType dt) { return Tensor::rand({p.at("N")}, 1, dt).sum(); }},
      {{"reduce_max",
        "max over the last axis of ROWS x COLS",
        {{"ROWS", 4096}, {"COLS", 1024}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         return Tensor::randn({p.at("ROWS"), p.at("COLS")}, 1, dt).max({-1});
       }},
      {{"reduce_mean",
        "mean over the last axis of ROWS x COLS",
        {{"ROWS", 4096}, {"COLS", 1024}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         return Tensor::randn({p.at("ROWS"), p.at("COLS")}, 1, dt).mean({-1});
       }},
      {{"elementwise",
        "a chain of DEPTH elementwise ops over N elements",
        {{"N", 1 << 24}, {"DEPTH", 8}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         Tensor a = Tensor::rand({p.at("N")}, 1, dt), b = Tensor::rand({p.at("N")}, 2, dt);
         Tensor t = a;
         for (int64_t i = 0; i < p.at("DEPTH"); ++i) t = (t * b + 0.5).relu();
         return t;
       }},
      {{"mlp",
        "LAYERS linear+relu layers of HIDDEN on a BATCH of IN features",
        {{"BATCH", 256}, {"IN", 512}, {"HIDDEN", 1024}, {"LAYERS", 3}},
        float_dtypes()},
       [](const Params& p, DType dt) {
         Tensor x = Tensor::randn({p.at("BATCH"), p.at("IN")}, 1, dt);
         int64_t in = p.at("IN");
         for (int64_t l = 0; l < p.at("LAYERS"); ++l) {
           auto s = static_cast<uint64_t>(l);
           Tensor w = Tensor::randn({p.at("HIDDEN"), in}, 10 + s, dt) * 0.05;
           Tensor b = Tensor::rand({p.at("HIDDEN")}, 20 + s, dt);
           x = x.linear(w, b).relu();
           in = p.at("HIDDEN");
         }
         return x;
       }},
  };
  return all;
}

std::string dtype_names(const std::vector<DType>& dtypes) {
  std::string s;
  for (DType d : dtypes) s += (s.empty() ? "" : ", ") + d.str();
  return s;
}

} // namespace

const std::vector<WorkloadInfo>& workloads() {
  static const std::vector<WorkloadInfo> infos = [] {
    std::vector<WorkloadInfo> v;
    for (const Workload& w : registry()) v.push_back(w.info);
    return v;
  }();
  return infos;
}

Tensor build_workload(const std::string& name, const std::map<std::string, int64_t>& params,
                      DType dtype) {
  auto it = std::find_if(registry().begin(), registry().end(),
                         [&](const Workload& w) { return w.info.name == name; });
  if (it == registry().end()) {
    std::vector<std::string> names;
    for (const Workload& w : registry()) names.push_back(w.info.name);
    user_error << "unknown workload '" << name << "'"
               << did_you_mean(name, names,
                               fmt::format("the workloads: {}", fmt::join(names, " ")));
  }
  const Workload& w = *it;
  Params p = w.info.defaults;
  for (const auto& [k, v] : params) {
    std::vector<std::string> known;
    known.reserve(w.info.defaults.size());
    for (const auto& [d, _] : w.info.defaults) known.push_back("--" + d);
    user_assert(p.count(k)) << "workload '" << name << "' has no parameter '" << k << "'"
                            << did_you_mean(
                                   "--" + k, known,
                                   fmt::format("its parameters: {}", fmt::join(known, " ")));
    bool zero_ok = std::count(w.may_be_zero.begin(), w.may_be_zero.end(), k) > 0;
    int64_t lowest = zero_ok ? 0 : 1;
    user_assert(v >= lowest) << "workload '" << name << "': parameter " << k << " = " << v
                             << " must be at least " << lowest;
    // Each repetition adds graph nodes (and, for layers, weights): bounded before building.
    constexpr int64_t kMaxRepeats = 4096;
    user_assert((k != "DEPTH" && k != "LAYERS") || v <= kMaxRepeats)
        << "workload '" << name << "': parameter " << k << " = " << v << " is over " << kMaxRepeats
        << " (each one adds a layer to the program)";
    p[k] = v;
  }
  const std::vector<DType>& ok = w.info.dtypes;
  user_assert(std::find(ok.begin(), ok.end(), dtype) != ok.end())
      << "workload '" << name << "' does not support dtype " << dtype.str()
      << " (its dtypes: " << dtype_names(ok) << ")";
  // Shapes the ops reject (a filter larger than the padded image, ...) name the workload too.
  try {
    return w.build(p, dtype);
  } catch (const UserError& e) {
    user_error << "workload '" << name << "': " << e.what();
  }
  return Tensor(0.0);
}

Tensor build_workload(const std::string& name, const std::map<std::string, int64_t>& params,
                      const std::string& dtype) {
  std::optional<DType> dt = parse_dtype(dtype);
  const WorkloadInfo* info = nullptr;
  for (const WorkloadInfo& w : workloads())
    if (w.name == name) info = &w;
  // An unknown workload is reported as such by the other overload.
  if (!info) return build_workload(name, params, Scalar::Float32);
  user_assert(dt) << "workload '" << name << "': unknown dtype '" << dtype
                  << "' (its dtypes: " << dtype_names(info->dtypes) << ")";
  return build_workload(name, params, *dt);
}

} // namespace beamlab

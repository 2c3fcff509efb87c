// The built-in workloads; see beamlab/workloads.hpp.
#include <beamlab/workloads.hpp>

#include <functional>

namespace beamlab {
namespace {

using Params = std::map<std::string, int64_t>;

struct Workload {
  WorkloadInfo info;
  std::function<Tensor(const Params&)> build;
};

const std::vector<Workload>& registry() {
  static const std::vector<Workload> all = {
      {{"matmul", "C = A @ B, float32 (M x K) @ (K x N)", {{"M", 1024}, {"N", 1024}, {"K", 1024}}},
       [](const Params& p) {
         return Tensor::rand({p.at("M"), p.at("K")}, 1)
             .matmul(Tensor::rand({p.at("K"), p.at("N")}, 2));
       }},
      {{"batched_matmul",
        "B independent (M x K) @ (K x N)",
        {{"B", 8}, {"M", 256}, {"N", 256}, {"K", 256}}},
       [](const Params& p) {
         return Tensor::rand({p.at("B"), p.at("M"), p.at("K")}, 1)
             .matmul(Tensor::rand({p.at("B"), p.at("K"), p.at("N")}, 2));
       }},
      {{"conv2d",
        "NCHW conv2d with C_out filters of R x R, stride S, padding P",
        {{"N", 1}, {"C", 64}, {"H", 56}, {"W", 56}, {"C_out", 64}, {"R", 3}, {"S", 1}, {"P", 1}}},
       [](const Params& p) {
         Tensor x = Tensor::rand({p.at("N"), p.at("C"), p.at("H"), p.at("W")}, 1);
         Tensor w = Tensor::rand({p.at("C_out"), p.at("C"), p.at("R"), p.at("R")}, 2);
         return x.conv2d(w, std::nullopt, p.at("S"), p.at("P"));
       }},
      {{"softmax", "softmax over the last axis of ROWS x COLS", {{"ROWS", 4096}, {"COLS", 1024}}},
       [](const Params& p) { return Tensor::randn({p.at("ROWS"), p.at("COLS")}, 1).softmax(-1); }},
      {{"layernorm",
        "layernorm over the last axis of ROWS x COLS, with weight and bias",
        {{"ROWS", 4096}, {"COLS", 1024}}},
       [](const Params& p) {
         int64_t c = p.at("COLS");
         return Tensor::randn({p.at("ROWS"), c}, 1)
             .layernorm(Tensor::rand({c}, 2), Tensor::rand({c}, 3));
       }},
      {{"attention",
        "scaled dot-product attention, B x H heads of L x D",
        {{"B", 1}, {"H", 8}, {"L", 256}, {"D", 64}}},
       [](const Params& p) {
         Shape s = {p.at("B"), p.at("H"), p.at("L"), p.at("D")};
         return Tensor::randn(s, 1).scaled_dot_product_attention(Tensor::randn(s, 2),
                                                                 Tensor::randn(s, 3));
       }},
      {{"reduce_sum", "sum of N float32", {{"N", 1 << 24}}},
       [](const Params& p) { return Tensor::rand({p.at("N")}, 1).sum(); }},
      {{"elementwise",
        "a chain of DEPTH elementwise ops over N float32",
        {{"N", 1 << 24}, {"DEPTH", 8}}},
       [](const Params& p) {
         Tensor a = Tensor::rand({p.at("N")}, 1), b = Tensor::rand({p.at("N")}, 2);
         Tensor t = a;
         for (int64_t i = 0; i < p.at("DEPTH"); ++i) t = (t * b + 0.5).relu();
         return t;
       }},
      {{"mlp",
        "LAYERS linear+relu layers of HIDDEN on a BATCH of IN features",
        {{"BATCH", 256}, {"IN", 512}, {"HIDDEN", 1024}, {"LAYERS", 3}}},
       [](const Params& p) {
         Tensor x = Tensor::randn({p.at("BATCH"), p.at("IN")}, 1);
         int64_t in = p.at("IN");
         for (int64_t l = 0; l < p.at("LAYERS"); ++l) {
           Tensor w = Tensor::randn({p.at("HIDDEN"), in}, 10 + static_cast<uint64_t>(l)) * 0.05;
           Tensor b = Tensor::rand({p.at("HIDDEN")}, 20 + static_cast<uint64_t>(l));
           x = x.linear(w, b).relu();
           in = p.at("HIDDEN");
         }
         return x;
       }},
  };
  return all;
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

Tensor build_workload(const std::string& name, const std::map<std::string, int64_t>& params) {
  for (const Workload& w : registry()) {
    if (w.info.name != name) continue;
    Params p = w.info.defaults;
    for (const auto& [k, v] : params) {
      std::string known;
      for (const auto& [d, _] : w.info.defaults) known += " --" + d;
      user_assert(p.count(k)) << "workload '" << name << "' has no parameter '" << k
                              << "' (its parameters:" << known << ")";
      user_assert(v >= 1) << "workload '" << name << "': parameter " << k << " = " << v
                          << " must be at least 1";
      p[k] = v;
    }
    return w.build(p);
  }
  std::string names;
  for (const Workload& w : registry()) names += " " + w.info.name;
  user_error << "unknown workload '" << name << "' (the workloads:" << names << ")";
  return Tensor(0.0);
}

} // namespace beamlab

// The built-in workloads: each new one against a plain-loop host reference computed from the
// same seeded inputs (at random small parameters), every workload in every dtype it lists
// against its float64 build, and the user errors of build_workload.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>
#include <set>

#include <beamlab/beamlab.hpp>

namespace beamlab {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using Params = std::map<std::string, int64_t>;
using Values = std::vector<double>;

// ---------------------------------------------------------------- helpers

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

// The workloads' inputs, rebuilt from their seeds (rounded to dtype as the workload sees them).
Values rand_values(const Shape& s, uint64_t seed, DType dt) {
  return Tensor::rand(s, seed, dt).to_vector<double>();
}
Values randn_values(const Shape& s, uint64_t seed, DType dt) {
  return Tensor::randn(s, seed, dt).to_vector<double>();
}
Values scaled(Values v, double k) {
  for (double& x : v) x *= k;
  return v;
}
double inv_sqrt(int64_t n) { return 1.0 / std::sqrt(static_cast<double>(n)); }

// The host references check the workloads in these dtypes, to this relative tolerance.
const DType kReferenceDtypes[] = {Scalar::Float32, Scalar::Float64};
double reference_tolerance(DType dt) { return dt == DType(Scalar::Float64) ? 1e-10 : 1e-4; }

std::string params_str(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) s += " " + k + "=" + std::to_string(v);
  return s;
}

// |got - want| <= atol + rtol * |want| everywhere; reports the first element that isn't.
void expect_close(const Values& got, const Values& want, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    double tol = atol + rtol * std::abs(want[i]);
    if (std::abs(got[i] - want[i]) <= tol) continue;
    ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", want " << want[i];
    return;
  }
}

Params random_params(std::mt19937& rng, const std::map<std::string, std::pair<int, int>>& ranges) {
  Params p;
  for (const auto& [k, r] : ranges)
    p[k] = std::uniform_int_distribution<int>(r.first, r.second)(rng);
  return p;
}

// ---------------------------------------------------------------- host references

// NCHW convolution of x (n, cin, h, w) with w (cout, cin / groups, r, r).
Values conv2d_ref(const Values& x, const Values& w, int64_t n, int64_t cin, int64_t h, int64_t wd,
                  int64_t cout, int64_t r, int64_t stride, int64_t pad, int64_t groups) {
  int64_t oh = (h + 2 * pad - r) / stride + 1, ow = (wd + 2 * pad - r) / stride + 1;
  int64_t cg = cin / groups, og = cout / groups;
  Values out(static_cast<size_t>(n * cout * oh * ow));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < r; ++i)
              for (int64_t j = 0; j < r; ++j) {
                int64_t yy = y * stride + i - pad, zz = z * stride + j - pad;
                if (yy < 0 || yy >= h || zz < 0 || zz >= wd) continue;
                int64_t c = co / og * cg + ci;
                acc += x[static_cast<size_t>(((b * cin + c) * h + yy) * wd + zz)] *
                       w[static_cast<size_t>(((co * cg + ci) * r + i) * r + j)];
              }
          out[static_cast<size_t>(((b * cout + co) * oh + y) * ow + z)] = acc;
        }
  return out;
}

// x (rows, in) @ w (out, in)^T + bias (out).
Values linear_ref(const Values& x, int64_t rows, int64_t in, const Values& w, const Values& bias) {
  auto out_dim = static_cast<int64_t>(bias.size());
  Values y(static_cast<size_t>(rows * out_dim));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out_dim; ++o) {
      double acc = bias[static_cast<size_t>(o)];
      for (int64_t i = 0; i < in; ++i)
        acc += x[static_cast<size_t>(r * in + i)] * w[static_cast<size_t>(o * in + i)];
      y[static_cast<size_t>(r * out_dim + o)] = acc;
    }
  return y;
}

Values layernorm_ref(const Values& x, int64_t rows, int64_t d, const Values& w, const Values& b) {
  Values y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    auto row = x.begin() + r * d;
    double mean = std::accumulate(row, row + d, 0.0) / static_cast<double>(d), var = 0;
    for (int64_t i = 0; i < d; ++i) var += (row[i] - mean) * (row[i] - mean);
    double inv = 1 / std::sqrt(var / static_cast<double>(d) + 1e-5);
    for (int64_t i = 0; i < d; ++i)
      y[static_cast<size_t>(r * d + i)] =
          (row[i] - mean) * inv * w[static_cast<size_t>(i)] + b[static_cast<size_t>(i)];
  }
  return y;
}

double gelu_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

// ---------------------------------------------------------------- depthwise_conv2d

TEST(Workloads, DepthwiseConv2dMatchesNaiveLoops) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 6; ++trial) {
    Params p = random_params(rng, {{"N", {1, 2}},
                                   {"C", {1, 5}},
                                   {"H", {3, 9}},
                                   {"W", {3, 9}},
                                   {"R", {1, 3}},
                                   {"S", {1, 2}},
                                   {"P", {0, 1}}});
    DType dt = kReferenceDtypes[trial % 2];
    std::string what = "depthwise_conv2d in " + dt.str() + params_str(p);
    int64_t n = p["N"], c = p["C"], h = p["H"], w = p["W"], r = p["R"];
    Tensor out = build_workload("depthwise_conv2d", p, dt);
    Values want = conv2d_ref(rand_values({n, c, h, w}, 1, dt), rand_values({c, 1, r, r}, 2, dt), n,
                             c, h, w, c, r, p["S"], p["P"], c);
    int64_t o = (h + 2 * p["P"] - r) / p["S"] + 1, o2 = (w + 2 * p["P"] - r) / p["S"] + 1;
    EXPECT_EQ(out.shape(), (Shape{n, c, o, o2})) << what;
    double tol = reference_tolerance(dt);
    expect_close(out.to_vector<double>(), want, tol, tol, what);
  }
}

// ---------------------------------------------------------------- resnet_block

TEST(Workloads, ResnetBlockMatchesNaiveLoops) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 4; ++trial) {
    Params p = random_params(rng, {{"N", {1, 2}}, {"C", {1, 6}}, {"H", {2, 7}}, {"W", {2, 7}}});
    DType dt = kReferenceDtypes[trial % 2];
    std::string what = "resnet_block in " + dt.str() + params_str(p);
    int64_t n = p["N"], c = p["C"], h = p["H"], w = p["W"];
    Values x = randn_values({n, c, h, w}, 1, dt);
    auto conv_bn = [&](const Values& in, uint64_t seed) {
      Values wt = scaled(randn_values({c, c, 3, 3}, seed, dt), inv_sqrt(9 * c));
      Values scale = rand_values({c}, seed + 1, dt), shift = randn_values({c}, seed + 2, dt);
      Values y = conv2d_ref(in, wt, n, c, h, w, c, 3, 1, 1, 1);
      for (size_t i = 0; i < y.size(); ++i) {
        auto ch = static_cast<size_t>(static_cast<int64_t>(i) / (h * w) % c);
        y[i] = y[i] * scale[ch] + shift[ch];
      }
      return y;
    };
    Values y = conv_bn(x, 2);
    for (double& v : y) v = std::max(v, 0.0);
    y = conv_bn(y, 5);
    for (size_t i = 0; i < y.size(); ++i) y[i] = std::max(y[i] + x[i], 0.0);
    Tensor out = build_workload("resnet_block", p, dt);
    EXPECT_EQ(out.shape(), (Shape{n, c, h, w})) << what;
    double tol = reference_tolerance(dt);
    expect_close(out.to_vector<double>(), y, tol, tol, what);
  }
}

// ---------------------------------------------------------------- transformer_block

Values transformer_ref(const Params& p, DType dt) {
  int64_t b = p.at("B"), l = p.at("L"), d = p.at("D"), nh = p.at("H"), f = p.at("F");
  int64_t rows = b * l, dh = d / nh;
  auto linear = [&](const Values& in, int64_t in_dim, int64_t out_dim, uint64_t seed) {
    Values w = scaled(randn_values({out_dim, in_dim}, seed, dt), inv_sqrt(in_dim));
    return linear_ref(in, rows, in_dim, w, scaled(randn_values({out_dim}, seed + 1, dt), 0.1));
  };
  auto layernorm = [&](const Values& in, uint64_t seed) {
    Values w = rand_values({d}, seed, dt);
    for (double& v : w) v += 0.5;
    return layernorm_ref(in, rows, d, w, scaled(randn_values({d}, seed + 1, dt), 0.1));
  };
  Values x = randn_values({b, l, d}, 1, dt);
  Values n1 = layernorm(x, 2);
  Values q = linear(n1, d, d, 4), k = linear(n1, d, d, 6), v = linear(n1, d, d, 8);
  Values a(x.size());
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < nh; ++hi)
      for (int64_t i = 0; i < l; ++i) {
        auto at = [&](int64_t t, int64_t e) {
          return static_cast<size_t>((bi * l + t) * d + hi * dh + e);
        };
        Values s(static_cast<size_t>(l));
        for (int64_t j = 0; j < l; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < dh; ++e) dot += q[at(i, e)] * k[at(j, e)];
          s[static_cast<size_t>(j)] = dot * inv_sqrt(dh);
        }
        double m = *std::max_element(s.begin(), s.end()), z = 0;
        for (double& sj : s) z += (sj = std::exp(sj - m));
        for (int64_t e = 0; e < dh; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < l; ++j) acc += s[static_cast<size_t>(j)] / z * v[at(j, e)];
          a[at(i, e)] = acc;
        }
      }
  Values o = linear(a, d, d, 10);
  for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
  Values hidden = linear(layernorm(x, 12), d, f, 14);
  for (double& hv : hidden) hv = gelu_ref(hv);
  Values m = linear(hidden, f, d, 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] += m[i];
  return x;
}

TEST(Workloads, TransformerBlockMatchesNaiveHost) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 4; ++trial) {
    Params p = random_params(rng, {{"B", {1, 2}}, {"L", {1, 9}}, {"H", {1, 3}}, {"F", {1, 20}}});
    p["D"] = p["H"] * std::uniform_int_distribution<int>(1, 6)(rng);
    DType dt = kReferenceDtypes[trial % 2];
    std::string what = "transformer_block in " + dt.str() + params_str(p);
    Tensor out = build_workload("transformer_block", p, dt);
    EXPECT_EQ(out.shape(), (Shape{p["B"], p["L"], p["D"]})) << what;
    double tol = reference_tolerance(dt);
    expect_close(out.to_vector<double>(), transformer_ref(p, dt), tol, tol, what);
  }
}

// ---------------------------------------------------------------- reduce_max, reduce_mean

TEST(Workloads, RowReductionsMatchStdAlgorithms) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 6; ++trial) {
    Params p = random_params(rng, {{"ROWS", {1, 12}}, {"COLS", {1, 300}}});
    int64_t rows = p["ROWS"], cols = p["COLS"];
    DType dt = kReferenceDtypes[trial % 2];
    std::string what = " in " + dt.str() + params_str(p);
    Values x = randn_values({rows, cols}, 1, dt), want_max, want_mean;
    for (int64_t r = 0; r < rows; ++r) {
      auto row = x.begin() + r * cols;
      want_max.push_back(*std::max_element(row, row + cols));
      want_mean.push_back(std::accumulate(row, row + cols, 0.0) / static_cast<double>(cols));
    }
    Tensor mx = build_workload("reduce_max", p, dt), mean = build_workload("reduce_mean", p, dt);
    EXPECT_EQ(mx.shape(), Shape{rows});
    EXPECT_EQ(mean.shape(), Shape{rows});
    double tol = reference_tolerance(dt);
    expect_close(mx.to_vector<double>(), want_max, 0, 0, "reduce_max" + what);
    expect_close(mean.to_vector<double>(), want_mean, tol, tol, "reduce_mean" + what);
  }
}

// ---------------------------------------------------------------- dtypes

// Small parameters for every workload, for the dtype sweep.
const std::map<std::string, Params>& tiny_params() {
  static const std::map<std::string, Params> tiny = {
      {"matmul", {{"M", 5}, {"N", 7}, {"K", 9}}},
      {"batched_matmul", {{"B", 2}, {"M", 3}, {"N", 5}, {"K", 4}}},
      {"conv2d",
       {{"N", 1}, {"C", 3}, {"H", 6}, {"W", 5}, {"C_out", 4}, {"R", 3}, {"S", 1}, {"P", 1}}},
      {"depthwise_conv2d", {{"N", 2}, {"C", 3}, {"H", 6}, {"W", 5}, {"R", 3}, {"S", 2}, {"P", 1}}},
      {"resnet_block", {{"N", 1}, {"C", 3}, {"H", 5}, {"W", 4}}},
      {"softmax", {{"ROWS", 3}, {"COLS", 17}}},
      {"layernorm", {{"ROWS", 3}, {"COLS", 17}}},
      {"attention", {{"B", 1}, {"H", 2}, {"L", 5}, {"D", 4}}},
      {"transformer_block", {{"B", 1}, {"L", 5}, {"D", 8}, {"H", 2}, {"F", 12}}},
      {"reduce_sum", {{"N", 100}}},
      {"reduce_max", {{"ROWS", 3}, {"COLS", 17}}},
      {"reduce_mean", {{"ROWS", 3}, {"COLS", 17}}},
      {"elementwise", {{"N", 33}, {"DEPTH", 3}}},
      {"mlp", {{"BATCH", 3}, {"IN", 5}, {"HIDDEN", 7}, {"LAYERS", 2}}},
  };
  return tiny;
}

// Error relative to the output's scale: inputs and every intermediate round to the dtype.
double tolerance(DType dt) {
  switch (dt.scalar()) {
  case Scalar::Float64: return 1e-12;
  case Scalar::Float32: return 2e-6;
  case Scalar::Float16: return 5e-3;
  case Scalar::BFloat16: return 3e-2;
  default: return 0;
  }
}

TEST(Workloads, EveryDtypeMatchesFloat64) {
  for (const WorkloadInfo& info : workloads()) {
    ASSERT_TRUE(tiny_params().count(info.name)) << info.name << " needs tiny parameters here";
    ASSERT_FALSE(info.dtypes.empty()) << info.name;
    EXPECT_EQ(info.dtypes.front(), DType(Scalar::Float32)) << info.name;
    const Params& p = tiny_params().at(info.name);
    Tensor ref = build_workload(info.name, p, Scalar::Float64);
    Values want = ref.to_vector<double>();
    double scale = 1;
    for (double v : want) scale = std::max(scale, std::abs(v));
    for (DType dt : info.dtypes) {
      std::string what = info.name + " in " + dt.str();
      Tensor out = build_workload(info.name, p, dt);
      EXPECT_EQ(out.dtype(), dt) << what;
      EXPECT_EQ(out.shape(), ref.shape()) << what;
      expect_close(out.to_vector<double>(), want, 0, tolerance(dt) * scale, what);
    }
  }
}

TEST(Workloads, DtypeByName) {
  Params p = {{"M", 4}, {"N", 4}, {"K", 4}};
  EXPECT_EQ(build_workload("matmul", p, "float64").dtype(), DType(Scalar::Float64));
  EXPECT_EQ(build_workload("matmul", p, std::string("float32")).dtype(), DType(Scalar::Float32));
  EXPECT_EQ(build_workload("matmul", p).dtype(), DType(Scalar::Float32)); // the old signature
}

TEST(Workloads, NewWorkloadsAreListed) {
  std::set<std::string> names;
  for (const WorkloadInfo& w : workloads()) {
    names.insert(w.name);
    EXPECT_FALSE(w.description.empty()) << w.name;
  }
  for (const char* n :
       {"depthwise_conv2d", "resnet_block", "transformer_block", "reduce_max", "reduce_mean"})
    EXPECT_TRUE(names.count(n)) << n;
}

// ---------------------------------------------------------------- user errors

TEST(WorkloadErrors, UnsupportedDtype) {
  std::string e = error_of([] { (void)build_workload("resnet_block", {}, Scalar::Int32); });
  EXPECT_THAT(e, AllOf(HasSubstr("resnet_block"), HasSubstr("int32"), HasSubstr("float32"),
                       Not(HasSubstr("\n"))));
  EXPECT_THAT(error_of([] { (void)build_workload("matmul", {}, Scalar::Bool); }),
              AllOf(HasSubstr("matmul"), HasSubstr("does not support dtype bool")));
}

TEST(WorkloadErrors, UnknownDtypeName) {
  EXPECT_THAT(
      error_of([] { (void)build_workload("softmax", {}, "float8"); }),
      AllOf(HasSubstr("softmax"), HasSubstr("unknown dtype 'float8'"), HasSubstr("float32")));
  EXPECT_THAT(error_of([] { (void)build_workload("softmaxx", {}, "float32"); }),
              HasSubstr("unknown workload 'softmaxx'"));
}

TEST(WorkloadErrors, BadParameters) {
  EXPECT_THAT(error_of([] { (void)build_workload("reduce_max", {{"N", 4}}); }),
              AllOf(HasSubstr("reduce_max"), HasSubstr("no parameter 'N'"), HasSubstr("--COLS")));
  EXPECT_THAT(error_of([] { (void)build_workload("resnet_block", {{"C", 0}}); }),
              AllOf(HasSubstr("resnet_block"), HasSubstr("C = 0"), HasSubstr("at least 1")));
  EXPECT_THAT(error_of([] { (void)build_workload("depthwise_conv2d", {{"P", -1}}); }),
              AllOf(HasSubstr("depthwise_conv2d"), HasSubstr("P = -1"), HasSubstr("at least 0")));
  EXPECT_THAT(error_of([] {
                (void)build_workload("transformer_block",
                                     {{"D", 30}, {"H", 4}, {"L", 2}, {"F", 2}});
              }),
              AllOf(HasSubstr("transformer_block"), HasSubstr("D = 30"), HasSubstr("H = 4")));
  // A filter larger than the padded image: the op's error, naming the workload.
  EXPECT_THAT(error_of([] {
                (void)build_workload("depthwise_conv2d",
                                     {{"H", 2}, {"W", 2}, {"R", 5}, {"P", 0}, {"C", 2}});
              }),
              AllOf(HasSubstr("workload 'depthwise_conv2d'"), HasSubstr("use a smaller kernel")));
}

TEST(WorkloadErrors, ZeroPaddingIsAllowed) {
  Tensor t = build_workload("depthwise_conv2d",
                            {{"N", 1}, {"C", 2}, {"H", 4}, {"W", 4}, {"R", 3}, {"P", 0}});
  EXPECT_EQ(t.shape(), (Shape{1, 2, 2, 2}));
}

} // namespace
} // namespace beamlab

// The learned cost model over XGBoost's C API; see cost_model.hpp.
//
// XGBoost runs on one thread (nthread 1, and its matrices built with one): the tuner times
// kernels on the other cores, and training must not disturb them. libxgboost links libgomp,
// beamlab's kernels run on LLVM's libomp. beamlab's code binds to libomp by its own symbol
// version; XGBoost's GOMP_* and omp_* calls bind to whichever runtime comes first in the lookup
// order: libomp in beamlab's programs (its GOMP compatibility entry points), libgomp when that
// is loaded first. tests/tuner/cost_model_test.cpp runs both in one process, in both orders and
// both ways round (model.xgboost_beside_kernels_gomp_first).
#include "tuner/search/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <tuple>

#include <xgboost/c_api.h>

namespace beamlab::tuner {
namespace {

/// A failed XGBoost call is a runtime failure naming the call and XGBoost's reason.
void check(int status, const char* call) {
  if (status != 0) runtime_error_report << "XGBoost: " << call << " failed: " << XGBGetLastError();
}

/// XGBoost logs warnings to stderr unless told not to; the CLI's stderr is for its own notes.
void quiet_xgboost() {
  static std::once_flag once;
  std::call_once(once,
                 [] { check(XGBSetGlobalConfig(R"({"verbosity": 0})"), "XGBSetGlobalConfig"); });
}

struct MatrixFree {
  void operator()(void* m) const { XGDMatrixFree(m); }
};
struct BoosterFree {
  void operator()(void* b) const { XGBoosterFree(b); }
};
using Matrix = std::unique_ptr<void, MatrixFree>;
using Booster = std::unique_ptr<void, BoosterFree>;

/// A dense matrix of `rows` (all of one width), built on one thread.
Matrix make_matrix(const std::vector<const Features*>& rows, size_t width) {
  std::vector<float> data;
  data.reserve(rows.size() * width);
  for (const Features* r : rows) data.insert(data.end(), r->begin(), r->end());
  DMatrixHandle m = nullptr;
  check(XGDMatrixCreateFromMat_omp(data.data(), rows.size(), width, NAN, &m, 1),
        "XGDMatrixCreateFromMat_omp");
  return Matrix(m);
}

void set_param(BoosterHandle b, const char* name, const std::string& value) {
  check(XGBoosterSetParam(b, name, value.c_str()), "XGBoosterSetParam");
}

} // namespace

struct CostModel::Impl {
  struct Sample {
    uint64_t kernel;
    Features x;
    double ms;
  };

  CostModelOptions options;
  mutable std::mutex mutex;
  std::vector<Sample> samples;    ///< in the order added
  std::map<uint64_t, int> counts; ///< samples per kernel
  size_t width = 0;               ///< of every row (the first row's)
  Booster booster;                ///< the fitted model, or null
};

CostModel::CostModel() : CostModel(CostModelOptions{}) {}

CostModel::CostModel(const CostModelOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

CostModel::~CostModel() = default;

void CostModel::add(uint64_t kernel, Features x, double ms) {
  internal_assert(ms > 0 && std::isfinite(ms)) << "CostModel::add: a time of " << ms << " ms";
  std::lock_guard lock(impl_->mutex);
  if (impl_->samples.empty()) impl_->width = x.size();
  internal_assert(x.size() == impl_->width)
      << "CostModel::add: " << x.size() << " features, not " << impl_->width;
  ++impl_->counts[kernel];
  impl_->samples.push_back({kernel, std::move(x), ms});
}

size_t CostModel::size() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->samples.size();
}

int CostModel::kernels() const {
  std::lock_guard lock(impl_->mutex);
  return static_cast<int>(impl_->counts.size());
}

bool CostModel::trained() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->booster != nullptr;
}

bool CostModel::fit() {
  quiet_xgboost();
  // A snapshot, so the searches can go on adding and predicting while this one trains.
  std::vector<Impl::Sample> samples;
  CostModelOptions options;
  size_t width = 0;
  {
    std::lock_guard lock(impl_->mutex);
    samples = impl_->samples;
    options = impl_->options;
    width = impl_->width;
  }
  // Kernels by key, each kernel's samples in the order added: groups must be contiguous.
  // (std::sort with the position as tie-break: libstdc++'s stable_sort is deprecated in C++20.)
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(samples[a].kernel, a) < std::tie(samples[b].kernel, b);
  });
  std::vector<const Features*> rows;
  std::vector<float> labels;
  std::vector<unsigned> groups;
  for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {
    uint64_t kernel = samples[order[begin]].kernel;
    double best = samples[order[begin]].ms, worst = best;
    for (end = begin; end < order.size() && samples[order[end]].kernel == kernel; ++end) {
      best = std::min(best, samples[order[end]].ms);
      worst = std::max(worst, samples[order[end]].ms);
    }
    if (worst == best) continue; // one time only: nothing to learn about its plans' order
    for (size_t i = begin; i < end; ++i) {
      const Impl::Sample& s = samples[order[i]];
      rows.push_back(&s.x);
      // Ranking: higher relevance is faster. Regression: the slowdown over the best, in log.
      double slowdown = std::log(s.ms / best);
      labels.push_back(
          static_cast<float>(options.objective == CostObjective::rank ? -slowdown : slowdown));
    }
    groups.push_back(static_cast<unsigned>(end - begin));
  }
  if (groups.empty()) return false;

  Matrix train = make_matrix(rows, width);
  check(XGDMatrixSetFloatInfo(train.get(), "label", labels.data(), labels.size()),
        "XGDMatrixSetFloatInfo(label)");
  if (options.objective == CostObjective::rank)
    check(XGDMatrixSetUIntInfo(train.get(), "group", groups.data(), groups.size()),
          "XGDMatrixSetUIntInfo(group)");
  DMatrixHandle matrices[] = {train.get()};
  BoosterHandle handle = nullptr;
  check(XGBoosterCreate(matrices, 1, &handle), "XGBoosterCreate");
  Booster booster(handle);
  set_param(handle, "objective",
            options.objective == CostObjective::rank ? "rank:pairwise" : "reg:squarederror");
  set_param(handle, "nthread", "1");
  set_param(handle, "seed", std::to_string(options.seed));
  set_param(handle, "tree_method", "hist");
  set_param(handle, "max_depth", std::to_string(options.depth));
  set_param(handle, "eta", std::to_string(options.eta));
  for (int i = 0; i < options.trees; ++i)
    check(XGBoosterUpdateOneIter(handle, i, train.get()), "XGBoosterUpdateOneIter");

  std::lock_guard lock(impl_->mutex);
  impl_->booster = std::move(booster);
  return true;
}

std::vector<double> CostModel::predict(const std::vector<Features>& rows) const {
  if (rows.empty()) return {};
  std::lock_guard lock(impl_->mutex);
  if (!impl_->booster) return {};
  std::vector<const Features*> pointers;
  for (const Features& r : rows) {
    internal_assert(r.size() == impl_->width)
        << "CostModel::predict: " << r.size() << " features, not " << impl_->width;
    pointers.push_back(&r);
  }
  Matrix m = make_matrix(pointers, impl_->width);
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(impl_->booster.get(), m.get(), 0, 0, 0, &n, &out), "XGBoosterPredict");
  internal_assert(n == rows.size()) << "XGBoost predicted " << n << " rows of " << rows.size();
  std::vector<double> cost(out, out + n);
  // A ranker scores faster plans higher; a cost is lower for them.
  if (impl_->options.objective == CostObjective::rank)
    for (double& c : cost) c = -c;
  return cost;
}

namespace {

/// 1-based ranks, ties taking the mean of the ranks they span.
std::vector<double> mean_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return std::tie(v[a], a) < std::tie(v[b], b); });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    double mean = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) rank[order[k]] = mean;
    i = j;
  }
  return rank;
}

} // namespace

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  internal_assert(a.size() == b.size())
      << "rank_correlation: series of " << a.size() << " and " << b.size() << " values";
  if (a.size() < 2) return 0;
  std::vector<double> ra = mean_ranks(a), rb = mean_ranks(b);
  // Pearson's correlation of the ranks (exact with ties, unlike 1 - 6 sum d^2 / n(n^2 - 1)).
  double mean = (static_cast<double>(a.size()) + 1) / 2;
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += (ra[i] - mean) * (rb[i] - mean);
    aa += (ra[i] - mean) * (ra[i] - mean);
    bb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (aa == 0 || bb == 0) return 0;
  return ab / std::sqrt(aa * bb);
}

} // namespace beamlab::tuner

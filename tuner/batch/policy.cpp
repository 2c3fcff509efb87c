// The BEAM policy; see policy.hpp.
#include "tuner/batch/policy.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace beamlab::tuner {

BeamPolicy::BeamPolicy(SearchSettings settings, PoolOptions pool, EventSink sink)
    : settings_(std::move(settings)), pool_options_(std::move(pool)), sink_(std::move(sink)) {}

BeamPolicy::~BeamPolicy() = default;

namespace {

std::unique_ptr<db::Database> open_cache(const std::string& path, CacheMode mode) {
  if (mode == CacheMode::off) return nullptr;
  return std::make_unique<db::Database>(path, mode == CacheMode::read_only
                                                  ? db::Database::Access::read_only
                                                  : db::Database::Access::read_write);
}

} // namespace

void BeamPolicy::use_cache(const std::string& path, CacheMode mode) {
  std::lock_guard lock(mutex_);
  db_ = open_cache(path, mode);
  cache_.db = db_.get();
  cache_.mode = mode;
  cache_.source =
      "beamlab run --beam " + std::to_string(settings_.beam) + " (" + db::now_utc() + ")";
}

int BeamPolicy::cache_hits() const {
  std::lock_guard lock(mutex_);
  return cache_.hits;
}

std::vector<Opt> BeamPolicy::opts_for(const ScheduleItem& kernel, int threads) const {
  std::lock_guard lock(mutex_);
  if (auto it = tuned_.find(kernel.key); it != tuned_.end()) return it->second;
  KernelTask task = kernel_task(kernel);
  if (auto hit = cache_lookup(cache_, task, kernel.ast, threads, settings_key(settings_))) {
    tuned_.emplace(kernel.key, hit->opts);
    return hit->opts;
  }
  if (!pool_ || pool_->sandbox_options().threads != threads) {
    pool_.reset();
    PoolOptions o = pool_options_;
    o.sandbox.threads = threads;
    pool_ = std::make_unique<WorkerPool>(o);
  }
  SearchSettings s = settings_;
  s.threads = threads;
  Expected<TuneResult> r = tune_kernel(task, *pool_, s, sink_);
  std::vector<Opt> opts;
  if (r) {
    opts = r->best().opts;
    cache_store(cache_, *r, kernel.ast, action_space(kernel.ast, threads));
    results_.push_back(std::move(*r));
  } else {
    std::fprintf(stderr, "beamlab: warning: %s; using the heuristic's Opts\n", r.error().c_str());
    opts = heuristic_opts(kernel.ast, threads);
  }
  tuned_.emplace(kernel.key, opts);
  return opts;
}

std::vector<Opt> BeamPolicy::opts_for_once(const ScheduleItem& kernel, int threads) const {
  std::lock_guard lock(mutex_);
  if (auto it = tuned_.find(kernel.key); it != tuned_.end()) return it->second;
  if (auto hit =
          cache_lookup(cache_, kernel_task(kernel), kernel.ast, threads, settings_key(settings_)))
    return hit->opts;
  return heuristic_opts(kernel.ast, threads);
}

std::vector<TuneResult> BeamPolicy::results() const {
  std::lock_guard lock(mutex_);
  return results_;
}

CachePolicy::CachePolicy(const std::string& path, CacheMode mode, const OptPolicy& fallback)
    : fallback_(fallback), db_(open_cache(path, mode)) {
  cache_.db = db_.get();
  cache_.mode = mode;
}

CachePolicy::~CachePolicy() = default;

std::vector<Opt> CachePolicy::opts_for(const ScheduleItem& kernel, int threads) const {
  if (std::optional<std::vector<Opt>> hit = cached(kernel, threads)) return std::move(*hit);
  return fallback_.opts_for(kernel, threads);
}

std::vector<Opt> CachePolicy::opts_for_once(const ScheduleItem& kernel, int threads) const {
  if (std::optional<std::vector<Opt>> hit = cached(kernel, threads)) return std::move(*hit);
  return fallback_.opts_for_once(kernel, threads);
}

std::optional<std::vector<Opt>> CachePolicy::cached(const ScheduleItem& kernel, int threads) const {
  std::lock_guard lock(mutex_);
  if (auto hit = cache_lookup(cache_, kernel_task(kernel), kernel.ast, threads, ""))
    return std::move(hit->opts);
  return std::nullopt;
}

int CachePolicy::hits() const {
  std::lock_guard lock(mutex_);
  return cache_.hits;
}

int beam_width_from_env() {
  const char* env = std::getenv("BEAM");
  if (!env || !*env) return 0;
  int width = -1;
  auto [p, ec] = std::from_chars(env, env + std::strlen(env), width);
  user_assert(ec == std::errc{} && *p == '\0' && width >= 0 && width <= 1024)
      << "BEAM='" << env << "': expected a beam width, an integer from 0 (off) to 1024";
  return width;
}

std::shared_ptr<BeamPolicy> install_beam_from_env() {
  int width = beam_width_from_env();
  if (width == 0) return nullptr;
  static std::shared_ptr<BeamPolicy> installed; // the engine's default must outlive realizes
  SearchSettings s;
  s.beam = width;
  installed = std::make_shared<BeamPolicy>(s);
  set_default_policy(installed.get());
  return installed;
}

} // namespace beamlab::tuner

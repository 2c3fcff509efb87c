// The BEAM policy; see policy.hpp.
#include "tuner/policy.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace beamlab::tuner {

BeamPolicy::BeamPolicy(SearchSettings settings, PoolOptions pool, EventSink sink)
    : settings_(std::move(settings)), pool_options_(std::move(pool)), sink_(std::move(sink)) {}

BeamPolicy::~BeamPolicy() = default;

std::vector<Opt> BeamPolicy::opts_for(const ScheduleItem& kernel, int threads) const {
  std::lock_guard lock(mutex_);
  if (auto it = tuned_.find(kernel.key); it != tuned_.end()) return it->second;
  if (!pool_ || pool_->sandbox_options().threads != threads) {
    pool_.reset();
    PoolOptions o = pool_options_;
    o.sandbox.threads = threads;
    pool_ = std::make_unique<WorkerPool>(o);
  }
  SearchSettings s = settings_;
  s.threads = threads;
  Expected<TuneResult> r = tune_kernel(kernel_task(kernel), *pool_, s, sink_);
  std::vector<Opt> opts;
  if (r) {
    opts = r->best().opts;
    results_.push_back(std::move(*r));
  } else {
    std::fprintf(stderr, "beamlab: warning: %s; using the heuristic's Opts\n", r.error().c_str());
    opts = heuristic_opts(kernel.ast, threads);
  }
  tuned_.emplace(kernel.key, opts);
  return opts;
}

std::vector<TuneResult> BeamPolicy::results() const {
  std::lock_guard lock(mutex_);
  return results_;
}

std::shared_ptr<BeamPolicy> install_beam_from_env() {
  const char* env = std::getenv("BEAM");
  if (!env || !*env) return nullptr;
  int width = -1;
  auto [p, ec] = std::from_chars(env, env + std::strlen(env), width);
  user_assert(ec == std::errc{} && *p == '\0' && width >= 0 && width <= 1024)
      << "BEAM='" << env << "': expected a beam width, an integer from 0 (off) to 1024";
  if (width == 0) return nullptr;
  static std::shared_ptr<BeamPolicy> installed; // the engine's default must outlive realizes
  SearchSettings s;
  s.beam = width;
  installed = std::make_shared<BeamPolicy>(s);
  set_default_policy(installed.get());
  return installed;
}

} // namespace beamlab::tuner

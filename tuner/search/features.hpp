// Features of a kernel and of a plan for it: what the search's cost model (cost_model.hpp)
// learns from and ranks candidates by.
//
// A candidate's vector is the kernel's part (the same for every plan of the kernel: op counts
// by family, dtypes, loop and reduction sizes, buffer bytes, FLOPs, arithmetic intensity)
// followed by the plan's (the Opts applied by kind and amount, vector lanes, upcast and unroll
// products, tile sizes, the thread split, the optimized AST's size). Features depend only on
// the AST, the plan and the core count: equal inputs give equal vectors on any machine, so a
// journal recorded on one machine trains a model that ranks the same on another. Sizes and
// counts that span orders of magnitude enter as log2(1 + x); flags and fractions as they are.
#pragma once

#include <string>
#include <vector>

#include <beamlab/tuning.hpp>

namespace beamlab::tuner {

/// One feature vector, in the order of feature_names().
using Features = std::vector<float>;

/// The features' names, kernel part first ("kernel.flops", ..., "plan.lanes", ...).
const std::vector<std::string>& feature_names();

/// The kernel's part of every candidate's vector; compute it once per kernel.
Features kernel_features(const UOpPtr& ast);

/// The whole vector of `plan` applied to `ast` on `threads` cores: `kernel` (kernel_features
/// of `ast`) followed by the plan's part. The reason when the plan doesn't apply.
Expected<Features> plan_features(const UOpPtr& ast, const Features& kernel,
                                 const std::vector<Opt>& plan, int threads);

/// The same for a plan already applied (`optimized` is apply_opts(ast, plan)): the search has
/// it at hand, and applying the plan is most of the cost.
Features plan_features(const OptimizedKernel& optimized, const Features& kernel,
                       const std::vector<Opt>& plan, int threads);

} // namespace beamlab::tuner

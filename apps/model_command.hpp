// `beamlab model eval`: how well the search's cost model (tuner/search/cost_model.hpp) ranks
// plans it has never seen, on this device's journal. K-fold cross-validation by kernel: each
// fold's kernels are held out, a model is trained on the others' measured plans and ranks the
// held-out kernels' plans; per kernel the Spearman correlation of predicted and measured times,
// whether the predicted best is within 2% / 10% of the measured best, and whether the measured
// best is in the predicted top quarter (what pruning relies on); then their median, quartiles
// and fractions over kernels.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

void add_model_command(CLI::App& app);

} // namespace beamlab::cli

// A tensor program with one or more outputs, scheduled and run together: a built-in
// workload's single output, or every output of an imported model.
#pragma once

#include <vector>

#include "engine/tensor/tensor.hpp"

namespace beamlab {

struct Program {
  std::vector<Tensor> outputs;

  /// The kernels that compute every output, in one schedule (shared work is done once).
  Schedule schedule() const;
  /// The buffers the outputs read, by BUFFER id.
  BufferMap inputs() const;
  /// Computes every output; afterwards each reads from its buffer.
  Program& realize(const RealizeOptions& options = {});
};

} // namespace beamlab

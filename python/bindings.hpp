// The pieces of the Python module (_beamlab), each binding one part of libbeamlab.so through
// its public headers.
#pragma once

#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include <beamlab/beamlab.hpp>

namespace beamlab::python {

/// Tensor, dtypes, numpy in and out (tensor.cpp).
void bind_tensor(pybind11::module_& m);
/// realize, tune, the tuning cache, runs, workloads, expressions, ONNX models (tuning.cpp).
void bind_tuning(pybind11::module_& m);

/// How a realize from Python runs, as `beamlab run` does: BEAM search of width `beam` (else
/// the BEAM environment variable's), its plans looked up in and stored to the database `db`
/// (else the default); without a search, the tuning cache's plans where it has them (read
/// only) and the heuristic's elsewhere. Policies live for the whole process, so a kernel
/// searched once is not searched again.
RealizeOptions realize_options(std::optional<int> beam = std::nullopt,
                               const std::optional<std::string>& db = std::nullopt,
                               int threads = 0);

} // namespace beamlab::python

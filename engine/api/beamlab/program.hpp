// A tensor program with one or more outputs, scheduled and run together: a built-in
// workload's single output, every output of an imported model, or a kernel given as IR text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/tensor/tensor.hpp"

namespace beamlab {

/// A name for a node of the tensor graph: an ONNX node's name on each of its output tensors.
struct NodeName {
  UOpPtr node;
  std::string name;
};

struct Program {
  std::vector<Tensor> outputs;
  /// A program given as kernels rather than tensors (a kernel in IR text, frontends/kernel):
  /// its schedule, and the data of the buffers it reads. `outputs` is then empty.
  std::optional<Schedule> kernels;
  BufferMap kernel_inputs;
  /// Names for the graph's nodes, in program order (see kernel_names).
  std::vector<NodeName> names;

  /// The kernels that compute every output, in one schedule (shared work is done once).
  Schedule schedule() const;
  /// The buffers the outputs read, by BUFFER id.
  BufferMap inputs() const;
  /// Per kernel of `schedule` (this program's), the names of the named nodes it computes, in
  /// program order: what a model's kernel is called in the model ("conv1", "relu"). Empty lists
  /// where nothing is named.
  std::vector<std::vector<std::string>> kernel_names(const Schedule& schedule) const;
  /// Computes every output; afterwards each reads from its buffer.
  Program& realize(const RealizeOptions& options = {});
};

/// What launching a kernel costs beyond its work, in microseconds: the median launch of one
/// that does nearly nothing (16 elements per thread), run on one thread and across `threads`
/// (0: every core; OpenMP's fork and join). Every kernel of a program pays it once a run.
struct LaunchOverhead {
  int threads = 0;
  double one_thread_us = 0, all_threads_us = 0;
};
LaunchOverhead measure_launch_overhead(int threads = 0);

/// `names` as one short label: all of them up to `max`, else the first and last few with the
/// count ("conv1, bn1, relu" or "layer1.0.conv1 ... layer1.0.relu (7 nodes)").
std::string join_names(const std::vector<std::string>& names, size_t max = 4);

} // namespace beamlab

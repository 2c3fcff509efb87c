// Tensors compiled once into one ExecutionPlan and run at any values of their variables: a
// serving loop's program (tinygrad's TinyJit replay, ONNX Runtime's session.run).
//
//   TensorPlan plan({y});              // schedules and compiles y's kernels, runs nothing
//   plan.run({{"seq", 77}});           // writes y at seq = 77 (an input's storage rewritten
//   plan.run({{"seq", 12}});           // in place between runs is read anew): no compile
//   plan.shape(0), plan.output(0);     // (77, 768) then (12, 768), row-major in the buffer
//
// Tensor::realize_all is one run of such a plan.
#pragma once

#include <memory>
#include <vector>

#include "engine/tensor/tensor.hpp"

namespace beamlab {

class TensorPlan {
public:
  /// Schedules the tensors together (shared work once) and compiles every kernel; `options`'
  /// vars are ignored (run takes the values).
  explicit TensorPlan(std::vector<Tensor> tensors, const RealizeOptions& options = {});

  /// The variables a run needs: the kernels' and the outputs' shapes' (an input's rows, viewed).
  const std::vector<Variable>& variables() const { return variables_; }
  /// Computes every tensor at `values`, each checked against its variable's range (a UserError
  /// names one out of range, unknown, or missing: no value is kept from an earlier run);
  /// nothing is compiled. One run at a time: the plan's buffers are its own.
  void run(const VarValues& values = {});
  /// Tensor `i`'s buffer: after a run, its values at that run's sizes, row-major from the start.
  const std::shared_ptr<Buffer>& output(size_t i) const { return outputs_[i]; }
  /// Tensor `i`'s shape at the last run's values.
  const std::vector<int64_t>& shape(size_t i) const { return shapes_[i]; }
  DType dtype(size_t i) const { return tensors_[i].dtype(); }
  size_t size() const { return tensors_.size(); }
  const Schedule& schedule() const { return schedule_; }
  const ExecutionPlan& plan() const { return plan_; }

private:
  std::vector<Tensor> tensors_;
  Schedule schedule_;
  ExecutionPlan plan_;
  std::vector<Variable> variables_;
  std::vector<std::shared_ptr<Buffer>> outputs_;
  std::vector<std::vector<int64_t>> shapes_;
};

} // namespace beamlab

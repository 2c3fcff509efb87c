// ONNX models as lazy tensor programs.
//
//   onnx::Model m = onnx::Model::load("resnet18.onnx", {{"input", {1, 3, 224, 224}}});
//   Program p = m.build(m.random_inputs());   // lazy; nothing has run
//
// load() parses the ModelProto with Debian's libonnx, runs ONNX's checker, resolves every graph
// input's shape (from the model, or `input_shapes` where a dim is symbolic) and turns the
// initializers into buffers once. A symbolic dim can also stay symbolic: a dim_param named by
// one of `variables` becomes that Variable, and the program runs at any value in its range
// from one compile:
//
//   onnx::Model m = onnx::Model::load("bert.onnx", {}, {Variable{"seq", 1, 512}});
//   Program p = m.build(m.random_inputs());   // input (1, seq, 768), output (1, seq, 768)
//   ExecutionPlan plan = ExecutionPlan::prepare(p.schedule(), p.inputs());
//   plan.run({{"seq", 77}});
//
// build() walks the nodes in order and calls each op's converter (ops_*.cpp), so scheduling,
// fusion, Opts, tuning and the cache see an ordinary Tensor graph. Every problem is a one-line
// UserError naming the file and, for a node, its name, op and opset: "m.onnx: node 'conv1' (Conv,
// opset 13): ...".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <beamlab/beamlab.hpp>

#include "frontends/onnx/versions.hpp"

namespace beamlab::onnx {

/// A graph input the caller feeds (not an initializer), with its resolved shape.
struct ModelInput {
  std::string name;
  DType dtype = Scalar::Float32;
  Shape shape;
};

/// Input shapes by name, for dims the model leaves symbolic ("batch", "seq").
using InputShapes = std::map<std::string, Shape>;

/// Parses "name=1x3x224x224" (or "name=" for a scalar) into `shapes`; a UserError names `flag`.
void parse_input_shape(const std::string& text, InputShapes& shapes, const std::string& flag);

struct ModelImpl;

class Model {
public:
  /// Reads, checks and prepares a model file; `variables` name dim_params kept symbolic.
  static Model load(const std::string& path, const InputShapes& input_shapes = {},
                    const std::vector<Variable>& variables = {});
  /// The same for a model's bytes; `path` names it in errors and locates external data.
  static Model parse(std::string_view bytes, const std::string& path,
                     const InputShapes& input_shapes = {},
                     const std::vector<Variable>& variables = {});

  const std::string& path() const;
  /// The default domain's opset the model was exported for.
  int64_t opset() const;
  /// The inputs build() needs, in the graph's order.
  const std::vector<ModelInput>& inputs() const;
  /// The graph's outputs' names, in order.
  const std::vector<std::string>& output_names() const;
  /// How many nodes the graph has, and of which ops (sorted by op name).
  const std::map<std::string, int64_t>& op_counts() const;

  /// The outputs, lazily built over `feeds` (one tensor per input, by name, of its shape), with
  /// each node's name on its output tensors ("Relu#7", its op and index, where it has none).
  Program build(const std::map<std::string, Tensor>& feeds) const;
  /// The variables its input shapes hold (those of `variables` the model's dims use).
  std::vector<Variable> variables() const;
  /// Seeded random inputs: uniform [0, 1) floats, small non-negative integers, random bools.
  /// A symbolic input is a buffer sized for its largest shape, holding the elements row-major
  /// at each value (Tensor::from_storage).
  std::map<std::string, Tensor> random_inputs(uint64_t seed = 1) const;

private:
  std::shared_ptr<const ModelImpl> impl_;
};

} // namespace beamlab::onnx

// The importer's private view of one ONNX node: its inputs as tensors, its attributes by name
// with defaults, and its static inputs (shapes, axes, pads) read back to the host. Each op
// family's converters (ops_*.cpp) take a Node and return the node's outputs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <beamlab/beamlab.hpp>

namespace onnx {
class NodeProto;
class AttributeProto;
class GraphProto;
class TensorProto;
} // namespace onnx

namespace beamlab::onnx {

struct HostTensor;

/// A value in the graph: a tensor, or an empty one (0 elements; beamlab computes on none, so
/// ops treat it as absent, like ONNX's empty optional inputs).
struct Value {
  std::optional<Tensor> tensor;
  Shape shape;
  DType dtype = Scalar::Float32;

  /// The same values in channel blocks (as Tensor::to_channel_blocks lays them out), where a
  /// blocked convolution or an elementwise op on its output made them; `tensor` is a view of
  /// these. The padding channels are finite but not always zero (a Sigmoid makes them 0.5):
  /// only the next convolution's zero weights read them. The next convolution reads the
  /// blocks as they lie, and the view and the blocking cancel.
  std::optional<Tensor> blocks;

  /// The elements, where the import knows them: shape arithmetic (a Shape's output and what
  /// Gather, Concat, Slice, Unsqueeze, Cast and integer arithmetic make of it) and small integer
  /// constants. An element may be symbolic (`seq`, a model dim kept a Variable); such a value
  /// has no tensor, and is read only as sizes (a Reshape's shape, a Slice's ends).
  std::optional<std::vector<Dim>> ints;

  Value() = default;
  Value(Tensor t) : tensor(t), shape(t.shape()), dtype(t.dtype()) {} // NOLINT: implicit
  /// Values computed in channel blocks (N, Cb, d.., 16) of `channels` channels.
  static Value from_blocks(Tensor b, int64_t channels) {
    Value v(b.from_channel_blocks(channels));
    v.blocks = std::move(b);
    return v;
  }
  /// Integers known at import, of `shape` (0-D or 1-D) and an integer or bool dtype; the
  /// tensor of them too when every one is a number.
  static Value known(std::vector<Dim> ints, Shape shape, DType dtype);
  /// An empty tensor of `shape` (some dim 0).
  static Value empty(Shape shape, DType dtype) {
    Value v;
    v.shape = std::move(shape);
    v.dtype = dtype;
    return v;
  }
};

/// A tensor the model gives (an initializer, a Constant's value), decoded as `h` and made `t`:
/// an empty Value where it has no elements, and with its ints known where it is a short list of
/// integers (the constants of shape arithmetic).
Value given_value(const HostTensor& h, const std::function<Tensor(const HostTensor&)>& make);

/// Runs a subgraph (If's branches, Loop's and Scan's bodies) with its formal inputs bound to
/// `inputs` and the enclosing graph's values in scope; returns its outputs in order.
using SubgraphRunner =
    std::function<std::vector<Value>(const ::onnx::GraphProto&, const std::vector<Value>&)>;

class Node {
public:
  Node(const ::onnx::NodeProto& proto, int64_t opset, std::vector<const Value*> inputs,
       std::string base_dir, SubgraphRunner run_subgraph = {});

  const std::string& op() const;
  int64_t opset() const { return opset_; }
  /// How many outputs the graph wants (named, non-empty).
  size_t num_outputs() const;
  bool wants_output(size_t i) const;

  /// Input i is given and not empty.
  bool has(size_t i) const;
  /// Input i; a UserError if it is missing or empty, or holds symbolic sizes (Value::ints).
  const Tensor& in(size_t i) const;
  std::optional<Tensor> opt(size_t i) const;
  /// Every given input, in order (variadic ops: Sum, Max, Concat).
  std::vector<Tensor> all_inputs() const;
  size_t input_count() const { return inputs_.size(); }
  /// Input i's shape and dtype, also for an empty input.
  const Value* value(size_t i) const;

  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t dflt) const;
  int64_t attr_int(const std::string& name) const;
  double attr_float(const std::string& name, double dflt) const;
  std::string attr_string(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> dflt = {}) const;
  std::vector<double> attr_floats(const std::string& name) const;
  std::vector<std::string> attr_strings(const std::string& name) const;
  /// A tensor attribute (Constant's value), decoded.
  Tensor attr_tensor(const std::string& name) const;
  /// The same, empty tensors included.
  Value attr_value(const std::string& name) const;
  const ::onnx::AttributeProto* attr(const std::string& name) const;

  /// Input i's values on the host as integers (realizing it if it is computed).
  std::vector<int64_t> host_ints(size_t i) const;
  std::vector<double> host_floats(size_t i) const;
  /// Input i's values as sizes: its known ints (symbolic ones included), else host_ints(i).
  std::vector<Dim> host_dims(size_t i) const;
  /// Integers from input i when given (empty if the input is empty), else from attribute
  /// `name`, else nullopt. For ops that moved an attribute to an input in a later opset
  /// (axes, split, shape): the older opsets never had that input.
  std::optional<std::vector<int64_t>> ints_from(size_t i, const std::string& name) const;

  /// Graph attribute `name` run over `inputs` (see SubgraphRunner); a UserError if the node
  /// has no such attribute.
  std::vector<Value> run_subgraph(const std::string& name, const std::vector<Value>& inputs) const;

  /// An axis in [0, rank), from a possibly negative one; a UserError names `what`.
  static int64_t axis(int64_t a, int64_t rank, const char* what);

  /// What ONNX Slice takes from an axis of length d by `step`: its first element and how many
  /// (0: none), after a negative start or end counts from the end and both are clamped to the
  /// axis as the step's sign says.
  struct SliceRange {
    int64_t first = 0, count = 0;
  };
  static SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t d);

private:
  /// A UserError where input i holds a symbolic size (Value::ints) an op would read as data.
  void check_not_symbolic(size_t i) const;

  const ::onnx::NodeProto& proto_;
  int64_t opset_;
  std::vector<const Value*> inputs_;
  std::string base_dir_;
  SubgraphRunner run_subgraph_;
};

using Converter = std::function<std::vector<Value>(const Node&)>;
using ConverterTable = std::map<std::string, Converter>;

/// The ops each family converts (ops_elementwise.cpp, ops_reduce.cpp, ops_movement.cpp,
/// ops_nn.cpp, ops_resize.cpp, ops_loss.cpp, ops_quant.cpp, ops_signal.cpp, ops_recurrent.cpp,
/// ops_data_dependent.cpp, ops_control_flow.cpp).
void add_elementwise_ops(ConverterTable& table);
void add_reduce_ops(ConverterTable& table);
void add_movement_ops(ConverterTable& table);
void add_nn_ops(ConverterTable& table);
void add_resize_ops(ConverterTable& table);
void add_loss_ops(ConverterTable& table);
void add_quant_ops(ConverterTable& table);
void add_signal_ops(ConverterTable& table);
void add_recurrent_ops(ConverterTable& table);
void add_data_dependent_ops(ConverterTable& table);
void add_control_flow_ops(ConverterTable& table);

/// The node's outputs computed on the host where it is shape arithmetic (shape_values.cpp): an
/// integer op whose inputs are all known ints (Value::ints) of rank 0 or 1. nullopt otherwise:
/// the converter builds tensors.
std::optional<std::vector<Value>> fold_shape_arithmetic(const Node& n);

/// Every converter, by op type (built once).
const ConverterTable& converters();

} // namespace beamlab::onnx

namespace beamlab::onnx {

/// The float type an op on `t` computes in (t's own if it is a float, else float32).
inline DType float_of(DType t) { return t.is_float() ? t : DType(Scalar::Float32); }

/// A converter's single output.
inline std::vector<Value> one(Tensor t) { return {std::move(t)}; }

/// Dim `axis` of x.
inline int64_t dim(const Tensor& x, int64_t axis) { return x.shape()[static_cast<size_t>(axis)]; }

/// The window settings (strides, dilations, pads or auto_pad, ceil_mode, count_include_pad)
/// of a conv or pool node over x's spatial dims with kernel `k` (ops_nn.cpp).
WindowArgs window(const Node& n, const Tensor& x, const std::vector<int64_t>& k);
/// A conv node's kernel: its kernel_shape, else the weight's spatial dims.
std::vector<int64_t> kernel_of(const Node& n, const Tensor& weight);

/// A 1-D int64 tensor of host values (shapes, indices).
Tensor int64_tensor(const std::vector<int64_t>& values);

/// Elements start, start + step, ... (count of them) along `axis`; step may be negative.
Tensor strided_slice(const Tensor& x, int64_t axis, int64_t start, int64_t count, int64_t step);

} // namespace beamlab::onnx

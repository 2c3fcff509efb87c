// One ONNX node's inputs and attributes; see node.hpp.
#include "frontends/onnx/node.hpp"

#include <algorithm>
#include <cstdlib>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {

Value Value::known(std::vector<Dim> ints, Shape shape, DType dtype) {
  if (ints.empty()) return empty(std::move(shape), dtype);
  Value v;
  v.shape = std::move(shape);
  v.dtype = dtype;
  if (std::all_of(ints.begin(), ints.end(), [](const Dim& d) { return d.is_const(); })) {
    std::vector<int64_t> numbers = Shape(ints);
    constexpr int64_t kExact = int64_t{1} << 53;          // what a double holds exactly
    if (v.shape.empty() && std::abs(numbers[0]) < kExact) // a constant scalar, folded into kernels
      v.tensor = Tensor(static_cast<double>(numbers[0]), dtype);
    else
      v.tensor = Tensor(std::span<const int64_t>(numbers), v.shape, dtype);
  }
  v.ints = std::move(ints);
  return v;
}

Value given_value(const HostTensor& h, const std::function<Tensor(const HostTensor&)>& make) {
  if (h.numel() == 0) return Value::empty(h.shape, h.dtype);
  Value v(make(h));
  constexpr int64_t kMostKnown = 64; // longer integer lists are data, not sizes
  if (!h.dtype.is_float() && !h.dtype.is_bool() && h.shape.size() <= 1 && h.numel() <= kMostKnown) {
    v.ints.emplace();
    for (int64_t k = 0; k < h.numel(); ++k) v.ints->push_back(h.int_at(k));
  }
  return v;
}

Node::Node(const ::onnx::NodeProto& proto, int64_t opset, std::vector<const Value*> inputs,
           std::string base_dir, SubgraphRunner run_subgraph)
    : proto_(proto), opset_(opset), inputs_(std::move(inputs)), base_dir_(std::move(base_dir)),
      run_subgraph_(std::move(run_subgraph)) {}

std::vector<Value> Node::run_subgraph(const std::string& name,
                                      const std::vector<Value>& inputs) const {
  const auto* a = attr(name);
  user_assert(a && a->has_g()) << "attribute '" << name << "' must be a graph";
  internal_assert(static_cast<bool>(run_subgraph_)) << "no subgraph runner for " << op();
  return run_subgraph_(a->g(), inputs);
}

const std::string& Node::op() const { return proto_.op_type(); }

size_t Node::num_outputs() const {
  size_t n = 0;
  for (int i = 0; i < proto_.output_size(); ++i)
    if (!proto_.output(i).empty()) n = static_cast<size_t>(i) + 1;
  return n;
}

bool Node::wants_output(size_t i) const {
  return static_cast<int>(i) < proto_.output_size() && !proto_.output(static_cast<int>(i)).empty();
}

const Value* Node::value(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }

bool Node::has(size_t i) const { return value(i) && (value(i)->tensor || value(i)->ints); }

const Tensor& Node::in(size_t i) const {
  const Value* v = value(i);
  user_assert(v) << "input " << i << " is missing (the node has " << inputs_.size()
                 << "); the model is malformed";
  check_not_symbolic(i);
  user_assert(v->tensor) << "input " << i << " ('" << proto_.input(static_cast<int>(i))
                         << "') is an empty tensor " << shape_str(v->shape)
                         << "; beamlab does not compute on empty tensors";
  return *v->tensor;
}

void Node::check_not_symbolic(size_t i) const {
  const Value* v = value(i);
  if (!v || !v->ints) return;
  auto symbolic =
      std::find_if(v->ints->begin(), v->ints->end(), [](const Dim& d) { return !d.is_const(); });
  user_assert(symbolic == v->ints->end())
      << "input " << i << " ('" << proto_.input(static_cast<int>(i)) << "') holds the symbolic "
      << "size " << symbolic->str() << "; this op takes it as data, where beamlab reads symbolic "
      << "sizes only as shapes, slice bounds and shape arithmetic; give the model's dims numbers "
      << "with --input";
}

std::optional<Tensor> Node::opt(size_t i) const {
  return has(i) ? std::optional<Tensor>(in(i)) : std::nullopt;
}

std::vector<Tensor> Node::all_inputs() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (has(i)) out.push_back(in(i));
  return out;
}

const ::onnx::AttributeProto* Node::attr(const std::string& name) const {
  for (const auto& a : proto_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool Node::has_attr(const std::string& name) const { return attr(name) != nullptr; }

int64_t Node::attr_int(const std::string& name, int64_t dflt) const {
  const auto* a = attr(name);
  return a ? a->i() : dflt;
}

int64_t Node::attr_int(const std::string& name) const {
  const auto* a = attr(name);
  user_assert(a) << "attribute '" << name << "' is required";
  return a->i();
}

double Node::attr_float(const std::string& name, double dflt) const {
  const auto* a = attr(name);
  return a ? a->f() : dflt;
}

std::string Node::attr_string(const std::string& name, const std::string& dflt) const {
  const auto* a = attr(name);
  return a ? a->s() : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& name, std::vector<int64_t> dflt) const {
  const auto* a = attr(name);
  if (!a) return dflt;
  return {a->ints().begin(), a->ints().end()};
}

std::vector<double> Node::attr_floats(const std::string& name) const {
  const auto* a = attr(name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> Node::attr_strings(const std::string& name) const {
  const auto* a = attr(name);
  if (!a) return {};
  return {a->strings().begin(), a->strings().end()};
}

Tensor Node::attr_tensor(const std::string& name) const {
  const auto* a = attr(name);
  user_assert(a && a->has_t()) << "attribute '" << name << "' must be a tensor";
  return to_tensor(decode(a->t(), base_dir_, "attribute '" + name + "'"));
}

Value Node::attr_value(const std::string& name) const {
  const auto* a = attr(name);
  user_assert(a && a->has_t()) << "attribute '" << name << "' must be a tensor";
  return given_value(decode(a->t(), base_dir_, "attribute '" + name + "'"), to_tensor);
}

std::vector<int64_t> Node::host_ints(size_t i) const {
  if (const Value* v = value(i); v && v->ints) {
    check_not_symbolic(i);
    return Shape(*v->ints);
  }
  HostTensor h = to_host(in(i));
  std::vector<int64_t> out(static_cast<size_t>(h.numel()));
  for (int64_t k = 0; k < h.numel(); ++k) out[static_cast<size_t>(k)] = h.int_at(k);
  return out;
}

std::vector<double> Node::host_floats(size_t i) const {
  if (const Value* v = value(i); v && v->ints && !v->dtype.is_float()) {
    std::vector<int64_t> ints = host_ints(i);
    return {ints.begin(), ints.end()};
  }
  HostTensor h = to_host(in(i));
  std::vector<double> out(static_cast<size_t>(h.numel()));
  for (int64_t k = 0; k < h.numel(); ++k) out[static_cast<size_t>(k)] = h.at(k);
  return out;
}

std::vector<Dim> Node::host_dims(size_t i) const {
  if (const Value* v = value(i); v && v->ints) return *v->ints;
  std::vector<int64_t> ints = host_ints(i);
  return {ints.begin(), ints.end()};
}

std::optional<std::vector<int64_t>> Node::ints_from(size_t i, const std::string& name) const {
  if (has(i)) return host_ints(i);
  if (value(i)) return std::vector<int64_t>{}; // given but empty
  if (has_attr(name)) return attr_ints(name);
  return std::nullopt;
}

Node::SliceRange Node::slice_range(int64_t start, int64_t end, int64_t step, int64_t d) {
  if (d == 0) return {};
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
    return std::clamp(v < 0 ? v + d : v, lo, hi);
  };
  int64_t s = step > 0 ? norm(start, 0, d) : norm(start, 0, d - 1);
  int64_t e = step > 0 ? norm(end, 0, d) : norm(end, -1, d - 1);
  int64_t span = step > 0 ? e - s : s - e; // both in [-1, d]: no overflow
  if (span <= 0) return {s, 0};
  // |step| as unsigned: INT64_MIN's magnitude is no int64.
  uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  return {s, static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / stride + 1)};
}

int64_t Node::axis(int64_t a, int64_t rank, const char* what) {
  user_assert(a >= -rank && a < std::max<int64_t>(rank, 1))
      << what << " " << a << " is out of range for rank " << rank;
  return a < 0 ? a + rank : a;
}

const ConverterTable& converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    add_elementwise_ops(t);
    add_reduce_ops(t);
    add_movement_ops(t);
    add_nn_ops(t);
    add_resize_ops(t);
    add_loss_ops(t);
    add_quant_ops(t);
    add_signal_ops(t);
    add_recurrent_ops(t);
    add_data_dependent_ops(t);
    add_control_flow_ops(t);
    return t;
  }();
  return table;
}

} // namespace beamlab::onnx

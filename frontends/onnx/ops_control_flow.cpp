// Control flow: If, Loop and Scan, whose subgraphs see the enclosing graph's values. Shapes
// in beamlab are fixed when a program is built, so control flow is resolved then: If runs the
// branch its condition (read on the host) picks, and Loop and Scan are unrolled, each step's
// body converted over the previous step's values (a Loop's condition is read after each step).
#include <algorithm>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {
namespace {

// Steps a Loop may unroll into: the program grows with each, and a loop this long is better
// written as a tensor op.
constexpr int64_t kMaxSteps = 4096;

bool host_true(const Value& v, const char* what) {
  user_assert(v.tensor && v.tensor->numel() == 1)
      << what << " must be a single boolean, not " << shape_str(v.shape);
  return to_host(*v.tensor).int_at(0) != 0;
}

Value scalar_int64(int64_t v) { return int64_tensor({v}).reshape({}); }
Value scalar_bool(bool v) { return Tensor::full({}, v ? 1 : 0, Scalar::Bool); }

// Scan outputs collected step by step, stacked along `axis` (reversed first when the direction
// is 1); an empty value when there were no steps.
Value stacked(std::vector<Tensor> steps, int64_t axis, bool reverse) {
  user_assert(!steps.empty()) << "a scan output of no steps is an empty tensor; beamlab does "
                              << "not compute on empty tensors";
  if (reverse) std::reverse(steps.begin(), steps.end());
  axis = Node::axis(axis, steps[0].ndim() + 1, "scan output axis");
  return Tensor::stack(steps, axis);
}

std::vector<Value> if_op(const Node& n) {
  user_assert(n.value(0)) << "the condition (input 0) is missing";
  bool cond = host_true(*n.value(0), "the condition");
  return n.run_subgraph(cond ? "then_branch" : "else_branch", {});
}

// Loop(M, cond, v...): body(i, cond, v...) -> (cond, v..., scan outputs...) while i < M and
// cond; outputs the final v... and each scan output stacked over the steps.
std::vector<Value> loop(const Node& n) {
  std::optional<int64_t> trips;
  if (n.has(0)) trips = n.host_ints(0).at(0);
  bool cond = n.has(1) ? host_true(*n.value(1), "the condition") : true;
  user_assert(trips || n.has(1)) << "a Loop with neither a trip count nor a condition never ends";
  std::vector<Value> carried;
  for (size_t i = 2; i < n.input_count(); ++i) {
    user_assert(n.value(i)) << "loop-carried input " << i << " is missing";
    carried.push_back(*n.value(i));
  }
  std::vector<std::vector<Tensor>> scans;
  int64_t step = 0;
  for (; (!trips || step < *trips) && cond; ++step) {
    user_assert(step < kMaxSteps) << "the loop runs past " << kMaxSteps
                                  << " steps; beamlab unrolls loops when it builds a program";
    std::vector<Value> in = {scalar_int64(step), scalar_bool(cond)};
    in.insert(in.end(), carried.begin(), carried.end());
    std::vector<Value> out = n.run_subgraph("body", in);
    user_assert(out.size() >= 1 + carried.size())
        << "the body gives " << out.size() << " outputs; it needs the condition and "
        << carried.size() << " loop-carried values";
    cond = host_true(out[0], "the body's condition");
    std::copy(out.begin() + 1, out.begin() + 1 + static_cast<long>(carried.size()),
              carried.begin());
    scans.resize(out.size() - 1 - carried.size());
    for (size_t k = 0; k < scans.size(); ++k) {
      const Value& v = out[1 + carried.size() + k];
      user_assert(v.tensor) << "scan output " << k << " is an empty tensor " << shape_str(v.shape);
      scans[k].push_back(*v.tensor);
    }
  }
  if (step == 0) { // no step ran: scan outputs of no rows
    const auto* body = n.attr("body");
    int scan_outputs =
        body && body->has_g() ? body->g().output_size() - 1 - static_cast<int>(carried.size()) : 0;
    user_assert(scan_outputs <= 0)
        << "the loop ran no steps, so its " << scan_outputs << " scan output(s) would be "
        << "empty tensors; beamlab does not compute on empty tensors";
  }
  std::vector<Value> outs = carried;
  for (auto& s : scans) outs.push_back(stacked(s, 0, false));
  return outs;
}

// The scan over one sequence: states and scan inputs without a batch dim; Scan-9's rule.
std::vector<Value> scan_steps(const Node& n, std::vector<Value> states,
                              const std::vector<Tensor>& inputs, const std::vector<int64_t>& axes,
                              const std::vector<int64_t>& directions,
                              const std::vector<int64_t>& out_axes,
                              const std::vector<int64_t>& out_directions) {
  int64_t length = -1;
  for (size_t j = 0; j < inputs.size(); ++j) {
    int64_t d = dim(inputs[j], axes[j]);
    user_assert(length < 0 || d == length)
        << "scan inputs have different lengths (" << length << " and " << d << ")";
    length = d;
  }
  std::vector<std::vector<Tensor>> scans;
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Value> in = states;
    for (size_t j = 0; j < inputs.size(); ++j) {
      int64_t at = directions[j] != 0 ? length - 1 - t : t;
      in.emplace_back(inputs[j].slice(axes[j], at, at + 1).squeeze(axes[j]));
    }
    std::vector<Value> out = n.run_subgraph("body", in);
    user_assert(out.size() >= states.size())
        << "the body gives " << out.size() << " outputs for " << states.size() << " states";
    std::copy(out.begin(), out.begin() + static_cast<long>(states.size()), states.begin());
    scans.resize(out.size() - states.size());
    for (size_t k = 0; k < scans.size(); ++k) {
      const Value& v = out[states.size() + k];
      user_assert(v.tensor) << "scan output " << k << " is an empty tensor";
      scans[k].push_back(*v.tensor);
    }
  }
  std::vector<Value> outs = states;
  for (size_t k = 0; k < scans.size(); ++k)
    outs.push_back(stacked(scans[k], k < out_axes.size() ? out_axes[k] : 0,
                           k < out_directions.size() && out_directions[k] != 0));
  return outs;
}

std::vector<Value> scan(const Node& n) {
  int64_t m = n.attr_int("num_scan_inputs");
  bool batched = n.opset() < 9; // Scan-8: a batch dim first, and sequence_lens as input 0
  size_t first = batched ? 1 : 0;
  user_assert(!batched || !n.has(0)) << "Scan-8's sequence_lens is not supported";
  auto total = static_cast<int64_t>(n.input_count() - first);
  user_assert(m >= 1 && m <= total)
      << "num_scan_inputs " << m << " does not fit the " << total << " inputs";
  std::vector<Value> states;
  std::vector<Tensor> inputs;
  for (int64_t i = 0; i < total; ++i) {
    auto at = first + static_cast<size_t>(i);
    user_assert(n.value(at)) << "input " << at << " is missing";
    if (i < total - m) {
      states.push_back(*n.value(at));
    } else {
      inputs.push_back(n.in(at));
      user_assert(inputs.back().ndim() >= (batched ? 2 : 1))
          << "scan input " << at << " of shape " << shape_str(inputs.back().shape())
          << " has no axis to scan";
    }
  }
  auto per_input = [&](const char* name, size_t count) {
    std::vector<int64_t> v = n.attr_ints(name);
    if (v.empty()) v.assign(count, 0);
    user_assert(v.size() == count) << name << " has " << v.size() << " values for " << count;
    return v;
  };
  std::vector<int64_t> directions =
      per_input(batched ? "directions" : "scan_input_directions", inputs.size());
  std::vector<int64_t> axes(inputs.size(), 0), out_axes, out_directions;
  if (!batched) {
    axes = per_input("scan_input_axes", inputs.size());
    for (size_t j = 0; j < inputs.size(); ++j)
      axes[j] = Node::axis(axes[j], inputs[j].ndim(), "axis");
    out_axes = n.attr_ints("scan_output_axes");
    out_directions = n.attr_ints("scan_output_directions");
    return scan_steps(n, states, inputs, axes, directions, out_axes, out_directions);
  }
  // Scan-8: each batch element scanned alone (sequence axis 1), the results stacked again.
  int64_t batch = dim(inputs[0], 0);
  std::vector<std::vector<Tensor>> per_batch;
  for (int64_t b = 0; b < batch; ++b) {
    auto pick = [&](const Tensor& t) { return t.slice(0, b, b + 1).squeeze(0); };
    std::vector<Value> s;
    for (const Value& v : states) {
      user_assert(v.tensor) << "a scan state is an empty tensor " << shape_str(v.shape);
      s.emplace_back(pick(*v.tensor));
    }
    std::vector<Tensor> in;
    for (const Tensor& t : inputs) in.push_back(pick(t));
    std::vector<Value> out = scan_steps(n, s, in, axes, directions, {}, {});
    per_batch.resize(out.size());
    for (size_t k = 0; k < out.size(); ++k) per_batch[k].push_back(*out[k].tensor);
  }
  std::vector<Value> outs;
  for (auto& parts : per_batch) outs.emplace_back(Tensor::stack(parts, 0));
  return outs;
}

} // namespace

void add_control_flow_ops(ConverterTable& t) {
  t["If"] = if_op;
  t["Loop"] = loop;
  t["Scan"] = scan;
}

} // namespace beamlab::onnx

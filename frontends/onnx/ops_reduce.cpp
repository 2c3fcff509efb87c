// ONNX reductions: Reduce* over axes (an attribute, or an input from opset 13 for ReduceSum),
// with keepdims and noop_with_empty_axes; ArgMax/ArgMin with select_last_index.
#include "frontends/onnx/node.hpp"

namespace beamlab::onnx {
namespace {

using Reduction = Tensor (*)(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim);

// Resolves the node's axes; nullopt means "leave the input as it is" (empty axes with
// noop_with_empty_axes).
std::optional<std::vector<int64_t>> reduce_axes(const Node& n, int64_t rank) {
  std::vector<int64_t> axes = n.ints_from(1, "axes").value_or(std::vector<int64_t>{});
  if (axes.empty()) {
    if (n.attr_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& a : axes) a = Node::axis(a, rank, "axis");
  return axes;
}

Converter reduction(Reduction f) {
  return [f](const Node& n) {
    const Tensor& x = n.in(0);
    std::optional<std::vector<int64_t>> axes = reduce_axes(n, x.ndim());
    if (!axes) return std::vector<Value>{x};
    bool keep = n.attr_int("keepdims", 1) != 0;
    if (x.ndim() == 0) return std::vector<Value>{f(x.reshape({1}), {0}, keep).reshape({})};
    return std::vector<Value>{f(x, *axes, keep).cast(x.dtype())};
  };
}

Tensor log_sum_exp(const Tensor& x, const std::vector<int64_t>& axes, bool keep) {
  Tensor f = x.cast(float_of(x.dtype()));
  Tensor m = f.max(axes, true);
  Tensor m_safe = m.eq(m).logical_and(m.abs() < 1e300).where(m, m.scalar_like(0));
  Tensor r = (f - m_safe).exp().sum(axes, true).log() + m_safe;
  if (keep) return r;
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.rbegin(), sorted.rend());
  for (int64_t a : sorted) r = r.squeeze(a);
  return r;
}

Converter arg_reduction(bool is_max) {
  return [is_max](const Node& n) {
    Tensor x = n.in(0);
    int64_t axis = Node::axis(n.attr_int("axis", 0), x.ndim(), "axis");
    bool keep = n.attr_int("keepdims", 1) != 0, last = n.attr_int("select_last_index", 0) != 0;
    if (last) x = x.flip({axis});
    Tensor i = is_max ? x.argmax(axis, keep) : x.argmin(axis, keep);
    i = i.cast(Scalar::Int64);
    if (last) i = (static_cast<double>(x.shape()[static_cast<size_t>(axis)] - 1) - i);
    return std::vector<Value>{i.cast(Scalar::Int64)};
  };
}

} // namespace

void add_reduce_ops(ConverterTable& t) {
  t["ReduceSum"] =
      reduction([](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.sum(a, k); });
  t["ReduceMean"] = reduction(
      [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.mean(a, k); });
  t["ReduceMax"] =
      reduction([](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.max(a, k); });
  t["ReduceMin"] =
      reduction([](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.min(a, k); });
  t["ReduceProd"] = reduction(
      [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.prod(a, k); });
  t["ReduceL1"] = reduction(
      [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.abs().sum(a, k); });
  t["ReduceL2"] = reduction([](const Tensor& x, const std::vector<int64_t>& a, bool k) {
    Tensor f = x.cast(float_of(x.dtype()));
    return (f * f).sum(a, k).sqrt();
  });
  t["ReduceSumSquare"] = reduction(
      [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return (x * x).sum(a, k); });
  t["ReduceLogSum"] = reduction([](const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return x.cast(float_of(x.dtype())).sum(a, k).log();
  });
  t["ReduceLogSumExp"] = reduction(log_sum_exp);
  t["ArgMax"] = arg_reduction(true);
  t["ArgMin"] = arg_reduction(false);
}

} // namespace beamlab::onnx

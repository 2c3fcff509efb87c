// Shape arithmetic at import: the values exporters compute from Shape (Gather a dim, Unsqueeze
// it, Concat it with constants, multiply two dims, compare with -1) are lists of sizes known
// while the graph is built. They are computed here on the host as Dims, so a symbolic size
// (`seq`) flows from a Shape to the Reshape that reads it without ever being a tensor, and a
// fixed one costs no kernel. See Value::ints.
#include <algorithm>
#include <limits>
#include <set>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {

namespace {

// Input i's elements where they are known (an empty 1-D value has none); nullopt otherwise.
std::optional<std::vector<Dim>> known_ints(const Node& n, size_t i) {
  const Value* v = n.value(i);
  if (!v) return std::nullopt;
  if (v->ints) return v->ints;
  if (!v->tensor && v->shape.size() == 1 && v->shape[0] == 0) return std::vector<Dim>{};
  return std::nullopt;
}

Shape rank1(size_t n) { return Shape{static_cast<int64_t>(n)}; }

// `v` converted to the integer (or bool) type `to`, as a cast of the tensor would: wrapped to
// a narrower type.
int64_t wrapped(int64_t v, DType to) {
  switch (to.scalar()) {
  case Scalar::Bool: return v != 0;
  case Scalar::Int8: return static_cast<int8_t>(v);
  case Scalar::Int16: return static_cast<int16_t>(v);
  case Scalar::Int32: return static_cast<int32_t>(v);
  case Scalar::UInt8: return static_cast<uint8_t>(v);
  case Scalar::UInt16: return static_cast<uint16_t>(v);
  case Scalar::UInt32: return static_cast<uint32_t>(v);
  default: return v; // int64 (and uint64, whose values past int64 no size reaches)
  }
}

// Input i as numbers (a symbolic one where numbers are needed is a clear UserError).
std::vector<int64_t> numbers(const std::vector<Dim>& ds) { return Shape(ds); }

// ONNX's integer ops on two sizes. A symbolic operand must leave a size: a product, an exact
// quotient, or a sum with 0; a comparison must hold at every value of the variables.
Dim apply(const std::string& op, const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) {
    int64_t x = a.value(), y = b.value(), r = 0;
    bool overflow = false;
    if (op == "Add") overflow = __builtin_add_overflow(x, y, &r);
    if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r);
    if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r);
    user_assert(!overflow) << op << " of " << x << " and " << y << " overflows int64";
    if (op == "Add" || op == "Sub" || op == "Mul") return r;
    if (op == "Div") {
      user_assert(y != 0) << "an integer division by zero";
      user_assert(y != -1 || x != std::numeric_limits<int64_t>::min())
          << "Div of " << x << " by -1 overflows int64";
      return x / y; // C's truncation, as ONNX's integer Div
    }
    if (op == "Max") return std::max(x, y);
    if (op == "Min") return std::min(x, y);
    return x == y ? 1 : 0; // Equal
  }
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  if (op == "Equal") {
    if (a == b) return 1;
    user_assert(a.max() < b.min() || b.max() < a.min())
        << "whether " << a << " equals " << b << " depends on the variables' values; "
        << "beamlab computes shapes once for every value";
    return 0;
  }
  bool a_least = a.max() <= b.min(), b_least = b.max() <= a.min();
  user_assert(a == b || a_least || b_least)
      << "the " << (op == "Max" ? "larger" : "smaller") << " of " << a << " and " << b
      << " depends on the variables' values; beamlab computes shapes once for every value";
  if (a == b) return a;
  return (op == "Max") == b_least ? a : b;
}

std::optional<std::vector<Value>> binary(const Node& n, const std::vector<Dim>& a,
                                         const std::vector<Dim>& b) {
  const Value &va = *n.value(0), &vb = *n.value(1);
  size_t size = std::max(a.size(), b.size());
  if ((a.size() != size && a.size() != 1) || (b.size() != size && b.size() != 1))
    return std::nullopt; // not broadcastable: the op's own converter says so
  std::vector<Dim> out;
  for (size_t i = 0; i < size; ++i)
    out.push_back(apply(n.op(), a[a.size() == 1 ? 0 : i], b[b.size() == 1 ? 0 : i]));
  Shape shape = va.shape.size() >= vb.shape.size() ? va.shape : vb.shape;
  if (!shape.empty()) shape = rank1(size);
  DType dtype = n.op() == "Equal" ? DType(Scalar::Bool) : va.dtype;
  return std::vector<Value>{Value::known(out, shape, dtype)};
}

// Slice of a 1-D value (data, starts, ends, axes, steps as ONNX gives them).
std::optional<std::vector<Value>> slice(const Node& n, const std::vector<Dim>& data) {
  bool inputs = n.opset() >= 10;
  std::vector<int64_t> starts = inputs ? n.host_ints(1) : n.attr_ints("starts");
  std::vector<int64_t> ends = inputs ? n.host_ints(2) : n.attr_ints("ends");
  std::vector<int64_t> axes = n.ints_from(3, "axes").value_or(std::vector<int64_t>{0});
  std::vector<int64_t> steps = inputs && n.has(4) ? n.host_ints(4) : std::vector<int64_t>{1};
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1 ||
      (axes[0] != 0 && axes[0] != -1) || steps[0] == 0)
    return std::nullopt;
  Node::SliceRange r =
      Node::slice_range(starts[0], ends[0], steps[0], static_cast<int64_t>(data.size()));
  std::vector<Dim> out;
  for (int64_t k = 0; k < r.count; ++k)
    out.push_back(data[static_cast<size_t>(r.first + k * steps[0])]);
  DType dtype = n.value(0)->dtype;
  if (out.empty()) return std::vector<Value>{Value::empty(rank1(0), dtype)};
  return std::vector<Value>{Value::known(out, rank1(out.size()), dtype)};
}

} // namespace

std::optional<std::vector<Value>> fold_shape_arithmetic(const Node& n) {
  static const std::set<std::string> ops = {
      "Gather", "Slice", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Cast",  "Identity", "Add",
      "Sub",    "Mul",   "Div",    "Max",       "Min",     "Neg",     "Equal", "Where"};
  if (!ops.count(n.op()) || n.input_count() == 0) return std::nullopt;
  std::vector<std::vector<Dim>> in;
  for (size_t i = 0; i < n.input_count(); ++i) {
    if (!n.value(i)) { // an absent optional input
      in.emplace_back();
      continue;
    }
    std::optional<std::vector<Dim>> k = known_ints(n, i);
    if (!k || n.value(i)->shape.size() > 1) return std::nullopt;
    in.push_back(std::move(*k));
  }
  const Value& x = *n.value(0);
  const std::string& op = n.op();
  if (op == "Identity") return std::vector<Value>{x};
  if (op == "Slice") return x.shape.size() == 1 ? slice(n, in[0]) : std::nullopt;
  if (op == "Gather") {
    int64_t axis = n.attr_int("axis", 0);
    if (x.shape.size() != 1 || n.input_count() < 2 || (axis != 0 && axis != -1))
      return std::nullopt;
    std::vector<Dim> out;
    auto size = static_cast<int64_t>(in[0].size());
    for (int64_t i : numbers(in[1])) {
      user_assert(i >= -size && i < size)
          << "index " << i << " is out of range for " << size << " elements";
      out.push_back(in[0][static_cast<size_t>(i < 0 ? i + size : i)]);
    }
    return std::vector<Value>{Value::known(out, n.value(1)->shape, x.dtype)};
  }
  if (op == "Concat") {
    std::vector<Dim> out;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!n.value(i) || n.value(i)->shape.size() != 1) return std::nullopt;
      out.insert(out.end(), in[i].begin(), in[i].end());
    }
    if (out.empty()) return std::nullopt;
    return std::vector<Value>{Value::known(out, rank1(out.size()), x.dtype)};
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape") {
    // Only between a single value and a list of one: the elements stay as they are.
    size_t rank = x.shape.size();
    if (in[0].size() != 1) return std::nullopt;
    if (op == "Reshape") {
      std::vector<int64_t> shape = n.host_ints(1);
      if (shape.size() > 1 || (shape.size() == 1 && shape[0] != 1 && shape[0] != -1))
        return std::nullopt;
      rank = shape.size();
    } else { // the rank changes by the axes given (Squeeze without axes: by the 1s)
      std::optional<std::vector<int64_t>> axes = n.ints_from(1, "axes");
      size_t count = axes && !axes->empty() ? axes->size() : 1;
      if (op == "Unsqueeze" && (!axes || axes->empty())) return std::nullopt;
      if (op == "Squeeze" && count > rank) return std::nullopt;
      rank = op == "Unsqueeze" ? rank + count : rank - count;
      if (rank > 1) return std::nullopt;
    }
    return std::vector<Value>{Value::known(in[0], rank == 1 ? rank1(1) : Shape{}, x.dtype)};
  }
  if (op == "Cast") {
    DType to = dtype_of(static_cast<int>(n.attr_int("to")), "to");
    if (to.is_float()) return std::nullopt; // computed as a tensor (numbers only)
    std::vector<Dim> out = in[0];
    for (Dim& d : out) {
      if (!d.is_const()) {
        if (to.is_bool()) d = 1; // a size is at least 1
        continue;
      }
      d = wrapped(d.value(), to);
    }
    return std::vector<Value>{Value::known(out, x.shape, to)};
  }
  if (op == "Neg") {
    std::vector<Dim> out;
    for (const Dim& d : in[0]) out.push_back(apply("Mul", d, -1));
    return std::vector<Value>{Value::known(out, x.shape, x.dtype)};
  }
  if (op == "Where") {
    if (n.input_count() != 3) return std::nullopt;
    std::vector<int64_t> cond = numbers(in[0]);
    size_t size = std::max({cond.size(), in[1].size(), in[2].size()});
    auto at = [&](const std::vector<Dim>& v, size_t i) { return v[v.size() == 1 ? 0 : i]; };
    for (const auto& v : {in[1], in[2]})
      if (v.size() != size && v.size() != 1) return std::nullopt;
    if (cond.size() != size && cond.size() != 1) return std::nullopt;
    std::vector<Dim> out;
    for (size_t i = 0; i < size; ++i)
      out.push_back(cond[cond.size() == 1 ? 0 : i] ? at(in[1], i) : at(in[2], i));
    bool scalar = x.shape.empty() && n.value(1)->shape.empty() && n.value(2)->shape.empty();
    return std::vector<Value>{Value::known(out, scalar ? Shape{} : rank1(size), n.value(1)->dtype)};
  }
  if (n.input_count() != 2 || x.dtype.is_float() || n.value(1)->dtype.is_float())
    return std::nullopt;
  return binary(n, in[0], in[1]);
}

} // namespace beamlab::onnx

// Tensor-level builders and shape inference; see tensor_ops.hpp.
#include "engine/ir/tensor_ops.hpp"

#include <atomic>
#include <sstream>

#include "engine/support/error.hpp"

namespace beamlab {
namespace {

Arg int_tuple(const std::vector<int64_t>& values) {
  std::vector<Arg> items;
  items.reserve(values.size());
  for (int64_t v : values) items.emplace_back(v);
  return Arg(std::move(items));
}

UOpPtr movement(Op op, const UOpPtr& x, const std::vector<int64_t>& values) {
  return UOp::make(op, x->dtype(), {x}, int_tuple(values));
}

std::vector<int64_t> flatten_pairs(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::vector<int64_t> flat;
  for (auto [a, b] : pairs) {
    flat.push_back(a);
    flat.push_back(b);
  }
  return flat;
}

} // namespace

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",)" : ")");
  return os.str();
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

UOpPtr tensor_buffer(DType dtype, int64_t size) {
  static std::atomic<int64_t> next_id{1};
  return UOp::make(Op::Buffer, dtype, {}, Arg{Arg(next_id++), Arg(size)});
}

int64_t buffer_id(const UOp& buffer) { return buffer.arg().items().at(0).as_int(); }
int64_t buffer_size(const UOp& buffer) { return buffer.arg().items().at(1).as_int(); }

UOpPtr tensor_reshape(const UOpPtr& x, const Shape& shape) {
  return movement(Op::Reshape, x, shape);
}
UOpPtr tensor_expand(const UOpPtr& x, const Shape& shape) { return movement(Op::Expand, x, shape); }
UOpPtr tensor_permute(const UOpPtr& x, const std::vector<int64_t>& perm) {
  return movement(Op::Permute, x, perm);
}
UOpPtr tensor_pad(const UOpPtr& x, const std::vector<std::pair<int64_t, int64_t>>& pads) {
  return movement(Op::Pad, x, flatten_pairs(pads));
}
UOpPtr tensor_shrink(const UOpPtr& x, const std::vector<std::pair<int64_t, int64_t>>& bounds) {
  return movement(Op::Shrink, x, flatten_pairs(bounds));
}
UOpPtr tensor_flip(const UOpPtr& x, const std::vector<bool>& flip) {
  std::vector<int64_t> flags(flip.begin(), flip.end());
  return movement(Op::Flip, x, flags);
}
UOpPtr tensor_reduce(const UOpPtr& x, Op op, const std::vector<int64_t>& axes) {
  return UOp::make(Op::ReduceAxis, x->dtype(), {x}, Arg{Arg(op), int_tuple(axes)});
}
UOpPtr tensor_contiguous(const UOpPtr& x) { return UOp::make(Op::Contiguous, x->dtype(), {x}); }

std::vector<int64_t> int_args(const UOp& u) {
  std::vector<int64_t> out;
  for (const Arg& a : u.arg().items()) out.push_back(a.as_int());
  return out;
}

Op reduce_op(const UOp& u) { return u.arg().items().at(0).as_op(); }

std::vector<int64_t> reduce_axes(const UOp& u) {
  std::vector<int64_t> out;
  for (const Arg& a : u.arg().items().at(1).items()) out.push_back(a.as_int());
  return out;
}

bool is_movement(Op op) {
  return op == Op::Reshape || op == Op::Expand || op == Op::Permute || op == Op::Pad ||
         op == Op::Shrink || op == Op::Flip;
}

const Shape& ShapeCache::of(const UOpPtr& u) {
  if (auto it = memo_.find(u.get()); it != memo_.end()) return it->second;
  // Sources first, iteratively: tensor graphs can be deep (long elementwise chains).
  std::vector<std::pair<UOpPtr, bool>> stack = {{u, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (memo_.count(node.get())) continue;
    if (!expanded) {
      stack.emplace_back(node, true);
      for (const UOpPtr& s : node->src())
        if (!memo_.count(s.get())) stack.emplace_back(s, false);
      continue;
    }
    Shape shape = compute(node);
    keep_.push_back(node);
    memo_.emplace(node.get(), std::move(shape));
  }
  return memo_.at(u.get());
}

Shape ShapeCache::compute(const UOpPtr& u) {
  auto src_shape = [&](size_t i) -> const Shape& { return memo_.at(u->src(i).get()); };
  switch (u->op()) {
  case Op::Buffer: return {buffer_size(*u)};
  case Op::Const:
  case Op::DefineVar: return {};
  case Op::Reshape:
  case Op::Expand: return int_args(*u);
  case Op::Permute: {
    Shape in = src_shape(0), out;
    for (int64_t p : int_args(*u)) out.push_back(in.at(static_cast<size_t>(p)));
    return out;
  }
  case Op::Pad:
  case Op::Shrink: {
    Shape out = src_shape(0);
    std::vector<int64_t> a = int_args(*u);
    internal_assert(a.size() == 2 * out.size()) << "PAD/SHRINK arg does not match the rank";
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = u->op() == Op::Pad ? out[i] + a[2 * i] + a[2 * i + 1] : a[2 * i + 1] - a[2 * i];
    return out;
  }
  case Op::ReduceAxis: {
    Shape out = src_shape(0);
    for (int64_t ax : reduce_axes(*u)) out.at(static_cast<size_t>(ax)) = 1;
    return out;
  }
  default: break;
  }
  if (u->src().empty()) internal_error << "no shape for a " << op_name(u->op()) << " leaf";
  // Elementwise (and FLIP, CONTIGUOUS, CAST): every non-scalar source has one shape.
  const Shape* shape = nullptr;
  for (size_t i = 0; i < u->src().size(); ++i) {
    const Shape& s = src_shape(i);
    if (s.empty() && u->src(i)->op() == Op::Const) continue;
    if (shape && *shape != s)
      internal_error << op_name(u->op()) << " of shapes " << shape_str(*shape) << " and "
                     << shape_str(s);
    shape = &s;
  }
  return shape ? *shape : Shape{};
}

} // namespace beamlab

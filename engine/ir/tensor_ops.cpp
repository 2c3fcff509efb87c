// Tensor-level builders and shape inference; see tensor_ops.hpp.
#include "engine/ir/tensor_ops.hpp"

#include <algorithm>
#include <atomic>
#include <ostream>
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

Arg dim_tuple(const std::vector<Dim>& values) {
  std::vector<Arg> items;
  items.reserve(values.size());
  for (const Dim& v : values) items.push_back(v.to_arg());
  return Arg(std::move(items));
}

const std::string& var_name(const UOp& v) { return v.arg().items().at(0).as_str(); }

// Variables in a dim's canonical order: by name, then range.
bool var_before(const UOpPtr& a, const UOpPtr& b) {
  if (var_name(*a) != var_name(*b)) return var_name(*a) < var_name(*b);
  return std::pair(a->vmin(), a->vmax()) < std::pair(b->vmin(), b->vmax());
}

template <class T>
std::vector<T> flatten_pairs(const std::vector<std::pair<T, T>>& pairs) {
  std::vector<T> flat;
  for (const auto& [a, b] : pairs) {
    flat.push_back(a);
    flat.push_back(b);
  }
  return flat;
}

} // namespace

Dim::Dim(const Variable& v) : coeff_(1) {
  user_assert(1 <= v.lo && v.lo <= v.hi) << "variable " << v.name << ": the range [" << v.lo << ", "
                                         << v.hi << "] is not a size's (1 <= lo <= hi)";
  vars_.push_back(UOp::variable(v.name, v.lo, v.hi));
}

int64_t Dim::value() const {
  user_assert(is_const())
      << "the size " << str() << " depends on variable " << var_name(*vars_.front())
      << ", where this operation takes fixed sizes only; give the size a number";
  return coeff_;
}

// The dim at every variable's lower bound and at every upper bound (variables are >= 1, so
// these are its extremes, in either order by the coefficient's sign).
static std::pair<int64_t, int64_t> at_bounds(int64_t coeff, const std::vector<UOpPtr>& vars) {
  int64_t lo = coeff, hi = coeff;
  for (const UOpPtr& v : vars) lo *= v->vmin(), hi *= v->vmax();
  return {lo, hi};
}

int64_t Dim::min() const {
  auto [lo, hi] = at_bounds(coeff_, vars_);
  return std::min(lo, hi);
}

int64_t Dim::max() const {
  auto [lo, hi] = at_bounds(coeff_, vars_);
  return std::max(lo, hi);
}

int64_t Dim::at(const VarValues& values) const {
  int64_t n = coeff_;
  for (const UOpPtr& v : vars_) {
    auto it = values.find(var_name(*v));
    user_assert(it != values.end())
        << "variable " << var_name(*v) << " has no value; give it one (" << var_name(*v)
        << "=N, N in [" << v->vmin() << ", " << v->vmax() << "])";
    n *= it->second;
  }
  return n;
}

UOpPtr Dim::expr() const {
  if (is_const()) return UOp::const_int(Scalar::Index, coeff_);
  UOpPtr e = vars_.front();
  for (size_t i = 1; i < vars_.size(); ++i) e = e * vars_[i];
  return coeff_ == 1 ? e : e * coeff_;
}

std::string Dim::str() const {
  if (is_const()) return std::to_string(coeff_);
  std::string s = coeff_ == 1 ? "" : std::to_string(coeff_);
  for (const UOpPtr& v : vars_) s += (s.empty() ? "" : "*") + var_name(*v);
  return s;
}

Arg Dim::to_arg() const {
  if (is_const()) return Arg(coeff_);
  std::vector<Arg> items = {Arg(coeff_)};
  for (const UOpPtr& v : vars_) items.emplace_back(v->arg().items());
  return Arg(std::move(items));
}

Dim Dim::from_arg(const Arg& a) {
  if (a.is_int()) return Dim(a.as_int());
  const std::vector<Arg>& items = a.items();
  Dim d(items.at(0).as_int());
  for (size_t i = 1; i < items.size(); ++i) {
    const std::vector<Arg>& v = items[i].items();
    d.vars_.push_back(UOp::variable(v.at(0).as_str(), v.at(1).as_int(), v.at(2).as_int()));
  }
  return d;
}

Dim operator*(const Dim& a, const Dim& b) {
  Dim d(a.coeff_ * b.coeff_);
  if (d.coeff_ == 0) return d;
  d.vars_ = a.vars_;
  d.vars_.insert(d.vars_.end(), b.vars_.begin(), b.vars_.end());
  std::sort(d.vars_.begin(), d.vars_.end(), var_before);
  return d;
}

// The variables of `b` taken out of `a`'s, if `a` has each (as often); else false.
static bool remove_vars(std::vector<UOpPtr>& a, const std::vector<UOpPtr>& b) {
  for (const UOpPtr& v : b) {
    auto it = std::find(a.begin(), a.end(), v);
    if (it == a.end()) return false;
    a.erase(it);
  }
  return true;
}

bool divides(const Dim& a, const Dim& b) {
  std::vector<UOpPtr> rest = b.vars_;
  if (b.coeff_ == 0) return a.coeff_ != 0;
  return a.coeff_ != 0 && b.coeff_ % a.coeff_ == 0 && remove_vars(rest, a.vars_);
}

Dim operator/(const Dim& a, const Dim& b) {
  user_assert(divides(b, a)) << "the size " << a.str() << " is not a multiple of " << b.str();
  Dim d(a.coeff_ / b.coeff_);
  if (a.coeff_ == 0) return d;
  d.vars_ = a.vars_;
  remove_vars(d.vars_, b.vars_);
  return d;
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.coeff_ == 0) return b;
  if (b.coeff_ == 0) return a;
  user_assert(a.vars_ == b.vars_) << "the size " << a.str() << " + " << b.str()
                                  << " mixes a variable and a number, which a shape can't hold";
  Dim d = a;
  d.coeff_ += b.coeff_;
  if (d.coeff_ == 0) d.vars_.clear();
  return d;
}

Dim operator-(const Dim& a, const Dim& b) { return a + b * -1; }

std::ostream& operator<<(std::ostream& os, const Dim& d) { return os << d.str(); }

Shape::operator std::vector<int64_t>() const {
  std::vector<int64_t> out;
  out.reserve(size());
  for (const Dim& d : *this) out.push_back(d.value());
  return out;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",)" : ")");
  return os.str();
}

Dim shape_numel(const Shape& shape) {
  Dim n = 1;
  for (const Dim& d : shape) n = n * d;
  return n;
}

std::vector<Dim> contiguous_strides(const Shape& shape) {
  std::vector<Dim> strides(shape.size(), Dim(1));
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

bool is_symbolic(const Shape& shape) {
  return std::any_of(shape.begin(), shape.end(), [](const Dim& d) { return !d.is_const(); });
}

std::vector<Variable> shape_variables(const Shape& shape) {
  std::vector<Variable> out;
  for (const Dim& d : shape)
    for (const UOpPtr& v : d.vars())
      if (std::none_of(out.begin(), out.end(),
                       [&](const Variable& o) { return o.name == var_name(*v); }))
        out.push_back({var_name(*v), v->vmin(), v->vmax()});
  std::sort(out.begin(), out.end(),
            [](const Variable& a, const Variable& b) { return a.name < b.name; });
  return out;
}

std::vector<int64_t> shape_at(const Shape& shape, const VarValues& values) {
  std::vector<int64_t> out;
  for (const Dim& d : shape) out.push_back(d.at(values));
  return out;
}

UOpPtr tensor_buffer(DType dtype, int64_t size) {
  static std::atomic<int64_t> next_id{1};
  return UOp::make(Op::Buffer, dtype, {}, Arg{Arg(next_id++), Arg(size)});
}

int64_t buffer_id(const UOp& buffer) { return buffer.arg().items().at(0).as_int(); }
int64_t buffer_size(const UOp& buffer) { return buffer.arg().items().at(1).as_int(); }

UOpPtr tensor_reshape(const UOpPtr& x, const Shape& shape) {
  return UOp::make(Op::Reshape, x->dtype(), {x}, dim_tuple(shape));
}
UOpPtr tensor_expand(const UOpPtr& x, const Shape& shape) {
  return UOp::make(Op::Expand, x->dtype(), {x}, dim_tuple(shape));
}
UOpPtr tensor_permute(const UOpPtr& x, const std::vector<int64_t>& perm) {
  return UOp::make(Op::Permute, x->dtype(), {x}, int_tuple(perm));
}
UOpPtr tensor_pad(const UOpPtr& x, const std::vector<std::pair<int64_t, int64_t>>& pads) {
  return UOp::make(Op::Pad, x->dtype(), {x}, int_tuple(flatten_pairs(pads)));
}
UOpPtr tensor_shrink(const UOpPtr& x, const std::vector<std::pair<Dim, Dim>>& bounds) {
  return UOp::make(Op::Shrink, x->dtype(), {x}, dim_tuple(flatten_pairs(bounds)));
}
UOpPtr tensor_flip(const UOpPtr& x, const std::vector<bool>& flip) {
  std::vector<int64_t> flags(flip.begin(), flip.end());
  return UOp::make(Op::Flip, x->dtype(), {x}, int_tuple(flags));
}
UOpPtr tensor_reduce(const UOpPtr& x, Op op, const std::vector<int64_t>& axes) {
  return UOp::make(Op::ReduceAxis, x->dtype(), {x}, Arg{Arg(op), int_tuple(axes)});
}
UOpPtr tensor_contiguous(const UOpPtr& x) { return UOp::make(Op::Contiguous, x->dtype(), {x}); }

std::vector<int64_t> int_args(const UOp& u) {
  std::vector<int64_t> out;
  for (const Arg& a : u.arg().items()) out.push_back(Dim::from_arg(a).value());
  return out;
}

std::vector<Dim> dim_args(const UOp& u) {
  std::vector<Dim> out;
  for (const Arg& a : u.arg().items()) out.push_back(Dim::from_arg(a));
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
  case Op::Expand: return dim_args(*u);
  case Op::Permute: {
    Shape in = src_shape(0), out;
    for (int64_t p : int_args(*u)) out.push_back(in.at(static_cast<size_t>(p)));
    return out;
  }
  case Op::Pad:
  case Op::Shrink: {
    Shape out = src_shape(0);
    std::vector<Dim> a = dim_args(*u);
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

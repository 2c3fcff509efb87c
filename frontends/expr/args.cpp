// Binding a call's arguments to a method's parameters, and reading them with type checks;
// see value_internal.hpp. Values and their descriptions live here too.
#include "frontends/expr/value_internal.hpp"

#include <algorithm>

namespace beamlab::expr {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

} // namespace

Value Value::integer(int64_t v) {
  Value r;
  r.kind = Kind::Int;
  r.i = v;
  return r;
}
Value Value::real(double v) {
  Value r;
  r.kind = Kind::Float;
  r.f = v;
  return r;
}
Value Value::boolean(bool v) {
  Value r;
  r.kind = Kind::Bool;
  r.i = v;
  return r;
}
Value Value::sequence(Kind kind, std::vector<Value> items) {
  Value r;
  r.kind = kind;
  r.items = std::move(items);
  return r;
}

std::string describe(const Value& v) {
  switch (v.kind) {
  case Kind::Tensor: return "a tensor of shape " + shape_str(v.tensor->shape());
  case Kind::Int: return "the integer " + std::to_string(v.i);
  case Kind::Float: return "a float";
  case Kind::Bool: return v.i ? "True" : "False";
  case Kind::None: return "None";
  case Kind::String: return "the string " + quoted(v.s);
  case Kind::DType: return "the dtype " + v.dtype.str();
  case Kind::Tuple: return "a tuple";
  case Kind::List: return "a list";
  case Kind::Ellipsis: return "'...'";
  case Kind::TensorClass: return "Tensor";
  case Kind::DTypes: return "dtypes";
  }
  return "a value";
}

bool fits(const Shape& shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1) continue;
    if (n > limit / d) return false;
    n *= d;
  }
  return n <= limit;
}

// ---------------------------------------------------------------- binding

Args::Args(const Method& method, Pos at, std::optional<Tensor> self, std::vector<Value> positional,
           std::vector<Keyword> keywords, const Limits& limits)
    : name_(method.name), at_(at), self_(std::move(self)), limits_(limits),
      params_(parse_params(method.params)), slots_(params_.size()) {
  size_t k = 0;
  for (Value& v : positional) {
    if (k < params_.size() && params_[k].rest) {
      if (!slots_[k]) {
        slots_[k] = Value::sequence(Kind::Tuple, {});
        slots_[k]->pos = v.pos;
      }
      slots_[k]->items.push_back(std::move(v));
      continue;
    }
    if (k >= params_.size())
      fail(v.pos, name_ + ": too many arguments (it takes " + signature() + ")");
    slots_[k++] = std::move(v);
  }
  for (Keyword& kw : keywords) bind_keyword(kw);
  for (size_t i = 0; i < params_.size(); ++i)
    if (!params_[i].optional && !params_[i].rest && !slots_[i])
      fail(at_, name_ + " is missing the argument " + quoted(params_[i].names[0]) + " (it takes " +
                    signature() + ")");
}

std::vector<Args::Param> Args::parse_params(std::string_view spec) {
  std::vector<Param> params;
  while (!trim(spec).empty()) {
    size_t comma = spec.find(',');
    std::string_view p = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? "" : spec.substr(comma + 1);
    Param param;
    param.rest = p.front() == '*';
    if (param.rest) p.remove_prefix(1);
    param.optional = p.back() == '?';
    if (param.optional) p.remove_suffix(1);
    for (size_t bar; (bar = p.find('|')) != std::string_view::npos; p.remove_prefix(bar + 1))
      param.names.push_back(p.substr(0, bar));
    param.names.push_back(p);
    params.push_back(std::move(param));
  }
  return params;
}

void Args::bind_keyword(Keyword& kw) {
  std::vector<std::string_view> all;
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::vector<std::string_view>& names = params_[i].names;
    all.insert(all.end(), names.begin(), names.end());
    if (std::find(names.begin(), names.end(), kw.name) == names.end()) continue;
    if (slots_[i]) fail(kw.pos, name_ + ": " + quoted(names[0]) + " is given twice");
    slots_[i] = std::move(kw.value);
    return;
  }
  std::string hint = did_you_mean(kw.name, all);
  fail(kw.pos, name_ + " has no parameter " + quoted(kw.name) +
                   (hint.empty() ? " (it takes " + signature() + ")" : hint));
}

std::string Args::signature() const {
  std::string s = name_ + "(";
  for (size_t i = 0; i < params_.size(); ++i) {
    if (i > 0) s += ", ";
    std::string n(params_[i].names[0]);
    s += params_[i].rest ? "*" + n : params_[i].optional ? "[" + n + "]" : n;
  }
  return s + ")";
}

size_t Args::slot(std::string_view param) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].names[0] == param) return i;
  internal_error << "expr: " << name_ << " reads an undeclared parameter '" << param << "'";
  return 0;
}

const Value* Args::get(std::string_view param) const {
  const std::optional<Value>& v = slots_[slot(param)];
  if (!v || v->kind == Kind::None) return nullptr;
  return &*v;
}

void Args::reject(const Value& v, std::string_view param, std::string_view need) const {
  fail(v.pos,
       name_ + ": " + quoted(param) + " needs " + std::string(need) + ", not " + describe(v));
}

void Args::check_size(const Shape& shape) const {
  if (fits(shape, limits_.max_elements)) return;
  fail(at_, name_ + ": the result would have more than " + std::to_string(limits_.max_elements) +
                " elements, the limit for an expression");
}

// ---------------------------------------------------------------- typed getters

Tensor Args::tensor(std::string_view param) const {
  const Value* v = get(param);
  if (!v || v->kind != Kind::Tensor) {
    if (!v) fail(at_, name_ + ": " + quoted(param) + " needs a tensor, not None");
    reject(*v, param, "a tensor");
  }
  return *v->tensor;
}

std::optional<Tensor> Args::optional_tensor(std::string_view param) const {
  if (!given(param)) return std::nullopt;
  return tensor(param);
}

Tensor Args::operand(std::string_view param, const Tensor& like) const {
  const Value* v = get(param);
  if (v && v->is_number()) return like.scalar_like(v->number());
  return tensor(param);
}

std::vector<Tensor> Args::tensors(std::string_view param) const {
  const Value* v = get(param);
  if (!v) return {};
  const std::vector<Value>* items = &v->items;
  if (!v->is_sequence()) reject(*v, param, "tensors");
  if (items->size() == 1 && (*items)[0].is_sequence()) items = &(*items)[0].items;
  std::vector<Tensor> out;
  for (const Value& t : *items) {
    if (t.kind != Kind::Tensor) reject(t, param, "tensors");
    out.push_back(*t.tensor);
  }
  return out;
}

int64_t Args::integer_of(const Value& v, std::string_view param) const {
  if (v.kind != Kind::Int) reject(v, param, "an integer");
  if (v.i < -limits_.max_elements || v.i > limits_.max_elements)
    fail(v.pos, name_ + ": " + quoted(param) + " is " + std::to_string(v.i) +
                    ", out of range (at most " + std::to_string(limits_.max_elements) + ")");
  return v.i;
}

int64_t Args::integer(std::string_view param, int64_t fallback) const {
  const Value* v = get(param);
  return v ? integer_of(*v, param) : fallback;
}

std::optional<int64_t> Args::optional_integer(std::string_view param) const {
  const Value* v = get(param);
  if (!v) return std::nullopt;
  return integer_of(*v, param);
}

std::vector<int64_t> Args::integers(std::string_view param) const {
  const Value* v = get(param);
  if (!v) return {};
  if (!v->is_sequence()) return {integer_of(*v, param)};
  const std::vector<Value>* items = &v->items;
  if (items->size() == 1 && (*items)[0].is_sequence()) items = &(*items)[0].items;
  std::vector<int64_t> out;
  for (const Value& i : *items) out.push_back(integer_of(i, param));
  return out;
}

std::vector<int64_t> Args::axes(std::string_view param) const { return integers(param); }

Shape Args::shape(std::string_view param) const {
  Shape s = integers(param);
  check_size(s);
  return s;
}

int64_t Args::square(std::string_view param, int64_t fallback) const {
  const Value* v = get(param);
  if (!v) return fallback;
  if (!v->is_sequence()) return integer_of(*v, param);
  if (v->items.size() != 2 || v->items[0].kind != Kind::Int || v->items[0].i != v->items[1].i ||
      v->items[1].kind != Kind::Int)
    reject(*v, param, "an integer or a pair of equal integers (windows are square)");
  return integer_of(v->items[0], param);
}

double Args::number(std::string_view param, double fallback) const {
  std::optional<double> v = optional_number(param);
  return v ? *v : fallback;
}

std::optional<double> Args::optional_number(std::string_view param) const {
  const Value* v = get(param);
  if (!v) return std::nullopt;
  if (!v->is_number()) reject(*v, param, "a number");
  return v->number();
}

bool Args::flag(std::string_view param, bool fallback) const {
  const Value* v = get(param);
  if (!v) return fallback;
  if (v->kind == Kind::Bool || (v->kind == Kind::Int && (v->i == 0 || v->i == 1))) return v->i;
  reject(*v, param, "True or False");
}

DType Args::dtype(std::string_view param, DType fallback) const {
  const Value* v = get(param);
  if (!v) return fallback;
  if (v->kind == Kind::DType) return v->dtype;
  if (v->kind != Kind::String) reject(*v, param, "a dtype (dtypes.float16 or 'float16')");
  if (std::optional<DType> d = dtype_named(v->s)) return *d;
  fail(v->pos, name_ + ": unknown dtype " + quoted(v->s) + did_you_mean(v->s, dtype_names()));
}

std::string Args::string(std::string_view param) const {
  const Value* v = get(param);
  if (!v || v->kind != Kind::String) {
    if (!v) fail(at_, name_ + ": " + quoted(param) + " needs a string, not None");
    reject(*v, param, "a string");
  }
  return v->s;
}

} // namespace beamlab::expr

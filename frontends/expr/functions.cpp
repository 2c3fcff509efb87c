// The functions of `Tensor` (Tensor.cat, Tensor.arange, Tensor.zeros, ...), the constructor
// Tensor(data) and the dtype names: the expression front-end's table of what is not a method.
// Functions that fill host memory check their size against Limits::max_elements first.
#include "frontends/expr/value_internal.hpp"

#include <cmath>
#include <sstream>

namespace beamlab::expr {
namespace {

struct NamedDType {
  std::string_view name;
  Scalar scalar;
};

// tinygrad's dtype names, with its C-style aliases.
constexpr NamedDType kDTypes[] = {
    {"float32", Scalar::Float32},   {"float", Scalar::Float32},   {"float64", Scalar::Float64},
    {"double", Scalar::Float64},    {"float16", Scalar::Float16}, {"half", Scalar::Float16},
    {"bfloat16", Scalar::BFloat16}, {"int8", Scalar::Int8},       {"char", Scalar::Int8},
    {"int16", Scalar::Int16},       {"short", Scalar::Int16},     {"int32", Scalar::Int32},
    {"int", Scalar::Int32},         {"int64", Scalar::Int64},     {"long", Scalar::Int64},
    {"uint8", Scalar::UInt8},       {"uchar", Scalar::UInt8},     {"uint16", Scalar::UInt16},
    {"ushort", Scalar::UInt16},     {"uint32", Scalar::UInt32},   {"uint", Scalar::UInt32},
    {"uint64", Scalar::UInt64},     {"ulong", Scalar::UInt64},    {"bool", Scalar::Bool},
};

Value cat(const Args& a) { return Tensor::cat(a.tensors("tensors"), a.integer("dim", 0)); }
Value stack(const Args& a) { return Tensor::stack(a.tensors("tensors"), a.integer("dim", 0)); }

Value einsum(const Args& a) { return Tensor::einsum(a.string("formula"), a.tensors("operands")); }

Value arange(const Args& a) {
  double start = a.number("start", 0), stop = a.number("stop", 0), step = a.number("step", 1);
  if (!a.given("stop")) stop = start, start = 0;
  bool any_float = false;
  for (std::string_view p : {"start", "stop", "step"})
    any_float = any_float || (a.given(p) && a.get(p)->kind == Kind::Float);
  DType dtype = a.dtype("dtype", any_float ? Scalar::Float32 : Scalar::Int32);
  double n = std::ceil((stop - start) / step);
  if (step != 0 && !(n <= static_cast<double>(a.limits().max_elements))) {
    std::ostringstream what;
    what << "arange: [" << start << ", " << stop << ") with step " << step << " has more than "
         << a.limits().max_elements << " elements, the limit for an expression";
    fail(a.at(), what.str());
  }
  return Tensor::arange(start, stop, step, dtype);
}

Value eye(const Args& a) {
  int64_t n = a.integer("n");
  a.check_size({n, n});
  return Tensor::eye(n, a.dtype("dtype", Scalar::Float32));
}

Value linspace(const Args& a) {
  int64_t steps = a.integer("steps");
  a.check_size({steps});
  return Tensor::linspace(a.number("start", 0), a.number("stop", 0), steps,
                          a.dtype("dtype", Scalar::Float32));
}

uint64_t seed(const Args& a) {
  int64_t s = a.integer("seed", 0);
  if (s < 0) a.reject(*a.get("seed"), "seed", "an integer of at least 0");
  return static_cast<uint64_t>(s);
}

constexpr Method kFunctions[] = {
    {"cat", "*tensors, dim|axis?", cat},
    {"stack", "*tensors, dim|axis?", stack},
    {"einsum", "formula, *operands", einsum},
    {"zeros", "*shape, dtype?",
     [](const Args& a) -> Value {
       return Tensor::zeros(a.shape("shape"), a.dtype("dtype", Scalar::Float32));
     }},
    {"ones", "*shape, dtype?",
     [](const Args& a) -> Value {
       return Tensor::ones(a.shape("shape"), a.dtype("dtype", Scalar::Float32));
     }},
    {"full", "shape, fill_value, dtype?",
     [](const Args& a) -> Value {
       return Tensor::full(a.shape("shape"), a.number("fill_value", 0),
                           a.dtype("dtype", Scalar::Float32));
     }},
    {"arange", "start, stop?, step?, dtype?", arange},
    {"eye", "n|dim, dtype?", eye},
    {"linspace", "start, stop, steps, dtype?", linspace},
    {"rand", "*shape, seed?, dtype?",
     [](const Args& a) -> Value {
       return Tensor::rand(a.shape("shape"), seed(a), a.dtype("dtype", Scalar::Float32));
     }},
    {"randn", "*shape, seed?, dtype?",
     [](const Args& a) -> Value {
       return Tensor::randn(a.shape("shape"), seed(a), a.dtype("dtype", Scalar::Float32));
     }},
};

// Flattens nested lists of numbers into `flat`, finding the shape on the way; ragged lists,
// empty lists and anything but numbers are rejected.
void gather_data(const Args& a, const Value& v, size_t depth, Shape& shape,
                 std::vector<double>& flat, Kind& widest) {
  if (v.is_number()) {
    if (depth != shape.size())
      a.reject(v, "data", "nested lists of one shape (this one is ragged)");
    flat.push_back(v.number());
    if (v.kind == Kind::Float || (v.kind == Kind::Int && widest == Kind::Bool)) widest = v.kind;
    return;
  }
  if (!v.is_sequence()) a.reject(v, "data", "numbers or nested lists of numbers");
  if (v.items.empty()) a.reject(v, "data", "a non-empty list (empty tensors are not supported)");
  if (depth == shape.size() && flat.empty()) shape.push_back(static_cast<int64_t>(v.items.size()));
  if (depth >= shape.size() || shape[depth] != static_cast<int64_t>(v.items.size()))
    a.reject(v, "data", "nested lists of one shape (this one is ragged)");
  for (const Value& item : v.items) gather_data(a, item, depth + 1, shape, flat, widest);
}

DType default_dtype(Kind widest) {
  if (widest == Kind::Float) return Scalar::Float32;
  return widest == Kind::Bool ? Scalar::Bool : Scalar::Int32;
}

Value construct(const Args& a) {
  const Value* v = a.get("data");
  if (!v) fail(a.at(), "Tensor: 'data' needs a number or a list of numbers, not None");
  Shape shape;
  std::vector<double> flat;
  Kind widest = Kind::Bool;
  gather_data(a, *v, 0, shape, flat, widest);
  DType dtype = a.dtype("dtype", default_dtype(widest));
  if (shape.empty()) return Tensor(flat[0], dtype);
  return Tensor(std::span<const double>(flat), shape, dtype);
}

} // namespace

const Method* find_function(std::string_view name) { return find_named(kFunctions, name); }

std::vector<std::string_view> function_names() { return names_of(kFunctions); }

const Method& constructor() {
  static constexpr Method kConstructor{"Tensor", "data, dtype?", construct};
  return kConstructor;
}

std::optional<DType> dtype_named(std::string_view name) {
  for (const NamedDType& d : kDTypes)
    if (d.name == name) return DType(d.scalar);
  return std::nullopt;
}

std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> out;
  for (const NamedDType& d : kDTypes) out.push_back(d.name);
  return out;
}

} // namespace beamlab::expr

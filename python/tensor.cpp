// beamlab.Tensor in Python: the C++ Tensor's API under tinygrad's names, numpy in and out.
//
// Memory: Tensor(array) shares the array's memory when it can (C-contiguous, 64-byte aligned,
// a whole number of 64-byte lines; an array .numpy() returned is always shared back), else
// copies it once. .numpy() is a read-only view of the realized tensor's own buffer: no copy.
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"

namespace py = pybind11;

namespace beamlab::python {
namespace {

// ---------------------------------------------------------------- dtypes

// The numpy dtype of a beamlab dtype; none for bfloat16 (numpy has no such type).
std::optional<py::dtype> numpy_dtype(DType d) {
  switch (d.scalar()) {
  case Scalar::Float32: return py::dtype::of<float>();
  case Scalar::Float64: return py::dtype::of<double>();
  case Scalar::Float16: return py::dtype("float16");
  case Scalar::Int8: return py::dtype::of<int8_t>();
  case Scalar::Int16: return py::dtype::of<int16_t>();
  case Scalar::Int32: return py::dtype::of<int32_t>();
  case Scalar::Int64: return py::dtype::of<int64_t>();
  case Scalar::UInt8: return py::dtype::of<uint8_t>();
  case Scalar::UInt32: return py::dtype::of<uint32_t>();
  case Scalar::Bool: return py::dtype::of<bool>();
  default: return std::nullopt;
  }
}

// The beamlab dtype of a numpy dtype; a UserError for one beamlab has no type for.
DType beamlab_dtype(const py::dtype& d) {
  for (Scalar s : {Scalar::Float32, Scalar::Float64, Scalar::Float16, Scalar::Int8, Scalar::Int16,
                   Scalar::Int32, Scalar::Int64, Scalar::UInt8, Scalar::UInt32, Scalar::Bool})
    if (numpy_dtype(s)->equal(d)) return s;
  throw UserError("Tensor: numpy dtype " + py::str(d).cast<std::string>() +
                  " has no beamlab dtype; convert it with .astype() to one of float16, float32, "
                  "float64, int8, int16, int32, int64, uint8, uint32, bool");
}

// A dtype argument: a DType, its name ("float32"), or a numpy dtype or type (np.float32).
DType dtype_arg(const py::object& o) {
  if (py::isinstance<DType>(o)) return o.cast<DType>();
  if (py::isinstance<py::str>(o)) {
    auto name = o.cast<std::string>();
    std::optional<DType> d = parse_dtype(name == "bool" ? "bool" : name);
    user_assert(d && d->lanes() == 1 && !d->is_ptr())
        << "unknown dtype '" << name << "' (use beamlab.dtypes.float32, or a name like 'int32')";
    return *d;
  }
  return beamlab_dtype(py::dtype::from_args(o));
}

// An optional dtype argument, `fallback` when None.
DType dtype_or(const py::object& o, DType fallback) {
  return o.is_none() ? fallback : dtype_arg(o);
}

// ---------------------------------------------------------------- numpy in and out

constexpr const char* kCapsule = "beamlab.Buffer";

// The buffer behind an array .numpy() returned (the capsule that owns its memory), if `a`
// starts at that buffer's first byte.
std::shared_ptr<const Buffer> own_buffer(const py::array& a) {
  py::object base = a.base();
  while (base && py::isinstance<py::array>(base)) base = base.attr("base");
  if (!base || !PyCapsule_IsValid(base.ptr(), kCapsule)) return nullptr;
  auto* held =
      static_cast<std::shared_ptr<const Buffer>*>(PyCapsule_GetPointer(base.ptr(), kCapsule));
  return (*held)->data() == a.data() ? *held : nullptr;
}

Tensor from_numpy(py::array a, const py::object& dtype) {
  DType dt = beamlab_dtype(a.dtype());
  Shape shape(a.shape(), a.shape() + a.ndim());
  bool contiguous = (a.flags() & py::array::c_style) != 0;
  auto bytes = static_cast<size_t>(a.nbytes());
  Tensor t = [&] {
    if (contiguous) {
      if (std::shared_ptr<const Buffer> own = own_buffer(a))
        return Tensor::from_storage(std::const_pointer_cast<Buffer>(own), shape, dt);
      auto at = reinterpret_cast<uintptr_t>(a.data());
      if (bytes > 0 && at % Buffer::kAlignment == 0 && bytes % Buffer::kAlignment == 0 &&
          !dt.is_bool()) {
        // The array stays alive as long as the buffer: released under the GIL, from whichever
        // thread drops the buffer last.
        auto* ref = new py::object(a);
        std::shared_ptr<const void> owner(ref, [](const void* p) {
          if (!Py_IsInitialized()) return;
          py::gil_scoped_acquire gil;
          delete static_cast<const py::object*>(p);
        });
        auto buffer = std::make_shared<Buffer>(
            Buffer::borrowed(const_cast<void*>(a.data()), bytes, std::move(owner)));
        return Tensor::from_storage(std::move(buffer), shape, dt);
      }
    }
    auto c = py::array::ensure(a, py::array::c_style);
    return Tensor::from_bytes({static_cast<const std::byte*>(c.data()), bytes}, shape, dt);
  }();
  if (!dtype.is_none()) {
    DType want = dtype_arg(dtype);
    if (want != dt) t = t.cast(want);
  }
  return t;
}

// A numpy array of `shape` over `buffer`'s first bytes (row-major), which keeps the buffer alive;
// read-only unless `writable`.
py::array array_over(std::shared_ptr<const Buffer> buffer, const std::vector<int64_t>& dims,
                     const py::dtype& np, bool writable) {
  std::vector<py::ssize_t> shape(dims.begin(), dims.end()), strides(shape.size());
  py::ssize_t stride = np.itemsize();
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  const void* data = buffer->data();
  auto* held = new std::shared_ptr<const Buffer>(std::move(buffer));
  py::capsule owner(held, kCapsule, [](PyObject* c) {
    delete static_cast<std::shared_ptr<const Buffer>*>(PyCapsule_GetPointer(c, kCapsule));
  });
  py::array out(np, shape, strides, data, owner);
  if (!writable)
    py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

py::array to_numpy(Tensor& t) {
  std::optional<py::dtype> np = numpy_dtype(t.dtype());
  if (!np) { // bfloat16: as float32, a new array
    Tensor f = t.cast(Scalar::Float32);
    return to_numpy(f);
  }
  std::shared_ptr<const Buffer> buffer;
  {
    RealizeOptions options = realize_options();
    py::gil_scoped_release release;
    buffer = t.storage(options);
  }
  return array_over(std::move(buffer), t.shape(), *np, false);
}

// A TensorPlan served to Python: runs from several threads take turns (each run rewrites the
// plan's buffers, and its outputs are copied out before the next begins).
struct ServedPlan {
  ServedPlan(std::vector<Tensor> tensors, const RealizeOptions& options)
      : plan(std::move(tensors), options) {}
  TensorPlan plan;
  std::mutex turn;
};

// A plan's output `i` at its last run's sizes, copied into a new array (the next run rewrites
// the buffer).
py::array plan_output(const TensorPlan& plan, size_t i) {
  std::optional<py::dtype> np = numpy_dtype(plan.dtype(i));
  user_assert(np) << "plan output " << i << " is bfloat16, which numpy has no type for: "
                  << "cast it to float32 before planning it";
  const std::vector<int64_t>& dims = plan.shape(i);
  py::array out(*np, std::vector<py::ssize_t>(dims.begin(), dims.end()));
  std::memcpy(out.mutable_data(), plan.output(i)->data(), static_cast<size_t>(out.nbytes()));
  return out;
}

// ---------------------------------------------------------------- arguments

// A tensor from anything Tensor() takes: a Tensor, a numpy array, a nested list, a number.
Tensor as_tensor(const py::object& o, const py::object& dtype = py::none()) {
  if (py::isinstance<Tensor>(o)) {
    Tensor t = o.cast<Tensor>();
    return dtype.is_none() ? t : t.cast(dtype_arg(dtype));
  }
  if (py::isinstance<py::bool_>(o) || py::isinstance<py::int_>(o) ||
      py::isinstance<py::float_>(o)) {
    DType d = !dtype.is_none()               ? dtype_arg(dtype)
              : py::isinstance<py::bool_>(o) ? DType(Scalar::Bool)
              : py::isinstance<py::int_>(o)  ? DType(Scalar::Int32)
                                             : DType(Scalar::Float32);
    return Tensor(o.cast<double>(), d);
  }
  py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(o);
  // Python's floats and ints are 64-bit; tinygrad's defaults (float32, int32) unless asked.
  if (dtype.is_none() && !py::isinstance<py::array>(o)) {
    char kind = a.dtype().kind();
    if (kind == 'f') a = a.attr("astype")("float32");
    if (kind == 'i') a = a.attr("astype")("int32");
  }
  return from_numpy(a, dtype);
}

// Axes: None (all), an int, or a sequence of ints.
std::vector<int64_t> axes_arg(const py::object& axis) {
  if (axis.is_none()) return {};
  if (py::isinstance<py::int_>(axis)) return {axis.cast<int64_t>()};
  return axis.cast<std::vector<int64_t>>();
}

// A dim given as an int or a beamlab.Variable's Dim.
Dim dim_arg(const py::handle& d) {
  return py::isinstance<Dim>(d) ? d.cast<Dim>() : Dim(d.cast<int64_t>());
}

// A shape given as f(2, 3) or f((2, 3)); a dim may be a beamlab.Variable's (seq, seq * 12).
Shape dims_arg(const py::args& args) {
  py::sequence dims = args;
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0]) && !py::isinstance<Dim>(args[0]))
    dims = args[0].cast<py::sequence>();
  Shape out;
  for (const py::handle& d : dims) out.push_back(dim_arg(d));
  return out;
}

// A dim as Python sees it: an int, or the Dim.
py::object dim_object(const Dim& d) {
  return d.is_const() ? py::object(py::int_(d.value())) : py::cast(d);
}

// Keyword values of variables: realize(seq=77).
VarValues var_values(const py::kwargs& values) {
  VarValues out;
  for (const auto& [name, value] : values) out[name.cast<std::string>()] = value.cast<int64_t>();
  return out;
}

using Binary = Tensor (*)(const Tensor&, const Tensor&);

// The other operand of `a op b`: a Python number takes a's dtype, as in tinygrad, unless
// that loses it (a float with an integer or bool tensor, an int with a bool one).
Tensor operand(const Tensor& a, const py::object& b) {
  if (py::isinstance<Tensor>(b)) return b.cast<Tensor>();
  bool number = py::isinstance<py::int_>(b) || py::isinstance<py::float_>(b);
  if (!number || py::isinstance<py::bool_>(b)) return as_tensor(b);
  bool is_float = py::isinstance<py::float_>(b);
  if (a.dtype().is_float() || (!is_float && a.dtype().is_int()))
    return Tensor(b.cast<double>(), a.dtype());
  return as_tensor(b);
}

// `a op b` where b may be a tensor, a number or an array; reversed for the __r*__ forms.
py::object binary(const Tensor& a, const py::object& b, Binary op, bool reversed = false) {
  Tensor other = operand(a, b);
  return py::cast(reversed ? op(other, a) : op(a, other));
}

constexpr Binary kPow = +[](const Tensor& x, const Tensor& y) { return x.pow(y); };

// Python's binary operators; the __r*__ forms swap the operands.
struct Operator {
  const char* name;
  Binary op;
  bool reversed = false;
};
const Operator kOperators[] = {
    {"__add__", +[](const Tensor& x, const Tensor& y) { return x + y; }},
    {"__radd__", +[](const Tensor& x, const Tensor& y) { return x + y; }, true},
    {"__sub__", +[](const Tensor& x, const Tensor& y) { return x - y; }},
    {"__rsub__", +[](const Tensor& x, const Tensor& y) { return x - y; }, true},
    {"__mul__", +[](const Tensor& x, const Tensor& y) { return x * y; }},
    {"__rmul__", +[](const Tensor& x, const Tensor& y) { return x * y; }, true},
    {"__truediv__", +[](const Tensor& x, const Tensor& y) { return x.div(y); }},
    {"__rtruediv__", +[](const Tensor& x, const Tensor& y) { return x.div(y); }, true},
    {"__floordiv__", +[](const Tensor& x, const Tensor& y) { return x.floordiv(y); }},
    {"__mod__", +[](const Tensor& x, const Tensor& y) { return x.mod(y); }},
    {"__pow__", kPow},
    {"__rpow__", kPow, true},
    {"__and__", +[](const Tensor& x, const Tensor& y) { return x & y; }},
    {"__or__", +[](const Tensor& x, const Tensor& y) { return x | y; }},
    {"__xor__", +[](const Tensor& x, const Tensor& y) { return x ^ y; }},
    {"__lt__", +[](const Tensor& x, const Tensor& y) { return x.lt(y); }},
    {"__le__", +[](const Tensor& x, const Tensor& y) { return x.le(y); }},
    {"__gt__", +[](const Tensor& x, const Tensor& y) { return x.gt(y); }},
    {"__ge__", +[](const Tensor& x, const Tensor& y) { return x.ge(y); }},
    {"__eq__", +[](const Tensor& x, const Tensor& y) { return x.eq(y); }},
    {"__ne__", +[](const Tensor& x, const Tensor& y) { return x.ne(y); }},
};

// The reductions over `axis` (None: all, an int, or a sequence), with keepdim.
using Reduction = Tensor (Tensor::*)(std::vector<int64_t>, bool) const;
const std::pair<const char*, Reduction> kReductions[] = {
    {"sum", &Tensor::sum},   {"prod", &Tensor::prod}, {"max", &Tensor::max}, {"min", &Tensor::min},
    {"mean", &Tensor::mean}, {"any", &Tensor::any},   {"all", &Tensor::all}};

std::string repr(const Tensor& t) {
  std::string shape;
  for (int64_t d : t.shape()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  if (t.shape().size() == 1) shape += ",";
  return "<Tensor shape=(" + shape + ") dtype=" + t.dtype().str() + ">";
}

} // namespace

void bind_dim(py::module_& m) {
  // Arithmetic that leaves a number gives a Python int; `//` is exact (a UserError otherwise).
  py::class_<Dim>(m, "Dim", "A symbolic size: a number times variables (seq, 12*seq)")
      .def("__mul__", [](const Dim& a, const Dim& b) { return dim_object(a * b); })
      .def("__mul__", [](const Dim& a, int64_t b) { return dim_object(a * b); })
      .def("__rmul__", [](const Dim& a, int64_t b) { return dim_object(a * b); })
      .def("__floordiv__", [](const Dim& a, int64_t b) { return dim_object(a / b); })
      .def("__floordiv__", [](const Dim& a, const Dim& b) { return dim_object(a / b); })
      .def("__eq__", [](const Dim& a, const Dim& b) { return a == b; })
      .def("__eq__", [](const Dim& a, int64_t b) { return a == b; })
      .def("__hash__", [](const Dim& a) { return std::hash<std::string>()(a.str()); })
      .def_property_readonly("min", &Dim::min)
      .def_property_readonly("max", &Dim::max)
      .def("__int__", &Dim::value)
      .def("__str__", &Dim::str)
      .def("__repr__", &Dim::str);
  m.def(
      "Variable",
      [](const std::string& name, int64_t lo, int64_t hi) {
        return Dim(Variable{name, lo, hi});
      },
      py::arg("name"), py::arg("lo"), py::arg("hi"),
      "A size known only when the program runs, in [lo, hi]: usable in shapes "
      "(x.shrink(((0, seq), (0, 768)))), given at realize(seq=77)");
}

void bind_tensor(py::module_& m) {
  bind_dim(m);
  py::class_<DType>(m, "DType", "An element type: beamlab.dtypes.float32, ...")
      .def_property_readonly("name", &DType::str)
      .def_property_readonly("itemsize", &DType::itemsize)
      .def_property_readonly("is_float", &DType::is_float)
      .def_property_readonly("is_int", &DType::is_int)
      .def("__repr__", [](DType d) { return "dtypes." + d.str(); })
      .def("__str__", &DType::str)
      .def("__eq__",
           [](DType a, const py::object& b) {
             return py::isinstance<DType>(b)
                        ? a == b.cast<DType>()
                        : py::isinstance<py::str>(b) && a.str() == b.cast<std::string>();
           })
      .def("__hash__", [](DType d) { return std::hash<std::string>()(d.str()); });
  py::module_ dt = m.def_submodule("dtypes", "The element types");
  for (Scalar s :
       {Scalar::Float32, Scalar::Float64, Scalar::Float16, Scalar::BFloat16, Scalar::Int8,
        Scalar::Int16, Scalar::Int32, Scalar::Int64, Scalar::UInt8, Scalar::UInt32, Scalar::Bool})
    dt.attr(DType(s).str().c_str()) = DType(s);
  dt.attr("default_float") = DType(Scalar::Float32);
  dt.attr("default_int") = DType(Scalar::Int32);

  using T = Tensor;
  py::class_<T> t(m, "Tensor", R"(A lazy tensor: operations build a graph; realize() (or reading
its values with numpy(), tolist(), item()) compiles fused kernels and runs them.)");
  t.def(py::init(
            [](const py::object& data, const py::object& dtype) { return as_tensor(data, dtype); }),
        py::arg("data"), py::arg("dtype") = py::none(),
        "From a numpy array (its memory shared when it can be, else copied), a nested list or a "
        "number")
      .def_static(
          "zeros",
          [](const py::args& s, const py::object& dtype) {
            return T::zeros(dims_arg(s), dtype_or(dtype, Scalar::Float32));
          },
          py::kw_only(), py::arg("dtype") = py::none())
      .def_static(
          "ones",
          [](const py::args& s, const py::object& dtype) {
            return T::ones(dims_arg(s), dtype_or(dtype, Scalar::Float32));
          },
          py::kw_only(), py::arg("dtype") = py::none())
      .def_static(
          "full",
          [](const std::vector<int64_t>& shape, double v, const py::object& dtype) {
            return T::full(shape, v, dtype_or(dtype, Scalar::Float32));
          },
          py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none())
      .def_static(
          "rand",
          [](const py::args& s, uint64_t seed, const py::object& dtype) {
            return T::rand(dims_arg(s), seed, dtype_or(dtype, Scalar::Float32));
          },
          py::kw_only(), py::arg("seed") = 0, py::arg("dtype") = py::none(),
          "Uniform in [0, 1), from `seed` (the same seed gives the same values everywhere)")
      .def_static(
          "randn",
          [](const py::args& s, uint64_t seed, const py::object& dtype) {
            return T::randn(dims_arg(s), seed, dtype_or(dtype, Scalar::Float32));
          },
          py::kw_only(), py::arg("seed") = 0, py::arg("dtype") = py::none())
      .def_static(
          "arange",
          [](const py::object& start, const py::object& stop, double step,
             const py::object& dtype) {
            if (py::isinstance<Dim>(start) || py::isinstance<Dim>(stop)) { // arange(seq)
              bool from_zero = py::isinstance<Dim>(stop) && !py::isinstance<Dim>(start) &&
                               start.cast<double>() == 0;
              Dim n = (from_zero ? stop : start).cast<Dim>();
              user_assert((stop.is_none() || from_zero) && step == 1)
                  << "arange over " << n.str() << ": a symbolic arange counts from 0 by 1; write "
                  << "arange(" << n.str() << ") * step + start";
              return T::arange(n).cast(dtype_or(dtype, Scalar::Int32));
            }
            if (stop.is_none())
              return T::arange(0, start.cast<double>(), step, dtype_or(dtype, Scalar::Int32));
            return T::arange(start.cast<double>(), stop.cast<double>(), step,
                             dtype_or(dtype, Scalar::Int32));
          },
          py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1,
          py::arg("dtype") = py::none())
      .def_static(
          "eye",
          [](int64_t n, const py::object& dtype) {
            return T::eye(n, dtype_or(dtype, Scalar::Float32));
          },
          py::arg("n"), py::arg("dtype") = py::none())
      .def_static(
          "linspace",
          [](double a, double b, int64_t steps, const py::object& dtype) {
            return T::linspace(a, b, steps, dtype_or(dtype, Scalar::Float32));
          },
          py::arg("start"), py::arg("stop"), py::arg("steps"), py::arg("dtype") = py::none())
      .def_static(
          "cat", [](const std::vector<T>& ts, int64_t axis) { return T::cat(ts, axis); },
          py::arg("tensors"), py::arg("dim") = 0)
      .def_static(
          "stack", [](const std::vector<T>& ts, int64_t axis) { return T::stack(ts, axis); },
          py::arg("tensors"), py::arg("dim") = 0)
      .def_static("einsum",
                  [](const std::string& f, const py::args& ops) {
                    return T::einsum(f, ops.cast<std::vector<T>>());
                  })
      // ---- what it is
      .def_property_readonly("shape",
                             [](const T& x) {
                               py::list dims;
                               for (const Dim& d : x.shape()) dims.append(dim_object(d));
                               return py::tuple(dims);
                             })
      .def_property_readonly("dtype", &T::dtype)
      .def_property_readonly("ndim", &T::ndim)
      .def("numel", &T::numel)
      .def("__len__",
           [](const T& x) {
             user_assert(x.ndim() > 0) << "len() of a 0-d tensor";
             return x.shape()[0].value();
           })
      .def("__repr__", &repr)
      // ---- running
      .def(
          "realize",
          [](T& x, std::optional<int> beam, std::optional<std::string> db, int threads,
             const py::kwargs& values) -> T& {
            RealizeOptions o = realize_options(beam, db, threads);
            o.vars = var_values(values);
            py::gil_scoped_release release;
            return x.realize(o);
          },
          py::arg("beam") = py::none(), py::arg("db") = py::none(), py::arg("threads") = 0,
          py::return_value_policy::reference_internal,
          "Computes the tensor now (BEAM search of width `beam` first, else BEAM from the "
          "environment, else the tuning cache's plans and the heuristic's); returns it. A "
          "symbolic tensor is computed at the values given as keywords (seq=77)")
      .def("numpy", &to_numpy,
           "The values: a read-only numpy view of the tensor's memory (no copy)")
      .def("tolist", [](T& x) { return to_numpy(x).attr("tolist")(); })
      .def("item",
           [](T& x) {
             user_assert(x.numel() == 1) << "item() of a tensor of " << x.numel() << " elements";
             return to_numpy(x).attr("item")();
           })
      .def(
          "__array__",
          [](T& x, const py::object& dtype) {
            py::array a = to_numpy(x);
            return dtype.is_none() ? py::object(a) : a.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none())
      .def(
          "schedule_names",
          [](const T& x) {
            std::vector<std::string> names;
            for (const ScheduleItem& k : x.schedule().items) names.push_back(kernel_name(k.ast));
            return names;
          },
          "The names of the kernels realize() would run, in order")
      // ---- elementwise
      .def("neg", &T::neg)
      .def("abs", &T::abs)
      .def("sqrt", &T::sqrt)
      .def("rsqrt", &T::rsqrt)
      .def("reciprocal", &T::reciprocal)
      .def("exp", &T::exp)
      .def("log", &T::log)
      .def("exp2", &T::exp2)
      .def("log2", &T::log2)
      .def("sin", &T::sin)
      .def("cos", &T::cos)
      .def("tan", &T::tan)
      .def("tanh", &T::tanh)
      .def("sigmoid", &T::sigmoid)
      .def("erf", &T::erf)
      .def("floor", &T::floor)
      .def("ceil", &T::ceil)
      .def("round", &T::round)
      .def("trunc", &T::trunc)
      .def("square", &T::square)
      .def("sign", &T::sign)
      .def("relu", &T::relu)
      .def("relu6", &T::relu6)
      .def("gelu", &T::gelu)
      .def("silu", &T::silu)
      .def("hardswish", &T::hardswish)
      .def("mish", &T::mish)
      .def("softplus", &T::softplus, py::arg("beta") = 1.0)
      .def("leaky_relu", &T::leaky_relu, py::arg("neg_slope") = 0.01)
      .def("logical_not", &T::logical_not)
      .def("clip", &T::clamp, py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def("clamp", &T::clamp, py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def("cast", [](const T& x, const py::object& d) { return x.cast(dtype_arg(d)); })
      .def("bitcast", [](const T& x, const py::object& d) { return x.bitcast(dtype_arg(d)); })
      .def("float", [](const T& x) { return x.cast(Scalar::Float32); })
      .def("half", [](const T& x) { return x.cast(Scalar::Float16); })
      .def("int", [](const T& x) { return x.cast(Scalar::Int32); })
      .def("bool", [](const T& x) { return x.cast(Scalar::Bool); })
      .def("where",
           [](const T& c, const py::object& a, const py::object& b) {
             Tensor x = py::isinstance<Tensor>(a) ? a.cast<Tensor>() : as_tensor(a);
             return c.where(x, operand(x, b));
           })
      .def("maximum", [](const T& a, const py::object& b) { return a.maximum(operand(a, b)); })
      .def("minimum", [](const T& a, const py::object& b) { return a.minimum(operand(a, b)); })
      .def("pow", [](const T& a, const py::object& b) { return binary(a, b, kPow); })
      // ---- operators (kOperators; a Python number takes the tensor's dtype)
      .def("__neg__", &T::neg)
      .def("__abs__", &T::abs)
      .def("__invert__", &T::bitwise_not)
      .def("__matmul__", [](const T& a, const py::object& b) { return a.matmul(as_tensor(b)); })
      .def("__rmatmul__", [](const T& a, const py::object& b) { return as_tensor(b).matmul(a); })
      .def("__hash__", [](const T& a) { return std::hash<const void*>()(a.uop().get()); })
      .def("__bool__",
           [](const T&) -> bool {
             throw UserError(
                 "the truth value of a Tensor is ambiguous; use .item(), .any() or .all()");
           })
      // ---- reductions (kReductions; var and std also take a correction)
      .def(
          "var",
          [](const T& x, const py::object& axis, bool keepdim, int64_t c) {
            return x.var(axes_arg(axis), keepdim, c);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def(
          "std",
          [](const T& x, const py::object& axis, bool keepdim, int64_t c) {
            return x.std(axes_arg(axis), keepdim, c);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def("argmax", &T::argmax, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("argmin", &T::argmin, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("cumsum", &T::cumsum, py::arg("axis") = 0)
      .def("softmax", &T::softmax, py::arg("axis") = -1)
      .def("log_softmax", &T::log_softmax, py::arg("axis") = -1)
      .def("logsumexp", &T::logsumexp, py::arg("axis") = -1, py::arg("keepdim") = false)
      // ---- movement
      .def("reshape", [](const T& x, const py::args& s) { return x.reshape(dims_arg(s)); })
      .def("view", [](const T& x, const py::args& s) { return x.reshape(dims_arg(s)); })
      .def("permute", [](const T& x, const py::args& s) { return x.permute(dims_arg(s)); })
      .def("expand", [](const T& x, const py::args& s) { return x.expand(dims_arg(s)); })
      .def("repeat", [](const T& x, const py::args& s) { return x.repeat(dims_arg(s)); })
      .def(
          "flip", [](const T& x, const py::object& axis) { return x.flip(axes_arg(axis)); },
          py::arg("axis"))
      .def("transpose", &T::transpose, py::arg("dim0") = -2, py::arg("dim1") = -1)
      .def_property_readonly("T", [](const T& x) { return x.transpose(); })
      .def("pad", &T::pad, py::arg("padding"), py::arg("value") = 0.0,
           "padding: a (before, after) pair per dim")
      .def(
          "shrink",
          [](const T& x, const py::sequence& arg) {
            std::vector<std::pair<Dim, Dim>> bounds;
            for (const py::handle& pair : arg) {
              auto p = pair.cast<py::sequence>();
              user_assert(p.size() == 2) << "shrink: give a (start, stop) pair per dim";
              bounds.emplace_back(dim_arg(p[0]), dim_arg(p[1]));
            }
            return x.shrink(bounds);
          },
          py::arg("arg"), "arg: a (start, stop) pair per dim")
      .def("squeeze", &T::squeeze, py::arg("dim") = py::none())
      .def("unsqueeze", &T::unsqueeze, py::arg("dim"))
      .def("flatten", &T::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("contiguous", &T::contiguous)
      .def("gather", &T::gather, py::arg("dim"), py::arg("index"))
      .def("one_hot", &T::one_hot, py::arg("num_classes"))
      .def("triu", &T::triu, py::arg("diagonal") = 0)
      .def("tril", &T::tril, py::arg("diagonal") = 0)
      .def("topk", &T::topk, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true)
      .def("sort", &T::sort, py::arg("dim") = -1, py::arg("descending") = false)
      // ---- composite
      .def("matmul", [](const T& a, const py::object& b) { return a.matmul(as_tensor(b)); })
      .def("dot", [](const T& a, const py::object& b) { return a.matmul(as_tensor(b)); })
      .def("linear", &T::linear, py::arg("weight"), py::arg("bias") = py::none())
      .def("conv2d", &T::conv2d, py::arg("weight"), py::arg("bias") = py::none(),
           py::arg("stride") = 1, py::arg("padding") = 0, py::arg("dilation") = 1,
           py::arg("groups") = 1)
      .def("max_pool2d", &T::max_pool2d, py::arg("kernel_size") = 2, py::arg("stride") = py::none(),
           py::arg("padding") = 0, py::arg("dilation") = 1)
      .def("avg_pool2d", &T::avg_pool2d, py::arg("kernel_size") = 2, py::arg("stride") = py::none(),
           py::arg("padding") = 0)
      .def(
          "layernorm", [](const T& x, int64_t axis, double eps) { return x.layernorm(axis, eps); },
          py::arg("axis") = -1, py::arg("eps") = 1e-5)
      .def("batchnorm", &T::batchnorm, py::arg("weight"), py::arg("bias"), py::arg("mean"),
           py::arg("invstd_var"), py::arg("eps") = 1e-5)
      .def("scaled_dot_product_attention", &T::scaled_dot_product_attention, py::arg("key"),
           py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("is_causal") = false);
  for (auto [name, reduce] : kReductions)
    t.def(
        name,
        [reduce](const T& x, const py::object& axis, bool keepdim) {
          return (x.*reduce)(axes_arg(axis), keepdim);
        },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  for (const Operator& o : kOperators)
    t.def(o.name, [o](const T& a, const py::object& b) { return binary(a, b, o.op, o.reversed); });

  py::class_<ServedPlan>(m, "Plan",
                         R"(Tensors compiled once into one plan (beamlab.plan): run(seq=77)
computes them at the variables' values, compiling nothing, and returns their values as new
arrays. Inputs read from storage written in place between runs are read anew. Runs from
several threads take turns.)")
      .def(py::init([](const std::vector<Tensor>& tensors, std::optional<int> beam,
                       std::optional<std::string> db, int threads) {
             user_assert(!tensors.empty()) << "plan: give at least one tensor";
             for (size_t i = 0; i < tensors.size(); ++i)
               user_assert(numpy_dtype(tensors[i].dtype()).has_value())
                   << "plan: tensor " << i << " is " << tensors[i].dtype().str()
                   << ", which numpy has no type for: cast it to float32 first";
             RealizeOptions o = realize_options(beam, db, threads);
             py::gil_scoped_release release;
             return std::make_unique<ServedPlan>(tensors, o);
           }),
           py::arg("tensors"), py::arg("beam") = py::none(), py::arg("db") = py::none(),
           py::arg("threads") = 0)
      .def_property_readonly("variables",
                             [](const ServedPlan& p) {
                               py::list out; // as beamlab.Variable makes them
                               for (const Variable& v : p.plan.variables()) out.append(Dim(v));
                               return out;
                             })
      .def_property_readonly(
          "kernels", [](const ServedPlan& p) { return p.plan.plan().kernels().size(); },
          "How many kernels a run launches (kernels of constants included, run once)")
      .def(
          "run",
          [](ServedPlan& p, const py::kwargs& values) {
            VarValues v = var_values(values);
            std::unique_lock turn(p.turn, std::defer_lock);
            {
              py::gil_scoped_release release;
              turn.lock();
              p.plan.run(v);
            }
            py::list out; // copied before the next run may begin
            for (size_t i = 0; i < p.plan.size(); ++i) out.append(plan_output(p.plan, i));
            return out;
          },
          "Computes the tensors at the variables' values (seq=77); returns their values, new "
          "arrays in the plan's order");
  m.def(
      "_storage",
      [](const std::vector<int64_t>& shape, const py::object& dtype) {
        DType d = dtype_arg(dtype);
        std::optional<py::dtype> np = numpy_dtype(d);
        user_assert(np) << "storage of " << d.str() << ": numpy has no such type";
        for (int64_t n : shape)
          user_assert(n >= 0) << "storage: a size of " << n << ": sizes are 0 or more";
        auto bytes = static_cast<size_t>(shape_numel(Shape(shape)).value() * d.itemsize());
        auto buffer = std::make_shared<Buffer>(bytes);
        buffer->mark_varying();
        return array_over(std::move(buffer), shape, *np, true);
      },
      "A zeroed, writable array in a beamlab buffer: Tensor(it) shares its memory, so a plan "
      "reads what is written to it before each run");
}

} // namespace beamlab::python

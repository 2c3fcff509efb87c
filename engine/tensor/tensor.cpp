// The Tensor API; see tensor.hpp.
#include "engine/tensor/tensor.hpp"
#include "engine/tensor/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <numeric>
#include <type_traits>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/runtime/float_helpers.hpp"

namespace beamlab {

/// Keeps the buffers a lazy tensor reads alive: a DAG mirroring the tensor graph's leaves.
struct Lineage {
  int64_t id = -1;                ///< BUFFER id, for a leaf
  std::shared_ptr<Buffer> buffer; ///< for a leaf
  std::vector<std::shared_ptr<const Lineage>> parents;
};

namespace {

std::shared_ptr<const Lineage> leaf(int64_t id, std::shared_ptr<Buffer> buf) {
  auto l = std::make_shared<Lineage>();
  l->id = id;
  l->buffer = std::move(buf);
  return l;
}

template <class T>
T get(const void* base, DType dtype, size_t i) {
  const auto* p = static_cast<const char*>(base) + i * static_cast<size_t>(dtype.itemsize());
  auto read = [&](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (dtype.scalar()) {
  case Scalar::Bool: return static_cast<T>(read(uint8_t{}) != 0);
  case Scalar::Int8: return static_cast<T>(read(int8_t{}));
  case Scalar::Int16: return static_cast<T>(read(int16_t{}));
  case Scalar::Int32: return static_cast<T>(read(int32_t{}));
  case Scalar::Int64: return static_cast<T>(read(int64_t{}));
  case Scalar::UInt8: return static_cast<T>(read(uint8_t{}));
  case Scalar::UInt16: return static_cast<T>(read(uint16_t{}));
  case Scalar::UInt32: return static_cast<T>(read(uint32_t{}));
  case Scalar::UInt64: return static_cast<T>(read(uint64_t{}));
  case Scalar::Float16: return static_cast<T>(static_cast<float>(read(_Float16{})));
  case Scalar::BFloat16: {
    uint32_t bits = static_cast<uint32_t>(read(uint16_t{})) << 16;
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<T>(f);
  }
  case Scalar::Float32: return static_cast<T>(read(float{}));
  case Scalar::Float64: return static_cast<T>(read(double{}));
  default: internal_error << "no elements of dtype " << dtype.str();
  }
  return T{};
}

// `bytes_per_element`: what each element costs the host when it is made (8 where values are
// staged as doubles; a lazy constant costs its dtype's size once realized).
void check_shape(const Shape& shape, const char* op, int64_t bytes_per_element = 8) {
  double numel = 1;
  for (const Dim& d : shape) { // a symbolic dim: at every value, so at its least and largest
    user_assert(d.min() >= 1) << op << ": shape " << shape_str(shape)
                              << " has a dimension below 1 (empty tensors are not supported)";
    numel *= static_cast<double>(d.max());
  }
  // Checked before anything is allocated (a bad_alloc would name nothing).
  double ram = machine_memory_bytes();
  user_assert(numel * static_cast<double>(bytes_per_element) <= ram / 2)
      << op << ": shape " << shape_str(shape) << " has " << fmt::format("{:.3g}", numel)
      << " elements, more than half of this machine's " << fmt::format("{:.3g}", ram / 1e9)
      << " GB holds; use a smaller shape";
}

template <class T, class Exact>
Tensor from_host(std::span<const T> data, Shape shape, DType dtype, Exact exact) {
  check_shape(shape, "Tensor");
  user_assert(static_cast<int64_t>(data.size()) == shape_numel(shape))
      << "Tensor: " << data.size() << " values do not fill shape " << shape_str(shape) << " ("
      << shape_numel(shape) << " elements)";
  user_assert(!dtype.is_ptr() && dtype.lanes() == 1 && !dtype.is_void() &&
              dtype.scalar() != Scalar::Index)
      << "Tensor: " << dtype.str() << " is not an element dtype";
  UOpPtr buf = tensor_buffer(dtype, shape_numel(shape));
  auto storage = std::make_shared<Buffer>(data.size() * static_cast<size_t>(dtype.itemsize()));
  for (size_t i = 0; i < data.size(); ++i) {
    auto d = static_cast<double>(data[i]);
    user_assert(!dtype.is_int() || !std::is_floating_point_v<T> ||
                (std::isfinite(d) && d >= -9.2e18 && d <= 1.8e19))
        << "Tensor: value " << d << " (element " << i << ") does not fit dtype " << dtype.str();
    put_element(storage->data(), dtype, i, d, exact(data[i]));
  }
  return Tensor(tensor_reshape(buf, shape), shape, leaf(buffer_id(*buf), storage));
}

// A float as an integer element (truncated); only integer dtypes use it, so a value no
// integer holds is an error only there.
int64_t float_to_int(double v) {
  return std::isfinite(v) && std::abs(v) < 9.2e18 ? static_cast<int64_t>(v) : 0;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<double> uniform(int64_t n, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t base = splitmix64(seed);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(splitmix64(base + i) >> 40) * 0x1.0p-24; // 24 bits: exact in f32
  return v;
}

} // namespace

// ---------------------------------------------------------------- construction

Tensor::Tensor(UOpPtr uop, Shape shape, std::shared_ptr<const Lineage> lineage)
    : uop_(std::move(uop)), shape_(std::move(shape)), lineage_(std::move(lineage)) {}

Tensor::Tensor(std::span<const float> data, Shape shape, DType dtype)
    : Tensor(from_host(data, std::move(shape), dtype, float_to_int)) {}
Tensor::Tensor(std::span<const double> data, Shape shape, DType dtype)
    : Tensor(from_host(data, std::move(shape), dtype, float_to_int)) {}
Tensor::Tensor(std::span<const int32_t> data, Shape shape, DType dtype)
    : Tensor(from_host(data, std::move(shape), dtype, [](int32_t v) { return int64_t{v}; })) {}
Tensor::Tensor(std::span<const int64_t> data, Shape shape, DType dtype)
    : Tensor(from_host(data, std::move(shape), dtype, [](int64_t v) { return v; })) {}
Tensor::Tensor(std::span<const bool> data, Shape shape)
    : Tensor(from_host(data, std::move(shape), Scalar::Bool, [](bool v) { return int64_t{v}; })) {}
Tensor::Tensor(std::initializer_list<float> data, Shape shape, DType dtype)
    : Tensor(std::span<const float>(data.begin(), data.size()), std::move(shape), dtype) {}
Tensor::Tensor(double value, DType dtype)
    : Tensor(UOp::const_like(dtype, value), Shape{}, nullptr) {}

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  check_shape(shape, "full", dtype.itemsize());
  Tensor c(value, dtype);
  return c.reshape(Shape(shape.size(), 1)).expand(shape);
}
Tensor Tensor::zeros(const Shape& shape, DType dtype) { return full(shape, 0, dtype); }
Tensor Tensor::ones(const Shape& shape, DType dtype) { return full(shape, 1, dtype); }

// The tensor graph has no leaf for a loop index, so arange (and eye, linspace) start from a
// buffer of host values.
Tensor Tensor::arange(const Dim& stop) {
  if (stop.is_const()) return arange(0, static_cast<double>(stop.value()), 1);
  return arange(0, static_cast<double>(stop.max()), 1).shrink({{Dim(0), stop}});
}

Tensor Tensor::arange(double start, double stop, double step, DType dtype) {
  user_assert(step != 0) << "arange: step is 0";
  auto n = static_cast<int64_t>(std::ceil((stop - start) / step));
  user_assert(n >= 1) << "arange: [" << start << ", " << stop << ") with step " << step
                      << " is empty";
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<double>(i) * step;
  return Tensor(std::span<const double>(v), {n}, dtype);
}

Tensor Tensor::eye(int64_t n, DType dtype) {
  check_shape({n, n}, "eye", dtype.itemsize());
  Tensor i = arange(n);
  return i.reshape({n, 1}).eq(i.reshape({1, n})).cast(dtype);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype) {
  user_assert(steps >= 1) << "linspace: steps must be at least 1, not " << steps;
  std::vector<double> v(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; ++i)
    v[static_cast<size_t>(i)] = steps == 1 ? start
                                           : start + (stop - start) * static_cast<double>(i) /
                                                         static_cast<double>(steps - 1);
  return Tensor(std::span<const double>(v), {steps}, dtype);
}

Tensor Tensor::rand(const Shape& shape, uint64_t seed, DType dtype) {
  check_shape(shape, "rand");
  std::vector<double> v = uniform(shape_numel(shape), seed);
  return Tensor(std::span<const double>(v), shape, dtype);
}

Tensor Tensor::randn(const Shape& shape, uint64_t seed, DType dtype) {
  check_shape(shape, "randn");
  int64_t n = shape_numel(shape);
  std::vector<double> u = uniform(2 * n, seed), v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sqrt(-2 * std::log(1 - u[2 * i])) * std::cos(2 * std::numbers::pi * u[2 * i + 1]);
  return Tensor(std::span<const double>(v), shape, dtype);
}

namespace {

// The bytes `shape` of `dtype` fills; a UserError naming `op` when it is no tensor's.
size_t element_bytes(const Shape& shape, DType dtype, const char* op) {
  check_shape(shape, op, dtype.itemsize());
  user_assert(!dtype.is_ptr() && dtype.lanes() == 1 && !dtype.is_void() &&
              dtype.scalar() != Scalar::Index)
      << op << ": " << dtype.str() << " is not an element dtype";
  return static_cast<size_t>(shape_numel(shape) * dtype.itemsize());
}

} // namespace

Tensor Tensor::from_bytes(std::span<const std::byte> bytes, Shape shape, DType dtype) {
  size_t want = element_bytes(shape, dtype, "from_bytes");
  user_assert(bytes.size() == want)
      << "from_bytes: " << bytes.size() << " bytes do not fill shape " << shape_str(shape) << " of "
      << dtype.str() << " (" << want << " bytes)";
  auto storage = std::make_shared<Buffer>(want);
  std::memcpy(storage->data(), bytes.data(), want);
  if (dtype.is_bool()) // a bool element is 0 or 1
    for (uint8_t& b : storage->as<uint8_t>()) b = b != 0;
  return from_storage(std::move(storage), std::move(shape), dtype);
}

Tensor Tensor::from_storage(std::shared_ptr<Buffer> storage, Shape shape, DType dtype) {
  if (is_symbolic(shape)) { // the first numel elements at each value, row-major
    Dim numel = shape_numel(shape);
    return from_storage(std::move(storage), Shape{numel.max()}, dtype)
        .shrink({{Dim(0), numel}})
        .reshape(shape);
  }
  size_t want = element_bytes(shape, dtype, "from_storage");
  user_assert(storage && storage->bytes() >= want)
      << "from_storage: " << (storage ? storage->bytes() : 0) << " bytes do not fill shape "
      << shape_str(shape) << " of " << dtype.str() << " (" << want << " bytes)";
  UOpPtr buf = tensor_buffer(dtype, shape_numel(shape));
  return Tensor(tensor_reshape(buf, shape), shape, leaf(buffer_id(*buf), std::move(storage)));
}

// ---------------------------------------------------------------- running

std::shared_ptr<const Lineage> Tensor::join(std::initializer_list<const Tensor*> ts) {
  std::vector<std::shared_ptr<const Lineage>> parents;
  for (const Tensor* t : ts)
    if (t->lineage_ && std::find(parents.begin(), parents.end(), t->lineage_) == parents.end())
      parents.push_back(t->lineage_);
  if (parents.size() <= 1) return parents.empty() ? nullptr : parents[0];
  auto l = std::make_shared<Lineage>();
  l->parents = std::move(parents);
  return l;
}

BufferMap Tensor::inputs() const {
  BufferMap out;
  collect_inputs(*this, out);
  return out;
}

bool Tensor::reads_only_constants() const {
  BufferMap in = inputs();
  return !in.empty() && std::all_of(in.begin(), in.end(),
                                    [](const auto& b) { return b.second && b.second->constant(); });
}

void Tensor::collect_inputs(const Tensor& t, BufferMap& out) {
  std::unordered_set<const Lineage*> seen;
  std::vector<const Lineage*> stack;
  if (t.lineage_) stack.push_back(t.lineage_.get());
  while (!stack.empty()) {
    const Lineage* l = stack.back();
    stack.pop_back();
    if (!seen.insert(l).second) continue;
    if (l->buffer) out.emplace(l->id, l->buffer);
    for (const auto& p : l->parents) stack.push_back(p.get());
  }
}

Schedule Tensor::schedule() const { return create_schedule({uop_}); }

namespace {

Schedule schedule_of(std::span<const Tensor> tensors) {
  std::vector<UOpPtr> roots;
  for (const Tensor& t : tensors) roots.push_back(t.uop());
  return create_schedule(roots);
}

BufferMap inputs_of(std::span<const Tensor> tensors) {
  BufferMap inputs;
  for (const Tensor& t : tensors) Tensor::collect_inputs(t, inputs);
  return inputs;
}

RealizeOptions unbound(RealizeOptions options) {
  options.vars.clear();
  return options;
}

} // namespace

TensorPlan::TensorPlan(std::vector<Tensor> tensors, const RealizeOptions& options)
    : tensors_(std::move(tensors)), schedule_(schedule_of(tensors_)),
      plan_(ExecutionPlan::prepare(schedule_, inputs_of(tensors_), unbound(options))),
      variables_(plan_.variables()), shapes_(tensors_.size()) {
  for (const Tensor& t : tensors_)
    for (const Variable& v : shape_variables(t.shape()))
      if (std::none_of(variables_.begin(), variables_.end(),
                       [&](const Variable& k) { return k.name == v.name; }))
        variables_.push_back(v);
  for (const UOpPtr& buf : schedule_.outputs) outputs_.push_back(plan_.buffer(*buf));
}

void TensorPlan::run(const VarValues& values) {
  check_values(variables_, values);
  for (const Variable& v : variables_) (void)Dim(v).at(values); // each has a value
  std::vector<std::vector<int64_t>> shapes; // every shape known before anything runs
  for (const Tensor& t : tensors_) shapes.push_back(shape_at(t.shape(), values));
  VarValues of_plan;
  for (const Variable& v : plan_.variables())
    if (auto it = values.find(v.name); it != values.end()) of_plan.insert(*it);
  plan_.bind(of_plan);
  plan_.run();
  shapes_ = std::move(shapes);
}

void Tensor::realize_all(std::span<Tensor* const> tensors, const RealizeOptions& options) {
  std::vector<Tensor> values;
  for (Tensor* t : tensors) values.push_back(*t);
  TensorPlan plan(std::move(values), options);
  plan.run(options.vars);
  // A symbolic tensor, realized, is its values at the given sizes.
  for (size_t i = 0; i < tensors.size(); ++i) {
    Tensor* t = tensors[i];
    const UOpPtr& buf = plan.schedule().outputs[i];
    t->shape_ = Shape(plan.shape(i));
    t->uop_ = tensor_reshape(buf, t->shape_);
    t->lineage_ = leaf(buffer_id(*buf), plan.output(i));
  }
}

Tensor& Tensor::realize(const RealizeOptions& options) {
  Tensor* self = this;
  realize_all(std::span<Tensor* const>(&self, 1), options);
  return *this;
}

double element_value(const void* base, DType dtype, int64_t i) {
  return get<double>(base, dtype, static_cast<size_t>(i));
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor t = *this;
  t.realize();
  const Lineage& l = *t.lineage_;
  std::vector<T> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = get<T>(l.buffer->data(), dtype(), i);
  return out;
}

std::shared_ptr<const Buffer> Tensor::storage(const RealizeOptions& options) {
  realize(options);
  return lineage_->buffer;
}

std::vector<std::byte> Tensor::to_bytes() const {
  Tensor t = *this;
  t.realize();
  const auto* p = static_cast<const std::byte*>(t.lineage_->buffer->data());
  return {p, p + numel() * dtype().itemsize()};
}

template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;
template std::vector<int8_t> Tensor::to_vector<int8_t>() const;
template std::vector<uint32_t> Tensor::to_vector<uint32_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

} // namespace beamlab

// TensorProtos; see tensor_proto.hpp.
#include "frontends/onnx/tensor_proto.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <onnx/onnx_pb.h>

namespace beamlab::onnx {
namespace {

using ::onnx::TensorProto;

template <class T>
void append(std::vector<std::byte>& out, T v) {
  size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

// The typed fields: each value converted to the dtype's element.
std::vector<std::byte> from_fields(const TensorProto& p, DType dt, int64_t n,
                                   const std::string& what) {
  std::vector<std::byte> out;
  auto need = [&](int have, const char* field) {
    user_assert(have == n) << what << ": " << field << " holds " << have << " values but the dims "
                           << "need " << n << "; the tensor is malformed, re-export the model";
    out.reserve(static_cast<size_t>(n) * static_cast<size_t>(dt.itemsize()));
  };
  switch (dt.scalar()) {
  case Scalar::Float32:
    need(p.float_data_size(), "float_data");
    for (float v : p.float_data()) append(out, v);
    break;
  case Scalar::Float64:
    need(p.double_data_size(), "double_data");
    for (double v : p.double_data()) append(out, v);
    break;
  case Scalar::Int64:
    need(p.int64_data_size(), "int64_data");
    for (int64_t v : p.int64_data()) append(out, v);
    break;
  case Scalar::UInt32:
  case Scalar::UInt64:
    need(p.uint64_data_size(), "uint64_data");
    for (uint64_t v : p.uint64_data()) {
      if (dt.scalar() == Scalar::UInt32)
        append(out, static_cast<uint32_t>(v));
      else
        append(out, v);
    }
    break;
  default: // int32_data carries int32, the small integers, bool and the 16-bit floats' bits
    need(p.int32_data_size(), "int32_data");
    for (int32_t v : p.int32_data()) {
      switch (dt.itemsize()) {
      case 1: append(out, static_cast<uint8_t>(v)); break;
      case 2: append(out, static_cast<uint16_t>(v)); break;
      default: append(out, v); break;
      }
    }
  }
  return out;
}

std::vector<std::byte> read_external(const TensorProto& p, const std::string& base_dir, size_t want,
                                     const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset") offset = std::stoll(kv.value());
    if (kv.key() == "length") length = std::stoll(kv.value());
  }
  user_assert(!location.empty()) << what << ": external data without a 'location'; "
                                 << "the model is malformed, re-export it";
  std::filesystem::path rel(location);
  user_assert(rel.is_relative() && rel.lexically_normal().string().rfind("..", 0) != 0)
      << what << ": external data '" << location << "' is outside the model's folder; "
      << "keep the data file beside the model";
  std::string file = (std::filesystem::path(base_dir) / rel).string();
  std::ifstream f(file, std::ios::binary);
  user_assert(f) << what << ": cannot read its external data '" << file
                 << "'; keep the data file beside the model";
  if (length < 0) length = static_cast<int64_t>(want);
  user_assert(static_cast<size_t>(length) == want)
      << what << ": external data length " << length << " does not match its dims (" << want
      << " bytes)";
  std::vector<std::byte> out(want);
  f.seekg(offset);
  f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(want));
  user_assert(f && f.gcount() == static_cast<std::streamsize>(want))
      << what << ": external data '" << file << "' is shorter than offset " << offset << " + "
      << want << " bytes";
  return out;
}

} // namespace

DType dtype_of(int onnx_type, const std::string& what) {
  switch (onnx_type) {
  case TensorProto::FLOAT: return Scalar::Float32;
  case TensorProto::UINT8: return Scalar::UInt8;
  case TensorProto::INT8: return Scalar::Int8;
  case TensorProto::UINT16: return Scalar::UInt16;
  case TensorProto::INT16: return Scalar::Int16;
  case TensorProto::INT32: return Scalar::Int32;
  case TensorProto::INT64: return Scalar::Int64;
  case TensorProto::BOOL: return Scalar::Bool;
  case TensorProto::FLOAT16: return Scalar::Float16;
  case TensorProto::DOUBLE: return Scalar::Float64;
  case TensorProto::UINT32: return Scalar::UInt32;
  case TensorProto::UINT64: return Scalar::UInt64;
  case TensorProto::BFLOAT16: return Scalar::BFloat16;
  default: break;
  }
  user_error << what << ": element type " << onnx_type_name(onnx_type)
             << " is not supported (beamlab computes in bool, integer and float types)";
  return Scalar::Float32;
}

std::string onnx_type_name(int onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  return "type " + std::to_string(onnx_type);
}

double HostTensor::at(int64_t i) const { return element_value(bytes.data(), dtype, i); }

int64_t HostTensor::int_at(int64_t i) const {
  const std::byte* p = bytes.data() + i * dtype.itemsize();
  if (dtype.scalar() == Scalar::Int64 || dtype.scalar() == Scalar::UInt64) {
    int64_t v = 0;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  double v = at(i);
  return std::isfinite(v) ? static_cast<int64_t>(v) : 0;
}

HostTensor decode(const TensorProto& p, const std::string& base_dir, const std::string& what) {
  HostTensor h;
  h.dtype = dtype_of(p.data_type(), what);
  for (int64_t d : p.dims()) {
    user_assert(d >= 0) << what << ": negative dimension " << d << "; the tensor is malformed";
    h.shape.push_back(d);
  }
  int64_t n = 1;
  for (int64_t d : h.shape) {
    user_assert(d == 0 || n <= std::numeric_limits<int64_t>::max() / d / 16)
        << what << ": dims " << shape_str(h.shape) << " are too large";
    n *= d;
  }
  size_t want = static_cast<size_t>(n) * static_cast<size_t>(h.dtype.itemsize());
  if (p.data_location() == TensorProto::EXTERNAL) {
    h.bytes = read_external(p, base_dir, want, what);
  } else if (p.has_raw_data()) {
    user_assert(p.raw_data().size() == want)
        << what << ": raw_data holds " << p.raw_data().size() << " bytes but dims "
        << shape_str(h.shape) << " of " << h.dtype.str() << " need " << want
        << "; the tensor is malformed, re-export the model";
    h.bytes.resize(want);
    std::memcpy(h.bytes.data(), p.raw_data().data(), want);
  } else {
    h.bytes = from_fields(p, h.dtype, n, what);
  }
  return h;
}

HostTensor read_tensor_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  user_assert(f) << "cannot read '" << path << "'; check the path";
  TensorProto p;
  user_assert(p.ParseFromIstream(&f)) << path << ": not a serialized ONNX TensorProto";
  return decode(p, std::filesystem::path(path).parent_path().string(), path);
}

Tensor to_tensor(const HostTensor& h) {
  user_assert(h.numel() > 0) << "a tensor of shape " << shape_str(h.shape)
                             << " is empty; beamlab does not compute on empty tensors";
  return Tensor::from_bytes(h.bytes, h.shape, h.dtype);
}

Tensor to_constant(const HostTensor& h) {
  if (h.dtype.is_bool()) return to_tensor(h); // bytes other than 0 and 1 normalized there
  user_assert(h.numel() > 0) << "a tensor of shape " << shape_str(h.shape)
                             << " is empty; beamlab does not compute on empty tensors";
  auto storage = std::make_shared<Buffer>(h.bytes.size());
  std::memcpy(storage->data(), h.bytes.data(), h.bytes.size());
  storage->mark_constant();
  return Tensor::from_storage(std::move(storage), h.shape, h.dtype);
}

HostTensor to_host(const Tensor& t) {
  for (const auto& [id, buffer] : t.inputs())
    user_assert(!buffer || !buffer->varying())
        << "reads the values of a model input while the graph is built (a shape, a condition, a "
        << "count), so a compiled model would keep the first ones: call the model per request "
        << "(model(...)) or make that input a constant of the model";
  return {t.dtype(), t.shape(), t.to_bytes()};
}

} // namespace beamlab::onnx

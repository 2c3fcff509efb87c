// ONNX TensorProtos <-> host tensors: an initializer, a Constant's value or a test-data file
// (input_0.pb) decoded to bytes in beamlab's layout, with its dtype and shape.
//
// Every storage form ONNX writes is read: raw_data (little-endian), the typed repeated fields
// (float_data, int32_data for the small integer, bool and half types, int64_data,
// double_data, uint64_data) and external data (a file beside the model, with offset and
// length). A malformed proto is a UserError naming `what` (the file, the initializer).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <beamlab/beamlab.hpp>

namespace onnx {
class TensorProto;
}

namespace beamlab::onnx {

/// A tensor's values on the host, element after element, in `dtype`'s layout.
struct HostTensor {
  DType dtype = Scalar::Float32;
  Shape shape;
  std::vector<std::byte> bytes;

  int64_t numel() const { return shape_numel(shape); }
  /// Element i as a double (exact for every integer below 2^53).
  double at(int64_t i) const;
  /// Element i as an int64 (integers and bools exactly; floats truncated).
  int64_t int_at(int64_t i) const;
};

/// beamlab's dtype for an ONNX TensorProto::DataType, or a UserError naming `what` for the
/// types beamlab has no element type for (string, complex, float8).
DType dtype_of(int onnx_type, const std::string& what);

/// The ONNX name of a data type ("FLOAT", "INT64", ...), for messages.
std::string onnx_type_name(int onnx_type);

/// Decodes `proto`; external data is read relative to `base_dir` (the model's folder).
HostTensor decode(const ::onnx::TensorProto& proto, const std::string& base_dir,
                  const std::string& what);

/// Reads a serialized TensorProto file (the test data's input_N.pb / output_N.pb).
HostTensor read_tensor_file(const std::string& path);

/// A lazy tensor holding a copy of the host values.
Tensor to_tensor(const HostTensor& h);
/// The same in a buffer marked constant (Buffer::mark_constant): a model's initializer, which
/// plans may copy into a kernel's layout once.
Tensor to_constant(const HostTensor& h);

/// The realized values of `t` on the host.
HostTensor to_host(const Tensor& t);

} // namespace beamlab::onnx

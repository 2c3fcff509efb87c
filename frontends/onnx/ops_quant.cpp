// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer and
// quantized products (ConvInteger, QLinearMatMul, QLinearConv). Integer products accumulate
// in int32 exactly; rescaling happens in float32 and rounds half to even, then saturates to
// the zero point's type, as ONNX's reference does.
#include <algorithm>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {
namespace {

// A per-tensor scalar, or per-axis values broadcast along `axis` of a rank-`rank` tensor.
Tensor along(const Tensor& v, int64_t axis, int64_t rank) {
  if (v.ndim() == 0 || v.numel() == 1) return v.reshape({});
  axis = Node::axis(axis, rank, "axis");
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(axis)] = v.numel();
  return v.reshape(s);
}

// A scale or zero point for x: per tensor, per axis, or (opset 21's block_size) blocked, one
// value per `block` elements along `axis` with the rest of its shape x's.
Tensor scale_for(const Node& n, const Tensor& v, int64_t axis, const Tensor& x) {
  int64_t block = n.opset() >= 21 ? n.attr_int("block_size", 0) : 0;
  if (block == 0) return along(v, axis, x.ndim());
  axis = Node::axis(axis, x.ndim(), "axis");
  int64_t d = dim(x, axis);
  user_assert(block > 0 && v.ndim() == x.ndim() && dim(v, axis) == (d + block - 1) / block)
      << "blocked quantization needs a scale of rank " << x.ndim() << " with "
      << (d + block - 1) / block << " blocks of " << block << " on axis " << axis << ", not "
      << shape_str(v.shape());
  Shape split = v.shape(), spread = v.shape();
  split.insert(split.begin() + axis + 1, 1);
  spread.insert(spread.begin() + axis + 1, block);
  Shape merged = v.shape();
  merged[static_cast<size_t>(axis)] *= block;
  return v.reshape(split).expand(spread).reshape(merged).slice(axis, 0, d);
}

Tensor saturate(const Tensor& x, DType to) {
  return x.round()
      .clamp(static_cast<double>(to.int_min()), static_cast<double>(to.int_max()))
      .cast(to);
}

// y = saturate(round(x / scale) + zero point); the output type is the zero point's, opset 21's
// output_dtype, or uint8.
Tensor quantize(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t axis = n.attr_int("axis", 1);
  Tensor scale = scale_for(n, n.in(1), axis, x);
  DType to = n.has(2) ? n.in(2).dtype() : DType(Scalar::UInt8);
  if (int64_t given = n.opset() >= 21 ? n.attr_int("output_dtype", 0) : 0; given != 0) {
    DType want = dtype_of(static_cast<int>(given), "attribute 'output_dtype'");
    user_assert(!n.has(2) || want == to)
        << "output_dtype " << want.str() << " differs from the zero point's type " << to.str();
    to = want;
  }
  user_assert(to.is_int()) << "quantizing to " << to.str() << " is not supported (integers only)";
  Tensor y = (x.cast(Scalar::Float32) / scale.cast(Scalar::Float32)).round();
  if (n.has(2)) y = y + scale_for(n, n.in(2), axis, x).cast(Scalar::Float32);
  return saturate(y, to);
}

// y = (x - zero point) * scale, in the scale's type (float32 before opset 19).
Tensor dequantize(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t axis = n.attr_int("axis", 1);
  Tensor v = x.cast(Scalar::Int32);
  if (n.has(2)) v = v - scale_for(n, n.in(2), axis, x).cast(Scalar::Int32);
  Tensor scale = scale_for(n, n.in(1), axis, x);
  Tensor y = v.cast(Scalar::Float32) * scale.cast(Scalar::Float32);
  return n.opset() >= 19 ? y.cast(scale.dtype()) : y;
}

std::vector<Value> dynamic_quantize(const Node& n) {
  const Tensor& x = n.in(0);
  Tensor lo = x.min().minimum(0.0), hi = x.max().maximum(0.0);
  Tensor scale = (hi - lo) / 255.0;
  Tensor zp = saturate(-lo / scale, Scalar::UInt8);
  Tensor y = saturate((x / scale).round() + zp.cast(Scalar::Float32), Scalar::UInt8);
  return {y, scale, zp};
}

// x - zero point in int32; `axis` places a per-channel zero point.
Tensor centered(const Node& n, size_t x_at, size_t zp_at, int64_t axis) {
  Tensor x = n.in(x_at).cast(Scalar::Int32);
  if (n.has(zp_at)) x = x - along(n.in(zp_at), axis, x.ndim()).cast(Scalar::Int32);
  return x;
}

Tensor integer_conv(const Node& n, const Tensor& x, const Tensor& w) {
  return x.conv(w, std::nullopt, n.attr_int("group", 1), window(n, x, kernel_of(n, w)));
}

// Rescales an int32 accumulator into the output's quantized type.
Tensor requantize(const Tensor& acc, const Tensor& scale, const Tensor& y_scale,
                  const Tensor& y_zp) {
  Tensor y = (acc.cast(Scalar::Float32) * (scale / y_scale)).round() + y_zp.cast(Scalar::Float32);
  return saturate(y, y_zp.dtype());
}

} // namespace

void add_quant_ops(ConverterTable& t) {
  t["QuantizeLinear"] = [](const Node& n) { return std::vector<Value>{quantize(n)}; };
  t["DequantizeLinear"] = [](const Node& n) { return std::vector<Value>{dequantize(n)}; };
  t["DynamicQuantizeLinear"] = dynamic_quantize;
  t["ConvInteger"] = [](const Node& n) {
    Tensor x = centered(n, 0, 2, 1), w = centered(n, 1, 3, 0);
    return std::vector<Value>{integer_conv(n, x, w)};
  };
  t["QLinearMatMul"] = [](const Node& n) {
    Tensor a = centered(n, 0, 2, 0), b = centered(n, 3, 5, 1);
    Tensor acc = a.matmul(b, Scalar::Int32);
    return std::vector<Value>{requantize(acc, n.in(1) * n.in(4), n.in(6), n.in(7))};
  };
  t["QLinearConv"] = [](const Node& n) {
    Tensor x = centered(n, 0, 2, 1), w = centered(n, 3, 5, 0);
    Tensor acc = integer_conv(n, x, w);
    Tensor w_scale = along(n.in(4), 1, acc.ndim());
    if (n.has(8)) acc = acc + along(n.in(8), 1, acc.ndim());
    return std::vector<Value>{requantize(acc, n.in(1) * w_scale, n.in(6), n.in(7))};
  };
}

} // namespace beamlab::onnx

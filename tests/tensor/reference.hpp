// A reference for the Tensor API: row-major arrays of doubles and plain-loop implementations
// of the tensor ops the differential test uses.
//
// Written independently of the engine (only Shape is shared): no graphs, no kernels, every op
// a loop over the output's elements that computes each from its inputs' elements. Semantics
// follow numpy: broadcasting aligns shapes from the right, comparisons give 0 or 1, negative
// axes count from the end. Misuse (shapes that don't fit) fails with a std::invalid_argument.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/ir/tensor_ops.hpp"

namespace beamlab::testing {

/// A dense array: `values` row-major in `shape` (a scalar has shape () and one value).
struct NdArray {
  Shape shape;
  std::vector<double> values;

  NdArray() : values(1) {}
  NdArray(Shape shape, std::vector<double> values);
  static NdArray full(const Shape& shape, double value);
  int64_t numel() const { return static_cast<int64_t>(values.size()); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

/// "(2, 3)" style index of element `flat` of `shape`.
std::string index_str(const Shape& shape, int64_t flat);

// ---- elementwise ----
/// f applied to every element.
NdArray map(const NdArray& a, const std::function<double(double)>& f);
/// f applied to the numpy broadcast of a and b.
NdArray zip(const NdArray& a, const NdArray& b, const std::function<double(double, double)>& f);

NdArray add(const NdArray& a, const NdArray& b);
NdArray sub(const NdArray& a, const NdArray& b);
NdArray mul(const NdArray& a, const NdArray& b);
NdArray maximum(const NdArray& a, const NdArray& b);
NdArray lt(const NdArray& a, const NdArray& b);
NdArray gt(const NdArray& a, const NdArray& b);
NdArray le(const NdArray& a, const NdArray& b);
NdArray ge(const NdArray& a, const NdArray& b);
NdArray eq(const NdArray& a, const NdArray& b);
NdArray ne(const NdArray& a, const NdArray& b);

NdArray neg(const NdArray& a);
NdArray abs(const NdArray& a);
NdArray exp(const NdArray& a);
NdArray log_abs1(const NdArray& a); ///< log(|x| + 1)
NdArray sqrt_abs(const NdArray& a); ///< sqrt(|x|)
NdArray relu(const NdArray& a);
NdArray sigmoid(const NdArray& a);
NdArray tanh(const NdArray& a);

// ---- reductions (axes empty: all; reduced dims become 1 with keepdim, else vanish) ----
enum class ReduceOp { Sum, Max, Mean };
NdArray reduce(const NdArray& a, ReduceOp op, std::vector<int64_t> axes, bool keepdim);
NdArray sum(const NdArray& a, std::vector<int64_t> axes, bool keepdim);
NdArray max(const NdArray& a, std::vector<int64_t> axes, bool keepdim);
NdArray mean(const NdArray& a, std::vector<int64_t> axes, bool keepdim);

// ---- movement ----
NdArray reshape(const NdArray& a, const Shape& shape);
/// out.shape[i] = a.shape[order[i]].
NdArray permute(const NdArray& a, std::vector<int64_t> order);
/// To `shape` (at least a's rank): size-1 dims grow, new dims are added in front.
NdArray expand(const NdArray& a, const Shape& shape);
/// Each dim grown by (before, after) elements of `value`.
NdArray pad(const NdArray& a, const std::vector<std::pair<int64_t, int64_t>>& pads,
            double value = 0);
/// Each dim cut to [begin, end).
NdArray shrink(const NdArray& a, const std::vector<std::pair<int64_t, int64_t>>& bounds);
NdArray flip(const NdArray& a, std::vector<int64_t> axes);

/// numpy's matmul: 2D products, batch dims broadcast, 1D operands promoted and then dropped.
NdArray matmul(const NdArray& a, const NdArray& b);

// ---- windows: settings per spatial dim (the last dims), torch's semantics ----
struct WindowSpec {
  std::vector<int64_t> kernel = {}, stride = {}, dilation = {};
  std::vector<std::pair<int64_t, int64_t>> pads = {}; ///< (begin, end)
  bool ceil_mode = false;
};

/// torch's convolution: x (N, C, d...), w (Cout, C/groups, k...), bias (Cout,) if given.
NdArray conv(const NdArray& x, const NdArray& w, const NdArray* bias, int64_t groups,
             const WindowSpec& win);
/// torch's conv_transpose: x (N, C, d...), w (C, Cout/groups, k...); each input element adds
/// x * w into output position i*stride - pad_begin + j*dilation.
NdArray conv_transpose(const NdArray& x, const NdArray& w, const NdArray* bias, int64_t groups,
                       const WindowSpec& win, const std::vector<int64_t>& output_padding);

enum class PoolOp { Max, Avg, AvgIncludePad, Lp };
/// Pooling over the last win.kernel.size() dims. Max ignores pads (-inf if a window has only
/// pads); Avg divides by the input elements in the window, AvgIncludePad by those inside the
/// padding too; Lp is (sum |x|^p)^(1/p) over the input elements.
NdArray pool(const NdArray& x, PoolOp op, const WindowSpec& win, double p = 2);

// ---- indexing ----
/// Upper (col - row >= k) or lower (col - row <= k) triangle of the last two dims.
NdArray triangle(const NdArray& a, int64_t k, bool upper);
/// 0/1 along a new last axis; negative indices count from the end, out of range: all 0.
NdArray one_hot(const NdArray& a, int64_t n);
/// The first k along `axis` of a stable sort (descending: largest first); values, indices.
std::pair<NdArray, NdArray> topk(const NdArray& a, int64_t k, int64_t axis, bool descending);
/// ONNX ScatterElements applied in index order: reduce none (the last write wins), add, mul,
/// max or min; negative indices count from the end.
NdArray scatter(const NdArray& a, int64_t axis, const NdArray& index, const NdArray& src,
                const std::string& reduce);
/// torch's gather (negative indices count from the end).
NdArray gather(const NdArray& a, int64_t axis, const NdArray& index);
/// numpy's take along one axis.
NdArray take(const NdArray& a, const NdArray& index, int64_t axis);

} // namespace beamlab::testing

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

} // namespace beamlab::testing

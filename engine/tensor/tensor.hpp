// beamlab::Tensor: a lazy tensor. Operations build a tensor graph (see engine/ir/tensor_ops.hpp);
// realize() schedules, compiles and runs it; reading values realizes first.
//
// Names and semantics follow tinygrad's Tensor (itself numpy's and torch's): numpy
// broadcasting, tinygrad's type promotion, negative axes counting from the end. Every misuse
// (shapes that don't broadcast, a bad axis, a bad reshape, an op on a dtype it doesn't take)
// is a UserError naming the op, the shapes and the problem.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/ir/tensor_ops.hpp"
#include "engine/realize/realize.hpp"

namespace beamlab {

namespace dtypes {
inline constexpr Scalar float32 = Scalar::Float32;
inline constexpr Scalar float64 = Scalar::Float64;
inline constexpr Scalar float16 = Scalar::Float16;
inline constexpr Scalar bfloat16 = Scalar::BFloat16;
inline constexpr Scalar int8 = Scalar::Int8;
inline constexpr Scalar int16 = Scalar::Int16;
inline constexpr Scalar int32 = Scalar::Int32;
inline constexpr Scalar int64 = Scalar::Int64;
inline constexpr Scalar uint8 = Scalar::UInt8;
inline constexpr Scalar uint32 = Scalar::UInt32;
inline constexpr Scalar boolean = Scalar::Bool;
} // namespace dtypes

struct Lineage;

/// Per-spatial-dim window settings for conv and pooling; empty vectors mean 1 (stride,
/// dilation) or 0 (padding) for every spatial dim; a single value applies to all.
struct WindowArgs {
  std::vector<int64_t> stride = {}, dilation = {};
  std::vector<std::pair<int64_t, int64_t>> padding = {}; ///< (begin, end) per spatial dim
  bool ceil_mode = false;         ///< pooling: output size rounds up (extra windows padded)
  bool count_include_pad = false; ///< avg pooling: divide by the full window, pads included
};

class Tensor {
public:
  // ---- creation ----
  /// Host data (converted to `dtype`), row-major in `shape`.
  Tensor(std::span<const float> data, Shape shape, DType dtype = Scalar::Float32);
  Tensor(std::span<const double> data, Shape shape, DType dtype = Scalar::Float32);
  Tensor(std::span<const int32_t> data, Shape shape, DType dtype = Scalar::Int32);
  Tensor(std::span<const int64_t> data, Shape shape, DType dtype = Scalar::Int64);
  Tensor(std::span<const bool> data, Shape shape);
  Tensor(std::initializer_list<float> data, Shape shape, DType dtype = Scalar::Float32);
  /// A scalar (shape ()).
  explicit Tensor(double value, DType dtype = Scalar::Float32);

  static Tensor full(const Shape& shape, double value, DType dtype = Scalar::Float32);
  static Tensor zeros(const Shape& shape, DType dtype = Scalar::Float32);
  static Tensor ones(const Shape& shape, DType dtype = Scalar::Float32);
  /// 0, 1, ..., stop - 1 as int32; a symbolic stop (arange(seq): position ids) gives the
  /// positions up to its largest value, the first `stop` of them read.
  static Tensor arange(const Dim& stop);
  static Tensor arange(double start, double stop, double step = 1, DType dtype = Scalar::Int32);
  static Tensor eye(int64_t n, DType dtype = Scalar::Float32);
  static Tensor linspace(double start, double stop, int64_t steps, DType dtype = Scalar::Float32);
  /// Uniform in [0, 1), the same values for the same seed on every run and machine.
  static Tensor rand(const Shape& shape, uint64_t seed, DType dtype = Scalar::Float32);
  /// Standard normal (Box-Muller over rand's stream).
  static Tensor randn(const Shape& shape, uint64_t seed, DType dtype = Scalar::Float32);
  /// Raw host bytes of `dtype` (exact, any element dtype), row-major in `shape`; the size must
  /// be numel * itemsize. Bool bytes other than 0 read as true.
  static Tensor from_bytes(std::span<const std::byte> bytes, Shape shape, DType dtype);
  /// A tensor whose elements are `storage` as it is, row-major in `shape`: nothing is copied,
  /// and later writes to the storage show in the tensor (as torch.from_numpy's do). A
  /// UserError when the storage is smaller than the shape needs. A symbolic shape reads the
  /// storage's first numel elements at each value, row-major (a serving loop copies each
  /// request's tensor to the storage's start); the storage is sized for the largest.
  static Tensor from_storage(std::shared_ptr<Buffer> storage, Shape shape, DType dtype);

  // ---- what it is ----
  const Shape& shape() const { return shape_; }
  DType dtype() const { return uop_->dtype(); }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return shape_numel(shape_); }
  const UOpPtr& uop() const { return uop_; }

  // ---- running ----
  /// Computes the tensor (and what it depends on); afterwards it reads from a buffer. A
  /// symbolic tensor is computed at `options.vars` (each checked against its range) and its
  /// shape becomes the one at those values; a plan (ExecutionPlan::run(values)) reruns at others.
  Tensor& realize(const RealizeOptions& options = {});
  /// Realizes several tensors in one schedule.
  static void realize_all(std::span<Tensor* const> tensors, const RealizeOptions& options = {});
  /// The values, converted to T, row-major.
  template <class T>
  std::vector<T> to_vector() const;
  /// The realized values as raw bytes of dtype(), row-major (numel * itemsize bytes).
  std::vector<std::byte> to_bytes() const;
  /// Realizes this tensor (as realize() does), then the buffer holding its elements, row-major
  /// in shape(): shared with the tensor, not copied (numpy's view of a result).
  std::shared_ptr<const Buffer> storage(const RealizeOptions& options = {});
  /// The schedule that would compute this tensor now.
  Schedule schedule() const;
  /// The buffers this tensor's graph reads, by BUFFER id.
  BufferMap inputs() const;
  /// Whether it reads buffers and only constant ones (a model's weights, Buffer::mark_constant):
  /// what a plan computes from it alone runs once, before the plan's first run.
  bool reads_only_constants() const;
  static void collect_inputs(const Tensor& t, BufferMap& out);

  // ---- elementwise ----
  Tensor operator-() const { return neg(); }
  Tensor neg() const;
  Tensor abs() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor reciprocal() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor exp2() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor erf() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const; ///< half to even
  Tensor trunc() const;
  Tensor square() const;
  Tensor sign() const;
  Tensor pow(const Tensor& e) const;
  Tensor pow(double e) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor maximum(double o) const;
  Tensor minimum(double o) const;
  Tensor clamp(std::optional<double> lo, std::optional<double> hi) const;
  Tensor where(const Tensor& a, const Tensor& b) const; ///< this is the condition
  Tensor where(double a, double b) const;
  Tensor cast(DType to) const;
  Tensor bitcast(DType to) const;
  Tensor div(const Tensor& o) const;      ///< true division (ints become float32)
  Tensor floordiv(const Tensor& o) const; ///< rounds toward -inf (Python's //)
  Tensor mod(const Tensor& o) const;      ///< sign of the divisor (Python's %)
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor bitwise_not() const;
  Tensor lshift(int64_t bits) const;
  Tensor rshift(int64_t bits) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;

  // activations
  Tensor relu() const;
  Tensor relu6() const;
  Tensor gelu() const;
  Tensor silu() const;
  Tensor softplus(double beta = 1) const;
  Tensor leaky_relu(double slope = 0.01) const;
  Tensor hardswish() const;
  Tensor mish() const;

  // ---- reductions (axes empty: all) ----
  Tensor sum(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor prod(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor max(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor min(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor mean(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor var(std::vector<int64_t> axes = {}, bool keepdim = false, int64_t correction = 1) const;
  Tensor std(std::vector<int64_t> axes = {}, bool keepdim = false, int64_t correction = 1) const;
  Tensor any(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor all(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  /// The first index of the maximum along `axis` (int32); all elements if axis is nullopt.
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor cumsum(int64_t axis = 0) const;

  // ---- movement ----
  Tensor reshape(Shape shape) const; ///< one dim may be -1
  Tensor permute(std::vector<int64_t> order) const;
  Tensor transpose(int64_t a = -2, int64_t b = -1) const;
  Tensor expand(Shape shape) const; ///< -1 keeps a dim
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> pads, double value = 0) const;
  /// Bounds may be symbolic: x.shrink({{0, seq}, {0, 768}}) is x's first `seq` rows.
  Tensor shrink(std::vector<std::pair<Dim, Dim>> bounds) const;
  template <std::integral T>
  Tensor shrink(const std::vector<std::pair<T, T>>& bounds) const {
    return shrink(std::vector<std::pair<Dim, Dim>>(bounds.begin(), bounds.end()));
  }
  /// Elements [start, stop) of `axis` (negative bounds count from the end).
  Tensor slice(int64_t axis, int64_t start, int64_t stop) const;
  Tensor flip(std::vector<int64_t> axes) const;
  Tensor squeeze(std::optional<int64_t> axis = std::nullopt) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor repeat(std::vector<int64_t> repeats) const;
  /// out[..i..] = this[..index[..i..]..] along `axis` (torch's gather, ONNX GatherElements);
  /// index has this rank and is no larger on the other axes; negative indices count from
  /// the end of the axis; out-of-range indices give 0.
  Tensor gather(int64_t axis, const Tensor& index) const;
  /// numpy take along one axis: out shape = shape[:axis] + index.shape + shape[axis+1:]
  /// (ONNX Gather); negative indices count from the end; out-of-range indices give 0. A
  /// one-hot sum: the work is index.numel() * shape[axis] per element of the other dims.
  Tensor take(const Tensor& index, int64_t axis = 0) const;
  /// ONNX/torch scatter along axis: a copy of this with out[..idx[i]..] = src[i] ("none"; of
  /// several updates to one element the last along the axis wins), or combined with "add" /
  /// "mul" / "max" / "min". index (int, may be negative) has src's shape, this rank, and is no
  /// larger than this on the other axes; out-of-range indices update nothing.
  Tensor scatter(int64_t axis, const Tensor& index, const Tensor& src,
                 const std::string& reduce = "none") const;
  /// One-hot along a new last axis of `num_classes` (this: integer indices; negatives count
  /// from the end): int32 1 where the index matches, 0 elsewhere (out of range: all 0).
  Tensor one_hot(int64_t num_classes) const;
  /// Upper triangle of the last two dims (elements with col - row >= k), zeros elsewhere.
  Tensor triu(int64_t k = 0) const;
  /// Lower triangle of the last two dims (elements with col - row <= k), zeros elsewhere.
  Tensor tril(int64_t k = 0) const;
  /// The k largest (or smallest) along `axis`, sorted; values and int64 indices (ties: lower
  /// index first; NaN counts as larger than everything). Costs O(n^2) per row.
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t axis = -1, bool largest = true) const;
  /// Sorted along axis (stable), values and int64 indices; NaN sorts last (first descending).
  std::pair<Tensor, Tensor> sort(int64_t axis = -1, bool descending = false) const;
  Tensor contiguous() const;
  static Tensor cat(std::span<const Tensor> tensors, int64_t axis = 0);
  static Tensor stack(std::span<const Tensor> tensors, int64_t axis = 0);

  // ---- composite ----
  Tensor matmul(const Tensor& w) const;
  /// matmul accumulating and returning in `acc` (e.g. int32 for int8 inputs, float32 for
  /// float16); acc must be a number dtype, and a float one if either input is float.
  Tensor matmul(const Tensor& w, DType acc) const;
  Tensor dot(const Tensor& w) const { return matmul(w); }
  /// x @ weight.T + bias, weight (out, in) as torch's.
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt) const;
  /// N-d convolution over the dims after (N, C): input (N, C, d1..dk), weight
  /// (Cout, C/groups, k1..kk), bias (Cout,). Pads with zeros; ceil_mode and count_include_pad
  /// must be unset.
  Tensor conv(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              int64_t groups = 1, const WindowArgs& args = {}) const;
  /// Channel blocks: (N, C, d1..dk) -> (N, ceil(C/16), d1..dk, 16), sixteen channels of one
  /// position contiguous (oneDNN's nChw16c), the channels past C zero. A view;
  /// from_channel_blocks undoes it, and the two cancel in a kernel's indices.
  Tensor to_channel_blocks() const;
  /// (N, Cb, d1..dk, 16) -> (N, channels, d1..dk): the first `channels` of the blocks.
  Tensor from_channel_blocks(int64_t channels) const;
  /// Whether convolutions may run on channel blocks at all: no when BEAMLAB_BLOCKED_CONV=0.
  static bool channel_blocks_enabled();
  /// Whether conv_blocked computes this 2-D convolution of an (N, C, H, W) input: float32, and
  /// depthwise (groups = C = Cout) or 1x1 of stride 1 without padding; and
  /// channel_blocks_enabled().
  static bool conv_blocked_supported(const Shape& x, const Tensor& weight, int64_t groups,
                                     const WindowArgs& args);
  /// conv on channel blocks: this is (N, ceil(C/16), H, W, 16) as to_channel_blocks gives,
  /// weight (Cout, C/groups, kh, kw) and bias as conv's; the result is (N, ceil(Cout/16), Ho,
  /// Wo, 16), its channels past Cout zero. Lanes of output channels load whole vectors where
  /// the plain layout reads strided windows (a stride-2 depthwise convolution) or broadcasts.
  Tensor conv_blocked(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups,
                      const WindowArgs& args) const;
  /// Transposed convolution, weight (C, Cout/groups, k1..kk) as torch's; output_padding per
  /// dim (none: 0; one: all) adds elements at the end of each output dim. Output size per dim:
  /// (in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1.
  Tensor conv_transpose(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        int64_t groups = 1, const WindowArgs& args = {},
                        std::vector<int64_t> output_padding = {}) const;
  /// Max pooling over the last kernel.size() dims (any count), padded per args with the
  /// dtype's lowest value (-inf for floats). The stride is 1 unless given (ONNX's default;
  /// torch's is the kernel); ceil_mode follows torch (no window starts in the end padding).
  Tensor max_pool(std::vector<int64_t> kernel, const WindowArgs& args = {}) const;
  /// Where each max_pool window's maximum is: its tap, row-major over the kernel dims (the
  /// first of equal maxima), int32 in max_pool's shape (torch's return_indices, per window).
  Tensor max_pool_argmax(std::vector<int64_t> kernel, const WindowArgs& args = {}) const;
  /// Average pooling over the last kernel.size() dims (any count), padded per args with zeros;
  /// divides by the window's non-pad elements, or with count_include_pad by all but ceil_mode's
  /// extra ones. Integer inputs give float32.
  Tensor avg_pool(std::vector<int64_t> kernel, const WindowArgs& args = {}) const;
  /// Lp pooling: (sum |x|^p over the window)^(1/p), pads contributing 0; p > 0.
  Tensor lp_pool(std::vector<int64_t> kernel, double p, const WindowArgs& args = {}) const;
  /// conv with square padding, stride and dilation; input (N, C, H, W).
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1,
                int64_t groups = 1) const;
  /// max_pool over the last 2 dims with a square kernel (stride: the kernel by default).
  Tensor max_pool2d(int64_t kernel = 2, std::optional<int64_t> stride = std::nullopt,
                    int64_t padding = 0, int64_t dilation = 1) const;
  /// avg_pool over the last 2 dims with a square kernel, pads counted (torch's default).
  Tensor avg_pool2d(int64_t kernel = 2, std::optional<int64_t> stride = std::nullopt,
                    int64_t padding = 0) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(int64_t axis = -1, bool keepdim = false) const;
  /// (x - mean) / sqrt(var + eps) over the last `axes` dims.
  Tensor layernorm(int64_t axis = -1, double eps = 1e-5) const;
  Tensor layernorm(const Tensor& weight, const Tensor& bias, double eps = 1e-5) const;
  /// Inference batch norm over axis 1 with running statistics.
  Tensor batchnorm(const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                   const Tensor& running_var, double eps = 1e-5) const;
  /// softmax(q @ k^T / sqrt(d) [+ mask | causal]) @ v.
  Tensor scaled_dot_product_attention(const Tensor& k, const Tensor& v,
                                      const std::optional<Tensor>& mask = std::nullopt,
                                      bool is_causal = false) const;
  /// numpy's einsum: "ij,jk->ik", "bij,bjk->bik", "i,i->", "ij->ji", "...ij,...jk", "ii->i"
  /// (a repeated letter takes the diagonal), implicit outputs as numpy's.
  static Tensor einsum(const std::string& formula, std::span<const Tensor> operands);

  // ---- internals the API's free functions use ----
  Tensor(UOpPtr uop, Shape shape, std::shared_ptr<const Lineage> lineage);
  static Tensor binary(Op op, const Tensor& a, const Tensor& b, const char* name);
  Tensor scalar_like(double v) const;
  /// The lineage of a tensor computed from `ts`.
  static std::shared_ptr<const Lineage> join(std::initializer_list<const Tensor*> ts);
  int64_t resolve_axis(int64_t axis, const char* op) const;

private:
  Tensor unary(Op op) const;
  Tensor reduce(Op op, std::vector<int64_t> axes, bool keepdim, const char* name) const;

  UOpPtr uop_;
  Shape shape_;
  std::shared_ptr<const Lineage> lineage_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, double b);
Tensor operator>(const Tensor& a, double b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator!(const Tensor& a);

/// Element i of host memory holding elements of `dtype`, as a double (exact for integers
/// below 2^53; half floats widened).
double element_value(const void* base, DType dtype, int64_t i);

/// The numpy broadcast of two shapes; a UserError naming `op` if they don't broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

} // namespace beamlab

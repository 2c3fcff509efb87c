// ONNX neural-network ops: matrix products, convolutions, pooling, normalizations, softmax
// and friends, top-k and scatter. Window ops map ONNX's attributes (kernel_shape, strides,
// dilations, pads as [begins..., ends...], auto_pad, ceil_mode) onto WindowArgs.
#include <algorithm>
#include <limits>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {

// The window settings of a conv or pool over x's spatial dims with kernel `k`.
WindowArgs window(const Node& n, const Tensor& x, const std::vector<int64_t>& k) {
  auto nd = static_cast<int64_t>(k.size());
  WindowArgs w;
  w.stride = n.attr_ints("strides", std::vector<int64_t>(static_cast<size_t>(nd), 1));
  w.dilation = n.attr_ints("dilations", std::vector<int64_t>(static_cast<size_t>(nd), 1));
  user_assert(static_cast<int64_t>(w.stride.size()) == nd &&
              static_cast<int64_t>(w.dilation.size()) == nd)
      << "strides and dilations need " << nd << " values each (one per spatial dim)";
  w.ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  w.count_include_pad = n.attr_int("count_include_pad", 0) != 0;
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * k.size(), 0));
  user_assert(static_cast<int64_t>(pads.size()) == 2 * nd)
      << "pads needs " << 2 * nd << " values ([begins..., ends...]), not " << pads.size();
  for (int64_t i = 0; i < nd; ++i) {
    auto u = static_cast<size_t>(i);
    int64_t in = dim(x, i + 2), eff = (k[u] - 1) * w.dilation[u] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (in + w.stride[u] - 1) / w.stride[u];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[u] + eff - in);
      int64_t small = total / 2, big = total - small;
      w.padding.emplace_back(auto_pad == "SAME_UPPER" ? small : big,
                             auto_pad == "SAME_UPPER" ? big : small);
    } else if (auto_pad == "VALID") {
      w.padding.emplace_back(0, 0);
    } else {
      user_assert(auto_pad == "NOTSET") << "auto_pad '" << auto_pad << "' is not one of NOTSET, "
                                        << "SAME_UPPER, SAME_LOWER, VALID";
      w.padding.emplace_back(pads[u], pads[u + k.size()]);
    }
  }
  return w;
}

std::vector<int64_t> kernel_of(const Node& n, const Tensor& weight) {
  std::vector<int64_t> k = n.attr_ints("kernel_shape");
  if (k.empty()) k.assign(weight.shape().begin() + 2, weight.shape().end());
  return k;
}

namespace {

// A depthwise convolution, and a pointwise one whose input is in channel blocks already, is
// computed in channel blocks (Tensor::conv_blocked): the chains of them in MobileNet-style
// networks then stay blocked from one convolution to the next, through the elementwise ops
// between them (convert() in model.cpp), and only readers of other kinds see the plain layout.
Value conv(const Node& n) {
  const Tensor &x = n.in(0), &w = n.in(1);
  std::vector<int64_t> k = kernel_of(n, w);
  int64_t group = n.attr_int("group", 1);
  WindowArgs args = window(n, x, k);
  const std::optional<Tensor>& blocks = n.value(0)->blocks;
  if (x.dtype() == w.dtype() && Tensor::conv_blocked_supported(x.shape(), w, group, args) &&
      (blocks || group > 1)) {
    Tensor xb = blocks ? *blocks : x.to_channel_blocks();
    return Value::from_blocks(xb.conv_blocked(w, n.opt(2), group, args), dim(w, 0));
  }
  return x.conv(w, n.opt(2), group, args);
}

Tensor conv_transpose(const Node& n) {
  const Tensor &x = n.in(0), &w = n.in(1);
  std::vector<int64_t> k = kernel_of(n, w);
  auto nd = k.size();
  WindowArgs args;
  args.stride = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
  args.dilation = n.attr_ints("dilations", std::vector<int64_t>(nd, 1));
  std::vector<int64_t> out_pad = n.attr_ints("output_padding", std::vector<int64_t>(nd, 0));
  std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  std::vector<int64_t> out_shape = n.attr_ints("output_shape");
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < nd; ++i) {
    int64_t in = dim(x, static_cast<int64_t>(i) + 2);
    int64_t full = args.stride[i] * (in - 1) + out_pad[i] + (k[i] - 1) * args.dilation[i] + 1;
    int64_t want = !out_shape.empty()               ? out_shape[out_shape.size() - nd + i]
                   : auto_pad.rfind("SAME", 0) == 0 ? in * args.stride[i]
                                                    : -1;
    if (want >= 0) {
      int64_t total = full - want, half = total >= 0 ? total / 2 : -((1 - total) / 2); // floor
      pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[i + nd] = total - pads[i];
    }
    if (pads[i + nd] < 0) { // an output_shape past the full size: zeros at the end
      out_pad[i] -= pads[i + nd];
      pads[i + nd] = 0;
    }
    args.padding.emplace_back(pads[i], pads[i + nd]);
  }
  return x.conv_transpose(w, n.opt(2), n.attr_int("group", 1), args, out_pad);
}

Tensor gemm(const Node& n) {
  Tensor a = n.in(0), b = n.in(1);
  if (n.attr_int("transA", 0)) a = a.transpose(0, 1);
  if (n.attr_int("transB", 0)) b = b.transpose(0, 1);
  double alpha = n.attr_float("alpha", 1.0), beta = n.attr_float("beta", 1.0);
  Tensor y = a.matmul(b).cast(a.dtype());
  if (alpha != 1.0) y = y * alpha;
  if (n.has(2)) y = y + (beta != 1.0 ? n.in(2) * beta : n.in(2));
  return y;
}

// Softmax-like ops: before opset 13 over the input flattened to 2-D at `axis` (default 1),
// from 13 over `axis` alone (default -1).
Tensor along_axis(const Node& n, Tensor (*f)(const Tensor&, int64_t)) {
  const Tensor& x = n.in(0);
  if (n.opset() >= 13) return f(x, Node::axis(n.attr_int("axis", -1), x.ndim(), "axis"));
  int64_t a = Node::axis(n.attr_int("axis", 1), x.ndim(), "axis"), outer = 1;
  for (int64_t i = 0; i < a; ++i) outer *= dim(x, i);
  return f(x.reshape({outer, x.numel() / outer}), 1).reshape(x.shape());
}

Tensor hardmax(const Tensor& x, int64_t a) {
  Shape along(static_cast<size_t>(x.ndim()), 1);
  along[static_cast<size_t>(a)] = dim(x, a);
  Tensor idx = x.argmax(a, true);
  return idx.eq(Tensor::arange(dim(x, a)).reshape(along)).cast(x.dtype());
}

Tensor avg_pool(const Node& n) {
  const Tensor& x = n.in(0);
  std::vector<int64_t> k = n.attr_ints("kernel_shape");
  user_assert(!k.empty()) << "attribute 'kernel_shape' is required";
  return x.avg_pool(k, window(n, x, k));
}

// MaxPool, with its Indices output: each maximum's position in the input flattened, row-major
// (or with storage_order=1 each image's spatial dims column-major), padding not counted.
std::vector<Value> max_pool(const Node& n) {
  const Tensor& x = n.in(0);
  std::vector<int64_t> k = n.attr_ints("kernel_shape");
  user_assert(!k.empty()) << "attribute 'kernel_shape' is required";
  WindowArgs w = window(n, x, k);
  Tensor y = x.max_pool(k, w);
  if (!n.wants_output(1)) return {y};
  bool column_major = n.attr_int("storage_order", 0) != 0;
  const auto nd = static_cast<int64_t>(k.size());
  Tensor tap = x.max_pool_argmax(k, w).cast(Scalar::Int64);
  auto i64 = [](int64_t v) { return Tensor(static_cast<double>(v), Scalar::Int64); };
  auto along = [&](int64_t d, int64_t count) { // 0..count-1 along dim d of y's rank
    Shape s(static_cast<size_t>(y.ndim()), 1);
    s[static_cast<size_t>(d)] = count;
    return Tensor::arange(0, static_cast<double>(count), 1, Scalar::Int64).reshape(s);
  };
  int64_t image = 1;
  for (int64_t d = 0; d < nd; ++d) image *= dim(x, 2 + d);
  Tensor at = (along(0, dim(x, 0)) * dim(x, 1) + along(1, dim(x, 1))) * image;
  int64_t later = image, column_stride = 1;
  for (int64_t d = 0; d < nd; ++d) {
    auto u = static_cast<size_t>(d);
    later /= dim(x, 2 + d);
    int64_t taps_after = 1;
    for (size_t j = u + 1; j < k.size(); ++j) taps_after *= k[j];
    Tensor offset = tap.floordiv(i64(taps_after)).mod(i64(k[u]));
    Tensor p =
        along(2 + d, dim(y, 2 + d)) * w.stride[u] + offset * w.dilation[u] - w.padding[u].first;
    at = at + p * (column_major ? column_stride : later);
    column_stride *= dim(x, 2 + d);
  }
  return {y, at};
}

// MaxUnpool: X's values at Indices' flat positions of an output of zeros (output_shape, or
// the pooling's input size: (in - 1) * stride + kernel - pads).
Tensor max_unpool(const Node& n) {
  const Tensor &x = n.in(0), &index = n.in(1);
  std::vector<int64_t> k = n.attr_ints("kernel_shape");
  const size_t nd = k.size();
  auto strides = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  user_assert(!k.empty() && strides.size() == nd && pads.size() == 2 * nd &&
              x.ndim() == static_cast<int64_t>(nd) + 2)
      << "kernel_shape, strides and pads must fit X's " << x.ndim() - 2 << " spatial dims";
  Shape inferred = {dim(x, 0), dim(x, 1)};
  for (size_t d = 0; d < nd; ++d)
    inferred.push_back((dim(x, static_cast<int64_t>(d) + 2) - 1) * strides[d] + k[d] - pads[d] -
                       pads[d + nd]);
  Tensor zeros = Tensor::zeros({shape_numel(inferred)}, x.dtype());
  Tensor y =
      zeros.scatter(0, index.cast(Scalar::Int64).reshape({-1}), x.reshape({-1})).reshape(inferred);
  if (!n.has(2)) return y;
  // A larger output_shape: the indices still address the inferred shape, zeros after it.
  std::vector<int64_t> out = n.host_ints(2);
  user_assert(out.size() == inferred.size())
      << "output_shape has " << out.size() << " dims for a rank-" << inferred.size() << " result";
  std::vector<std::pair<int64_t, int64_t>> grow;
  for (size_t d = 0; d < out.size(); ++d) {
    user_assert(out[d] >= inferred[d]) << "output_shape " << shape_str(out) << " is smaller than "
                                       << shape_str(inferred) << ", the pooling's input";
    grow.emplace_back(0, out[d] - inferred[d]);
  }
  return y.pad(grow);
}

// Det: the determinant of each (n, n) matrix of the last two dims, by Gaussian elimination
// with partial pivoting unrolled over the columns (the pivot row picked and swapped by
// comparisons, each swap flipping the sign).
Tensor det(const Node& n) {
  const Tensor& x = n.in(0);
  user_assert(x.ndim() >= 2 && dim(x, x.ndim() - 1) == dim(x, x.ndim() - 2))
      << "input must be square matrices (..., n, n), not " << shape_str(x.shape());
  const int64_t size = dim(x, x.ndim() - 1);
  DType dt = float_of(x.dtype());
  Tensor a = x.cast(dt);
  Shape rows_shape(static_cast<size_t>(x.ndim()), 1);
  rows_shape[rows_shape.size() - 2] = size;
  Tensor rows = Tensor::arange(0, static_cast<double>(size), 1, dt).reshape(rows_shape);
  Shape batch(x.shape().begin(), x.shape().end() - 2);
  Tensor result = Tensor::ones(batch, dt);
  for (int64_t c = 0; c < size; ++c) {
    // The pivot: the largest |a[r, c]| among rows r >= c.
    Tensor column = a.slice(-1, c, c + 1); // (..., n, 1)
    Tensor score = (rows < static_cast<double>(c)).where(column.scalar_like(-1), column.abs());
    Tensor pivot = score.argmax(-2, true).cast(dt); // (..., 1, 1)
    Tensor is_pivot = rows.eq(pivot), is_c = rows.eq(rows.scalar_like(static_cast<double>(c)));
    Tensor pivot_row = (is_pivot.where(a, a.scalar_like(0))).sum({-2}, true);
    Tensor c_row = a.slice(-2, c, c + 1);
    a = is_c.where(pivot_row, is_pivot.where(c_row, a));
    Tensor swapped = pivot.ne(pivot.scalar_like(static_cast<double>(c)));
    Tensor p = pivot_row.slice(-1, c, c + 1); // (..., 1, 1)
    result = result * swapped.where(-p, p).reshape(batch);
    Tensor safe = p.eq(p.scalar_like(0)).where(p.scalar_like(1), p);
    Tensor factor =
        (rows > static_cast<double>(c)).where(a.slice(-1, c, c + 1) / safe, column.scalar_like(0));
    a = a - factor * pivot_row;
  }
  return result.cast(x.dtype());
}

Tensor global_pool(const Tensor& x, bool is_max) {
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  return is_max ? x.max(axes, true) : x.mean(axes, true).cast(x.dtype());
}

Tensor batchnorm(const Node& n) {
  user_assert(n.attr_int("training_mode", 0) == 0)
      << "training_mode=1 is not supported (beamlab runs inference)";
  const Tensor& x = n.in(0);
  return x.batchnorm(n.in(1), n.in(2), n.in(3), n.in(4), n.attr_float("epsilon", 1e-5))
      .cast(x.dtype());
}

Tensor instance_norm(const Node& n) {
  const Tensor& x = n.in(0);
  Shape per_channel(static_cast<size_t>(x.ndim()), 1);
  per_channel[1] = dim(x, 1);
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  Tensor mean = x.mean(axes, true), d = x - mean;
  Tensor var = (d * d).mean(axes, true);
  Tensor y = d * (var + n.attr_float("epsilon", 1e-5)).rsqrt();
  return y * n.in(1).reshape(per_channel) + n.in(2).reshape(per_channel);
}

// GroupNormalization (18, 21): each group of C / num_groups channels normalized over its
// channels and spatial dims, then scaled and shifted per group (18) or per channel (21), in
// float32 (21's stash_type 1) or the input's own float type.
Tensor group_norm(const Node& n) {
  const Tensor& x = n.in(0);
  user_assert(x.ndim() >= 2) << "X must be (N, C, ...), not " << shape_str(x.shape());
  int64_t groups = n.attr_int("num_groups"), c = dim(x, 1);
  user_assert(groups >= 1 && c % groups == 0)
      << "num_groups " << groups << " must divide the " << c << " channels";
  // Opset 21 normalizes in stash_type (float32 by default); 18 in the input's own float type.
  Tensor f = n.opset() >= 21 ? x.cast(dtype_of(static_cast<int>(n.attr_int("stash_type", 1)),
                                               "attribute 'stash_type'"))
                             : x.cast(float_of(x.dtype()));
  Tensor g = f.reshape({dim(x, 0), groups, -1});
  Tensor mean = g.mean({2}, true), d = g - mean;
  Tensor y = (d * ((d * d).mean({2}, true) + n.attr_float("epsilon", 1e-5)).rsqrt())
                 .reshape(x.shape())
                 .cast(x.dtype());
  Tensor scale = n.in(1), bias = n.in(2);
  int64_t per = n.opset() >= 21 ? c : groups;
  user_assert(scale.numel() == per && bias.numel() == per)
      << "scale and bias need " << per << " values (one per " << (per == c ? "channel" : "group")
      << " at opset " << n.opset() << "), not " << scale.numel() << " and " << bias.numel();
  if (per != c) { // one value per group, repeated over its channels
    scale = scale.reshape({groups, 1}).expand({groups, c / groups}).reshape({c});
    bias = bias.reshape({groups, 1}).expand({groups, c / groups}).reshape({c});
  }
  Shape per_channel(static_cast<size_t>(x.ndim()), 1);
  per_channel[1] = c;
  return y * scale.reshape(per_channel) + bias.reshape(per_channel);
}

// Col2Im (18): the (N, C * prod(block), L) columns summed back into (N, C, image...) at their
// blocks' places: a transposed convolution of the columns, as (N, C*K, blocks...), with a
// one-hot weight (column j of a channel lands on tap j of the block).
Tensor col2im(const Node& n) {
  const Tensor& x = n.in(0);
  std::vector<int64_t> image = n.host_ints(1), block = n.host_ints(2);
  const size_t nd = image.size();
  user_assert(nd >= 1 && block.size() == nd)
      << "image_shape and block_shape need one value per spatial dim, not " << nd << " and "
      << block.size();
  int64_t taps = 1;
  for (int64_t b : block) taps *= b;
  user_assert(x.ndim() == 3 && dim(x, 1) % taps == 0)
      << "input must be (N, C * " << taps << ", L), not " << shape_str(x.shape());
  auto d = n.attr_ints("dilations", std::vector<int64_t>(nd, 1));
  auto s = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  user_assert(d.size() == nd && s.size() == nd && pads.size() == 2 * nd)
      << "dilations and strides need " << nd << " values and pads " << 2 * nd;
  for (size_t i = 0; i < nd; ++i)
    user_assert(block[i] >= 1 && d[i] >= 1 && s[i] >= 1 && pads[i] >= 0 && pads[i + nd] >= 0)
        << "block_shape, dilations and strides must be at least 1 and pads at least 0 (dim " << i
        << ")";
  Shape blocks = {dim(x, 0), dim(x, 1)};
  WindowArgs args{.stride = s, .dilation = d, .padding = {}};
  std::vector<int64_t> extra;
  int64_t count = 1;
  for (size_t i = 0; i < nd; ++i) {
    int64_t span = d[i] * (block[i] - 1) + 1, padded = image[i] + pads[i] + pads[i + nd];
    user_assert(padded >= span) << "a block of " << block[i] << " does not fit image dim " << i;
    int64_t o = (padded - span) / s[i] + 1;
    blocks.push_back(o);
    count *= o;
    args.padding.emplace_back(pads[i], pads[i + nd]);
    extra.push_back(padded - ((o - 1) * s[i] + span));
  }
  user_assert(dim(x, 2) == count) << "input has " << dim(x, 2) << " blocks; the image, block, "
                                  << "pads and strides make " << count;
  int64_t c = dim(x, 1) / taps;
  Shape wshape = {c * taps, 1};
  wshape.insert(wshape.end(), block.begin(), block.end());
  Tensor weight =
      Tensor::eye(taps, x.dtype()).reshape({1, taps, taps}).expand({c, taps, taps}).reshape(wshape);
  return x.reshape(blocks).conv_transpose(weight, std::nullopt, c, args, extra);
}

std::vector<Value> layernorm(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t a = Node::axis(n.attr_int("axis", -1), x.ndim(), "axis");
  std::vector<int64_t> axes;
  for (int64_t i = a; i < x.ndim(); ++i) axes.push_back(i);
  Tensor f = x.cast(Scalar::Float32);
  if (x.dtype() == Scalar::Float64) f = x;
  Tensor mean = f.mean(axes, true), d = f - mean;
  Tensor inv = ((d * d).mean(axes, true) + n.attr_float("epsilon", 1e-5)).rsqrt();
  Tensor y = (d * inv).cast(x.dtype()) * n.in(1);
  if (n.has(2)) y = y + n.in(2);
  return {y, mean, inv};
}

Tensor lrn(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t size = n.attr_int("size");
  double alpha = n.attr_float("alpha", 1e-4), beta = n.attr_float("beta", 0.75);
  double bias = n.attr_float("bias", 1.0);
  int64_t c = dim(x, 1), before = (size - 1) / 2, after = size - 1 - before;
  std::vector<std::pair<int64_t, int64_t>> pads(static_cast<size_t>(x.ndim()), {0, 0});
  pads[1] = {before, after};
  Tensor sq = (x * x).pad(pads);
  std::optional<Tensor> sum;
  for (int64_t i = 0; i < size; ++i) {
    Tensor part = sq.slice(1, i, i + c);
    sum = sum ? *sum + part : part;
  }
  return x / (*sum * (alpha / static_cast<double>(size)) + bias).pow(beta);
}

Tensor mean_variance_norm(const Node& n) {
  const Tensor& x = n.in(0);
  std::vector<int64_t> axes = n.attr_ints("axes", {0, 2, 3});
  Tensor d = x - x.mean(axes, true);
  return d / ((d * d).mean(axes, true).sqrt() + 1e-9);
}

Tensor lp_norm(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t a = Node::axis(n.attr_int("axis", -1), x.ndim(), "axis"), p = n.attr_int("p", 2);
  user_assert(p == 1 || p == 2) << "p must be 1 or 2, not " << p;
  Tensor norm = p == 1 ? x.abs().sum({a}, true) : (x * x).sum({a}, true).sqrt();
  return x / norm;
}

std::vector<Value> topk(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t k = n.opset() >= 10 ? n.host_ints(1)[0] : n.attr_int("k");
  int64_t a = Node::axis(n.attr_int("axis", -1), x.ndim(), "axis");
  auto [values, indices] = x.topk(k, a, n.attr_int("largest", 1) != 0);
  return {values, indices.cast(Scalar::Int64)};
}

Tensor scatter(const Node& n) {
  const Tensor& x = n.in(0);
  int64_t a = Node::axis(n.attr_int("axis", 0), x.ndim(), "axis");
  return x.scatter(a, n.in(1), n.in(2), n.attr_string("reduction", "none"));
}

} // namespace

void add_nn_ops(ConverterTable& t) {
  t["MatMul"] = [](const Node& n) {
    const Tensor &a = n.in(0), &b = n.in(1);
    return one(a.matmul(b).cast(least_upper_dtype(a.dtype(), b.dtype())));
  };
  t["MatMulInteger"] = [](const Node& n) {
    Tensor a = n.in(0).cast(Scalar::Int32), b = n.in(1).cast(Scalar::Int32);
    if (n.has(2)) a = a - n.in(2).cast(Scalar::Int32);
    if (n.has(3)) b = b - n.in(3).cast(Scalar::Int32);
    return one(a.matmul(b, Scalar::Int32));
  };
  t["Gemm"] = [](const Node& n) { return one(gemm(n)); };
  t["Conv"] = [](const Node& n) { return std::vector<Value>{conv(n)}; };
  t["ConvTranspose"] = [](const Node& n) { return one(conv_transpose(n)); };
  t["MaxPool"] = max_pool;
  t["MaxUnpool"] = [](const Node& n) { return one(max_unpool(n)); };
  t["Det"] = [](const Node& n) { return one(det(n)); };
  t["AveragePool"] = [](const Node& n) { return one(avg_pool(n)); };
  t["LpPool"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    std::vector<int64_t> k = n.attr_ints("kernel_shape");
    return one(x.lp_pool(k, static_cast<double>(n.attr_int("p", 2)), window(n, x, k)));
  };
  t["GlobalAveragePool"] = [](const Node& n) { return one(global_pool(n.in(0), false)); };
  t["GlobalMaxPool"] = [](const Node& n) { return one(global_pool(n.in(0), true)); };
  t["BatchNormalization"] = [](const Node& n) { return one(batchnorm(n)); };
  t["InstanceNormalization"] = [](const Node& n) { return one(instance_norm(n)); };
  t["LayerNormalization"] = layernorm;
  t["GroupNormalization"] = [](const Node& n) { return one(group_norm(n)); };
  t["Col2Im"] = [](const Node& n) { return one(col2im(n)); };
  t["LRN"] = [](const Node& n) { return one(lrn(n)); };
  t["MeanVarianceNormalization"] = [](const Node& n) { return one(mean_variance_norm(n)); };
  t["LpNormalization"] = [](const Node& n) { return one(lp_norm(n)); };
  t["Softmax"] = [](const Node& n) {
    return one(along_axis(n, [](const Tensor& x, int64_t a) { return x.softmax(a); }));
  };
  t["LogSoftmax"] = [](const Node& n) {
    return one(along_axis(n, [](const Tensor& x, int64_t a) { return x.log_softmax(a); }));
  };
  t["Hardmax"] = [](const Node& n) { return one(along_axis(n, hardmax)); };
  t["TopK"] = topk;
  t["ScatterElements"] = [](const Node& n) { return one(scatter(n)); };
  t["Scatter"] = [](const Node& n) { return one(scatter(n)); };
}

} // namespace beamlab::onnx

// Composite tensor ops: matmul, convolution, pooling, normalization, attention, einsum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/tensor/tensor.hpp"

namespace beamlab {
namespace {

// Products of small integers accumulate in int32 (int8 matmuls give int32).
DType product_dtype(DType a, DType b) {
  DType t = least_upper_dtype(a, b);
  if (t.is_bool() || (t.is_int() && t.itemsize() < 4)) return Scalar::Int32;
  return t;
}

} // namespace

Tensor Tensor::matmul(const Tensor& w) const {
  user_assert(ndim() >= 1 && w.ndim() >= 1)
      << "matmul: " << shape_str(shape_) << " @ " << shape_str(w.shape())
      << ": scalars have no matrix product (use *)";
  Tensor a = ndim() == 1 ? unsqueeze(0) : *this;
  Tensor b = w.ndim() == 1 ? w.unsqueeze(-1) : w;
  int64_t k = a.shape().back(), kb = b.shape()[b.shape().size() - 2];
  user_assert(k == kb) << "matmul: " << shape_str(shape_) << " @ " << shape_str(w.shape())
                       << ": inner dimensions differ (" << k << " vs " << kb << ")";
  DType dt = product_dtype(dtype(), w.dtype());
  Tensor x = a.cast(dt).unsqueeze(-2);                   // (..., n, 1, k)
  Tensor y = b.cast(dt).transpose(-1, -2).unsqueeze(-3); // (..., 1, m, k)
  Tensor out = (x * y).sum({-1});
  if (ndim() == 1) out = out.squeeze(-2);
  if (w.ndim() == 1) out = out.squeeze(-1);
  return out;
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias) const {
  user_assert(weight.ndim() == 2) << "linear: weight must be (out, in), not "
                                  << shape_str(weight.shape());
  Tensor out = matmul(weight.transpose(0, 1));
  return bias ? out + *bias : out;
}

// Sliding windows over the last kernel.size() dims: (..., o1, o2, k1, k2).
Tensor Tensor::pool(int64_t kernel, int64_t stride, int64_t dilation) const {
  const int nd = 2;
  Shape prefix(shape_.begin(), shape_.end() - nd);
  std::vector<int64_t> in(shape_.end() - nd, shape_.end()), out(nd);
  for (int i = 0; i < nd; ++i) {
    out[i] = (in[i] - dilation * (kernel - 1) - 1) / stride + 1;
    user_assert(in[i] - dilation * (kernel - 1) >= 1)
        << "pool: a window of " << kernel << " (dilation " << dilation << ") does not fit in "
        << shape_str(shape_);
  }
  auto dims = [&](auto per_dim) {
    Shape s = prefix;
    for (int i = 0; i < nd; ++i) per_dim(s, i);
    return s;
  };
  auto keep_prefix = [&]() {
    std::vector<std::pair<int64_t, int64_t>> b;
    for (int64_t d : prefix) b.emplace_back(0, d);
    return b;
  };
  Tensor x = *this;
  bool disjoint = kernel <= stride && dilation == 1;
  if (disjoint) {
    // Windows don't overlap: cut or pad each dim to o*s, view it as (o, s), keep k of each s.
    std::vector<std::pair<int64_t, int64_t>> pads(prefix.size(), {0, 0}), cut = keep_prefix();
    for (int i = 0; i < nd; ++i) {
      pads.emplace_back(0, std::max<int64_t>(0, out[i] * stride - in[i]));
      cut.emplace_back(0, out[i] * stride);
    }
    x = x.pad(pads).shrink(cut).reshape(
        dims([&](Shape& s, int i) { s.insert(s.end(), {out[i], stride}); }));
    std::vector<std::pair<int64_t, int64_t>> keep = keep_prefix();
    for (int i = 0; i < nd; ++i) keep.insert(keep.end(), {{0, out[i]}, {0, kernel}});
    x = x.shrink(keep);
  } else {
    // Overlapping windows: repeat each dim e times and view the repeats as k rows of i+d, so
    // row r starts r*d elements further in; keep o*s columns, then every s-th.
    std::vector<int64_t> e(nd);
    for (int i = 0; i < nd; ++i) e[i] = (kernel * (in[i] + dilation) + in[i] - 1) / in[i];
    x = x.reshape(dims([&](Shape& s, int i) { s.insert(s.end(), {1, in[i]}); }))
            .expand(dims([&](Shape& s, int i) { s.insert(s.end(), {e[i], in[i]}); }))
            .reshape(dims([&](Shape& s, int i) { s.push_back(e[i] * in[i]); }));
    std::vector<std::pair<int64_t, int64_t>> b = keep_prefix();
    for (int i = 0; i < nd; ++i) b.emplace_back(0, kernel * (in[i] + dilation));
    x = x.shrink(b).reshape(
        dims([&](Shape& s, int i) { s.insert(s.end(), {kernel, in[i] + dilation}); }));
    std::vector<std::pair<int64_t, int64_t>> pads(prefix.size(), {0, 0}), cut = keep_prefix();
    for (int i = 0; i < nd; ++i) {
      pads.insert(pads.end(),
                  {{0, 0}, {0, std::max<int64_t>(0, out[i] * stride - in[i] - dilation)}});
      cut.insert(cut.end(), {{0, kernel}, {0, out[i] * stride}});
    }
    x = x.pad(pads).shrink(cut).reshape(
        dims([&](Shape& s, int i) { s.insert(s.end(), {kernel, out[i], stride}); }));
    std::vector<std::pair<int64_t, int64_t>> keep = keep_prefix();
    for (int i = 0; i < nd; ++i) keep.insert(keep.end(), {{0, kernel}, {0, out[i]}, {0, 1}});
    x = x.shrink(keep).reshape(dims([&](Shape& s, int i) { s.insert(s.end(), {kernel, out[i]}); }));
  }
  // Each dim is now a pair, (o, k) without overlap or (k, o) with it: -> (..., o1, o2, k1, k2).
  int o_at = disjoint ? 0 : 1;
  auto p = static_cast<int64_t>(prefix.size());
  std::vector<int64_t> order;
  for (int64_t i = 0; i < p; ++i) order.push_back(i);
  for (int i = 0; i < nd; ++i) order.push_back(p + 2 * i + o_at);
  for (int i = 0; i < nd; ++i) order.push_back(p + 2 * i + 1 - o_at);
  return x.permute(order);
}

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t stride,
                      int64_t padding, int64_t dilation, int64_t groups) const {
  user_assert(ndim() == 4 && weight.ndim() == 4)
      << "conv2d: input must be (N, C, H, W) and weight (Cout, C/groups, kh, kw), not "
      << shape_str(shape_) << " and " << shape_str(weight.shape());
  int64_t n = shape_[0], cin = shape_[1], cout = weight.shape()[0], cg = weight.shape()[1];
  int64_t kh = weight.shape()[2], kw = weight.shape()[3];
  user_assert(groups >= 1 && cin == cg * groups && cout % groups == 0)
      << "conv2d: input " << shape_str(shape_) << " and weight " << shape_str(weight.shape())
      << " do not match with groups=" << groups
      << " (need C = weight C * groups, Cout % groups = 0)";
  user_assert(kh == kw) << "conv2d: only square kernels are supported, not " << kh << "x" << kw;
  user_assert(stride >= 1 && padding >= 0 && dilation >= 1)
      << "conv2d: stride and dilation must be at least 1 and padding at least 0";
  Tensor x =
      pad({{0, 0}, {0, 0}, {padding, padding}, {padding, padding}}).pool(kh, stride, dilation);
  int64_t oh = x.shape()[2], ow = x.shape()[3], rcout = cout / groups;
  DType dt = product_dtype(dtype(), weight.dtype());
  // (N, G, Cg, 1, oh, ow, kh, kw) -> (N, G, rcout, oh, ow, Cg, kh, kw)
  x = x.cast(dt)
          .reshape({n, groups, cg, 1, oh, ow, kh, kw})
          .expand({n, groups, cg, rcout, oh, ow, kh, kw})
          .permute({0, 1, 3, 4, 5, 2, 6, 7});
  Tensor w = weight.cast(dt).reshape({1, groups, rcout, 1, 1, cg, kh, kw});
  Tensor out = (x * w).sum({5, 6, 7}).reshape({n, cout, oh, ow});
  return bias ? out + bias->reshape({1, cout, 1, 1}) : out;
}

Tensor Tensor::max_pool2d(int64_t kernel, std::optional<int64_t> stride, int64_t padding,
                          int64_t dilation) const {
  user_assert(ndim() >= 2) << "max_pool2d: needs at least 2 dims, not " << shape_str(shape_);
  std::vector<std::pair<int64_t, int64_t>> pads(shape_.size(), {0, 0});
  pads[pads.size() - 1] = pads[pads.size() - 2] = {padding, padding};
  double lowest = dtype().is_float() ? -std::numeric_limits<double>::infinity()
                                     : static_cast<double>(dtype().int_min());
  return pad(pads, lowest).pool(kernel, stride.value_or(kernel), dilation).max({-1, -2});
}

Tensor Tensor::avg_pool2d(int64_t kernel, std::optional<int64_t> stride, int64_t padding) const {
  user_assert(ndim() >= 2) << "avg_pool2d: needs at least 2 dims, not " << shape_str(shape_);
  std::vector<std::pair<int64_t, int64_t>> pads(shape_.size(), {0, 0});
  pads[pads.size() - 1] = pads[pads.size() - 2] = {padding, padding};
  return pad(pads).pool(kernel, stride.value_or(kernel), 1).mean({-1, -2});
}

Tensor Tensor::softmax(int64_t axis) const {
  Tensor x = cast(dtype().is_float() ? dtype() : DType(Scalar::Float32));
  Tensor e = (x - x.max({axis}, true)).exp();
  return e * e.sum({axis}, true).reciprocal(); // one division a row, not one an element
}

Tensor Tensor::log_softmax(int64_t axis) const {
  Tensor x = cast(dtype().is_float() ? dtype() : DType(Scalar::Float32));
  Tensor d = x - x.max({axis}, true);
  return d - d.exp().sum({axis}, true).log();
}

Tensor Tensor::logsumexp(int64_t axis, bool keepdim) const {
  Tensor x = cast(dtype().is_float() ? dtype() : DType(Scalar::Float32));
  Tensor m = x.max({axis}, true);
  Tensor r = (x - m).exp().sum({axis}, true).log() + m;
  return keepdim ? r : r.squeeze(axis);
}

Tensor Tensor::layernorm(int64_t axis, double eps) const {
  Tensor x = cast(dtype().is_float() ? dtype() : DType(Scalar::Float32));
  Tensor y = x - x.mean({axis}, true);
  return y * ((y * y).mean({axis}, true) + eps).rsqrt();
}

Tensor Tensor::layernorm(const Tensor& weight, const Tensor& bias, double eps) const {
  return layernorm(-1, eps) * weight + bias;
}

Tensor Tensor::batchnorm(const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                         const Tensor& running_var, double eps) const {
  user_assert(ndim() >= 2) << "batchnorm: needs (N, C, ...), not " << shape_str(shape_);
  Shape per_channel(shape_.size(), 1);
  per_channel[1] = shape_[1];
  auto chan = [&](const Tensor& t, const char* what) {
    user_assert(t.numel() == shape_[1]) << "batchnorm: " << what << " has shape "
                                        << shape_str(t.shape()) << ", not (" << shape_[1] << ",)";
    return t.reshape(per_channel);
  };
  Tensor scale = chan(weight, "weight") * (chan(running_var, "running_var") + eps).rsqrt();
  return (*this - chan(running_mean, "running_mean")) * scale + chan(bias, "bias");
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& k, const Tensor& v,
                                            const std::optional<Tensor>& mask,
                                            bool is_causal) const {
  user_assert(ndim() >= 2 && k.ndim() >= 2 && v.ndim() >= 2)
      << "scaled_dot_product_attention: q, k, v need (..., L, d), not " << shape_str(shape_) << ", "
      << shape_str(k.shape()) << ", " << shape_str(v.shape());
  double scale = 1.0 / std::sqrt(static_cast<double>(shape_.back()));
  Tensor scores = matmul(k.transpose(-2, -1)) * scale;
  int64_t l = scores.shape()[scores.shape().size() - 2], s = scores.shape().back();
  double neg_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    Tensor i = arange(l).reshape({l, 1}), j = arange(s).reshape({1, s});
    scores = j.le(i).where(scores, Tensor(neg_inf, scores.dtype()));
  }
  if (mask)
    scores = mask->dtype().is_bool() ? mask->where(scores, Tensor(neg_inf, scores.dtype()))
                                     : scores + *mask;
  return scores.softmax(-1).matmul(v);
}

Tensor Tensor::einsum(const std::string& formula, std::span<const Tensor> operands) {
  std::string lhs = formula, rhs;
  bool explicit_out = false;
  if (size_t arrow = formula.find("->"); arrow != std::string::npos) {
    lhs = formula.substr(0, arrow);
    rhs = formula.substr(arrow + 2);
    explicit_out = true;
  }
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else if (c != ' ')
      terms.back() += c;
  }
  user_assert(terms.size() == operands.size())
      << "einsum: '" << formula << "' names " << terms.size() << " operands but " << operands.size()
      << " were given";
  std::map<char, int64_t> size, count;
  std::string letters;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& term = terms[t];
    user_assert(static_cast<int64_t>(term.size()) == operands[t].ndim())
        << "einsum: '" << term << "' has " << term.size() << " letters but operand " << t
        << " has shape " << shape_str(operands[t].shape());
    for (size_t i = 0; i < term.size(); ++i) {
      char c = term[i];
      user_assert(std::isalpha(static_cast<unsigned char>(c)))
          << "einsum: '" << formula << "' has a bad character '" << c << "'";
      user_assert(term.find(c) == i)
          << "einsum: '" << term << "' repeats a letter (diagonals are not supported)";
      int64_t d = operands[t].shape()[i];
      auto [it, fresh] = size.emplace(c, d);
      user_assert(fresh || it->second == d || d == 1 || it->second == 1)
          << "einsum: '" << c << "' is " << it->second << " in one operand and " << d
          << " in another";
      it->second = std::max(it->second, d);
      if (fresh) letters += c;
      ++count[c];
    }
  }
  if (!explicit_out) {
    for (auto [c, n] : count)
      if (n == 1) rhs += c;
  }
  for (char c : rhs)
    user_assert(size.count(c)) << "einsum: output letter '" << c << "' is not in any operand";
  // Every operand laid out over all letters (missing ones as 1), multiplied, summed.
  std::optional<Tensor> prod;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& term = terms[t];
    std::vector<int64_t> order;
    Shape shape;
    for (char c : letters)
      if (size_t p = term.find(c); p != std::string::npos) order.push_back(static_cast<int64_t>(p));
    for (char c : letters)
      shape.push_back(term.find(c) != std::string::npos ? operands[t].shape()[term.find(c)] : 1);
    Tensor x = operands[t].permute(order).reshape(shape);
    prod = prod ? *prod * x : x;
  }
  std::vector<int64_t> summed;
  std::string kept;
  for (size_t i = 0; i < letters.size(); ++i) {
    if (rhs.find(letters[i]) == std::string::npos)
      summed.push_back(static_cast<int64_t>(i));
    else
      kept += letters[i];
  }
  Tensor r = summed.empty() ? *prod : prod->sum(summed);
  std::vector<int64_t> order;
  for (char c : rhs) order.push_back(static_cast<int64_t>(kept.find(c)));
  return r.permute(order);
}

} // namespace beamlab

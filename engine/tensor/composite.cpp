// Composite tensor ops: matmul, normalization, attention, einsum (convolution and pooling
// are in nn.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/tensor/tensor_internal.hpp"

namespace beamlab {

DType detail::product_dtype(DType a, DType b) {
  DType t = least_upper_dtype(a, b);
  if (t.is_bool() || (t.is_int() && t.itemsize() < 4)) return Scalar::Int32;
  return t;
}

namespace {

// v @ w with the products and their sums in `dt`.
Tensor matmul_in(const Tensor& v, const Tensor& w, DType dt) {
  user_assert(v.ndim() >= 1 && w.ndim() >= 1)
      << "matmul: " << shape_str(v.shape()) << " @ " << shape_str(w.shape())
      << ": scalars have no matrix product (use *)";
  Tensor a = v.ndim() == 1 ? v.unsqueeze(0) : v;
  Tensor b = w.ndim() == 1 ? w.unsqueeze(-1) : w;
  Dim k = a.shape().back(), kb = b.shape()[b.shape().size() - 2];
  user_assert(k == kb) << "matmul: " << shape_str(v.shape()) << " @ " << shape_str(w.shape())
                       << ": inner dimensions differ (" << k << " vs " << kb << ")";
  Tensor x = a.cast(dt).unsqueeze(-2);                   // (..., n, 1, k)
  Tensor y = b.cast(dt).transpose(-1, -2).unsqueeze(-3); // (..., 1, m, k)
  Tensor out = (x * y).sum({-1});
  if (v.ndim() == 1) out = out.squeeze(-2);
  if (w.ndim() == 1) out = out.squeeze(-1);
  return out;
}

} // namespace

Tensor Tensor::matmul(const Tensor& w) const {
  return matmul_in(*this, w, detail::product_dtype(dtype(), w.dtype()));
}

Tensor Tensor::matmul(const Tensor& w, DType acc) const {
  bool number = !acc.is_ptr() && acc.lanes() == 1 && (acc.is_int() || acc.is_float()) &&
                acc.scalar() != Scalar::Index;
  user_assert(number) << "matmul: cannot accumulate in " << acc.str()
                      << "; give an integer or float dtype";
  user_assert(acc.is_float() || !least_upper_dtype(dtype(), w.dtype()).is_float())
      << "matmul: accumulating " << dtype().str() << " @ " << w.dtype().str() << " in " << acc.str()
      << " would truncate the inputs; accumulate in a float dtype";
  return matmul_in(*this, w, acc);
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias) const {
  user_assert(weight.ndim() == 2) << "linear: weight must be (out, in), not "
                                  << shape_str(weight.shape());
  Tensor out = matmul(weight.transpose(0, 1));
  return bias ? out + *bias : out;
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
  double neg_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    int64_t l = scores.shape()[scores.shape().size() - 2], s = scores.shape().back();
    Tensor i = arange(l).reshape({l, 1}), j = arange(s).reshape({1, s});
    scores = j.le(i).where(scores, Tensor(neg_inf, scores.dtype()));
  }
  if (mask)
    scores = mask->dtype().is_bool() ? mask->where(scores, Tensor(neg_inf, scores.dtype()))
                                     : scores + *mask;
  return scores.softmax(-1).matmul(v);
}

namespace {

// x's diagonal over dims p < q (of equal size n): q dropped, p indexing the diagonal. The two
// dims moved last and flattened, each row of n + 1 after padding starts with one diagonal
// element (tinygrad's trick).
Tensor diagonal(const Tensor& x, int64_t p, int64_t q) {
  int64_t n = x.shape()[static_cast<size_t>(p)];
  user_assert(x.shape()[static_cast<size_t>(q)] == n)
      << "einsum: a repeated letter spans dims of " << n << " and "
      << x.shape()[static_cast<size_t>(q)];
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (d != p && d != q) order.push_back(d);
  Shape rest;
  for (int64_t d : order) rest.push_back(x.shape()[static_cast<size_t>(d)]);
  order.push_back(p);
  order.push_back(q);
  Shape flat = rest, rows = rest;
  flat.push_back(n * n);
  rows.insert(rows.end(), {n, n + 1});
  std::vector<std::pair<int64_t, int64_t>> pads(rest.size(), {0, 0}), keep;
  pads.emplace_back(0, n);
  for (int64_t d : rest) keep.emplace_back(0, d);
  keep.insert(keep.end(), {{0, n}, {0, 1}});
  Shape diag = rest;
  diag.push_back(n);
  Tensor d = x.permute(order).reshape(flat).pad(pads).reshape(rows).shrink(keep).reshape(diag);
  // back to x's order without q: the diagonal at p
  std::vector<int64_t> back;
  for (int64_t i = 0, r = 0; i < x.ndim(); ++i) {
    if (i == q) continue;
    back.push_back(i == p ? static_cast<int64_t>(rest.size()) : r++);
  }
  return d.permute(back);
}

} // namespace

Tensor Tensor::einsum(const std::string& formula, std::span<const Tensor> given) {
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
  user_assert(terms.size() == given.size()) << "einsum: '" << formula << "' names " << terms.size()
                                            << " operands but " << given.size() << " were given";
  std::vector<Tensor> operands(given.begin(), given.end());
  // "..." becomes as many letters as the dims it stands for, aligned from the right across
  // operands (numpy's broadcasting); letters the formula doesn't use stand in for them.
  std::string spare;
  for (char c = 'A'; c <= 'Z'; ++c)
    if (formula.find(c) == std::string::npos) spare += c;
  for (char c = 'a'; c <= 'z'; ++c)
    if (formula.find(c) == std::string::npos) spare += c;
  int64_t ellipsis = 0;
  for (size_t t = 0; t < terms.size(); ++t)
    if (terms[t].find("...") != std::string::npos)
      ellipsis = std::max<int64_t>(ellipsis,
                                   operands[t].ndim() - static_cast<int64_t>(terms[t].size()) + 3);
  user_assert(ellipsis <= static_cast<int64_t>(spare.size()))
      << "einsum: '" << formula << "' leaves too few letters for its '...' dims";
  std::string dots = spare.substr(0, static_cast<size_t>(ellipsis));
  for (size_t t = 0; t < terms.size(); ++t)
    if (size_t at = terms[t].find("..."); at != std::string::npos) {
      int64_t n = operands[t].ndim() - static_cast<int64_t>(terms[t].size()) + 3;
      user_assert(n >= 0) << "einsum: '" << terms[t] << "' has more letters than operand " << t
                          << " has dims " << shape_str(operands[t].shape());
      terms[t].replace(at, 3, dots.substr(static_cast<size_t>(ellipsis - n)));
    }
  if (explicit_out) {
    if (size_t at = rhs.find("..."); at != std::string::npos) rhs.replace(at, 3, dots);
  } else { // numpy's implicit output: the '...' dims, then the letters used once, sorted
    std::map<char, int> uses;
    for (const std::string& term : terms)
      for (char c : term) ++uses[c];
    rhs = dots;
    for (auto [c, n] : uses)
      if (n == 1 && dots.find(c) == std::string::npos) rhs += c;
  }
  // A letter repeated in one operand takes that operand's diagonal.
  for (size_t t = 0; t < terms.size(); ++t)
    for (size_t i = 0; i < terms[t].size(); ++i)
      for (size_t j = terms[t].find(terms[t][i], i + 1); j != std::string::npos;
           j = terms[t].find(terms[t][i], i + 1)) {
        user_assert(static_cast<int64_t>(terms[t].size()) == operands[t].ndim())
            << "einsum: '" << terms[t] << "' has " << terms[t].size() << " letters but operand "
            << t << " has shape " << shape_str(operands[t].shape());
        operands[t] = diagonal(operands[t], static_cast<int64_t>(i), static_cast<int64_t>(j));
        terms[t].erase(j, 1);
      }
  std::map<char, int64_t> size;
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
      int64_t d = operands[t].shape()[i];
      auto [it, fresh] = size.emplace(c, d);
      user_assert(fresh || it->second == d || d == 1 || it->second == 1)
          << "einsum: '" << c << "' is " << it->second << " in one operand and " << d
          << " in another";
      it->second = std::max(it->second, d);
      if (fresh) letters += c;
    }
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
      shape.push_back(term.find(c) != std::string::npos ? operands[t].shape()[term.find(c)]
                                                        : Dim(1));
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

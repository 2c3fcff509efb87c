// Python's basic indexing on tensors, x[1:3, :, ::2, None, ..., -1], built from Tensor's
// movement ops: flip for negative steps, shrink for the ranges, pad-reshape-shrink for
// strides, and a final reshape that drops integer-indexed dims and adds the new axes.
#include "frontends/expr/value_internal.hpp"

#include <algorithm>

namespace beamlab::expr {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// What a slice selects from a dim: `count` elements from `begin` every `step`, counted in the
// flipped dim when the slice's step is negative.
struct Range {
  int64_t begin = 0, count = 0, step = 1;
  bool flip = false;
};

// Python's slice.indices(n) and the length of the range it gives.
Range resolve(const IndexItem& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  if (step == 0) fail(s.pos, "a slice step cannot be zero");
  step = std::clamp(step, -(n + 1), n + 1); // a step past the dim selects one element either way
  auto bound = [n](std::optional<int64_t> v, int64_t fallback, int64_t lo, int64_t hi) {
    if (!v) return fallback;
    int64_t x = std::clamp(*v, -n - 1, n + 1);
    if (x < 0) x += n;
    return std::clamp(x, lo, hi);
  };
  Range r;
  if (step > 0) {
    int64_t start = bound(s.start, 0, 0, n), stop = bound(s.stop, n, 0, n);
    r = {start, stop > start ? (stop - start + step - 1) / step : 0, step, false};
  } else {
    int64_t start = bound(s.start, n - 1, -1, n - 1), stop = bound(s.stop, -1, -1, n - 1);
    r = {n - 1 - start, start > stop ? (start - stop - step - 1) / -step : 0, -step, true};
  }
  if (r.count == 0)
    fail(s.pos, "the slice selects nothing from a dim of size " + std::to_string(n) +
                    " (empty tensors are not supported)");
  return r;
}

// Every `step`-th element of `axis`, starting with the first.
Tensor stride(const Tensor& t, size_t axis, int64_t step) {
  Shape s = t.shape();
  int64_t len = s[axis], count = (len - 1) / step + 1;
  Pairs pads(s.size(), {0, 0});
  pads[axis].second = count * step - len;
  Shape split = s;
  split[axis] = count;
  split.insert(split.begin() + static_cast<int64_t>(axis) + 1, step);
  Pairs keep;
  for (int64_t d : split) keep.emplace_back(0, d);
  keep[axis + 1] = {0, 1};
  Shape out = s;
  out[axis] = count;
  return t.pad(pads).reshape(split).shrink(keep).reshape(out);
}

// The items with '...' replaced by full slices (or full slices appended for the dims left).
std::vector<IndexItem> expand_ellipsis(const std::vector<IndexItem>& items, const Tensor& x,
                                       Pos at) {
  int64_t consumed = 0;
  const IndexItem* ellipsis = nullptr;
  for (const IndexItem& it : items) {
    if (it.kind == IndexItem::Kind::Int || it.kind == IndexItem::Kind::Slice) ++consumed;
    if (it.kind != IndexItem::Kind::Ellipsis) continue;
    if (ellipsis) fail(it.pos, "an index can have only one '...'");
    ellipsis = &it;
  }
  if (consumed > x.ndim())
    fail(at, "too many indices (" + std::to_string(consumed) + ") for a tensor of shape " +
                 shape_str(x.shape()));
  IndexItem all;
  all.kind = IndexItem::Kind::Slice;
  std::vector<IndexItem> out;
  for (const IndexItem& it : items) {
    if (&it == ellipsis)
      out.insert(out.end(), static_cast<size_t>(x.ndim() - consumed), all);
    else
      out.push_back(it);
  }
  if (!ellipsis) out.insert(out.end(), static_cast<size_t>(x.ndim() - consumed), all);
  return out;
}

} // namespace

Tensor index_tensor(const Tensor& x, const std::vector<IndexItem>& items, Pos at) {
  Pairs bounds;
  std::vector<int64_t> flips;
  std::vector<std::pair<size_t, int64_t>> strides;
  Shape out;
  size_t d = 0;
  for (const IndexItem& it : expand_ellipsis(items, x, at)) {
    if (it.kind == IndexItem::Kind::NewAxis) {
      out.push_back(1);
      continue;
    }
    int64_t n = x.shape()[d];
    if (it.kind == IndexItem::Kind::Int) {
      if (it.i < -n || it.i >= n)
        fail(it.pos, "index " + std::to_string(it.i) + " is out of range for dim " +
                         std::to_string(d) + " of size " + std::to_string(n));
      int64_t i = it.i < 0 ? it.i + n : it.i;
      bounds.emplace_back(i, i + 1);
    } else {
      Range r = resolve(it, n);
      if (r.flip) flips.push_back(static_cast<int64_t>(d));
      bounds.emplace_back(r.begin, r.begin + (r.count - 1) * r.step + 1);
      if (r.count > 1 && r.step > 1) strides.emplace_back(d, r.step);
      out.push_back(r.count);
    }
    ++d;
  }
  Tensor t = x.flip(flips).shrink(bounds);
  for (auto [axis, step] : strides) t = stride(t, axis, step);
  return t.reshape(out);
}

} // namespace beamlab::expr

// Ops whose output shape depends on their input's values: NonZero, Unique and
// NonMaxSuppression. beamlab's shapes are fixed when a program is built, so these read their
// inputs' values then (realizing them, as Compress and Reshape's shape input do) and give
// either index tensors of host values or, for Unique's values, a gather of the input: the
// program is built for the values it was given, as every shape in it is.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {
namespace {

// An int64 tensor of host values in `shape`, or an empty value when it has no elements.
Value int64_value(const std::vector<int64_t>& values, Shape shape) {
  if (values.empty()) return Value::empty(std::move(shape), Scalar::Int64);
  return Tensor(std::span<const int64_t>(values), std::move(shape), Scalar::Int64);
}

// NonZero: the indices of the non-zero elements, (rank, count), in row-major order.
Value non_zero(const Node& n) {
  HostTensor h = to_host(n.in(0));
  const auto rank = static_cast<int64_t>(h.shape.size());
  std::vector<int64_t> at;
  for (int64_t i = 0; i < h.numel(); ++i)
    if (h.at(i) != 0) at.push_back(i);
  auto count = static_cast<int64_t>(at.size());
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(rank, 1) * count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = at[static_cast<size_t>(k)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out[static_cast<size_t>(d * count + k)] = rest % h.shape[static_cast<size_t>(d)];
      rest /= h.shape[static_cast<size_t>(d)];
    }
  }
  if (rank == 0) return int64_value(out, {1, count}); // a scalar is one element of rank 1
  return int64_value(out, {rank, count});
}

// Unique: the distinct elements (or slices along `axis`), sorted or in order of first
// occurrence; with the first occurrence of each, each input's position among them, and counts.
// Slices sort lexicographically (integers compared as integers, NaN after every number and
// equal to NaN, as numpy's unique), then equal neighbours group.
std::vector<Value> unique(const Node& n) {
  Tensor x = n.in(0);
  bool sorted = n.attr_int("sorted", 1) != 0;
  int64_t axis = 0;
  if (n.has_attr("axis"))
    axis = Node::axis(n.attr_int("axis", 0), x.ndim(), "axis");
  else
    x = x.reshape({x.numel()});
  HostTensor h = to_host(x.transpose(0, axis).contiguous());
  const int64_t slices = dim(x, axis), width = h.numel() / slices;
  const bool integers = !h.dtype.is_float();
  auto compare = [&](int64_t a, int64_t b) { // -1, 0, 1
    for (int64_t k = 0; k < width; ++k) {
      int64_t i = a * width + k, j = b * width + k;
      if (integers) {
        int64_t va = h.int_at(i), vb = h.int_at(j);
        if (va != vb) return va < vb ? -1 : 1;
        continue;
      }
      double va = h.at(i), vb = h.at(j);
      bool na = std::isnan(va), nb = std::isnan(vb);
      if (na || nb) {
        if (na != nb) return na ? 1 : -1;
        continue;
      }
      if (va != vb) return va < vb ? -1 : 1;
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(slices));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    int c = compare(a, b);
    return c < 0 || (c == 0 && a < b);
  });
  // Groups of equal slices in sorted order; each group's first occurrence is its first member.
  std::vector<int64_t> group_of(static_cast<size_t>(slices)), first;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) first.push_back(order[i]);
    group_of[static_cast<size_t>(order[i])] = static_cast<int64_t>(first.size()) - 1;
  }
  std::vector<int64_t> rank(first.size()); // output position of each group
  std::iota(rank.begin(), rank.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
      return first[static_cast<size_t>(a)] < first[static_cast<size_t>(b)];
    });
    for (size_t p = 0; p < by_first.size(); ++p)
      rank[static_cast<size_t>(by_first[p])] = static_cast<int64_t>(p);
  }
  std::vector<int64_t> indices(first.size()), inverse(static_cast<size_t>(slices)),
      counts(first.size(), 0);
  for (size_t g = 0; g < first.size(); ++g) indices[static_cast<size_t>(rank[g])] = first[g];
  for (int64_t i = 0; i < slices; ++i) {
    int64_t r = rank[static_cast<size_t>(group_of[static_cast<size_t>(i)])];
    inverse[static_cast<size_t>(i)] = r;
    ++counts[static_cast<size_t>(r)];
  }
  auto count = static_cast<int64_t>(indices.size());
  return {x.take(int64_tensor(indices), axis), int64_value(indices, {count}),
          int64_value(inverse, {slices}), int64_value(counts, {count})};
}

// NonMaxSuppression: per batch and class, boxes by falling score above score_threshold, each
// kept unless it overlaps a kept one by more than iou_threshold (intersection over union), at
// most max_output_boxes_per_class: rows (batch, class, box).
Value non_max_suppression(const Node& n) {
  HostTensor boxes = to_host(n.in(0)), scores = to_host(n.in(1));
  user_assert(boxes.shape.size() == 3 && boxes.shape[2] == 4 && scores.shape.size() == 3 &&
              scores.shape[0] == boxes.shape[0] && scores.shape[2] == boxes.shape[1])
      << "boxes must be (batches, boxes, 4) and scores (batches, classes, boxes), not "
      << shape_str(boxes.shape) << " and " << shape_str(scores.shape);
  int64_t most = n.has(2) ? n.host_ints(2).at(0) : 0;
  double iou_limit = n.has(3) ? n.host_floats(3).at(0) : 0;
  std::optional<double> score_limit;
  if (n.has(4)) score_limit = n.host_floats(4).at(0);
  bool center = n.attr_int("center_point_box", 0) != 0;
  const int64_t batches = boxes.shape[0], count = boxes.shape[1], classes = scores.shape[1];
  struct Box {
    double y1, x1, y2, x2;
  };
  auto box = [&](int64_t b, int64_t i) {
    auto v = [&](int64_t k) { return boxes.at((b * count + i) * 4 + k); };
    if (center) // (x centre, y centre, width, height)
      return Box{v(1) - v(3) / 2, v(0) - v(2) / 2, v(1) + v(3) / 2, v(0) + v(2) / 2};
    return Box{std::min(v(0), v(2)), std::min(v(1), v(3)), std::max(v(0), v(2)),
               std::max(v(1), v(3))};
  };
  auto iou = [](const Box& a, const Box& b) {
    double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
    double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
    double inter = h * w, area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
    double uni = area_a + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
    return uni > 0 ? inter / uni : 0.0;
  };
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      auto score = [&](int64_t i) { return scores.at((b * classes + c) * count + i); };
      std::vector<int64_t> order;
      for (int64_t i = 0; i < count; ++i)
        if (!score_limit || score(i) > *score_limit) order.push_back(i);
      std::sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        return score(i) > score(j) || (score(i) == score(j) && i < j);
      });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= most) break;
        bool overlaps = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
          return iou(box(b, k), box(b, i)) > iou_limit;
        });
        if (!overlaps) kept.push_back(i);
      }
      for (int64_t k : kept) rows.insert(rows.end(), {b, c, k});
    }
  return int64_value(rows, {static_cast<int64_t>(rows.size()) / 3, 3});
}

} // namespace

void add_data_dependent_ops(ConverterTable& t) {
  t["NonZero"] = [](const Node& n) { return std::vector<Value>{non_zero(n)}; };
  t["Unique"] = unique;
  t["NonMaxSuppression"] = [](const Node& n) { return std::vector<Value>{non_max_suppression(n)}; };
}

} // namespace beamlab::onnx

// Helpers the Tensor API's source files share; not part of the API.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/tensor/tensor.hpp"

namespace beamlab::detail {

/// (begin, end) per dim, as pad() and shrink() take them.
using Pads = std::vector<std::pair<int64_t, int64_t>>;

/// The dtype a product of a and b is computed and accumulated in: their promotion, except
/// that bools and integers narrower than 32 bits multiply in int32 (int8 matmuls give int32).
DType product_dtype(DType a, DType b);

/// The lowest value of `t` (-inf for floats): what max ignores.
double lowest_value(DType t);
/// The highest value of `t` (+inf for floats): what min ignores.
double highest_value(DType t);

/// Integer indices into an axis of `n` elements, negatives counted from the end (-1 is n-1),
/// widened to at least 32 bits. Out-of-range indices stay out of range (they match nothing).
Tensor wrap_index(const Tensor& index, int64_t n);

} // namespace beamlab::detail

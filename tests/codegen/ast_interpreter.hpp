// A reference interpreter of kernel ASTs: plain loops over the AST, no lowering or codegen.
//
// Each STORE runs over every point of the loops its value varies with; a REDUCE loops over
// its ranges and folds with its op. Buffers hold int64 or double values; every op wraps or
// rounds to its node's dtype (int32 wraps, float32 rounds), so results can be compared with
// compiled kernels (exactly for integers; floats differ by FMA contraction at most).
#pragma once

#include <map>
#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab::testing {

/// One value per element; integer buffers use `ints`, float buffers `floats`.
struct RefBuffer {
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

/// Runs `ast` (a SINK of STOREs) on `buffers`, indexed by DEFINE_GLOBAL slot.
void interpret_kernel(const UOpPtr& ast, std::vector<RefBuffer>& buffers);

} // namespace beamlab::testing

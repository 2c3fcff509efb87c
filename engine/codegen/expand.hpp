// Upcast expansion: a kernel AST's upcast and unroll ranges become vector lanes.
//
// Every node whose value varies with some lane axes becomes a vector with one lane per
// combination of those axes (mixed radix, unroll axes slowest); nodes that vary with none stay
// scalar and are broadcast where they meet vectors. Memory is where the lanes pay off: the
// address of each lane of a LOAD or STORE is worked out symbolically, lanes whose addresses
// are consecutive become one vector access (a gather of a few loads and a shuffle otherwise),
// and lanes reading one address share one load, so a matmul's register tile loads a row of B
// once per step and broadcasts each element of A. A REDUCE over unroll axes combines the
// lanes of each step before accumulating (the accumulator is a vector of the other lanes).
#pragma once

#include "engine/ir/uop.hpp"

namespace beamlab {

/// `ast` with its "upcast" and "unroll" RANGEs expanded into vector lanes (see above).
UOpPtr expand_upcasts(const UOpPtr& ast);

} // namespace beamlab

// The symbolic simplifier: rewrite rules for integer index math and constant folding.
//
// Canonical form for signed integer and index expressions: sums as linear forms (like terms
// combined, terms in canonical order, constant last), constants on the right of commutative
// ops. Division and remainder by constants simplify from value ranges:
//   (x*4+y)//4 -> x   and   (x*4+y)%4 -> y      when 0 <= y < 4 and x >= 0
//   (x//2)*2 + x%2 -> x
// and comparisons, max and where fold when the ranges decide them. Every rule holds for the
// IR's semantics (wrapping integers, truncating division); rules that need "no overflow"
// check it from the operands' bounds. tests/ir/symbolic_property_test.cpp checks them on
// thousands of random expressions.
#pragma once

#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/verify.hpp"

namespace beamlab {

/// The symbolic rule set: constant folding, canonical sums, div/mod and comparison folding.
const PatternMatcher& pm_symbolic();

/// `u` rewritten with pm_symbolic to a fixed point.
UOpPtr simplify(const UOpPtr& u);
/// The same for kernel graphs and ASTs (memory, reductions, loops), checked against spec_kernel.
UOpPtr simplify_kernel(const UOpPtr& u);

/// `addr` simplified on the assumption that `gate` holds: divisions and remainders by
/// constants fold where the gate's clauses (`E < k`, `k < E` over linear E) pin their
/// quotient. Only for a gated access, whose address is unused when the gate fails.
UOpPtr simplify_given(const UOpPtr& addr, const UOpPtr& gate);

} // namespace beamlab

// Linear forms of integer expressions: sum(coef_i * term_i) + constant.
//
// The symbolic simplifier's canonical shape for index math. decompose() flattens sums,
// differences, negations and products with constants into terms; like terms merge, terms
// cancel, (x//c)*c + x%c becomes x, and build() writes the form back as a left-leaning sum
// with terms in canonical order and the constant last. Coefficients wrap like the dtype.
#pragma once

#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

struct LinearTerm {
  UOpPtr base;
  int64_t coef;
};

struct LinearForm {
  DType dtype;
  std::vector<LinearTerm> terms; ///< distinct bases, non-zero coefficients, canonical order
  int64_t constant = 0;
};

/// `u` as a linear form, fully merged and canonically ordered.
LinearForm decompose(const UOpPtr& u);

/// The expression a linear form stands for.
UOpPtr build(const LinearForm& lf);

/// Whether the form, evaluated in exact integers over its terms' bounds, stays inside its
/// dtype's range. Then the expression's wrapped value is its exact value, and identities of
/// the integers (not only those of arithmetic modulo 2^n) hold for it.
bool fits_exactly(const LinearForm& lf);

/// gcd of magnitudes, for coefficients that may be INT64_MIN (whose negation overflows);
/// 0 when the gcd, 2^63, is not an int64.
int64_t gcd_magnitude(int64_t a, int64_t b);

/// Deterministic total order on nodes used for canonical forms: constants sort last, then by
/// op, dtype, arg and sources. Returns <0, 0 or >0.
int compare_uops(const UOp& a, const UOp& b);

/// An integer constant of `dtype`, wrapped to it.
UOpPtr int_const(DType dtype, int64_t v);

/// Whether the symbolic integer rules apply to a dtype: signed integers and index, scalar.
bool is_symbolic_int(DType dt);

} // namespace beamlab

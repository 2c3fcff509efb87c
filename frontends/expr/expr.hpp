// Expressions: a user's kernel written in tinygrad's Tensor syntax over named inputs, e.g.
// "(a.matmul(w) + b).relu()", built into a lazy Tensor without recompiling anything.
//
// The text is Python's expression syntax (operators with Python's precedence, method calls with
// positional and keyword arguments, attributes, indexing and slicing, tuples and lists, numbers,
// strings, True/False/None). Names are the inputs, `Tensor` (Tensor.cat, Tensor.arange, ...,
// Tensor(...)) and `dtypes` (dtypes.float16, ...). Methods map onto beamlab::Tensor's by name;
// see methods.cpp for the table. Every mistake is a one-line UserError naming the line and
// column: "expr:1:14: unknown method 'relux' (did you mean 'relu'?)".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <beamlab/beamlab.hpp>

namespace beamlab::expr {

/// Bounds that make any text safe to evaluate: deeper nesting, longer chains and bigger
/// tensors are UserErrors rather than a blown stack or an exhausted memory.
struct Limits {
  int max_nesting = 100;                   ///< parentheses, brackets and unary operators
  int max_depth = 256;                     ///< the height of the syntax tree
  int64_t max_elements = int64_t{1} << 31; ///< of any tensor built, and of integer arguments
};

/// Builds `text` over `inputs` (by name) into a lazy Tensor; nothing is realized. A number
/// result becomes a scalar tensor. A UserError for anything wrong in the text names the column:
/// "expr:1:14: unknown method 'relux' (did you mean 'relu'?)"; errors the Tensor API raises
/// while building are prefixed with the position of the call or operator that raised them.
Tensor evaluate(std::string_view text, const std::map<std::string, Tensor>& inputs,
                const Limits& limits = {});

/// The input names `text` uses, in order of first use, without `Tensor` and `dtypes`. Parses
/// only (a UserError for malformed text), so a caller can check every name was declared.
std::vector<std::string> input_names(std::string_view text, const Limits& limits = {});

} // namespace beamlab::expr

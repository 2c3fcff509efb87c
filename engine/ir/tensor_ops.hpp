// Builders for the nodes of tensor-level graphs, and the shapes of those nodes.
//
// A tensor graph is what the Tensor API builds and the scheduler turns into kernels. Its leaves
// are BUFFERs (device memory, flat) and scalar CONSTs (shape ()); its inner nodes are
// elementwise ALU ops over equal shapes (the API broadcasts explicitly), movement ops that only
// change how elements are addressed, REDUCE_AXIS, and CONTIGUOUS (a realization point).
//
//   BUFFER              arg (id, size)       shape (size,)   a fresh id per buffer
//   RESHAPE(x)          arg (dims...)        same element count
//   EXPAND(x)           arg (dims...)        size-1 dims of x grown
//   PERMUTE(x)          arg (perm...)        dims reordered: out[i] = x.dims[perm[i]]
//   PAD(x)              arg (b0, a0, ...)    dim i grown by b_i before and a_i after, with 0
//   SHRINK(x)           arg (b0, e0, ...)    dim i cut to [b_i, e_i)
//   FLIP(x)             arg (f0, f1, ...)    dim i reversed where f_i is 1
//   REDUCE_AXIS(x)      arg (op, (axes...))  reduced dims become 1 (op ADD, MUL or MAX)
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

using Shape = std::vector<int64_t>;

/// "(2, 3, 4)".
std::string shape_str(const Shape& shape);
/// The product of the dims (1 for a scalar).
int64_t shape_numel(const Shape& shape);
/// Row-major strides of `shape`, in elements.
std::vector<int64_t> contiguous_strides(const Shape& shape);

/// A new BUFFER of `size` elements of `dtype`, with an id no other buffer of this process has.
UOpPtr tensor_buffer(DType dtype, int64_t size);
/// The id of a BUFFER node.
int64_t buffer_id(const UOp& buffer);
/// The element count of a BUFFER node.
int64_t buffer_size(const UOp& buffer);

UOpPtr tensor_reshape(const UOpPtr& x, const Shape& shape);
UOpPtr tensor_expand(const UOpPtr& x, const Shape& shape);
UOpPtr tensor_permute(const UOpPtr& x, const std::vector<int64_t>& perm);
UOpPtr tensor_pad(const UOpPtr& x, const std::vector<std::pair<int64_t, int64_t>>& pads);
UOpPtr tensor_shrink(const UOpPtr& x, const std::vector<std::pair<int64_t, int64_t>>& bounds);
UOpPtr tensor_flip(const UOpPtr& x, const std::vector<bool>& flip);
UOpPtr tensor_reduce(const UOpPtr& x, Op op, const std::vector<int64_t>& axes);
UOpPtr tensor_contiguous(const UOpPtr& x);

/// The integers of a movement op's arg.
std::vector<int64_t> int_args(const UOp& u);
/// A REDUCE_AXIS node's op and axes.
Op reduce_op(const UOp& u);
std::vector<int64_t> reduce_axes(const UOp& u);
bool is_movement(Op op);

/// Memoized shapes of the nodes of tensor graphs; an InternalError for a malformed node (the
/// Tensor API checks user input before building one).
class ShapeCache {
public:
  const Shape& of(const UOpPtr& u);

private:
  Shape compute(const UOpPtr& u);
  std::unordered_map<const UOp*, Shape> memo_;
  std::vector<UOpPtr> keep_; // memo keys stay alive, so no address is reused
};

} // namespace beamlab

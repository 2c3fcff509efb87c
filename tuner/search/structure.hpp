// A kernel's structure (its AST up to sizes) and its sizes: what warm starts match kernels by.
//
// Two kernels have the same structure when their ASTs are equal once every size is forgotten:
// the integer constants of index arithmetic (dtype `index`: loop extents, strides, offsets,
// the bounds of padding gates, divisors and moduli of reshapes) and the sizes in pointer types
// and in a symbolic variable's bounds. Everything else stays: every op, every dtype (a float16
// matmul is not a float32 one), the graph with its sources in order, buffer parameters (their
// slots), loop ids and kinds, reduction ops, and the constants of the computation itself:
// floats (softmax's log2(e), GELU's 0.5), integers of data dtypes (x + 3 on int32) and bools.
// The key is a Merkle hash over the tree (sharing is invisible: a shape whose extent equals a
// stride shares one constant node, another doesn't); a size of 1 that the scheduler or the
// simplifier removes changes the structure (`x * 1` is no multiplication), so it is no match.
//
// Kernels of one structure have the same loop and reduce axes in the same order, so an Opt
// plan of one names the same axes in the other; the size signature (the axes' extents) says
// how near two of them are. tuner/store/warm_start.hpp seeds a search with the plans that won
// for the nearest kernels of its structure.
#pragma once

#include <cstdint>
#include <vector>

#include <beamlab/tuning.hpp>

namespace beamlab::tuner {

/// The recipe of structure_key; stored beside each key (kernels.structure_version), so keys
/// of another recipe are computed again, never compared.
inline constexpr int kStructureVersion = 1;

/// The hash of `ast` with its sizes abstracted away (see the file comment).
uint64_t structure_key(const UOpPtr& ast);

/// The extents of the kernel's axes in nesting order (kernel_axes): a kernel's sizes as far as
/// its Opts see them. Kernels of one structure have signatures of one length.
std::vector<int64_t> size_signature(const UOpPtr& ast);

/// How far apart two signatures are: the sum over axes of |log2 a - log2 b| (doubling one axis
/// is 1, whichever its size). Infinity when their lengths differ.
double size_distance(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

} // namespace beamlab::tuner

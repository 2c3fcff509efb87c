// Builders for the nodes of kernel graphs: buffers, indexing, memory and loops.
//
// A kernel graph is a SINK of effects (STOREs, and ENDs closing loops around them); see
// engine/codegen/linearize.hpp for the loop conventions. These builders give each node the
// dtype and source layout the code generator expects.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

/// Kernel parameter `slot`: a pointer to elements of `element` (buffers[slot] at run time).
inline UOpPtr buffer_param(int64_t slot, DType element) {
  return UOp::make(Op::DefineGlobal, element.ptr(), {}, Arg(slot));
}

/// A kernel-private register array of `size` elements (accumulators).
inline UOpPtr define_reg(DType element, int64_t size, int64_t id = 0) {
  return UOp::make(Op::DefineReg, element.ptr(AddrSpace::Reg, size), {}, Arg(id));
}

/// The address of element `i` of `buffer`.
inline UOpPtr index(const UOpPtr& buffer, const UOpPtr& i) {
  return UOp::make(Op::Index, buffer->dtype(), {buffer, i});
}

/// The address of element `i` of `buffer`, valid only where `gate` holds: a LOAD through it
/// gives 0 and a STORE does nothing where the gate is false (padding, bounds).
inline UOpPtr index(const UOpPtr& buffer, const UOpPtr& i, const UOpPtr& gate) {
  return UOp::make(Op::Index, buffer->dtype(), {buffer, i, gate});
}

/// A load of `dtype` (n lanes: n consecutive elements) from `address`, ordered after `after`.
inline UOpPtr load(const UOpPtr& address, DType dtype, std::vector<UOpPtr> after = {}) {
  std::vector<UOpPtr> src = {address};
  src.insert(src.end(), after.begin(), after.end());
  return UOp::make(Op::Load, dtype, std::move(src));
}

/// A store of `value` (n lanes: n consecutive elements) to `address`, ordered after `after`.
inline UOpPtr store(const UOpPtr& address, const UOpPtr& value, std::vector<UOpPtr> after = {}) {
  std::vector<UOpPtr> src = {address, value};
  src.insert(src.end(), after.begin(), after.end());
  return UOp::make(Op::Store, Scalar::Void, std::move(src));
}

/// What a kernel loop (RANGE) is. The scheduler makes loop and reduce loops; Opts split them
/// into parallel (across threads) ones and upcast / unroll ones (vector lanes, expanded before
/// lowering). A RANGE records its kind by name in its arg, (axis, "reduce"): the name is what
/// the IR's text form prints and parses and what a kernel's hash covers.
enum class LoopKind { Parallel, Loop, Reduce, Upcast, Unroll };

inline constexpr std::string_view kLoopKindNames[] = {"parallel", "loop", "reduce", "upcast",
                                                      "unroll"};

inline std::string_view to_string(LoopKind k) { return kLoopKindNames[static_cast<int>(k)]; }

/// The kind of that name, if it is one.
inline std::optional<LoopKind> parse_loop_kind(std::string_view name) {
  for (size_t i = 0; i < std::size(kLoopKindNames); ++i)
    if (kLoopKindNames[i] == name) return static_cast<LoopKind>(i);
  return std::nullopt;
}

/// Whether loops of this kind become vector lanes rather than loops.
inline bool is_lane(LoopKind k) { return k == LoopKind::Upcast || k == LoopKind::Unroll; }

/// A kernel loop 0 <= r < extent over axis `axis`; `extent` is an index expression: a
/// constant, or symbolic (built from DEFINE_VARs, whose values a launch passes).
inline UOpPtr kernel_range(const UOpPtr& extent, int64_t axis, LoopKind kind) {
  return UOp::make(Op::Range, Scalar::Index, {extent},
                   Arg{Arg(axis), Arg(std::string(to_string(kind)))});
}
inline UOpPtr kernel_range(int64_t extent, int64_t axis, LoopKind kind) {
  return kernel_range(UOp::const_int(Scalar::Index, extent), axis, kind);
}

/// Whether a RANGE's extent is symbolic: known only when the kernel runs.
inline bool symbolic_extent(const UOp& range) { return !range.src(0)->is_const(); }

/// A RANGE's iterations: its constant extent, or the most a symbolic one can be (its upper
/// bound, from the DEFINE_VARs' ranges): what buffers are sized and work is estimated by.
inline int64_t max_extent(const UOp& range) { return range.src(0)->vmax(); }

/// The DEFINE_VARs `root` uses (symbolic extents' variables), sorted by name: for a compiled
/// stage, the order of their values in its vars[] (engine/support/kernel_abi.hpp).
std::vector<UOpPtr> variables_of(const UOpPtr& root);

/// A RANGE's extent as a kernel name shows it: the number, the variable's name, or the names
/// of the variables a symbolic expression uses ("seq", "seq.heads").
std::string extent_label(const UOp& range);

/// A RANGE's kind: the one its arg names, Loop for a RANGE that names none (a plain loop) or
/// names no kind (verify() refuses those).
inline LoopKind loop_kind(const UOp& range) {
  const Arg& a = range.arg();
  if (a.kind() == Arg::Kind::Tuple && a.items().size() == 2 &&
      a.items()[1].kind() == Arg::Kind::Str)
    return parse_loop_kind(a.items()[1].as_str()).value_or(LoopKind::Loop);
  return LoopKind::Loop;
}

/// `op` (ADD, MUL or MAX) of `value` over every iteration of `ranges`. (Not named reduce:
/// with UOpPtr and vector arguments, ADL would find std::reduce too.)
inline UOpPtr reduce_over(const UOpPtr& value, std::vector<UOpPtr> ranges, Op op) {
  ranges.insert(ranges.begin(), value);
  return UOp::make(Op::Reduce, value->dtype(), std::move(ranges), Arg(op));
}

/// The identity of a reduction op for `dtype` (0 for ADD, 1 for MUL, the lowest value for MAX).
UOpPtr reduce_identity(Op op, DType dtype);

/// Closes `range` once `effects` are done.
inline UOpPtr end_loop(std::vector<UOpPtr> effects, const UOpPtr& range) {
  effects.push_back(range);
  return UOp::make(Op::End, Scalar::Void, std::move(effects));
}

} // namespace beamlab

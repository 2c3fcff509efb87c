// A kernel in beamlab's IR text as a program of one kernel.
//
//   Program p = ir_text::load_kernel("matmul.ir");   // checked; nothing has run
//
// The text is a kernel AST as the scheduler builds it, the journal stores it and
// `beamlab run --save-kernels DIR` writes it: a SINK of STOREs into DEFINE_GLOBAL 0, reading
// DEFINE_GLOBAL 1, 2, ... Each buffer's size is the largest index the kernel can reach plus one
// (from the index's bounds); the buffers it reads get seeded random data (floats uniform in
// [0, 1), integers and bools 0). Every problem is a one-line UserError naming the source.
#pragma once

#include <string>

#include <beamlab/beamlab.hpp>

namespace beamlab::ir_text {

/// The kernel in `text`; `source` names it in errors ("k.ir:3:6: unknown op 'MULL'").
Program parse_kernel(const std::string& text, const std::string& source);

/// The kernel in the file at `path`.
Program load_kernel(const std::string& path);

} // namespace beamlab::ir_text

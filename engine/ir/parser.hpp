// Reading the text form of a UOp graph (see printer.hpp) back into interned UOps.
//
// parse_graph(print_graph(g)) returns g itself: the same interned node. Malformed text of
// any kind yields a ParseError naming the line, column and problem; the parser never
// crashes or asserts on bad input (tests/fuzz/fuzz_parser.cpp holds it to that). The parser
// checks syntax and source counts; deeper invariants are the verifier's job.
//
// Grammar, one node a line; blank lines and '#' comments are skipped:
//   line  := '%' N '=' OP DTYPE [ '%' N { ',' '%' N } ] [ ':' ARG ]
//   ARG   := 'none' | 'true' | 'false' | INT | FLOAT | STRING | OP | '(' [ARG {',' ARG} [',']] ')'
#pragma once

#include <string>
#include <string_view>

#include "engine/ir/uop.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

struct ParseError {
  int line = 0;   ///< 1-based
  int column = 0; ///< 1-based
  std::string message;
  /// "<source>:line:column: message".
  std::string str(std::string_view source_name = "<input>") const;
};

/// The graph's root (its last node) or where and why the text is malformed.
Expected<UOpPtr, ParseError> parse_graph(std::string_view text);

/// An Arg in its text form, the whole of `text`; nullopt if malformed.
Expected<Arg, ParseError> parse_arg(std::string_view text);

} // namespace beamlab

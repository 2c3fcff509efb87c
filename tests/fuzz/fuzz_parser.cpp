// libFuzzer target for the IR text parser, and through it the verifier and the simplifier.
//
// Properties checked on every input:
//   * malformed text is a ParseError with a position, never a crash or an assertion;
//   * text that parses prints back to text that parses to the same interned graph;
//   * a graph the scalar spec accepts simplifies without error into a graph it accepts.
// Any violation aborts, which libFuzzer reports with the input that caused it.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/symbolic.hpp"
#include "engine/rewrite/verify.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_parser: %s\n%s\n", what, detail.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace beamlab;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Expected<UOpPtr, ParseError> g = parse_graph(text);
  if (!g) {
    if (g.error().line < 1 || g.error().column < 1 || g.error().message.empty())
      fail("parse error without a position or message", g.error().str());
    return 0;
  }
  std::string printed = print_graph(*g);
  Expected<UOpPtr, ParseError> again = parse_graph(printed);
  if (!again) fail("printed graph does not parse", again.error().str() + "\n" + printed);
  if (*again != *g) fail("printed graph parses to a different graph", printed);
  if (!verify(*g, spec_scalar()).empty()) return 0;
  UOpPtr s = simplify(*g); // an exception here escapes and aborts: a simplifier bug
  if (!verify(s, spec_scalar()).empty()) fail("simplified graph violates the spec", print_graph(s));
  return 0;
}

// Tests of the IR text form: toposort, print_graph/parse_graph round trips, parse_arg and parse
// errors.
#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

namespace beamlab {
namespace {

using S = Scalar;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The graph read back from its own printed form, or null (and a test failure).
UOpPtr round_trip(const UOpPtr& root) {
  std::string text = print_graph(root);
  Expected<UOpPtr, ParseError> back = parse_graph(text);
  if (!back) {
    ADD_FAILURE() << back.error().str() << "\nin:\n" << text;
    return nullptr;
  }
  return *back;
}

// Whether printing `root` and parsing the text gives back `root` itself.
testing::AssertionResult round_trips(const UOpPtr& root) {
  std::string text = print_graph(root);
  Expected<UOpPtr, ParseError> back = parse_graph(text);
  if (!back) return testing::AssertionFailure() << back.error().str() << "\nin:\n" << text;
  if (*back != root)
    return testing::AssertionFailure() << "read back a different node from:\n"
                                       << text << "which prints as:\n"
                                       << print_graph(*back);
  return testing::AssertionSuccess();
}

// The error parse_graph reports for `text`; a test failure if it parses.
ParseError graph_error(std::string_view text) {
  Expected<UOpPtr, ParseError> r = parse_graph(text);
  if (r) {
    ADD_FAILURE() << "parsed, but should not have:\n" << text;
    return {};
  }
  return r.error();
}

ParseError arg_error(std::string_view text) {
  Expected<Arg, ParseError> r = parse_arg(text);
  if (r) {
    ADD_FAILURE() << "parsed as " << r->str() << ", but should not have: " << text;
    return {};
  }
  return r.error();
}

Arg arg_of(std::string_view text) {
  Expected<Arg, ParseError> r = parse_arg(text);
  if (!r) {
    ADD_FAILURE() << r.error().str() << " for " << text;
    return Arg("<parse failed>");
  }
  return *r;
}

// Checks all three fields, so a failure shows which one is off.
void expect_error(const ParseError& e, int line, int column, const std::string& message) {
  EXPECT_EQ(e.line, line);
  EXPECT_EQ(e.column, column);
  EXPECT_EQ(e.message, message);
}

// ---- toposort and print_graph ----

TEST(Toposort, SourcesComeBeforeUsersDepthFirstInSourceOrder) {
  UOpPtr a = UOp::variable("a", 0, 10);
  UOpPtr b = UOp::variable("b", 0, 10);
  UOpPtr sum = a + b;
  UOpPtr root = sum * a;
  std::vector<UOpPtr> order = toposort(root);
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0], a);
  EXPECT_EQ(order[1], b);
  EXPECT_EQ(order[2], sum);
  EXPECT_EQ(order[3], root);
}

TEST(Toposort, EveryNodeOnceAndAfterItsSources) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr r = UOp::range(UOp::const_int(S::Index, 8), 0);
  UOpPtr e = (x * 4 + r) % 8;
  UOpPtr root = sink({e, where(lt(e, 3), e, x + r), maximum(x + r, e)});
  std::vector<UOpPtr> order = toposort(root);
  EXPECT_EQ(order.back(), root);
  std::unordered_set<const UOp*> seen;
  for (const UOpPtr& u : order) {
    for (const UOpPtr& s : u->src())
      EXPECT_TRUE(seen.contains(s.get())) << "a source after its user";
    EXPECT_TRUE(seen.insert(u.get()).second) << "a node twice";
  }
  // x, 4, x*4, 8 (shared by the range and the modulo), r, x*4+r, e, 3, lt, x+r, where, max, sink.
  EXPECT_EQ(order.size(), 13u);
}

TEST(PrintGraph, ExactText) {
  UOpPtr x = UOp::variable("x", 0, 10);
  EXPECT_EQ(print_graph(x * 4 + 1), "%0 = DEFINE_VAR index : (\"x\", 0, 10)\n"
                                    "%1 = CONST index : 4\n"
                                    "%2 = MUL index %0, %1\n"
                                    "%3 = CONST index : 1\n"
                                    "%4 = ADD index %2, %3\n");
}

TEST(PrintGraph, NoArgAndPointerDtype) {
  UOpPtr buf =
      UOp::make(Op::DefineGlobal, DType(S::Float32).vec(4).ptr(AddrSpace::Local, 16), {}, Arg(0));
  EXPECT_EQ(print_graph(sink({buf})), "%0 = DEFINE_GLOBAL float32x4*local[16] : 0\n"
                                      "%1 = SINK void %0\n");
}

// ---- round trips ----

TEST(RoundTrip, ReturnsTheSameInternedNode) {
  UOpPtr x = UOp::variable("x", -4, 10);
  UOpPtr r = UOp::range(UOp::const_int(S::Index, 16), 3);
  UOpPtr e = (x * 4 + r) / 3 % 5;
  UOpPtr f = cast(e, S::Float32) * UOp::const_float(S::Float32, 0.5);
  UOpPtr root = sink({e, where(lt(e, 2), f, -f), maximum(x, r)});
  ASSERT_TRUE(round_trips(root));
  EXPECT_EQ(print_graph(round_trip(root)), print_graph(root));
}

TEST(RoundTrip, StringsWithSpecialCharacters) {
  for (std::string name :
       {std::string("plain"), std::string("q\"uote"), std::string("back\\slash"),
        std::string("new\nline"), std::string("caf\xc3\xa9"), std::string("#hash, (comma)"),
        std::string("tab\there\r"), std::string(), std::string("\\x41\\n")}) {
    UOpPtr v = UOp::variable(name, 0, 10);
    EXPECT_TRUE(round_trips(v));
  }
}

TEST(RoundTrip, EveryByteValueInAString) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  UOpPtr v = UOp::variable(all, 0, 1);
  UOpPtr back = round_trip(v);
  ASSERT_EQ(back, v);
  EXPECT_EQ(back->arg().items()[0].as_str(), all);
}

TEST(RoundTrip, SpecialFloats) {
  for (double d : {std::nan(""), -std::nan(""), kInf, -kInf, -0.0, 0.0, 1e-300, 0.1, 2.0, 5e-324,
                   1.7976931348623157e308, 123456789012345680000.0, -2.5e-10}) {
    UOpPtr c = UOp::const_float(S::Float64, d);
    EXPECT_TRUE(round_trips(c));
  }
  UOpPtr nz = round_trip(UOp::const_float(S::Float32, -0.0));
  ASSERT_TRUE(nz);
  EXPECT_TRUE(std::signbit(nz->arg().as_float()));
}

TEST(RoundTrip, NaNPayloadsAreKept) {
  // Args compare floats by bit pattern, so NaNs with different payloads are different nodes;
  // the text form must keep them apart.
  UOpPtr quiet = UOp::const_float(S::Float64, std::nan(""));
  UOpPtr payload = UOp::const_float(S::Float64, std::nan("1"));
  ASSERT_NE(quiet, payload);
  EXPECT_NE(print_graph(quiet), print_graph(payload));
  EXPECT_TRUE(round_trips(payload));
}

TEST(RoundTrip, IntegerExtremes) {
  for (int64_t v : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                    int64_t{0}, int64_t{-1}}) {
    UOpPtr c = UOp::const_int(S::Int64, v);
    EXPECT_TRUE(round_trips(c));
  }
}

TEST(RoundTrip, TuplesAndOpArgs) {
  std::vector<Arg> args = {
      Arg(std::vector<Arg>{Arg(1)}),                                         // (1,)
      Arg(std::vector<Arg>{}),                                               // ()
      Arg{Arg(1), Arg("x"), Arg{Arg(2), Arg(3)}},                            // nested
      Arg(std::vector<Arg>{Arg(std::vector<Arg>{Arg(std::vector<Arg>{})})}), // (((),),)
      Arg{Arg(Op::Add), Arg(Op::CmpLt), Arg(true), Arg(false), Arg()},       // ops, bools, none
      Arg(Op::DefineGlobal),
      Arg{Arg(-0.0), Arg(INFINITY), Arg(std::nan("")), Arg("s")},
  };
  for (const Arg& a : args) {
    UOpPtr n = UOp::make(Op::Noop, S::Void, {}, a);
    EXPECT_TRUE(round_trips(n));
  }
  UOpPtr red = UOp::make(Op::Reduce, S::Float32, {UOp::const_float(S::Float32, 1.0)}, Arg(Op::Add));
  EXPECT_TRUE(round_trips(red));
}

TEST(RoundTrip, PointerDtypes) {
  for (DType t : {DType(S::Float32).ptr(), DType(S::Float32).vec(4).ptr(AddrSpace::Local, 16),
                  DType(S::Int8).ptr(AddrSpace::Reg, 0), DType(S::Bool).vec(2).ptr()}) {
    UOpPtr buf = UOp::make(Op::DefineGlobal, t, {}, Arg(7));
    UOpPtr back = round_trip(buf);
    ASSERT_EQ(back, buf) << print_graph(buf);
    EXPECT_EQ(back->dtype(), t);
  }
}

TEST(RoundTrip, SixtyFourLevelsOfNestingStillParse) {
  Arg a(1);
  for (int i = 0; i < 64; ++i) a = Arg(std::vector<Arg>{a});
  UOpPtr n = UOp::make(Op::Noop, S::Void, {}, a);
  EXPECT_TRUE(round_trips(n));
}

TEST(RoundTrip, LongChain) {
  UOpPtr chain = UOp::variable("x", 0, 10);
  for (int i = 0; i < 20000; ++i) chain = chain * 3 + i;
  std::vector<UOpPtr> order = toposort(chain);
  EXPECT_EQ(order.back(), chain);
  EXPECT_TRUE(round_trips(chain));
}

TEST(ParseGraph, HandwrittenTextWithCommentsAndGaps) {
  Expected<UOpPtr, ParseError> g =
      parse_graph("# a comment line\n"
                  "\n"
                  "%10 = DEFINE_VAR index : (\"x\", 0, 10)   # trailing comment\n"
                  "  %3 =   CONST   index:4\r\n"
                  "%7 = MUL index %10,%3\n");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  EXPECT_EQ(*g, UOp::variable("x", 0, 10) * 4);
}

TEST(ParseGraph, TheLastNodeIsTheRoot) {
  Expected<UOpPtr, ParseError> g = parse_graph("%0 = CONST index : 1\n%1 = CONST index : 2\n");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(*g, UOp::const_int(S::Index, 2));
}

// ---- parse errors: line, column, message ----

TEST(ParseGraphError, UnknownOp) {
  expect_error(graph_error("%0 = FOO index"), 1, 6, "unknown op 'FOO'");
}

TEST(ParseGraphError, UnknownDtype) {
  expect_error(graph_error("%0 = CONST float33 : 1"), 1, 12, "unknown dtype 'float33'");
  expect_error(graph_error("%0 = CONST float32** : 1"), 1, 12, "unknown dtype 'float32**'");
}

TEST(ParseGraphError, SourceUsedBeforeDefined) {
  expect_error(graph_error("%0 = CONST index : 1\n%1 = ADD index %0, %2"), 2, 20,
               "node %2 is used before it is defined");
  expect_error(graph_error("%0 = NEG index %0"), 1, 16, "node %0 is used before it is defined");
}

TEST(ParseGraphError, NodeDefinedTwice) {
  expect_error(graph_error("%0 = CONST index : 1\n%0 = CONST index : 2"), 2, 1,
               "node %0 is defined twice");
}

TEST(ParseGraphError, WrongNumberOfSources) {
  ParseError e = graph_error("%0 = CONST index : 1\n%1 = ADD index %0");
  expect_error(e, 2, 6, "ADD takes 2 sources, not 1");
  EXPECT_EQ(e.str(), "<input>:2:6: ADD takes 2 sources, not 1");
  EXPECT_EQ(e.str("kernel.ir"), "kernel.ir:2:6: ADD takes 2 sources, not 1");
  expect_error(graph_error("%0 = CONST index : 1\n%1 = INDEX index %0"), 2, 6,
               "INDEX takes 2 to 3 sources, not 1");
  expect_error(graph_error("%0 = LOAD float32"), 1, 6, "LOAD takes at least 1 sources, not 0");
  expect_error(graph_error("%0 = CONST index : 1\n%1 = CONST index %0 : 1"), 2, 6,
               "CONST takes 0 sources, not 1");
}

TEST(ParseGraphError, UnterminatedString) {
  expect_error(graph_error("%0 = CONST index : \"abc"), 1, 20, "unterminated string");
  expect_error(graph_error("%0 = CONST index : \"abc\\\""), 1, 20, "unterminated string");
}

TEST(ParseGraphError, BadEscapes) {
  expect_error(graph_error("%0 = CONST index : \"a\\qb\""), 1, 23,
               "unknown escape in string; use \\\", \\\\, \\n or \\xHH");
  expect_error(graph_error("%0 = CONST index : \"\\xg1\""), 1, 23,
               "bad \\x escape: expected two hex digits");
}

TEST(ParseGraphError, TrailingCommaAfterSources) {
  // The grammar is '%' N { ',' '%' N }: a comma must be followed by another source.
  Expected<UOpPtr, ParseError> r = parse_graph("%0 = CONST index : 1\n%1 = ADD index %0, %0,");
  ASSERT_FALSE(r.has_value()) << "accepted a trailing comma after the sources";
  EXPECT_EQ(r.error().line, 2);
}

TEST(ParseGraphError, TruncatedHexEscape) {
  // A \x with fewer than two characters left is a bad \x escape, not an unknown escape.
  expect_error(graph_error("%0 = CONST index : \"\\x\""), 1, 23,
               "bad \\x escape: expected two hex digits");
}

TEST(ParseGraphError, TrailingText) {
  expect_error(graph_error("%0 = CONST index : 1 2"), 1, 22, "unexpected text after the node");
}

TEST(ParseGraphError, EmptyInput) {
  expect_error(graph_error(""), 1, 1, "no nodes: the graph is empty");
  expect_error(graph_error("# only a comment\n\n"), 2, 1, "no nodes: the graph is empty");
}

TEST(ParseGraphError, IntegerOutOfInt64Range) {
  expect_error(graph_error("%0 = CONST int64 : 9223372036854775808"), 1, 20,
               "integer out of int64 range");
  expect_error(graph_error("%0 = CONST int64 : -9223372036854775809"), 1, 20,
               "integer out of int64 range");
  EXPECT_TRUE(parse_graph("%0 = CONST int64 : -9223372036854775808").has_value());
}

TEST(ParseGraphError, TooDeepNesting) {
  std::string text = "%0 = NOOP void : " + std::string(65, '(') + "1" + std::string(65, ')');
  // "%0 = NOOP void : " is 17 characters; the innermost item, at depth 65, starts at column 17 + 65
  // + 1.
  expect_error(graph_error(text), 1, 83, "argument nested too deeply");
}

TEST(ParseGraphError, OtherSyntaxErrors) {
  expect_error(graph_error("%0 CONST index"), 1, 4, "expected '=' after the node id");
  expect_error(graph_error("%x = CONST index : 1"), 1, 1,
               "bad node id '%x': ids are whole numbers");
  expect_error(graph_error("%0 = CONST index : 1\n%1 = CONST index : 2\n%2 = ADD index %0 %1"), 3,
               19, "expected ',' between sources");
  expect_error(graph_error("%0 = CONST index : what"), 1, 20, "bad argument 'what'");
}

// ---- parse_arg ----

TEST(ParseArg, Scalars) {
  EXPECT_EQ(arg_of("none"), Arg());
  EXPECT_EQ(arg_of("true"), Arg(true));
  EXPECT_EQ(arg_of("false"), Arg(false));
  EXPECT_EQ(arg_of("-3"), Arg(-3));
  EXPECT_EQ(arg_of("  42  "), Arg(42));
  EXPECT_EQ(arg_of("1.5"), Arg(1.5));
  EXPECT_EQ(arg_of("2.0"), Arg(2.0));
  EXPECT_EQ(arg_of("1e-300"), Arg(1e-300));
  EXPECT_EQ(arg_of("inf"), Arg(INFINITY));
  EXPECT_EQ(arg_of("-inf"), Arg(-INFINITY));
  EXPECT_TRUE(std::isnan(arg_of("nan").as_float()));
  EXPECT_EQ(arg_of("-0.0"), Arg(-0.0));
  EXPECT_FALSE(arg_of("-0.0") == Arg(0.0));
  EXPECT_EQ(arg_of("ADD"), Arg(Op::Add));
  EXPECT_EQ(arg_of("REDUCE_AXIS"), Arg(Op::ReduceAxis));
  EXPECT_EQ(arg_of("\"a\\x41\\n\\\"\""), Arg("aA\n\""));
}

TEST(ParseArg, Tuples) {
  EXPECT_EQ(arg_of("(1,)"), Arg(std::vector<Arg>{Arg(1)}));
  EXPECT_EQ(arg_of("()"), Arg(std::vector<Arg>{}));
  EXPECT_EQ(arg_of("(1, \"x\", (2, 3))"), (Arg{Arg(1), Arg("x"), Arg{Arg(2), Arg(3)}}));
  EXPECT_EQ(arg_of("(1,2,)"), (Arg{Arg(1), Arg(2)}));
  EXPECT_EQ(arg_of("((1,),)"), Arg(std::vector<Arg>{Arg(std::vector<Arg>{Arg(1)})}));
  // A parenthesized value is a one-element tuple only with the comma.
  EXPECT_EQ(arg_of("(1)"), Arg(std::vector<Arg>{Arg(1)}));
}

TEST(ParseArg, StrRoundTrips) {
  for (const Arg& a :
       {Arg(std::vector<Arg>{Arg(1)}), Arg{Arg(Op::Mul), Arg("q\"\\\n\xff"), Arg(0.1)}, Arg(-7),
        Arg(std::nan("")), Arg(true), Arg()}) {
    EXPECT_EQ(arg_of(a.str()), a) << a.str();
  }
}

TEST(ParseArg, Errors) {
  expect_error(arg_error(""), 1, 1, "expected an argument");
  expect_error(arg_error("1 2"), 1, 3, "unexpected text after the argument");
  expect_error(arg_error("(1, 2,"), 1, 7, "unterminated tuple: expected ')'");
  expect_error(arg_error("(1, 2"), 1, 6, "expected ',' between tuple items");
  expect_error(arg_error("(1 2)"), 1, 4, "expected ',' between tuple items");
  expect_error(arg_error("foo"), 1, 1, "bad argument 'foo'");
  expect_error(arg_error("1.2.3"), 1, 1, "bad float '1.2.3'");
  expect_error(arg_error("1e999"), 1, 1, "bad float '1e999'");
  expect_error(arg_error("  9223372036854775808"), 1, 3, "integer out of int64 range");
  expect_error(arg_error("\"abc"), 1, 1, "unterminated string");
  expect_error(arg_error(std::string(65, '(') + "1" + std::string(65, ')')), 1, 66,
               "argument nested too deeply");
}

} // namespace
} // namespace beamlab

// Tests of the verifier and the scalar spec: valid graphs pass, each kind of bad node is reported.
#include "engine/rewrite/verify.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/support/error.hpp"

namespace beamlab {
namespace {

using S = Scalar;

std::vector<std::string> check(const UOpPtr& root) { return verify(root, spec_scalar()); }

// The one error verify reports for `root`, or a test failure.
std::string only_error(const UOpPtr& root) {
  std::vector<std::string> errors = check(root);
  if (errors.size() != 1) {
    ADD_FAILURE() << "expected one error, got " << errors.size();
    for (const std::string& e : errors) ADD_FAILURE() << e;
    return "";
  }
  return errors[0];
}

TEST(VerifyScalar, ValidIndexArithmetic) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr r = UOp::range(UOp::const_int(S::Index, 16), 0);
  UOpPtr e = (x + r * 4) / 3 % 5 - x;
  UOpPtr root = sink({e, maximum(e, x), minimum(x, r), where(lt(x, 5), x, r), cast(e, S::Int32),
                      ne(x, r), eq(x, r), alu(Op::And, lt(x, 3), ne(x, r)),
                      alu(Op::Shl, x, UOp::const_int(S::Index, 2)), alu(Op::Xor, x, r)});
  EXPECT_EQ(check(root), std::vector<std::string>{});
}

TEST(VerifyScalar, ValidFloatsBoolsAndVectors) {
  UOpPtr f = UOp::const_float(S::Float32, 1.5);
  UOpPtr g = UOp::const_float(S::Float32, -2.0);
  UOpPtr fe = (f * g + f) / g - alu(Op::Sqrt, f);
  UOpPtr vec = UOp::make(Op::Vectorize, DType(S::Float32).vec(4), {f, g, fe, f});
  UOpPtr lane = UOp::make(Op::Gep, S::Float32, {vec}, Arg(std::vector<Arg>{Arg(2)}));
  UOpPtr two = UOp::make(Op::Gep, DType(S::Float32).vec(2), {vec}, Arg{Arg(3), Arg(0)});
  UOpPtr bits = UOp::make(Op::Bitcast, S::Int32, {f});
  UOpPtr i8 = UOp::const_int(S::Int8, -128);
  UOpPtr u32 = UOp::const_int(S::UInt32, 4294967295LL);
  UOpPtr root =
      sink({fe, lane, two, bits, where(lt(f, g), f, g), alu(Op::MulAcc, f, g, f),
            UOp::const_bool(false), i8 + i8, u32 * u32, cast(UOp::const_bool(true), S::Float16),
            alu(Op::Pow, f, g), alu(Op::Exp2, g), alu(Op::Trunc, g), maximum(lt(f, g), lt(g, f))});
  EXPECT_EQ(check(root), std::vector<std::string>{});
  EXPECT_NO_THROW(verify_or_throw(root, spec_scalar(), "valid_step"));
}

// A kernel loop's kind is an enum of the IR; the text form prints its name and reads it back,
// and a name that is no kind is refused.
TEST(VerifyScalar, LoopKindsRoundTripThroughTheTextForm) {
  for (LoopKind k :
       {LoopKind::Parallel, LoopKind::Loop, LoopKind::Reduce, LoopKind::Upcast, LoopKind::Unroll}) {
    EXPECT_EQ(parse_loop_kind(to_string(k)), k);
    UOpPtr r = kernel_range(8, 3, k);
    EXPECT_EQ(loop_kind(*r), k);
    EXPECT_EQ(check(r), std::vector<std::string>{});
    Expected<UOpPtr, ParseError> back = parse_graph(print_graph(r));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, r) << print_graph(r);
    EXPECT_EQ(loop_kind(**back), k);
  }
  EXPECT_FALSE(parse_loop_kind("vectorized").has_value());
  UOpPtr bad = UOp::make(Op::Range, S::Index, {UOp::const_int(S::Index, 8)},
                         Arg{Arg(int64_t{0}), Arg(std::string("vectorized"))});
  EXPECT_EQ(check(bad).size(), 1u);
}

TEST(VerifyScalar, IntConstantWithFloatArg) {
  UOpPtr bad = UOp::make(Op::Const, S::Int32, {}, Arg(1.5));
  EXPECT_EQ(only_error(bad), "%0 = CONST int32: an integer constant needs an int arg");
}

TEST(VerifyScalar, IntConstantOutOfRange) {
  UOpPtr bad = UOp::const_int(S::Int8, 300);
  EXPECT_EQ(only_error(bad), "%0 = CONST int8: 300 does not fit in int8");
  EXPECT_EQ(only_error(UOp::const_int(S::UInt8, -1)), "%0 = CONST uint8: -1 does not fit in uint8");
  EXPECT_EQ(check(UOp::const_int(S::Int8, 127)), std::vector<std::string>{});
}

TEST(VerifyScalar, OtherBadConstants) {
  EXPECT_EQ(only_error(UOp::make(Op::Const, S::Float32, {}, Arg(1))),
            "%0 = CONST float32: a float constant needs a float arg");
  EXPECT_EQ(only_error(UOp::make(Op::Const, S::Bool, {}, Arg(1))),
            "%0 = CONST bool: a bool constant needs true/false");
  EXPECT_EQ(only_error(UOp::make(Op::Const, DType(S::Int32).vec(2), {}, Arg(1))),
            "%0 = CONST int32x2: constants are scalars; use VECTORIZE for vectors");
}

TEST(VerifyScalar, AddWithMismatchedSourceDtypes) {
  UOpPtr a = UOp::const_int(S::Int32, 1);
  UOpPtr b = UOp::const_int(S::Int64, 2);
  UOpPtr bad = UOp::make(Op::Add, S::Int32, {a, b});
  EXPECT_EQ(only_error(bad), "%2 = ADD int32: source 1 is int64, expected int32");
}

TEST(VerifyScalar, IdivOnFloats) {
  UOpPtr f = UOp::const_float(S::Float32, 1.0);
  UOpPtr bad = UOp::make(Op::Idiv, S::Float32, {f, f});
  EXPECT_EQ(only_error(bad), "%1 = IDIV float32: IDIV takes integers");
  UOpPtr x = UOp::variable("x", 0, 10);
  EXPECT_EQ(only_error(UOp::make(Op::Fdiv, S::Index, {x, x})),
            "%1 = FDIV index: FDIV takes floats");
}

TEST(VerifyScalar, WhereWithNonBoolCondition) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr f = UOp::const_float(S::Float32, 1.0);
  UOpPtr bad = where(x, f, f);
  EXPECT_EQ(only_error(bad), "%2 = WHERE float32: WHERE's condition must be bool");
  UOpPtr mixed = UOp::make(Op::Where, S::Float32, {lt(x, 3), f, x});
  std::vector<std::string> errors = check(mixed);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "%4 = WHERE float32: WHERE's branches must have its dtype");
}

TEST(VerifyScalar, ComparisonThatIsNotBool) {
  UOpPtr a = UOp::const_int(S::Int32, 1);
  UOpPtr b = UOp::const_int(S::Int32, 2);
  UOpPtr bad = UOp::make(Op::CmpLt, S::Int32, {a, b});
  EXPECT_EQ(only_error(bad), "%2 = CMPLT int32: a comparison produces bool");
}

TEST(VerifyScalar, DefineVarWithMinAboveMax) {
  UOpPtr bad = UOp::make(Op::DefineVar, S::Index, {}, Arg{Arg("n"), Arg(5), Arg(1)});
  EXPECT_EQ(only_error(bad), "%0 = DEFINE_VAR index: min is greater than max");
  EXPECT_EQ(only_error(UOp::make(Op::DefineVar, S::Index, {}, Arg{Arg(5), Arg(1), Arg(2)})),
            "%0 = DEFINE_VAR index: arg must be (name, min, max)");
  EXPECT_EQ(only_error(UOp::make(Op::DefineVar, S::Float32, {}, Arg{Arg("f"), Arg(1), Arg(2)})),
            "%0 = DEFINE_VAR float32: variables are integers");
}

TEST(VerifyScalar, OpWithoutARule) {
  UOpPtr load = UOp::make(Op::Load, S::Float32, {UOp::const_int(S::Index, 0)});
  std::string e = only_error(load);
  EXPECT_EQ(e, "%1 = LOAD float32: no rule of spec 'scalar' accepts LOAD nodes");
  EXPECT_NE(e.find("no rule of spec 'scalar'"), std::string::npos);
}

TEST(VerifyScalar, BoolsInArithmetic) {
  UOpPtr t = UOp::const_bool(true);
  EXPECT_EQ(only_error(t + t), "%1 = ADD bool: ADD doesn't take bools");
  EXPECT_EQ(check(alu(Op::Or, t, t)), std::vector<std::string>{});
}

TEST(VerifyScalar, OneMessagePerBadNodeInTopologicalOrder) {
  UOpPtr good = UOp::const_int(S::Int32, 7);
  UOpPtr bad_const = UOp::const_int(S::Int8, 300);
  UOpPtr bad_cmp = UOp::make(Op::CmpLt, S::Int32, {good, good});
  UOpPtr bad_var = UOp::make(Op::DefineVar, S::Index, {}, Arg{Arg("n"), Arg(5), Arg(1)});
  UOpPtr root = sink({bad_const, good, bad_cmp, bad_var, good + good});
  EXPECT_EQ(check(root), (std::vector<std::string>{
                             "%0 = CONST int8: 300 does not fit in int8",
                             "%2 = CMPLT int32: a comparison produces bool",
                             "%3 = DEFINE_VAR index: min is greater than max",
                         }));
}

TEST(VerifyScalar, SinkMustBeVoid) {
  UOpPtr bad = UOp::make(Op::Sink, S::Int32, {UOp::const_int(S::Int32, 1)});
  EXPECT_EQ(only_error(bad), "%1 = SINK int32: SINK is void");
}

TEST(VerifyOrThrow, ThrowsAnInternalErrorNamingTheStep) {
  UOpPtr bad = UOp::const_int(S::Int8, 300);
  try {
    verify_or_throw(sink({bad}), spec_scalar(), "lower_widgets");
    FAIL() << "verify_or_throw did not throw";
  } catch (const InternalError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("step 'lower_widgets' produced IR that violates spec 'scalar'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("%0 = CONST int8: 300 does not fit in int8"), std::string::npos) << what;
    // The message ends with the printed graph.
    EXPECT_NE(what.find("%1 = SINK void %0"), std::string::npos) << what;
  }
}

} // namespace
} // namespace beamlab

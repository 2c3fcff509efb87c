// Tests of DType: the promotion lattice, the text form (round trip and rejection), ranges, sizes.
#include "engine/ir/dtype.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/support/error.hpp"

namespace beamlab {
namespace {

using S = Scalar;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// Results as text, so that a failure names the types.
std::string lub(DType a, DType b) { return least_upper_dtype(a, b).str(); }
std::string lub(std::span<const DType> types) { return least_upper_dtype(types).str(); }
std::string parsed(std::string_view text) {
  std::optional<DType> t = parse_dtype(text);
  return t ? t->str() : "nullopt";
}

TEST(DTypePromotion, MixedSignIntegersMeetAtTheNextWiderSignedType) {
  EXPECT_EQ(lub(S::Int8, S::UInt8), "int16");
  EXPECT_EQ(lub(S::UInt8, S::Int8), "int16");
  EXPECT_EQ(lub(S::Int16, S::UInt16), "int32");
  EXPECT_EQ(lub(S::UInt32, S::Int32), "int64");
  EXPECT_EQ(lub(S::Int8, S::UInt16), "int32");
  EXPECT_EQ(lub(S::UInt8, S::Int16), "int16");
}

TEST(DTypePromotion, SameKindTakesTheWiderType) {
  EXPECT_EQ(lub(S::Int8, S::Int32), "int32");
  EXPECT_EQ(lub(S::UInt8, S::UInt64), "uint64");
  EXPECT_EQ(lub(S::UInt16, S::UInt32), "uint32");
  EXPECT_EQ(lub(S::Float32, S::Float64), "float64");
  EXPECT_EQ(lub(S::Float16, S::Float32), "float32");
}

TEST(DTypePromotion, IdenticalTypesAreTheirOwnMeet) {
  for (S s : {S::Bool, S::Int8, S::UInt64, S::Float16, S::BFloat16, S::Float64})
    EXPECT_EQ(lub(s, s), scalar_name(s));
}

TEST(DTypePromotion, BoolPromotesToTheOtherType) {
  EXPECT_EQ(lub(S::Bool, S::Int8), "int8");
  EXPECT_EQ(lub(S::Bool, S::UInt8), "uint8");
  EXPECT_EQ(lub(S::Bool, S::Float16), "float16");
  EXPECT_EQ(lub(S::UInt32, S::Bool), "uint32");
}

TEST(DTypePromotion, IntegersMeetFloatsAtTheFloat) {
  EXPECT_EQ(lub(S::Int32, S::Float16), "float16");
  EXPECT_EQ(lub(S::Int64, S::Float32), "float32");
  EXPECT_EQ(lub(S::BFloat16, S::Int32), "bfloat16");
  EXPECT_EQ(lub(S::UInt8, S::Float64), "float64");
}

TEST(DTypePromotion, HalfFloatsMeetAtFloat32) {
  EXPECT_EQ(lub(S::Float16, S::BFloat16), "float32");
  EXPECT_EQ(lub(S::BFloat16, S::Float16), "float32");
}

TEST(DTypePromotion, Int64AndUInt64MeetAtFloat16AsTheLatticeSays) {
  EXPECT_EQ(lub(S::Int64, S::UInt64), "float16");
  EXPECT_EQ(lub(S::UInt64, S::Int8), "float16");
}

TEST(DTypePromotion, ManyTypesAtOnce) {
  DType three[] = {S::Int8, S::UInt16, S::Bool};
  EXPECT_EQ(lub(three), "int32");
  DType one[] = {S::UInt16};
  EXPECT_EQ(lub(one), "uint16");
  DType floats[] = {S::Int8, S::BFloat16, S::Float16};
  EXPECT_EQ(lub(floats), "float32");
}

TEST(DTypePromotion, RejectsIndexVoidVectorsAndPointers) {
  EXPECT_THROW(lub(S::Index, S::Int32), InternalError);
  EXPECT_THROW(lub(S::Void, S::Int32), InternalError);
  EXPECT_THROW(lub(DType(S::Int32).vec(4), S::Int32), InternalError);
  EXPECT_THROW(lub(DType(S::Int32).ptr(), S::Int32), InternalError);
}

TEST(DTypePromotion, LeastUpperFloat) {
  EXPECT_EQ(least_upper_float(S::Int32), DType(S::Float32));
  EXPECT_EQ(least_upper_float(S::Bool), DType(S::Float32));
  EXPECT_EQ(least_upper_float(S::Float16), DType(S::Float16));
  EXPECT_EQ(least_upper_float(S::Float64), DType(S::Float64));
}

TEST(DTypeText, ScalarNames) {
  EXPECT_EQ(DType(S::Float32).str(), "float32");
  EXPECT_EQ(DType(S::BFloat16).str(), "bfloat16");
  EXPECT_EQ(DType(S::UInt64).str(), "uint64");
  EXPECT_EQ(DType(S::Index).str(), "index");
  EXPECT_EQ(DType(S::Bool).str(), "bool");
  EXPECT_EQ(DType().str(), "void");
}

TEST(DTypeText, VectorAndPointerForms) {
  EXPECT_EQ(DType(S::Int8).vec(4).str(), "int8x4");
  EXPECT_EQ(DType(S::Float32).ptr().str(), "float32*");
  EXPECT_EQ(DType(S::Float32).vec(4).ptr(AddrSpace::Local, 16).str(), "float32x4*local[16]");
  EXPECT_EQ(DType(S::Int32).ptr(AddrSpace::Reg, 0).str(), "int32*reg[0]");
}

TEST(DTypeText, RoundTripsThroughParse) {
  std::vector<DType> all;
  for (int i = 0; i <= static_cast<int>(S::Index); ++i) {
    DType base(static_cast<S>(i));
    all.push_back(base);
    all.push_back(base.ptr());
    all.push_back(base.ptr(AddrSpace::Local, 16));
    all.push_back(base.ptr(AddrSpace::Reg));
    if (base.is_void()) continue;
    all.push_back(base.vec(2));
    all.push_back(base.vec(kMaxLanes));
    all.push_back(base.vec(4).ptr(AddrSpace::Local, 16));
    all.push_back(base.vec(3).ptr(AddrSpace::Global, 0));
  }
  for (DType t : all) {
    std::optional<DType> back = parse_dtype(t.str());
    ASSERT_TRUE(back.has_value()) << t.str();
    EXPECT_EQ(*back, t) << t.str();
    EXPECT_EQ(back->str(), t.str());
  }
}

TEST(DTypeText, ParsesTheDocumentedExample) {
  std::optional<DType> t = parse_dtype("float32x4*local[16]");
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->is_ptr());
  EXPECT_EQ(t->scalar(), S::Float32);
  EXPECT_EQ(t->lanes(), 4);
  EXPECT_EQ(t->addr_space(), AddrSpace::Local);
  EXPECT_EQ(t->ptr_size(), 16);
  EXPECT_EQ(t->base(), DType(S::Float32).vec(4));
}

TEST(DTypeText, PrefixNamesDoNotShadowLongerOnes) {
  EXPECT_EQ(parse_dtype("uint8"), DType(S::UInt8));
  EXPECT_EQ(parse_dtype("int8"), DType(S::Int8));
  EXPECT_EQ(parse_dtype("bfloat16"), DType(S::BFloat16));
  EXPECT_EQ(parse_dtype("float16"), DType(S::Float16));
  EXPECT_EQ(parse_dtype("int64x2"), DType(S::Int64).vec(2));
  EXPECT_EQ(parsed("uint16x8"), "uint16x8");
}

TEST(DTypeText, RejectsMalformedText) {
  for (const char* bad : {"float33",
                          "int8x1",
                          "int8x0",
                          "int8x-2",
                          "float32**",
                          "voidx4",
                          "int8x2000",
                          "int8x1025",
                          "",
                          "int",
                          "float",
                          "int8x",
                          "int8x4x4",
                          "float32*[",
                          "float32*[16",
                          "float32*[-1]",
                          "float32*[]",
                          "float32*global",
                          "float32*localreg",
                          " float32",
                          "float32 ",
                          "Float32",
                          "int8x99999999999999999999",
                          "float32*[16]x",
                          "int8*x4"}) {
    EXPECT_EQ(parsed(bad), "nullopt") << '"' << bad << '"';
  }
}

TEST(DTypeText, RejectsNonCanonicalNumbers) {
  // Only the text str() writes is accepted, so every type has exactly one text form.
  for (const char* bad : {"int8x04", "float32*[016]", "int8x4*local[00]"}) {
    EXPECT_EQ(parsed(bad), "nullopt") << '"' << bad << '"';
  }
}

TEST(DTypeText, AcceptsTheLaneLimitExactly) {
  std::optional<DType> t = parse_dtype("int8x1024");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->lanes(), 1024);
}

TEST(DTypeRange, IntMinAndIntMax) {
  EXPECT_EQ(DType(S::Int8).int_min(), -128);
  EXPECT_EQ(DType(S::Int8).int_max(), 127);
  EXPECT_EQ(DType(S::UInt8).int_min(), 0);
  EXPECT_EQ(DType(S::UInt8).int_max(), 255);
  EXPECT_EQ(DType(S::Int16).int_min(), -32768);
  EXPECT_EQ(DType(S::Int16).int_max(), 32767);
  EXPECT_EQ(DType(S::UInt16).int_max(), 65535);
  EXPECT_EQ(DType(S::Int32).int_min(), -2147483648LL);
  EXPECT_EQ(DType(S::Int32).int_max(), 2147483647LL);
  EXPECT_EQ(DType(S::UInt32).int_min(), 0);
  EXPECT_EQ(DType(S::UInt32).int_max(), 4294967295LL);
  EXPECT_EQ(DType(S::Int64).int_min(), kI64Min);
  EXPECT_EQ(DType(S::Int64).int_max(), kI64Max);
  EXPECT_EQ(DType(S::UInt64).int_min(), 0);
  EXPECT_EQ(DType(S::UInt64).int_max(), kI64Max); // clamped, as documented
  EXPECT_EQ(DType(S::Index).int_min(), kI64Min);
  EXPECT_EQ(DType(S::Index).int_max(), kI64Max);
  EXPECT_EQ(DType(S::Bool).int_min(), 0);
  EXPECT_EQ(DType(S::Bool).int_max(), 1);
  EXPECT_EQ(DType(S::Int8).vec(4).int_min(), -128);
}

TEST(DTypeRange, FloatsHaveNoIntegerRange) {
  EXPECT_THROW(DType(S::Float32).int_min(), InternalError);
  EXPECT_THROW(DType(S::Float16).int_max(), InternalError);
}

TEST(DTypeSize, Itemsize) {
  EXPECT_EQ(DType(S::Bool).itemsize(), 1);
  EXPECT_EQ(DType(S::Int8).itemsize(), 1);
  EXPECT_EQ(DType(S::UInt16).itemsize(), 2);
  EXPECT_EQ(DType(S::Float16).itemsize(), 2);
  EXPECT_EQ(DType(S::BFloat16).itemsize(), 2);
  EXPECT_EQ(DType(S::Int32).itemsize(), 4);
  EXPECT_EQ(DType(S::Float64).itemsize(), 8);
  EXPECT_EQ(DType(S::Index).itemsize(), 8);
  EXPECT_EQ(DType(S::Int8).vec(4).itemsize(), 4);
  EXPECT_EQ(DType(S::Float32).vec(4).itemsize(), 16);
  EXPECT_EQ(DType(S::Float16).vec(3).itemsize(), 6);
  EXPECT_EQ(DType(S::Bool).vec(8).itemsize(), 8);
  EXPECT_EQ(DType(S::Float32).vec(4).ptr().itemsize(), 8);
  EXPECT_EQ(DType(S::Int8).ptr(AddrSpace::Local, 100).itemsize(), 8);
}

TEST(DTypeKinds, Predicates) {
  EXPECT_TRUE(DType(S::Index).is_int());
  EXPECT_TRUE(DType(S::UInt8).vec(4).is_int());
  EXPECT_TRUE(DType(S::UInt8).is_unsigned());
  EXPECT_FALSE(DType(S::Int8).is_unsigned());
  EXPECT_FALSE(DType(S::Bool).is_int());
  EXPECT_FALSE(DType(S::Int32).ptr().is_int());
  EXPECT_TRUE(DType(S::BFloat16).is_float());
  EXPECT_FALSE(DType(S::Float32).ptr().is_float());
  EXPECT_TRUE(DType(S::Bool).is_bool());
  EXPECT_TRUE(DType().is_void());
  EXPECT_FALSE(DType().ptr().is_void());
  EXPECT_EQ(DType(S::Int16).bits(), 16);
  EXPECT_EQ(DType(S::Bool).bits(), 1);
}

TEST(DTypeConstruction, VecAndPtrAndBase) {
  DType v = DType(S::Float32).vec(4);
  EXPECT_EQ(v.scalar_type(), DType(S::Float32));
  EXPECT_NE(v, DType(S::Float32));
  DType p = v.ptr(AddrSpace::Local, 16);
  EXPECT_NE(p, v.ptr(AddrSpace::Local, 8));
  EXPECT_NE(p, v.ptr(AddrSpace::Global, 16));
  EXPECT_EQ(p.base(), v);
  EXPECT_EQ(DType(S::Int32).ptr().ptr_size(), -1);
  EXPECT_THROW(p.ptr(), InternalError);
  EXPECT_THROW(p.vec(2), InternalError);
  EXPECT_THROW(v.base(), InternalError);
  EXPECT_THROW(DType(S::Int8).vec(0), InternalError);
  EXPECT_THROW(DType(S::Int8).vec(kMaxLanes + 1), InternalError);
}

} // namespace
} // namespace beamlab

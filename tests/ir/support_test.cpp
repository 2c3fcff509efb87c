// engine/support: error reports, environment knobs and the stable hasher.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/support/error.hpp"
#include "engine/support/hash.hpp"
#include "engine/support/knobs.hpp"

namespace beamlab {
namespace {

std::string what_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no exception>";
}

TEST(ErrorReport, UserAssertThrowsTheStreamedMessage) {
  int axis = 3;
  EXPECT_THROW(user_assert(axis < 2) << "sum: axis " << axis << " is out of range", UserError);
  EXPECT_EQ(what_of([&] { user_assert(axis < 2) << "sum: axis " << axis << " is out of range"; }),
            "sum: axis 3 is out of range");
  EXPECT_NO_THROW(user_assert(axis == 3) << "not reached");
}

TEST(ErrorReport, InternalAssertNamesTheCondition) {
  std::string msg = what_of([] { internal_assert(1 + 1 == 3) << "arithmetic"; });
  EXPECT_NE(msg.find("internal error at"), std::string::npos) << msg;
  EXPECT_NE(msg.find("condition failed: 1 + 1 == 3: arithmetic"), std::string::npos) << msg;
}

TEST(ErrorReport, DoesNotThrowWhileUnwinding) {
  // A report whose destructor runs during unwinding must not terminate the program.
  struct ReportsInDestructor {
    ~ReportsInDestructor() { user_error << "ignored"; }
  };
  EXPECT_THROW(
      {
        ReportsInDestructor r;
        throw RuntimeFailure("first");
      },
      RuntimeFailure);
}

TEST(Knobs, ParsesIntegersAndRejectsMalformedOnes) {
  setenv("BEAMLAB_TEST_KNOB", "42", 1);
  EXPECT_EQ(knob_int("BEAMLAB_TEST_KNOB", 7), 42);
  setenv("BEAMLAB_TEST_KNOB", "", 1);
  EXPECT_EQ(knob_int("BEAMLAB_TEST_KNOB", 7), 7);
  setenv("BEAMLAB_TEST_KNOB", "4x", 1);
  EXPECT_EQ(what_of([] { knob_int("BEAMLAB_TEST_KNOB", 7); }),
            "environment variable BEAMLAB_TEST_KNOB='4x' is not an integer; set it to a whole "
            "number or unset it");
  unsetenv("BEAMLAB_TEST_KNOB");
  EXPECT_EQ(knob_int("BEAMLAB_TEST_KNOB", 7), 7);
}

TEST(Knobs, ListsMatchWholeNames) {
  setenv("BEAMLAB_TEST_LIST", "lower,symbolic", 1);
  EXPECT_TRUE(knob_lists("BEAMLAB_TEST_LIST", "symbolic"));
  EXPECT_TRUE(knob_lists("BEAMLAB_TEST_LIST", "lower"));
  EXPECT_FALSE(knob_lists("BEAMLAB_TEST_LIST", "sym"));
  setenv("BEAMLAB_TEST_LIST", "all", 1);
  EXPECT_TRUE(knob_lists("BEAMLAB_TEST_LIST", "anything"));
  unsetenv("BEAMLAB_TEST_LIST");
  EXPECT_FALSE(knob_lists("BEAMLAB_TEST_LIST", "symbolic"));
}

TEST(StableHasher, IsFixedAndSeparatesFields) {
  // Golden value: changing it breaks every stored key, so it needs a kHashVersion bump.
  static_assert(kHashVersion == 1, "update the golden value with the version");
  EXPECT_EQ(hash_hex(StableHasher().add_str("beamlab").finish()), "c1965fabe25050a0");
  EXPECT_NE(StableHasher().add_str("ab").add_str("c").finish(),
            StableHasher().add_str("a").add_str("bc").finish());
  EXPECT_NE(StableHasher().add_f64(0.0).finish(), StableHasher().add_f64(-0.0).finish());
  EXPECT_NE(StableHasher().add_u64(1).finish(), StableHasher().add_u64(2).finish());
}

} // namespace
} // namespace beamlab

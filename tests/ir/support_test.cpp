// engine/support: error reports, typo suggestions, environment knobs and the stable hasher.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "engine/support/did_you_mean.hpp"
#include "engine/support/error.hpp"
#include "engine/support/hash.hpp"
#include "engine/support/knobs.hpp"
#include "engine/support/roofline.hpp"
#include "engine/support/statistics.hpp"

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

TEST(DidYouMean, SuggestsTheNearestCloseNameOrTheOnlyOneItBegins) {
  const std::vector<std::string> commands = {"run", "tune", "report"};
  EXPECT_EQ(closest_name("tun", commands), "tune"); // as near as 'run', and begins it
  EXPECT_EQ(closest_name("reprot", commands), "report");
  EXPECT_EQ(closest_name("rep", commands), "report"); // the only one it begins
  EXPECT_EQ(closest_name("bench", commands), std::nullopt);
  EXPECT_EQ(closest_name("run", commands), std::nullopt); // not a typo
  const std::vector<std::string> options = {"--beam", "--budget", "--max-candidates", "--K"};
  EXPECT_EQ(closest_name("--bem", options), "--beam");
  EXPECT_EQ(closest_name("--max", options), "--max-candidates");
  EXPECT_EQ(closest_name("--b", options), std::nullopt); // begins two
  EXPECT_EQ(closest_name("--k", options), "--K");        // case costs nothing
  EXPECT_EQ(closest_name("--Q", options), std::nullopt); // one letter is no typo of another
  EXPECT_EQ(did_you_mean("--bem", options), " (did you mean '--beam'?)");
  EXPECT_EQ(did_you_mean("--bem", options, "its options: ..."),
            " (did you mean '--beam'? its options: ...)");
  EXPECT_EQ(did_you_mean("--zzz", options, "its options: ..."), " (its options: ...)");
  EXPECT_EQ(did_you_mean("--zzz", options), "");
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

// --- paired verdicts (hand-computed) ------------------------------------------------------------

TEST(PairedRatio, AConstantRatioIsCertain) {
  PairedRatio p = paired_ratio({2, 4, 3}, {1, 2, 1.5});
  EXPECT_EQ(p.rounds, 3);
  EXPECT_NEAR(p.estimate, 2, 1e-12);
  EXPECT_NEAR(p.lo, 2, 1e-12);
  EXPECT_NEAR(p.hi, 2, 1e-12);
  EXPECT_TRUE(p.significant());
}

TEST(PairedRatio, RatiosAroundOneAreATie) {
  // logs 0.09531, -0.10536, 0: mean -0.003350, sd 0.10038, t(2) = 4.303.
  PairedRatio p = paired_ratio({1.1, 0.9, 1.0}, {1, 1, 1});
  EXPECT_NEAR(p.estimate, std::exp(-0.0033500), 1e-5);
  EXPECT_NEAR(p.lo, std::exp(-0.0033500 - 4.303 * 0.10038 / std::sqrt(3.0)), 1e-4);
  EXPECT_NEAR(p.hi, std::exp(-0.0033500 + 4.303 * 0.10038 / std::sqrt(3.0)), 1e-4);
  EXPECT_FALSE(p.significant());
  // Five rounds (the default): t(4) = 2.776. logs ln 1.1 and ln 1.3 alternating with ln 1.2.
  std::vector<double> logs = {std::log(1.1), std::log(1.2), std::log(1.3), std::log(1.2),
                              std::log(1.2)};
  double mean = 0, var = 0;
  for (double x : logs) mean += x / 5;
  for (double x : logs) var += (x - mean) * (x - mean) / 4;
  PairedRatio five = paired_ratio({1.1, 1.2, 1.3, 1.2, 1.2}, {1, 1, 1, 1, 1});
  EXPECT_NEAR(five.lo, std::exp(mean - 2.776 * std::sqrt(var / 5)), 1e-9);
  EXPECT_NEAR(five.hi, std::exp(mean + 2.776 * std::sqrt(var / 5)), 1e-9);
  // A missing round (0) is skipped; one round gives no interval.
  PairedRatio one = paired_ratio({3, 0}, {1, 1});
  EXPECT_EQ(one.rounds, 1);
  EXPECT_NEAR(one.estimate, 3, 1e-12);
  EXPECT_FALSE(one.significant());
  // A machine 4x slower in one round moves both kernels: the paired ratio doesn't move.
  PairedRatio loaded = paired_ratio({2, 2, 8, 2}, {1, 1, 4, 1});
  EXPECT_NEAR(loaded.estimate, 2, 1e-12);
  EXPECT_TRUE(loaded.significant());
}

TEST(DisturbedRounds, ARoundMostKernelsRanSlowInIsDisturbed) {
  EXPECT_EQ(disturbed_rounds({{1, 1, 4, 1, 1}, {2, 2, 8, 2.1, 2}}),
            (std::vector<bool>{false, false, true, false, false}));
  // One kernel slow in a round is that kernel's noise, not outside load.
  EXPECT_EQ(disturbed_rounds({{1, 1, 4}, {1, 1, 1}, {1, 1, 1}}),
            (std::vector<bool>{false, false, false}));
  // Missing times (0) are ignored; a 20% slower round is within the default factor.
  EXPECT_EQ(disturbed_rounds({{1, 0, 1.2}, {1, 1, 1.2}}), (std::vector<bool>{false, false, false}));
}

// --- the cache-aware roofline (hand-computed cases) --------------------------------------------

MachineLimits two_levels() {
  MachineLimits l;
  l.threads = 2;
  l.fma_f32_gflops = 400;
  // L2: reads at 300 GB/s, a triad at 240 GB/s; DRAM reads at 60, a triad at 40.
  l.levels = {{"L2", 2 << 20, 1 << 20, 300, 240}, {"DRAM", 0, 256 << 20, 60, 40}};
  return l;
}

TEST(Roofline, EachKernelIsJudgedAgainstTheLevelItsDataFitsIn) {
  MachineLimits l = two_levels();
  EXPECT_EQ(l.level_for(1).name, "L2");
  EXPECT_EQ(l.level_for(2 << 20).name, "L2");
  EXPECT_EQ(l.level_for((2 << 20) + 1).name, "DRAM");
  // 1 MiB, read only, in 0.01 ms: 1 MiB / 300 GB/s = 3.4953 us, 35% of the L2 roof.
  std::optional<Roof> r = roofline(l, {10, 1 << 20, 0}, 0.01);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, "L2");
  EXPECT_EQ(r->bound, "L2");
  EXPECT_NEAR(r->gbps, 300, 1e-9);
  EXPECT_NEAR(r->fraction, (1 << 20) / 300e9 / 1e-5, 1e-9);
  // The same bytes in DRAM: a third written (a triad's mix) is judged against the triad.
  r = roofline(l, {10, 3 << 20, 1 << 20}, 0.1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "DRAM");
  EXPECT_NEAR(r->gbps, 40, 1e-9);
  EXPECT_NEAR(r->fraction, (3 << 20) / 40e9 / 1e-4, 1e-9);
  // Unknown writes count as a triad's third.
  EXPECT_NEAR(roofline(l, {10, 3 << 20, std::nullopt}, 0.1)->gbps, 40, 1e-9);
}

TEST(Roofline, WritesCostWhatTheTriadImplies) {
  MemoryLevel dram{"DRAM", 0, 0, 60, 40};
  // 3/40 = 2/60 + 1/w: w = 24 GB/s; all writes run at it, no writes at the read rate.
  EXPECT_NEAR(dram.bandwidth_for(0), 60, 1e-9);
  EXPECT_NEAR(dram.bandwidth_for(1.0 / 3), 40, 1e-9);
  EXPECT_NEAR(dram.bandwidth_for(1), 24, 1e-9);
  // A triad faster than its reads imply (streaming stores): writes cost at least 1/4 of a read.
  MemoryLevel fast{"L1", 1, 1, 100, 200};
  EXPECT_NEAR(fast.bandwidth_for(1), 400, 1e-9);
}

TEST(Roofline, ComputeBoundKernelsAndFiguresOverTheRoof) {
  MachineLimits l = two_levels();
  // 4 GFLOP on 1 KiB in 20 ms: 200 GFLOP/s of 400: half the compute roof.
  std::optional<Roof> r = roofline(l, {4'000'000'000, 1024, 512}, 20);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "compute");
  EXPECT_NEAR(r->fraction, 0.5, 1e-9);
  EXPECT_EQ(r->over_note(), "");
  // 1 GiB from DRAM in 5 ms is 215 GB/s: over the roof, and it says why.
  r = roofline(l, {0, 1 << 30, 0}, 5);
  ASSERT_TRUE(r);
  EXPECT_GT(r->fraction, 3);
  EXPECT_NE(r->over_note().find("of the DRAM roof: faster than the measured limit"),
            std::string::npos)
      << r->over_note();
  // Nothing to judge: no limits, no time, no work.
  EXPECT_FALSE(roofline(MachineLimits{}, {1, 1, 0}, 1));
  EXPECT_FALSE(roofline(l, {1, 1, 0}, 0));
  EXPECT_FALSE(roofline(l, {0, 0, 0}, 1));
  EXPECT_NE(describe(l).find("FMA 400 GFLOP/s f32 · L2 300/240 · DRAM 60/40 GB/s read/triad"),
            std::string::npos)
      << describe(l);
}

} // namespace
} // namespace beamlab

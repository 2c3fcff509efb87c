// Measuring the machine's limits end to end (engine/realize/machine_limits.hpp): short trials,
// so only the shape of the result is checked, never a speed (these machines are shared).
#include <gtest/gtest.h>

#include "engine/codegen/limit_kernels.hpp"
#include "engine/realize/machine_limits.hpp"
#include "tests/busy_cpus.hpp"

namespace beamlab {
namespace {

TEST(MachineLimits, TheCachesAreKnownClosestFirst) {
  std::vector<CacheSize> caches = data_caches();
  ASSERT_FALSE(caches.empty()); // sysfs, else the C library's CPUID figures
  for (size_t i = 0; i < caches.size(); ++i) {
    EXPECT_GT(caches[i].bytes, 0);
    EXPECT_GE(caches[i].shared_by, 1);
    if (i > 0) EXPECT_GT(caches[i].level, caches[i - 1].level);
  }
}

TEST(MachineLimits, EveryLevelIsMeasuredAndDramComesLast) {
  MachineLimits l = measure_machine_limits({.threads = 2, .trial_ms = 2, .trials = 2});
  EXPECT_TRUE(l.known());
  EXPECT_EQ(l.threads, 2);
  EXPECT_EQ(l.vector_bytes, host_vector_bytes());
  EXPECT_GT(l.fma_f32_gflops, 0);
  EXPECT_GT(l.fma_f64_gflops, 0);
  ASSERT_FALSE(l.levels.empty());
  EXPECT_EQ(l.levels.back().name, "DRAM");
  EXPECT_EQ(l.levels.back().capacity_bytes, 0);
  EXPECT_GE(l.levels.back().working_set_bytes, int64_t{256} << 20);
  for (size_t i = 0; i < l.levels.size(); ++i) {
    const MemoryLevel& m = l.levels[i];
    EXPECT_GT(m.read_gbps, 0) << m.name;
    EXPECT_GT(m.triad_gbps, 0) << m.name;
    if (i + 1 == l.levels.size()) break;
    EXPECT_EQ(m.name[0], 'L');
    EXPECT_LE(m.working_set_bytes, m.capacity_bytes) << m.name;
    if (i > 0) EXPECT_GT(m.capacity_bytes, l.levels[i - 1].capacity_bytes) << m.name;
    // Data of this level's size is judged against it.
    EXPECT_EQ(l.level_for(m.capacity_bytes).name, m.name);
  }
}

// Eight threads a CPU beside a spinner on each: a launch waits time slices for its descheduled
// threads, and a calibration that stopped once a trial was long enough timed only that wait
// (under 1 GFLOP/s a thread, stored as unknown; once under ctest -j2 beside another test's
// spinners). The trials must grow until the time is the work's.
TEST(MachineLimits, AnOversubscribedMachineStillGivesAPeak) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  test_support::BusyCpus busy;
  MachineLimits l =
      measure_machine_limits({.threads = 8 * CPU_COUNT(&allowed), .trial_ms = 2, .trials = 2});
  EXPECT_TRUE(l.known());
  EXPECT_GT(l.fma_f32_gflops, 0);
  EXPECT_GT(l.fma_f64_gflops, 0);
}

} // namespace
} // namespace beamlab

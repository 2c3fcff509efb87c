// Machine limits made up for tests on synthetic databases: a round FMA peak and an L1 (64 KiB),
// an L2 (1 MiB) and DRAM, each level's read and triad bandwidth equal (so a kernel's mix of
// reads and writes doesn't change its roof).
#pragma once

#include "engine/support/roofline.hpp"

namespace beamlab::test_support {

inline MachineLimits synthetic_limits(double gflops, double l1_gbps, double l2_gbps,
                                      double dram_gbps) {
  MachineLimits l;
  l.threads = 2;
  l.vector_bytes = 64;
  l.fma_f32_gflops = gflops;
  l.fma_f64_gflops = gflops / 2;
  l.levels = {{"L1", 64 << 10, 32 << 10, l1_gbps, l1_gbps},
              {"L2", 1 << 20, 512 << 10, l2_gbps, l2_gbps},
              {"DRAM", 0, 256 << 20, dram_gbps, dram_gbps}};
  return l;
}

} // namespace beamlab::test_support

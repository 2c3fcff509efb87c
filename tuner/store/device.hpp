// The machine's limits as the database records them, and a kernel's distance from them.
#pragma once

#include <cstdint>
#include <utility>

#include "db/database.hpp"

namespace beamlab::tuner {

/// The fraction of the device's roofline a kernel of `flops` and `bytes` reaches in `ms`: the
/// larger of its compute and its DRAM-bandwidth fraction (above 1 when its data stays in cache).
double roofline_fraction(int64_t flops, int64_t bytes, double ms, double peak_gflops,
                         double peak_gbps);

/// The device's measured peaks (GFLOP/s of a 512 matmul, GB/s of a 16M-element triad with the
/// heuristic's plans), measured and stored on the device's first use.
std::pair<double, double> device_peaks(db::Database& db, int64_t device_id, int threads);

} // namespace beamlab::tuner

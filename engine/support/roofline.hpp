// A machine's measured limits and a kernel's place under them: a cache-aware roofline.
//
// The limits (engine/realize/machine_limits.hpp measures them; the database stores them per
// device) are the vector FMA peak and, for each memory level, the bandwidth a read-only sum and
// a STREAM triad reach with every core on data that fits that level. A kernel is judged
// against the level its data (its buffers' bytes) fits in: a kernel whose data stays in L2
// between runs is bounded by L2's bandwidth, not DRAM's. Reads and writes are weighed apart:
// a read-only kernel against the level's read bandwidth, a triad-like mix against its triad,
// anything between by the rate the two imply for writes. Plain arithmetic, below every layer
// that shows a figure (the tuner, the reports, the GUI).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace beamlab {

/// One memory level's measured bandwidth.
struct MemoryLevel {
  std::string name;              ///< "L1", "L2", "L3" or "DRAM"
  int64_t capacity_bytes = 0;    ///< data the measuring threads hold at this level (0: DRAM)
  int64_t working_set_bytes = 0; ///< the data the bandwidth was measured on
  double read_gbps = 0;          ///< a vector sum over the data
  /// a = b + s*c, a, b and c each counted once (STREAM's convention); the better of
  /// ordinary and streaming stores.
  double triad_gbps = 0;

  /// The bandwidth of a kernel writing `write_share` of the bytes it moves: reads at
  /// read_gbps, writes at the rate the triad implies (3/triad = 2/read + 1/write).
  double bandwidth_for(double write_share) const;
};

/// The share of the CPUs others may take while the limits are measured for the figures to be
/// taken as the machine's (a build on both cores of a 2-core machine once halved the FMA peak
/// stored: 206 GFLOP/s of 420).
inline constexpr double kBusyElsewhere = 0.2;

/// The machine's limits, measured with `threads` threads.
struct MachineLimits {
  int threads = 0;
  int vector_bytes = 0; ///< the widest vector register the FMA peak used
  double fma_f32_gflops = 0, fma_f64_gflops = 0;
  std::vector<MemoryLevel> levels; ///< closest first; DRAM last
  /// The share of the machine's CPU time other processes (or, in a virtual machine, the host)
  /// took while these were measured: above kBusyElsewhere the figures are low, and a quieter
  /// measurement replaces them (tuner/store/device.hpp).
  double busy_elsewhere = 0;

  bool known() const { return fma_f32_gflops > 0 && !levels.empty(); }
  /// The level `bytes` of data fit in: the first whose capacity holds them, else the last.
  const MemoryLevel& level_for(int64_t bytes) const;
};

/// What a kernel does per run, as a roofline needs it.
struct KernelTraffic {
  int64_t flops = 0;
  int64_t bytes = 0;                    ///< its buffers' bytes, each counted once
  std::optional<int64_t> written_bytes; ///< its output's bytes; unknown counts as a triad's third
};

/// A kernel run's place under the roofline.
struct Roof {
  std::string level;   ///< the memory level its data fits in
  std::string bound;   ///< what limits it: "compute" or that level's name
  double gflops = 0;   ///< compute roof (FMA peak)
  double gbps = 0;     ///< the level's bandwidth for this kernel's reads and writes
  double fraction = 0; ///< the shorter of the compute and memory times, over the measured time
  /// Why a fraction above 1 is possible here (empty when at or under 1.05): a figure over the
  /// roof is never shown without it.
  std::string over_note() const;
};

/// One line: "FMA 432 GFLOP/s f32 · L1 1650/1100 · L2 … · DRAM 70/60 GB/s read/triad (2 threads)".
std::string describe(const MachineLimits& limits);

/// The roof for `traffic` run in `ms`, when the limits are known and the time positive.
std::optional<Roof> roofline(const MachineLimits& limits, const KernelTraffic& traffic, double ms);

} // namespace beamlab

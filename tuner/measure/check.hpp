// Correctness checking of candidates: deterministic inputs of several kinds, a sentinel-filled
// output, and a comparison with the unoptimized kernel's output under a tolerance by dtype and
// reduction length.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <beamlab/tuning.hpp>

namespace beamlab::tuner {

/// random: uniform in [-1, 1) (ints in [-100, 100]); small_ints: integers in [-3, 3];
/// special: 0, -0, +-1, +-0.5, +-2, tiny and huge magnitudes (floats), extremes (ints);
/// special_finite: the same without huge floats, for reductions (where a sum of infinities
/// is NaN or not by the order of summation, which Opts are free to change).
enum class InputKind { random, small_ints, special, special_finite };
std::string_view to_string(InputKind k);
std::optional<InputKind> parse_input_kind(std::string_view s);

/// Fills `count` elements of `dt` from (kind, seed): the same bytes on every machine.
void fill_input(DType dt, InputKind kind, uint64_t seed, void* data, int64_t count);
/// Fills with a value no kernel computes by accident (NaN for floats, 0xA5 bytes for ints), so
/// an element a candidate forgets to write can't pass for a stale correct one.
void fill_sentinel(DType dt, void* data, int64_t count);

/// A buffer as a worker's task and the journal's kernel row describe it: {"dtype", "count"}, and
/// "constant": true only when it is one (so rows from before constants read the same).
nlohmann::json buffer_json(const KernelBufferSpec& b);

/// Evicts from the caches every input slot (`buffers[s]`, s > 0) whose spec is constant: what
/// a timed run of the kernel starts with, as a real run finds a model's weights.
void evict_constants(const std::vector<KernelBufferSpec>& specs, const std::vector<void*>& buffers);

/// What the kernel's integer divisions (IDIV, MOD on data) ask of its inputs: no zero in a
/// buffer read as a divisor, and no input at its type's minimum (whose division by -1
/// overflows). Inputs outside it trap (SIGFPE) in every plan, the unoptimized one included.
struct DivisionDomain {
  std::vector<bool> divisor; ///< by DEFINE_GLOBAL slot
  bool divides = false;      ///< the kernel divides integers at all
};
DivisionDomain division_domain(const UOpPtr& ast, size_t buffers);

/// Moves `count` elements of `dt` into the domain (integers only): the minimum to minimum + 1,
/// and for a divisor, 0 to 1.
void keep_in_domain(DType dt, void* data, int64_t count, bool divisor);

struct Comparison {
  int64_t mismatches = 0;
  int64_t first = -1; ///< index of the first mismatch
  double got = 0, want = 0;
  double max_error = 0; ///< largest |got - want| over matching-class elements
  double tolerance = 0; ///< the absolute tolerance used at the largest |want|
};

/// Element-wise comparison. Integers and bools must be equal; floats within
/// |got - want| <= rtol * (|want| + max|want|) with rtol = 4 eps sqrt(reduce_length), NaN
/// only where the reference has NaN, infinities equal.
Comparison compare_outputs(DType dt, const void* got, const void* want, int64_t count,
                           int64_t reduce_length);

} // namespace beamlab::tuner

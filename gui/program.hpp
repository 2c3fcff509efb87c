// A program execution as plain data: a built-in workload, an ONNX model, an expression or a
// kernel in IR text, scheduled, compiled and run by the engine, with each kernel's median time,
// cost, the kernels it reads from and, from one traced execution, what every core did while it ran.
// The schedule graph and the timing views draw this; it holds no Qt types, so a worker thread
// computes it off the UI thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/batch/corpus.hpp"
#include <beamlab/tuning.hpp>

namespace beamlab::gui {

/// One kernel of a program, in execution order.
struct ProgramKernel {
  std::string name; ///< e.g. "r_512_512_512"
  std::string key;  ///< the kernel's hash as 16 hex digits, as the database stores it
  std::string opts; ///< the Opts it ran with, in their text form
  /// The model nodes it computes ("conv1", "relu"; empty unless the program is a model).
  std::vector<std::string> nodes;
  KernelTask task;                ///< what the tuner needs to search it
  double ms = 0;                  ///< median time
  bool once = false;              ///< of constants: ran once before the plan's first run (ms 0)
  std::vector<double> samples_ms; ///< the runs behind it
  double gflops = 0;
  double gbps = 0;
  int64_t flops = 0;
  int64_t bytes = 0;
  /// Per input slot (DEFINE_GLOBAL 1, 2, ...): the index of the kernel that produced that
  /// buffer, or -1 for a program input.
  std::vector<int> inputs;
  std::vector<int64_t> input_bytes;   ///< per input slot, the buffer's size
  std::vector<int64_t> input_buffers; ///< per input slot, the BUFFER's id (shared inputs)
  int64_t output_bytes = 0;           ///< the buffer of slot 0
  int64_t begin_ns = 0, end_ns = 0;   ///< in the traced execution, the whole kernel
  std::vector<ThreadSpan> spans;      ///< in the traced execution, each thread's part
  // What a database says of it (store.hpp's note_standing; unset without one):
  std::optional<double> gain; ///< its newest search's speedup over the heuristic (paired)
  bool tie = false;           ///< that search found nothing faster than the heuristic
  bool heuristic_won = false; ///< that search's winner is the heuristic's own plan
  bool tuned = false;         ///< the plan that ran is that search's winner
  std::optional<double> roof; ///< its median's fraction of this device's roof
  std::string bound;          ///< that roof: "compute" or a memory level ("L2", "DRAM")
};

struct ProgramProfile {
  std::string workload;                  ///< the built-in's name, else the entry's label
  std::map<std::string, int64_t> params; ///< as given (missing ones took their defaults)
  std::string dtype;                     ///< e.g. "float32"
  int threads = 0;                       ///< threads each launch used
  int runs = 0;                          ///< timed runs behind each median
  std::vector<ProgramKernel> kernels;
  double total_ms = 0;   ///< the sum of the kernels' medians
  int64_t traced_ns = 0; ///< the traced execution's length
};

/// Whether, in the traced execution, kernel `k`'s launch lasted far longer than any of its
/// threads' work (over 4x, and by over 50 us): its threads waited for a core, so the machine
/// was busy and its times overstate the kernel.
bool waited_for_cores(const ProgramKernel& k);

/// Builds `entry` (a workload, model, expression or IR kernel; tuner/corpus.hpp), prepares it
/// with `policy` (null: the engine's default policy) on `threads` threads (0: every core), times
/// every kernel over `runs` runs (median) and traces one more execution. Any failure (an unknown
/// workload or parameter, a bad model, a kernel that fails to compile) is the error string;
/// nothing throws.
Expected<ProgramProfile> profile_program(const tuner::CorpusEntry& entry, int threads, int runs,
                                         const OptPolicy* policy = nullptr);
/// The same for a built-in workload with `params` in `dtype` ("" for the default).
Expected<ProgramProfile> profile_program(const std::string& workload,
                                         const std::map<std::string, int64_t>& params,
                                         const std::string& dtype, int threads, int runs,
                                         const OptPolicy* policy = nullptr);

/// A Program box's text as the entry it names (a UserError says what is wrong):
///   "matmul M=64 N=64 dtype=float16"              a built-in workload with parameters
///   "resnet18.onnx input=1x3x224x224"             an ONNX model, with shapes for symbolic dims
///   "kernel.ir"                                   a kernel in IR text
///   "(a.matmul(w) + b).relu(); a=64x128 w=128x256 b=256"   an expression; its inputs' shapes
tuner::CorpusEntry parse_program(const std::string& text);

/// A time in ms for people, keeping three significant digits of short ones: "12.35 ms",
/// "0.0213 ms".
std::string format_ms(double ms);
/// A kernel's median as format_ms has it, or that it ran once before the plan's first run (a
/// kernel of constants, no part of the program's time).
std::string kernel_time_text(const ProgramKernel& k);
/// Its share of the program's time (the sum of the kernels' medians), as the Timing table and
/// the schedule graph show it: "7.1%"; "-" for a kernel of constants.
std::string share_text(const ProgramKernel& k, double total_ms);

/// A byte count for people: "512 B", "4.0 KiB", "4.0 MiB", "1.5 GiB".
std::string format_bytes(int64_t bytes);

} // namespace beamlab::gui

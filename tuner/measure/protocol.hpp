// The tuner <-> sandboxed worker wire format, over a pair of pipes.
//
// A message is a JSON header and an optional binary payload (buffer contents), framed as
//   u32 header length | header bytes | u64 payload length | payload bytes   (host byte order).
// The worker side reads and writes blocking; the tuner side gives every transfer a deadline,
// so a hung or dead worker costs a timeout, never a hang of the tuner, and caps what it reads
// (a length over the cap is refused before anything is allocated).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace beamlab::tuner {

struct Message {
  nlohmann::json header;
  std::string payload;
};

/// How long a worker has been stopped (SIGSTOP: Sandbox::pause), so far: its total and, while
/// it is stopped, since when. Written by one thread at a time (under the sandbox's lock), read
/// by the one waiting for its answer.
class StoppedClock {
public:
  void stopped();   ///< it is stopped from now on (no effect if it already is)
  void continued(); ///< it runs again (no effect if it does)
  std::chrono::steady_clock::duration total() const;

private:
  std::atomic<int64_t> total_ns_{0}, since_ns_{0}; ///< since: 0 while it runs
};

/// When a transfer gives up: a point in time, moved later by whatever time the worker spent
/// stopped (`stopped`, if given) since the deadline was made: a compile paused while another
/// candidate is timed doesn't run out of time for it.
struct Deadline {
  std::chrono::steady_clock::time_point at;
  const StoppedClock* stopped = nullptr;
  std::chrono::steady_clock::duration stopped_before{}; ///< stopped->total() when made
  Deadline(std::chrono::steady_clock::time_point t, const StoppedClock* s = nullptr)
      : at(t), stopped(s), stopped_before(s ? s->total() : std::chrono::steady_clock::duration{}) {}
  std::chrono::steady_clock::time_point when() const;
};

enum class Transfer { ok, closed, timeout, malformed };

/// The most a reader accepts: a header or payload length over these is `malformed`.
struct ReadLimits {
  uint32_t header_bytes = UINT32_MAX;
  uint64_t payload_bytes = UINT64_MAX;
};

/// Writes `m` to `fd`; with a deadline, `fd` must be non-blocking.
Transfer write_message(int fd, const Message& m, std::optional<Deadline> deadline = {});
/// Reads one message from `fd` into `m`; with a deadline, `fd` must be non-blocking. A header
/// that is not a JSON object, or a length over `limits`, is `malformed`.
Transfer read_message(int fd, Message& m, std::optional<Deadline> deadline = {},
                      const ReadLimits& limits = {});

} // namespace beamlab::tuner

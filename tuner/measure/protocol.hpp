// The tuner <-> sandboxed worker wire format, over a pair of pipes.
//
// A message is a JSON header and an optional binary payload (buffer contents), framed as
//   u32 header length | header bytes | u64 payload length | payload bytes   (host byte order).
// The worker side reads and writes blocking; the tuner side gives every transfer a deadline,
// so a hung or dead worker costs a timeout, never a hang of the tuner, and caps what it reads
// (a length over the cap is refused before anything is allocated).
#pragma once

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

using Deadline = std::chrono::steady_clock::time_point;

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

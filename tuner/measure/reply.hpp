// What the tuner accepts from a worker. A worker runs code derived from a user's input, so its
// replies are input too: before anything reads a reply it is checked against the request it
// answers (protocol.hpp lists the fields). A reply that fails is the candidate's error and
// costs the worker its life; it never reaches the search, the journal or the cache.
#pragma once

#include <cstdint>
#include <string>

#include <beamlab/beamlab.hpp>

#include "tuner/measure/protocol.hpp"

namespace beamlab::tuner {

/// The largest reply header the tuner reads (a run's samples and check times fit many times).
inline constexpr uint32_t kMaxReplyHeaderBytes = 1 << 20;

/// Checks `reply` to `request`: a known status; an error, if any, a string; for an ok compile a
/// 1-16 hex digit code hash, a code size and a compile time (finite, not negative); for a run,
/// at most one finite positive sample per timed run (at least one unless stopped early), at
/// most one check time per check (one per check for a reference run), a bool early stop, a
/// max error that is a number or null; and a payload of exactly `payload_bytes` for an ok
/// reply (at most that for a wrong result), none for other requests. The reason when it fails.
Expected<void> check_reply(const nlohmann::json& request, const Message& reply,
                           uint64_t payload_bytes);

} // namespace beamlab::tuner

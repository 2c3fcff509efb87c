// Message framing; see protocol.hpp.
#include "tuner/measure/protocol.hpp"

#include <algorithm>
#include <cerrno>
#include <poll.h>
#include <unistd.h>

namespace beamlab::tuner {
namespace {

// Waits until `fd` is ready for `events` or the deadline passes. A deadline that moves (its
// worker stopped) is looked at again every 100 ms.
bool wait_ready(int fd, short events, std::optional<Deadline> deadline) {
  if (!deadline) return true;
  int64_t step_ms = deadline->stopped ? 100 : int64_t{1} << 30;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline->when() - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), step_ms)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true; // let the read/write report the error
  }
}

// Moves n bytes through `io` (read or write), waiting for `events` before each step.
template <class Io>
Transfer transfer_all(int fd, short events, size_t n, std::optional<Deadline> deadline, Io io) {
  while (n > 0) {
    if (!wait_ready(fd, events, deadline)) return Transfer::timeout;
    ssize_t done = io(n);
    if (done < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (done <= 0) return Transfer::closed;
    n -= static_cast<size_t>(done);
  }
  return Transfer::ok;
}

Transfer write_all(int fd, const char* data, size_t n, std::optional<Deadline> deadline) {
  return transfer_all(fd, POLLOUT, n, deadline, [&](size_t left) {
    ssize_t w = ::write(fd, data, left);
    if (w > 0) data += w;
    return w;
  });
}

Transfer read_all(int fd, char* data, size_t n, std::optional<Deadline> deadline) {
  return transfer_all(fd, POLLIN, n, deadline, [&](size_t left) {
    ssize_t r = ::read(fd, data, left);
    if (r > 0) data += r;
    return r;
  });
}

} // namespace

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

void StoppedClock::stopped() {
  int64_t none = 0;
  since_ns_.compare_exchange_strong(none, std::max<int64_t>(1, now_ns()));
}

void StoppedClock::continued() {
  // The total first: a reader between the two steps counts the stop twice (a deadline a moment
  // late), never not at all (a deadline that jumps back by the whole stop).
  if (int64_t since = since_ns_.load(); since != 0) {
    total_ns_ += now_ns() - since;
    since_ns_ = 0;
  }
}

std::chrono::steady_clock::duration StoppedClock::total() const {
  int64_t since = since_ns_.load();
  return std::chrono::nanoseconds(total_ns_.load() + (since != 0 ? now_ns() - since : 0));
}

std::chrono::steady_clock::time_point Deadline::when() const {
  return stopped ? at + (stopped->total() - stopped_before) : at;
}

Transfer write_message(int fd, const Message& m, std::optional<Deadline> deadline) {
  std::string header = m.header.dump();
  auto hn = static_cast<uint32_t>(header.size());
  uint64_t pn = m.payload.size();
  std::string frame(reinterpret_cast<const char*>(&hn), sizeof hn);
  frame += header;
  frame.append(reinterpret_cast<const char*>(&pn), sizeof pn);
  if (Transfer t = write_all(fd, frame.data(), frame.size(), deadline); t != Transfer::ok) return t;
  return write_all(fd, m.payload.data(), m.payload.size(), deadline);
}

Transfer read_message(int fd, Message& m, std::optional<Deadline> deadline,
                      const ReadLimits& limits) {
  uint32_t hn = 0;
  if (Transfer t = read_all(fd, reinterpret_cast<char*>(&hn), sizeof hn, deadline);
      t != Transfer::ok)
    return t;
  if (hn > limits.header_bytes) return Transfer::malformed;
  std::string header(hn, '\0');
  if (Transfer t = read_all(fd, header.data(), hn, deadline); t != Transfer::ok) return t;
  uint64_t pn = 0;
  if (Transfer t = read_all(fd, reinterpret_cast<char*>(&pn), sizeof pn, deadline);
      t != Transfer::ok)
    return t;
  if (pn > limits.payload_bytes) return Transfer::malformed;
  m.payload.assign(pn, '\0');
  if (Transfer t = read_all(fd, m.payload.data(), pn, deadline); t != Transfer::ok) return t;
  m.header = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  return m.header.is_object() ? Transfer::ok : Transfer::malformed;
}

} // namespace beamlab::tuner

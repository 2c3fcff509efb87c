// libFuzzer over worker replies, the tuner's side of the protocol: the bytes go through a real
// pipe into read_message with the tuner's limits, and what parses is checked (check_reply)
// against a compile, a timed run and a reference run. Nothing may crash, hang, or allocate
// beyond the limits (-rss_limit_mb catches a length trusted before it is checked).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>

#include "tuner/measure/protocol.hpp"
#include "tuner/measure/reply.hpp"

using namespace beamlab::tuner;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return 0;
  ::fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
  size_t written = 0;
  while (written < size) {
    ssize_t w = ::write(p[1], data + written, size - written);
    if (w <= 0) break;
    written += static_cast<size_t>(w);
  }
  ::close(p[1]);
  ::fcntl(p[0], F_SETFL, O_NONBLOCK);
  constexpr uint64_t kOutputs = 3 * 64; // a reference run of three checks, 64 bytes each
  Message m;
  Transfer t = read_message(p[0], m, std::chrono::steady_clock::now() + std::chrono::seconds(1),
                            {kMaxReplyHeaderBytes, kOutputs});
  ::close(p[0]);
  if (t != Transfer::ok) return 0;
  const nlohmann::json requests[] = {
      {{"op", "compile"}, {"id", 1}, {"opts", ""}},
      {{"op", "run"}, {"id", 1}, {"checks", {0, 1, 2}}, {"warmup", 1}, {"runs", 5}},
      {{"op", "run"}, {"id", 0}, {"checks", {0, 1, 2}}, {"return_outputs", true}},
      {{"op", "task"}}};
  for (const nlohmann::json& r : requests) (void)check_reply(r, m, kOutputs);
  return 0;
}

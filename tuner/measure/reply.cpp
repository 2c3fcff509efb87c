// Checking worker replies; see reply.hpp.
#include "tuner/measure/reply.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace beamlab::tuner {
namespace {

using json = nlohmann::json;

// A field that must be a finite number >= 0 (> 0 when `positive`).
Expected<double> time_of(const json& v, const std::string& what, bool positive) {
  if (!v.is_number()) return make_unexpected(what + " is not a number");
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0 || (positive && d == 0))
    return make_unexpected(fmt::format("{} is {}", what, d));
  return d;
}

// `h[key]`, if present, an array of at most `max` times.
Expected<size_t> times(const json& h, const char* key, size_t max, bool positive) {
  if (!h.contains(key)) return size_t{0};
  const json& a = h[key];
  if (!a.is_array()) return make_unexpected(std::string(key) + " is not an array");
  if (a.size() > max)
    return make_unexpected(
        fmt::format("{} has {} entries, more than the {} asked for", key, a.size(), max));
  for (size_t i = 0; i < a.size(); ++i)
    if (auto t = time_of(a[i], fmt::format("{}[{}]", key, i), positive); !t)
      return make_unexpected(t.error());
  return a.size();
}

Expected<void> check_compile(const json& h) {
  const json& hash = h.contains("code_hash") ? h["code_hash"] : json();
  bool hex =
      hash.is_string() && !hash.get<std::string>().empty() &&
      hash.get<std::string>().size() <= 16 &&
      hash.get<std::string>().find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
  if (!hex) return make_unexpected("code_hash is not 1 to 16 hex digits");
  const json& bytes = h.contains("code_bytes") ? h["code_bytes"] : json();
  if (!bytes.is_number_integer() || bytes.get<int64_t>() < 0)
    return make_unexpected("code_bytes is not a non-negative integer");
  if (auto t = time_of(h.contains("compile_ms") ? h["compile_ms"] : json(), "compile_ms", false);
      !t)
    return make_unexpected(t.error());
  return {};
}

Expected<void> check_run(const json& request, const json& h, const std::string& status) {
  const json& checks = request.contains("checks") ? request["checks"] : json::array();
  size_t n_checks = std::max<size_t>(1, checks.is_array() ? checks.size() : 1);
  int64_t runs = request.value("runs", 0);
  auto samples = times(h, "samples_ms", static_cast<size_t>(std::max<int64_t>(runs, 1)), true);
  if (!samples) return make_unexpected(samples.error());
  auto check_ms = times(h, "check_ms", n_checks, false);
  if (!check_ms) return make_unexpected(check_ms.error());
  if (h.contains("early_stop") && !h["early_stop"].is_boolean())
    return make_unexpected("early_stop is not a bool");
  bool early = h.value("early_stop", false);
  if (status == "ok" && runs > 0 && *samples == 0 && !early)
    return make_unexpected("samples_ms is empty");
  // A reference run (outputs returned, no timing) runs every check.
  if (status == "ok" && request.value("return_outputs", false) && *check_ms != n_checks)
    return make_unexpected(
        fmt::format("check_ms has {} entries for {} checks", *check_ms, n_checks));
  if (h.contains("max_error") && !h["max_error"].is_number() && !h["max_error"].is_null())
    return make_unexpected("max_error is not a number");
  return {};
}

} // namespace

Expected<void> check_reply(const json& request, const Message& reply, uint64_t payload_bytes) {
  const json& h = reply.header;
  if (!h.is_object()) return make_unexpected("the header is not an object");
  if (!h.contains("status") || !h["status"].is_string())
    return make_unexpected("status is not a string");
  std::string status = h["status"];
  static const char* const kStatuses[] = {
      "ok", "rejected", "compile_error", "wrong_result", "bad_request", "limit", "error"};
  if (std::find(std::begin(kStatuses), std::end(kStatuses), status) == std::end(kStatuses))
    return make_unexpected("unknown status '" + status.substr(0, 40) + "'");
  if (h.contains("error") && !h["error"].is_string())
    return make_unexpected("error is not a string");
  if (h.contains("retiring") && !h["retiring"].is_boolean())
    return make_unexpected("retiring is not a bool");
  std::string op = request.value("op", "");
  bool outputs = op == "run" && request.value("return_outputs", false);
  uint64_t most = outputs ? payload_bytes : 0;
  if (reply.payload.size() > most || (outputs && status == "ok" && reply.payload.size() != most))
    return make_unexpected(fmt::format("a payload of {} bytes where {} {} expected",
                                       reply.payload.size(), most, most == 1 ? "is" : "are"));
  if (op == "compile" && status == "ok") return check_compile(h);
  if (op == "run" && (status == "ok" || status == "wrong_result"))
    return check_run(request, h, status);
  return {};
}

} // namespace beamlab::tuner

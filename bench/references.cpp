// The bench's references; see references.hpp.
#include "bench/references.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include <cblas.h>
#include <dnnl.hpp>

#include "engine/realize/machine_limits.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/support/process.hpp"
#include "engine/support/statistics.hpp"

namespace beamlab::bench {
namespace {

// Seconds per call: the median of at least 5 calls and 0.2 s, after one warm-up call (the
// median resists a noisy neighbour).
double median_seconds(const std::function<void()>& call) {
  call();
  std::vector<double> times;
  double total = 0;
  while (times.size() < 5 || total < 0.2) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    total += times.back();
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2),
                   times.end());
  return times[times.size() / 2];
}

dnnl::engine& cpu() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A oneDNN memory of `desc`, every byte of it (padding included) holding 0.5f.
dnnl::memory filled(const dnnl::memory::desc& desc) {
  dnnl::memory m(desc, cpu());
  auto* p = static_cast<float*>(m.get_data_handle());
  std::fill(p, p + desc.get_size() / sizeof(float), 0.5f);
  return m;
}

std::optional<Roof> roof_of(double flops, double bytes, double written, double seconds) {
  return roofline(
      limits(),
      {static_cast<int64_t>(flops), static_cast<int64_t>(bytes), static_cast<int64_t>(written)},
      seconds * 1e3);
}

} // namespace

const MachineLimits& limits() {
  static const MachineLimits l = measure_machine_limits();
  return l;
}

double limit_fraction(double flops, double bytes, double written, double seconds) {
  std::optional<Roof> r = roof_of(flops, bytes, written, seconds);
  return r ? r->fraction : 0;
}

std::string roof_bound(double flops, double bytes, double written, double seconds) {
  std::optional<Roof> r = roof_of(flops, bytes, written, seconds);
  return r ? "roof " + r->bound : "roof ?";
}

double onednn_matmul_gflops(int64_t m, int64_t n, int64_t k) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::memory::desc a({m, k}, dt::f32, tag::ab), b_any({k, n}, dt::f32, tag::any),
      b_plain({k, n}, dt::f32, tag::ab), c({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b_any, c), cpu());
  dnnl::stream s(cpu());
  dnnl::memory A = filled(a), B = filled(b_plain), C = filled(c), packed(pd.weights_desc(), cpu());
  dnnl::reorder(B, packed).execute(s, B, packed);
  dnnl::matmul mm(pd);
  double seconds = median_seconds([&] {
    mm.execute(s, {{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, C}});
    s.wait();
  });
  return 2.0 * static_cast<double>(m * n * k) / seconds / 1e9;
}

double onednn_conv2d_gflops(const ConvShape& conv, bool blocked) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  tag act = blocked ? tag::any : tag::nchw;
  const int64_t g = conv.groups, o = conv.out();
  dnnl::memory::dims weights =
      g == 1 ? dnnl::memory::dims{conv.cout, conv.c, conv.k, conv.k}
             : dnnl::memory::dims{g, conv.cout / g, conv.c / g, conv.k, conv.k};
  dnnl::memory::desc src({1, conv.c, conv.hw, conv.hw}, dt::f32, act),
      wei(weights, dt::f32, tag::any), dst({1, conv.cout, o, o}, dt::f32, act);
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei, dst,
          {conv.stride, conv.stride}, {conv.pad, conv.pad}, {conv.pad, conv.pad}),
      cpu());
  dnnl::stream s(cpu());
  dnnl::memory S = filled(pd.src_desc()), W = filled(pd.weights_desc()), D = filled(pd.dst_desc());
  dnnl::convolution_forward prim(pd);
  double seconds = median_seconds([&] {
    prim.execute(s, {{DNNL_ARG_SRC, S}, {DNNL_ARG_WEIGHTS, W}, {DNNL_ARG_DST, D}});
    s.wait();
  });
  return conv.flops() / seconds / 1e9;
}

double openblas_sgemm_gflops(int64_t m, int64_t n, int64_t k) {
  Buffer C(m * n * 4), A(m * k * 4), B(k * n * 4);
  for (float& x : A.as<float>()) x = 0.5f;
  for (float& x : B.as<float>()) x = 0.25f;
  double seconds = median_seconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, A.as<float>().data(), static_cast<int>(k),
                B.as<float>().data(), static_cast<int>(n), 0.0f, C.as<float>().data(),
                static_cast<int>(n));
  });
  return 2.0 * static_cast<double>(m * n * k) / seconds / 1e9;
}

std::string openblas_core() {
  return std::string(openblas_get_corename()) + " (" + openblas_get_config() + ")";
}

namespace {

// `name` on PATH, as a shell finds it ("" if it isn't there).
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::filesystem::path p = std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (!p.parent_path().empty() && ::access(p.c_str(), X_OK) == 0) return p.string();
    start = end + 1;
  }
  return "";
}

} // namespace

Expected<std::unique_ptr<OrtSession>> OrtSession::open(const std::string& model, int threads,
                                                       const std::vector<std::string>& inputs) {
  const std::string fix = "install it with 'bash scripts/install-ort'";
  std::string node = on_path("node");
  if (node.empty()) return make_unexpected("Node.js is not on PATH (" + fix + ")");
  std::filesystem::path script =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "ort_reference.cjs";
  if (!std::filesystem::exists(script))
    return make_unexpected(script.string() + " is missing: build the beamlab-bench target");
  // A child that ended (an error it reported) must fail a write, not kill this process.
  std::signal(SIGPIPE, SIG_IGN);
  // This process's OpenMP threads spin a while (KMP_BLOCKTIME, 200 ms) after its last kernel:
  // let them sleep before the reference starts.
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0)
    return make_unexpected(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(from, O_CLOEXEC) != 0) {
    ::close(to[0]);
    ::close(to[1]);
    return make_unexpected(std::string("pipe: ") + std::strerror(errno));
  }
  std::unique_ptr<OrtSession> s(new OrtSession());
  s->to_child_ = to[1];
  s->from_child_ = from[0];
  SpawnOptions o;
  o.stdin_fd = to[0];
  o.stdout_fd = from[1];
  std::vector<std::string> argv = {node, script.string(), model, "--threads",
                                   std::to_string(threads)};
  for (const std::string& i : inputs) {
    argv.push_back("--input");
    argv.push_back(i);
  }
  Expected<pid_t> pid = spawn_process(argv, o);
  ::close(to[0]);
  ::close(from[1]);
  if (!pid) return make_unexpected("cannot start " + node + ": " + pid.error());
  s->pid_ = *pid;
  Expected<std::string> ready = s->request("");
  if (!ready) return make_unexpected(ready.error());
  s->version_ = nlohmann::json::parse(*ready).value("ort", "?");
  if (auto warm = s->time_ms(5); !warm) return make_unexpected(warm.error());
  return s;
}

OrtSession::~OrtSession() {
  if (to_child_ >= 0) ::close(to_child_); // the end of its input: it quits
  if (from_child_ >= 0) ::close(from_child_);
  if (pid_ > 0) wait_process(pid_);
}

// Sends `line` (none if empty) and reads the child's one-line JSON answer: the line, or the
// error it reported (or that it ended).
Expected<std::string> OrtSession::request(const std::string& line) {
  if (!line.empty()) {
    std::string out = line + "\n";
    if (::write(to_child_, out.data(), out.size()) != static_cast<ssize_t>(out.size()))
      return make_unexpected(std::string("ONNX Runtime's process ended"));
  }
  size_t eol;
  while ((eol = pending_.find('\n')) == std::string::npos) {
    char buf[4096];
    ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return make_unexpected(std::string("ONNX Runtime's process ended without an answer"));
    pending_.append(buf, static_cast<size_t>(n));
  }
  std::string answer = pending_.substr(0, eol);
  pending_.erase(0, eol + 1);
  nlohmann::json j = nlohmann::json::parse(answer, nullptr, false);
  if (j.is_discarded()) return make_unexpected("ONNX Runtime's process said: " + answer);
  if (j.contains("error")) return make_unexpected(j["error"].get<std::string>());
  return answer;
}

Expected<std::vector<double>> OrtSession::time_ms(int runs) {
  Expected<std::string> answer = request("time " + std::to_string(runs));
  if (!answer) return make_unexpected(answer.error());
  return nlohmann::json::parse(*answer).value("ms", std::vector<double>{});
}

Expected<double> ort_median_ms(const std::string& model, int threads) {
  static std::map<std::pair<std::string, int>, Expected<double>> measured;
  auto key = std::make_pair(model, threads);
  if (auto it = measured.find(key); it != measured.end()) return it->second;
  Expected<double> ms = [&]() -> Expected<double> {
    auto s = OrtSession::open(model, threads);
    if (!s) return make_unexpected(s.error());
    auto runs = (*s)->time_ms(31);
    if (!runs) return make_unexpected(runs.error());
    return quantile(*runs, 0.5);
  }();
  return measured.emplace(key, ms).first->second;
}

} // namespace beamlab::bench

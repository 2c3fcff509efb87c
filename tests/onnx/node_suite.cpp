// Runs an ONNX backend test suite (Debian's libonnx-testdata: data/node, pytorch-converted,
// pytorch-operator, simple) against a checked-in expectation list.
//
//   beamlab_onnx_suite SUITE_DIR EXPECTATIONS [--update] [--filter TEXT] [--jobs N] [-v]
//                      [--beam W]
//
// Each case (a folder with model.onnx and test_data_set_*/input_N.pb, output_N.pb) runs in a
// child process of its own, so a crash or a hang costs only that case: the model is imported,
// built over the inputs, realized, and every output compared with the expected one (same
// dtype and shape; integers and bools exactly; floats to |a - b| <= atol + rtol |b| with
// rtol 1e-3, atol 1e-5, NaN equal to NaN). The expectation list names every case `pass` or
// `skip REASON`. The run fails when an expected pass doesn't pass (or a case is missing from
// the list); a skip that now passes is reported so the list can be updated. --update rewrites
// the list from this run (failures become skips with their error as the reason). --beam W
// runs every kernel with a plan BEAM-searched in sandboxes (a few candidates each), so tuned
// plans are checked against the same outputs.
// Exit: 0 ok, 1 regressions, 77 the suite folder is missing (CTest's skip).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/model.hpp"
#include "frontends/onnx/tensor_proto.hpp"
#include "tuner/batch/policy.hpp"

namespace fs = std::filesystem;
using namespace beamlab;
namespace bo = beamlab::onnx;

namespace {

constexpr double kRtol = 1e-3, kAtol = 1e-5;
int timeout_seconds = 120;
int beam_width = 0; // 0: the heuristic's plans

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

// Compares one output; "" when it matches.
std::string compare(const bo::HostTensor& got, const bo::HostTensor& want, size_t index) {
  std::ostringstream why;
  if (got.dtype != want.dtype) {
    why << "output " << index << " is " << got.dtype.str() << ", expected " << want.dtype.str();
    return why.str();
  }
  if (got.shape != want.shape) {
    why << "output " << index << " has shape " << shape_str(got.shape) << ", expected "
        << shape_str(want.shape);
    return why.str();
  }
  bool exact = !want.dtype.is_float();
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (exact) {
      if (got.int_at(i) == want.int_at(i)) continue;
      why << "output " << index << " element " << i << " is " << got.int_at(i) << ", expected "
          << want.int_at(i);
      return why.str();
    }
    double g = got.at(i), w = want.at(i);
    if ((std::isnan(g) && std::isnan(w)) || g == w) continue;
    if (std::abs(g - w) <= kAtol + kRtol * std::abs(w)) continue;
    why << "output " << index << " element " << i << " is " << g << ", expected " << w;
    return why.str();
  }
  return "";
}

// The graph inputs the test data feeds (those without an initializer), in order; "" for
// those whose shape the model fixes.
std::vector<std::string> fed_inputs(const fs::path& model_file) {
  ::onnx::ModelProto m;
  std::ifstream f(model_file, std::ios::binary);
  if (!m.ParseFromIstream(&f)) return {};
  std::set<std::string> init;
  for (const auto& i : m.graph().initializer()) init.insert(i.name());
  std::vector<std::string> names;
  for (const auto& i : m.graph().input()) {
    if (init.count(i.name())) continue;
    if (!i.type().has_tensor_type()) { // a sequence or optional: the model reports it
      names.push_back("");
      continue;
    }
    bool symbolic = !i.type().tensor_type().has_shape();
    for (const auto& d : i.type().tensor_type().shape().dim()) symbolic |= !d.has_dim_value();
    names.push_back(symbolic ? i.name() : "");
  }
  return names;
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 bits.
bo::HostTensor as_dtype(bo::HostTensor h, DType want) {
  if (want == Scalar::BFloat16 && h.dtype == Scalar::UInt16) h.dtype = want;
  return h;
}

// The dim_params of each graph input (by position; "" where a dim is fixed or unnamed).
std::vector<std::vector<std::string>> dim_params(const fs::path& model_file) {
  ::onnx::ModelProto m;
  std::ifstream f(model_file, std::ios::binary);
  if (!m.ParseFromIstream(&f)) return {};
  std::set<std::string> init;
  for (const auto& i : m.graph().initializer()) init.insert(i.name());
  std::vector<std::vector<std::string>> out;
  for (const auto& i : m.graph().input()) {
    if (init.count(i.name())) continue;
    out.emplace_back();
    for (const auto& d : i.type().tensor_type().shape().dim()) out.back().push_back(d.dim_param());
  }
  return out;
}

// A symbolic case: data sets whose inputs differ along the model's named symbolic dims. Those
// dims stay Variables (from 1 to the largest length the data gives), the model is built once
// and every data set runs at its own lengths (its inputs copied into buffers sized for the
// largest, as a server would). Empty: the shapes agree, so they are given as fixed shapes.
std::vector<Variable> symbolic_dims(const fs::path& model_file,
                                    const std::vector<std::vector<Shape>>& set_shapes,
                                    std::vector<VarValues>& per_set) {
  std::vector<std::vector<std::string>> params = dim_params(model_file);
  std::map<std::string, int64_t> most;
  bool differ = false;
  per_set.assign(set_shapes.size(), {});
  for (size_t k = 0; k < set_shapes.size(); ++k)
    for (size_t i = 0; i < set_shapes[k].size() && i < params.size(); ++i)
      for (size_t d = 0; d < set_shapes[k][i].size() && d < params[i].size(); ++d) {
        const std::string& name = params[i][d];
        if (name.empty()) continue;
        int64_t v = set_shapes[k][i][d].value();
        const Shape& first = set_shapes[0][i];
        differ |= d >= first.size() || v != first[d].value();
        most[name] = std::max(most[name], v);
        per_set[k][name] = v;
      }
  std::vector<Variable> vars;
  if (differ)
    for (const auto& [name, hi] : most) vars.push_back({name, 1, hi});
  return vars;
}

// An input fed at `values`: `h`'s bytes at the start of a buffer sized for `shape`'s largest.
Tensor symbolic_feed(const bo::HostTensor& h, const Shape& shape) {
  auto storage =
      std::make_shared<Buffer>(static_cast<size_t>(shape_numel(shape).max() * h.dtype.itemsize()));
  std::memcpy(storage->data(), h.bytes.data(), h.bytes.size());
  return Tensor::from_storage(storage, shape, h.dtype);
}

// Runs one case in this process: "" on success, else why it failed. Symbolic input dims
// take the shapes of the first data set's inputs, or stay symbolic where the data sets differ.
std::string run_case(const fs::path& dir) {
  fs::path model_file = dir / "model.onnx";
  std::vector<std::string> names = fed_inputs(model_file);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set_* folder";
  std::vector<std::vector<Shape>> set_shapes;
  for (const fs::path& set : sets) {
    set_shapes.emplace_back();
    for (size_t i = 0; i < names.size(); ++i) {
      fs::path f = set / ("input_" + std::to_string(i) + ".pb");
      set_shapes.back().push_back(fs::exists(f) ? bo::read_tensor_file(f.string()).shape : Shape{});
    }
  }
  std::vector<VarValues> values;
  std::vector<Variable> vars = symbolic_dims(model_file, set_shapes, values);
  bo::InputShapes shapes;
  for (size_t i = 0; i < names.size(); ++i)
    if (!names[i].empty() && vars.empty() &&
        fs::exists(sets[0] / ("input_" + std::to_string(i) + ".pb")))
      shapes[names[i]] = set_shapes[0][i];
  bo::Model model = bo::Model::load(model_file.string(), shapes, vars);
  for (size_t k = 0; k < sets.size(); ++k) {
    const fs::path& set = sets[k];
    std::map<std::string, Tensor> feeds;
    const auto& inputs = model.inputs();
    for (size_t i = 0;; ++i) {
      fs::path f = set / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(f)) break;
      if (i >= inputs.size()) return "more input files than graph inputs";
      bo::HostTensor h = as_dtype(bo::read_tensor_file(f.string()), inputs[i].dtype);
      if (h.numel() == 0) continue;
      feeds.emplace(inputs[i].name, is_symbolic(inputs[i].shape) ? symbolic_feed(h, inputs[i].shape)
                                                                 : bo::to_tensor(h));
    }
    std::vector<Tensor> outs = model.build(feeds).outputs;
    std::vector<Tensor*> ptrs;
    for (Tensor& t : outs) ptrs.push_back(&t);
    std::unique_ptr<tuner::BeamPolicy> beam;
    if (beam_width > 0) {
      tuner::SearchSettings settings;
      settings.beam = beam_width;
      settings.candidate_budget = 6;
      settings.time_budget_s = 30;
      beam = std::make_unique<tuner::BeamPolicy>(settings);
    }
    VarValues at = vars.empty() ? VarValues{} : values[k];
    Tensor::realize_all(ptrs, {.policy = beam.get(), .vars = at});
    for (size_t i = 0; i < outs.size(); ++i) {
      fs::path f = set / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(f)) return "no " + f.filename().string();
      bo::HostTensor want = as_dtype(bo::read_tensor_file(f.string()), outs[i].dtype());
      std::string why = compare(bo::to_host(outs[i]), want, i);
      if (!why.empty()) return (vars.empty() ? "" : set.filename().string() + ": ") + why;
    }
  }
  return "";
}

struct Outcome {
  bool pass = false;
  std::string why;
};

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string name, text;
  std::chrono::steady_clock::time_point start;
};

Child spawn(const fs::path& dir) {
  int p[2];
  if (pipe(p) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    std::string why;
    try {
      why = run_case(dir);
    } catch (const std::exception& e) {
      why = e.what();
    }
    std::string msg = why.empty() ? "pass" : "fail " + one_line(why);
    (void)!write(p[1], msg.data(), msg.size());
    _exit(0);
  }
  close(p[1]);
  return {pid, p[0], dir.filename().string(), "", std::chrono::steady_clock::now()};
}

Outcome finish(Child& c) {
  close(c.fd);
  int status = 0;
  waitpid(c.pid, &status, 0);
  // The child ends with _exit (or a signal), so libomp's exit handler never removes what it
  // registered in /dev/shm: remove it here.
  std::error_code ec;
  fs::remove("/dev/shm/__KMP_REGISTERED_LIB_" + std::to_string(c.pid) + "_" +
                 std::to_string(getuid()),
             ec);
  if (WIFSIGNALED(status)) return {false, std::string("crashed: ") + strsignal(WTERMSIG(status))};
  if (c.text.rfind("pass", 0) == 0) return {true, ""};
  if (c.text.rfind("fail ", 0) == 0) return {false, c.text.substr(5)};
  return {false, "the case's process ended without a result"};
}

std::map<std::string, Outcome> run_all(const std::vector<fs::path>& cases, int jobs, bool verbose) {
  std::map<std::string, Outcome> out;
  std::vector<Child> running;
  size_t next = 0;
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < jobs)
      running.push_back(spawn(cases[next++]));
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back({c.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 1000);
    for (size_t i = running.size(); i-- > 0;) {
      Child& c = running[i];
      bool done = false;
      if (fds[i].revents & (POLLIN | POLLHUP)) {
        char buf[4096];
        ssize_t n = read(c.fd, buf, sizeof buf);
        if (n > 0)
          c.text.append(buf, static_cast<size_t>(n));
        else
          done = true;
      }
      auto age = std::chrono::steady_clock::now() - c.start;
      if (!done && age > std::chrono::seconds(timeout_seconds)) {
        kill(c.pid, SIGKILL);
        finish(c);
        out[c.name] = {false, "timed out after " + std::to_string(timeout_seconds) + " s"};
        running.erase(running.begin() + static_cast<long>(i));
        continue;
      }
      if (!done) continue;
      out[c.name] = finish(c);
      if (verbose)
        std::cout << c.name << ": " << (out[c.name].pass ? "pass" : out[c.name].why) << std::endl;
      running.erase(running.begin() + static_cast<long>(i));
    }
  }
  return out;
}

// name -> "pass" or "skip REASON"
std::map<std::string, std::string> read_expectations(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.find(' ');
    out[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(sp + 1);
  }
  return out;
}

// A skip's reason: the error without the case's path, under a heading for its kind.
std::string reason(std::string why) {
  if (size_t at = why.find("model.onnx: "); at != std::string::npos) why = why.substr(at + 12);
  if (size_t at = why.find("test_data_set_"); at != std::string::npos)
    why = why.substr(why.find(": ", at) + 2);
  auto has = [&](const char* s) { return why.find(s) != std::string::npos; };
  const char* kind = has("ai.onnx.preview.training") ? "training op"
                     : has("training_mode")          ? "training mode"
                     : has("Sequence") || has("is not a tensor") || has("Optional")
                         ? "sequences and optionals"
                     : has("STRING")                                 ? "strings"
                     : has("(Loop,") || has("(If,") || has("(Scan,") ? "control flow"
                     : has("empty")                                  ? "empty tensors"
                     : has("this op is not supported")               ? "unsupported op"
                                                                     : "fails";
  return std::string(kind) + ": " + why;
}

void write_expectations(const std::string& path, const std::string& suite,
                        const std::map<std::string, Outcome>& results,
                        const std::map<std::string, std::string>& old) {
  std::ofstream f(path);
  f << "# Expected outcomes of the ONNX backend suite '" << suite << "' (libonnx-testdata 1.12):\n"
    << "# `pass`, or `skip` and why. Regenerate with beamlab_onnx_suite ... --update.\n";
  for (const auto& [name, r] : results) {
    if (r.pass) {
      f << name << " pass\n";
      continue;
    }
    auto it = old.find(name);
    bool kept = it != old.end() && it->second.rfind("skip", 0) == 0;
    f << name << " " << (kept ? it->second : "skip " + reason(r.why)) << "\n";
  }
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 2) {
    std::cerr << "usage: beamlab_onnx_suite SUITE_DIR EXPECTATIONS [--update] [--filter TEXT] "
                 "[--jobs N] [-v]\n";
    return 2;
  }
  std::string suite_dir = args[0], list = args[1], filter;
  bool update = false, verbose = false;
  int jobs = 2;
  for (size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--update")
      update = true;
    else if (args[i] == "-v")
      verbose = true;
    else if (args[i] == "--filter" && i + 1 < args.size())
      filter = args[++i];
    else if (args[i] == "--jobs" && i + 1 < args.size())
      jobs = std::stoi(args[++i]);
    else if (args[i] == "--beam" && i + 1 < args.size())
      beam_width = std::stoi(args[++i]);
  }
  if (!fs::is_directory(suite_dir)) {
    std::cout << "SKIP: the ONNX test data '" << suite_dir
              << "' is not installed (Debian's libonnx-testdata; scripts/test installs it)\n";
    return 77;
  }
  if (beam_width > 0) timeout_seconds = 1200;
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(suite_dir))
    if (fs::exists(e.path() / "model.onnx") &&
        e.path().filename().string().find(filter) != std::string::npos)
      cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  std::string suite = fs::path(suite_dir).filename().string();
  auto start = std::chrono::steady_clock::now();
  std::map<std::string, Outcome> results = run_all(cases, jobs, verbose);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::map<std::string, std::string> expected = read_expectations(list);
  int pass = 0, regressions = 0, fixed = 0;
  for (const auto& [name, r] : results) {
    pass += r.pass;
    auto it = expected.find(name);
    bool want_pass = it == expected.end() || it->second == "pass";
    if (want_pass && !r.pass) {
      ++regressions;
      std::cout << "FAIL " << name << ": " << r.why
                << (it == expected.end() ? " (not in the expectation list)" : "") << "\n";
    } else if (!want_pass && r.pass) {
      ++fixed;
      std::cout << "now passes (mark it pass in the list): " << name << "\n";
    }
  }
  auto n = static_cast<int>(results.size());
  std::printf("%s: %d pass, %d skip or fail, of %d cases (%.1f%% pass); %d regression(s), "
              "%d newly passing; %.0f s\n",
              suite.c_str(), pass, n - pass, n, n ? 100.0 * pass / n : 0.0, regressions, fixed,
              secs);
  if (update && filter.empty()) {
    write_expectations(list, suite, results, expected);
    std::cout << "wrote " << list << "\n";
    return 0;
  }
  return regressions ? 1 : 0;
}

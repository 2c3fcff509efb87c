// Measuring the machine's limits; see machine_limits.hpp.
#include "engine/realize/machine_limits.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sched.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/codegen/limit_kernels.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"

namespace beamlab {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// "0-3,8" -> 5.
int count_cpus(const std::string& list) {
  int n = 0;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ',');) {
    if (part.empty()) continue;
    size_t dash = part.find('-');
    n += dash == std::string::npos ? 1 : std::stoi(part.substr(dash + 1)) - std::stoi(part) + 1;
  }
  return std::max(n, 1);
}

// sysfs sizes read "48K", "1024K", "32M".
int64_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  int64_t n = std::atoll(s.c_str());
  switch (s.back()) {
  case 'K': return n << 10;
  case 'M': return n << 20;
  case 'G': return n << 30;
  default: return n;
  }
}

std::vector<CacheSize> sysfs_caches() {
  std::vector<CacheSize> out;
  for (int i = 0;; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string type = read_text(dir + "type");
    if (type.empty()) break;
    if (type == "Instruction") continue;
    CacheSize c{std::atoi(read_text(dir + "level").c_str()), parse_size(read_text(dir + "size")),
                count_cpus(read_text(dir + "shared_cpu_list"))};
    if (c.level > 0 && c.bytes > 0) out.push_back(c);
  }
  return out;
}

std::vector<CacheSize> sysconf_caches() {
  std::vector<CacheSize> out;
  int cores = static_cast<int>(std::max(sysconf(_SC_NPROCESSORS_ONLN), 1L));
  const int names[] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE};
  for (int level = 1; level <= 3; ++level) {
    long bytes = sysconf(names[level - 1]);
    if (bytes > 0) out.push_back({level, bytes, level == 3 ? cores : 1});
  }
  return out;
}

using Clock = std::chrono::steady_clock;

// The CPU time, in seconds, the CPUs this process may run on spent busy (user, nice, system,
// irq, softirq and steal time from their /proc/stat lines), and how many they are; -1 seconds
// where it can't be read.
std::pair<double, int> busy_cpu_seconds() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return {-1, 0};
  std::ifstream in("/proc/stat");
  uint64_t ticks = 0;
  int cpus = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu", 0) != 0) break; // the cpu lines come first
    int cpu = -1;
    uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (std::sscanf(line.c_str(), "cpu%d %lu %lu %lu %lu %lu %lu %lu %lu", &cpu, &user, &nice,
                    &system, &idle, &iowait, &irq, &softirq, &steal) != 9 ||
        cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
      continue; // the first line ("cpu  ...", all of them) doesn't parse a number
    ticks += user + nice + system + irq + softirq + steal;
    ++cpus;
  }
  if (cpus == 0) return {-1, 0};
  return {static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK)), cpus};
}

// This process's CPU time (all its threads, user and system), in seconds.
double own_cpu_seconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(r.ru_utime) + seconds(r.ru_stime);
}

// The share of the CPU time of the CPUs this process may run on that others took between
// construction and share() (work on other CPUs, a Slurm job's neighbours, doesn't count).
class BusyElsewhere {
public:
  BusyElsewhere() : busy_(busy_cpu_seconds()), own_(own_cpu_seconds()), start_(Clock::now()) {}
  double share() const {
    auto [busy, cpus] = busy_cpu_seconds();
    double wall = std::chrono::duration<double>(Clock::now() - start_).count();
    if (busy_.first < 0 || busy < 0 || cpus != busy_.second || wall <= 0) return 0;
    double others = (busy - busy_.first) - (own_cpu_seconds() - own_);
    return std::clamp(others / (wall * cpus), 0.0, 1.0);
  }

private:
  std::pair<double, int> busy_;
  double own_;
  Clock::time_point start_;
};

// The limit kernels, compiled and linked once per process.
struct Kernels {
  std::shared_ptr<const LoadedKernel> fma_f32, fma_f64, fill, read, triad, triad_nt;

  static const Kernels& get() {
    static const Kernels k = [] {
      auto load = [](LimitKernel kind) {
        CompiledKernel c = emit_limit_kernel(kind).value();
        Expected<std::shared_ptr<const LoadedKernel>> loaded =
            JitLoader::instance().load(c.object, c.name);
        internal_assert(loaded) << "linking " << c.name << ": " << loaded.error();
        return *loaded;
      };
      return Kernels{load(LimitKernel::fma_f32), load(LimitKernel::fma_f64),
                     load(LimitKernel::fill),    load(LimitKernel::read),
                     load(LimitKernel::triad),   load(LimitKernel::triad_nontemporal)};
    }();
    return k;
  }
};

class Meter {
public:
  explicit Meter(const LimitsOptions& o)
      : o_(o), threads_(o.threads > 0 ? o.threads : default_threads()) {}
  int threads() const { return threads_; }

  // The best rate (units per second) of `trials` trials of `kernel`, where one trial of
  // `repetitions` does `units` x repetitions units of work; repetitions are calibrated so a
  // trial lasts about trial_ms, or more where a launch alone takes long (below).
  double best_rate(const LoadedKernel& kernel, void* const* buffers, std::vector<int64_t> vars,
                   size_t repetition_var, double units) const {
    auto trial = [&](int64_t reps) {
      vars[repetition_var] = reps;
      auto start = Clock::now();
      launch(kernel.entry(), buffers, vars.data(), threads_, threads_);
      return std::chrono::duration<double>(Clock::now() - start).count();
    };
    // Calibrated on the quickest of three trials: one slow trial of one repetition (the thread
    // pool starting, or a core taken away on a loaded machine) once ended the calibration there,
    // and every trial then timed one launch's overhead (an FMA peak of 0.7 GFLOP/s stored).
    auto quickest = [&](int64_t reps) { return std::min({trial(reps), trial(reps), trial(reps)}); };
    // Long enough is not enough: on an oversubscribed machine a launch waits for its descheduled
    // threads, a time slice or several (4 ms and more), and a trial of one repetition then timed
    // only that wait (a peak of 0.0003 GFLOP/s stored, under ctest -j2 beside a test's
    // spinners). A trial lasts at least 20 launches with no work, and the repetitions double
    // while twice as many take less than 1.5x as long (the time is still the launch's), up to
    // trials of 8 times that.
    const double launch = quickest(0);
    const double target = std::max(o_.trial_ms / 1e3, 20 * launch);
    const int64_t most = int64_t{1} << 40;
    int64_t reps = 1;
    double seconds = quickest(reps); // also the warm-up
    while (seconds < target / 4 && reps < most) {
      reps = std::max(reps * 2, static_cast<int64_t>(reps * target / std::max(seconds, 1e-7)));
      seconds = quickest(reps);
    }
    while (seconds < 8 * target && reps < most) {
      double twice = quickest(2 * reps);
      if (twice >= 1.5 * seconds) break;
      reps *= 2;
      seconds = twice;
    }
    // Cores that idled while the data was prepared run slow for a few ms (clock ramp, a
    // hypervisor's scheduling): warm up for at least four trials' time first.
    for (double warm = seconds; warm < 4 * target;) warm += trial(reps);
    double best = 0;
    for (int t = 0; t < o_.trials; ++t) best = std::max(best, units * reps / trial(reps));
    return best;
  }

  double fma_gflops(const LoadedKernel& kernel, LimitKernel kind) const {
    Buffer seeds(sizeof(double) * threads_);
    void* buffers[] = {seeds.data()};
    return best_rate(kernel, buffers, {0}, 0,
                     static_cast<double>(fma_flops_per_iteration(kind)) * threads_) /
           1e9;
  }

  // Read and triad bandwidth on `working_set` bytes in all, split across the threads.
  std::pair<double, double> bandwidth(int64_t working_set, bool read_only = false) const {
    const Kernels& k = Kernels::get();
    int64_t block = limit_block_elements();
    auto per_part = [&](int arrays) {
      int64_t n = working_set / 4 / arrays / threads_ / block * block;
      return std::max(n, block);
    };
    // Untouched memory, written first by the thread that uses each slice.
    auto touched = [&](int64_t n) {
      auto b = std::make_unique<Buffer>(Buffer::untouched(sizeof(float) * n * threads_));
      void* buffers[] = {b->data()};
      int64_t vars[] = {n};
      launch(k.fill->entry(), buffers, vars, threads_, threads_);
      return b;
    };
    int64_t n = per_part(1);
    std::unique_ptr<Buffer> data = touched(n);
    Buffer sums(sizeof(float) * threads_);
    void* read_buffers[] = {data->data(), sums.data()};
    double read = best_rate(*k.read, read_buffers, {n, 1}, 1, 4.0 * n * threads_) / 1e9;
    data.reset();
    if (read_only) return {read, 0};
    n = per_part(3);
    std::unique_ptr<Buffer> a = touched(n), b = touched(n), c = touched(n);
    void* triad_buffers[] = {a->data(), b->data(), c->data()};
    double units = 12.0 * n * threads_;
    double triad = std::max(best_rate(*k.triad, triad_buffers, {n, 1}, 1, units),
                            best_rate(*k.triad_nt, triad_buffers, {n, 1}, 1, units)) /
                   1e9;
    return {read, triad};
  }

private:
  LimitsOptions o_;
  int threads_;
};

// The data `threads` threads hold at one cache level: one instance per `shared_by` CPUs.
int64_t capacity(const CacheSize& c, int threads) {
  return c.bytes * ((threads + c.shared_by - 1) / c.shared_by);
}

} // namespace

std::vector<CacheSize> data_caches() {
  std::vector<CacheSize> caches = sysfs_caches();
  if (caches.empty()) caches = sysconf_caches();
  std::sort(caches.begin(), caches.end(),
            [](const CacheSize& a, const CacheSize& b) { return a.level < b.level; });
  return caches;
}

MachineLimits measure_machine_limits(const LimitsOptions& options) {
  BusyElsewhere elsewhere;
  Meter meter(options);
  const Kernels& k = Kernels::get();
  MachineLimits limits;
  limits.threads = meter.threads();
  limits.vector_bytes = host_vector_bytes();
  // A peak under 1 GFLOP/s a thread is no core's (a process stalled for the whole trial, on a
  // loaded machine, once stored 0 and a roof% in the millions): measured again, up to three
  // times, then left unknown (0: no roofline is drawn against it; `describe` says unknown).
  auto peak = [&](const LoadedKernel& kernel, LimitKernel kind) {
    double floor = meter.threads();
    for (int attempt = 0; attempt < 4; ++attempt)
      if (double g = meter.fma_gflops(kernel, kind); g >= floor) return g;
    return 0.0;
  };
  limits.fma_f32_gflops = peak(*k.fma_f32, LimitKernel::fma_f32);
  limits.fma_f64_gflops = peak(*k.fma_f64, LimitKernel::fma_f64);

  std::vector<CacheSize> caches = data_caches();
  int64_t below = 0; // the capacity of the level inside this one
  for (size_t i = 0; i < caches.size(); ++i) {
    MemoryLevel level{.name = "L" + std::to_string(caches[i].level)};
    level.capacity_bytes = capacity(caches[i], limits.threads);
    // Half the level, but past the level inside it (on many cores, the L2s together can hold
    // more than half the shared L3).
    level.working_set_bytes = level.capacity_bytes / 2;
    if (level.working_set_bytes <= below)
      level.working_set_bytes = (below + level.capacity_bytes) / 2;
    if (i + 1 == caches.size() && below > 0) {
      // The last level's reported size is checked: a virtual machine may report the host's
      // whole last-level cache (508 MiB on a 2-core guest). Its read bandwidth is measured on
      // working sets doubling from twice the level inside it; where it drops by 40% from the
      // best so far, the level has ended.
      double plateau = 0;
      for (int64_t ws = 2 * below; ws <= level.capacity_bytes / 2; ws *= 2) {
        double read = meter.bandwidth(ws, true).first;
        if (read < 0.6 * plateau) {
          level.capacity_bytes = ws / 2;
          break;
        }
        if (read > plateau) plateau = read, level.working_set_bytes = ws;
      }
    }
    below = level.capacity_bytes;
    std::tie(level.read_gbps, level.triad_gbps) = meter.bandwidth(level.working_set_bytes);
    limits.levels.push_back(level);
  }
  MemoryLevel dram{.name = "DRAM"};
  dram.working_set_bytes = static_cast<int64_t>(std::min(
      std::max(4.0 * static_cast<double>(below), 256.0 * (1 << 20)), machine_memory_bytes() / 8));
  std::tie(dram.read_gbps, dram.triad_gbps) = meter.bandwidth(dram.working_set_bytes);
  // A level that reads no faster than DRAM is not a level of its own on this machine, unless a
  // second or third look says otherwise (under load one slow trial set once dropped L1).
  for (MemoryLevel& l : limits.levels)
    for (int again = 0; again < 2 && l.read_gbps < 1.1 * dram.read_gbps; ++again) {
      auto [read, triad] = meter.bandwidth(l.working_set_bytes);
      if (read > l.read_gbps) {
        l.read_gbps = read;
        l.triad_gbps = std::max(l.triad_gbps, triad);
      }
    }
  std::erase_if(limits.levels,
                [&](const MemoryLevel& l) { return l.read_gbps < 1.1 * dram.read_gbps; });
  limits.levels.push_back(dram);
  limits.busy_elsewhere = elsewhere.share();
  return limits;
}

} // namespace beamlab

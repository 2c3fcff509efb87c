// The machine's limits; see device.hpp.
#include "tuner/store/device.hpp"

#include <nlohmann/json.hpp>

namespace beamlab::tuner {

MachineLimits device_limits(db::Database& db, int64_t device_id, bool remeasure) {
  std::optional<db::Device> d = db.device(device_id);
  std::optional<MachineLimits> stored = d ? d->limits : std::nullopt;
  if (!remeasure && stored && stored->busy_elsewhere <= kBusyElsewhere) return *stored;
  // Figures taken while other work shared the cores are low: measured again at each use until a
  // quiet measurement (or a quieter one) replaces them; a busy one never replaces quieter ones.
  MachineLimits limits = measure_machine_limits();
  // (Measured again by itself, it replaces only limits of as many threads: not a measurement
  // under `taskset -c 0` those of the whole machine.)
  bool store =
      !stored ||
      ((remeasure || limits.threads >= stored->threads) &&
       (limits.busy_elsewhere <= kBusyElsewhere || limits.busy_elsewhere < stored->busy_elsewhere));
  if (store && !db.read_only()) db.set_device_limits(device_id, limits);
  return store || remeasure ? limits : *stored;
}

KernelTraffic traffic_of(const KernelTask& task) {
  KernelTraffic t{task.flops, task.bytes, std::nullopt};
  if (!task.buffers.empty()) t.written_bytes = task.buffers[0].bytes();
  return t;
}

KernelTraffic traffic_of(const db::Kernel& kernel) {
  KernelTraffic t{kernel.flops, kernel.bytes, std::nullopt};
  auto shapes = nlohmann::json::parse(kernel.shapes, nullptr, false);
  if (!shapes.is_array() || shapes.empty() || !shapes[0].is_object()) return t;
  const auto& out = shapes[0];
  if (!out.contains("dtype") || !out["dtype"].is_string() || !out.contains("count") ||
      !out["count"].is_number_integer())
    return t;
  if (std::optional<DType> dt = parse_dtype(out["dtype"].get<std::string>()))
    t.written_bytes = out["count"].get<int64_t>() * dt->itemsize();
  return t;
}

} // namespace beamlab::tuner

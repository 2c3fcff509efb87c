// The device subcommand; see device_command.hpp.
#include "apps/device_command.hpp"

#include <fmt/format.h>

#include "apps/output.hpp"
#include "apps/tune_command.hpp"
#include "db/database.hpp"
#include "tuner/store/device.hpp"
#include "tuner/store/records.hpp"

namespace beamlab::cli {
namespace {

struct DeviceArgs {
  bool measure = false;
  std::string db;
  OutputFormat format = OutputFormat::Text;
};

std::string format_bytes(int64_t bytes) {
  if (bytes >= int64_t{1} << 30)
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= int64_t{1} << 20)
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{} KiB", bytes >> 10);
}

int device(const DeviceArgs& args) {
  db::Database db(db_path(args.db));
  int64_t id = db.upsert_device(tuner::this_device());
  std::optional<db::Device> before = db.device(id);
  if (args.measure || !before->limits || before->limits->busy_elsewhere > kBusyElsewhere)
    std::fprintf(stderr, "beamlab device: measuring this machine's limits (a few seconds)...\n");
  const MachineLimits l = tuner::device_limits(db, id, args.measure);
  db::Device d = *db.device(id);
  bool busy = l.busy_elsewhere > kBusyElsewhere;
  bool stored = d.limits && d.limits->fma_f32_gflops == l.fma_f32_gflops &&
                d.limits->busy_elsewhere == l.busy_elsewhere;
  if (busy)
    std::fprintf(stderr,
                 "beamlab device: other processes took %.0f%% of the CPUs while these limits "
                 "were measured: the figures below are low (%s); measure on an idle machine "
                 "with 'beamlab device --measure'\n",
                 100 * l.busy_elsewhere,
                 stored ? "stored until a quieter measurement replaces them"
                        : "not stored: the quieter ones stored stay");
  if (args.format == OutputFormat::Json) {
    Json doc = json_document("device");
    doc["fingerprint"] = d.fingerprint;
    doc["cpu"] = d.info.cpu_model;
    doc["cores"] = d.info.cores;
    doc["usable_cores"] = usable_cores();
    doc["allowed_cpus"] = allowed_cpus();
    doc["isa"] = d.info.isa_flags.substr(0, d.info.isa_flags.find(' '));
    doc["db"] = db.path();
    doc["limits_measured_at"] = stored ? Json(d.limits_measured_at) : Json(nullptr);
    doc["limits_stored"] = stored;
    doc["busy_elsewhere"] = l.busy_elsewhere;
    doc.update(limits_json(l));
    LaunchOverhead launch = measure_launch_overhead();
    doc["launch_us"] = {{"one_thread", launch.one_thread_us},
                        {"all_threads", launch.all_threads_us},
                        {"threads", launch.threads}};
    print_json(doc);
    return 0;
  }
  fmt::print("device {} ({}), {} cores{}\n  {}\n", d.fingerprint.substr(0, 12), d.info.cpu_model,
             d.info.cores, allocation_note(),
             d.info.isa_flags.substr(0, d.info.isa_flags.find(' ')));
  if (!stored)
    fmt::print("limits measured now, not stored, with {} threads on {}-byte vectors\n", l.threads,
               l.vector_bytes);
  else
    fmt::print("limits measured {} with {} threads on {}-byte vectors (in {})\n",
               d.limits_measured_at, l.threads, l.vector_bytes, db.path());
  fmt::print("  FMA peak: {:.1f} GFLOP/s float32, {:.1f} GFLOP/s float64\n", l.fma_f32_gflops,
             l.fma_f64_gflops);
  fmt::print("  {:<6} {:>10} {:>12} {:>10} {:>11}\n", "level", "holds", "measured on", "read GB/s",
             "triad GB/s");
  for (const MemoryLevel& m : l.levels)
    fmt::print("  {:<6} {:>10} {:>12} {:>10.1f} {:>11.1f}\n", m.name,
               m.capacity_bytes ? format_bytes(m.capacity_bytes) : "-",
               format_bytes(m.working_set_bytes), m.read_gbps, m.triad_gbps);
  LaunchOverhead launch = measure_launch_overhead();
  fmt::print("  launch: {:.2f} us on 1 thread, {:.2f} us across {} thread{} (a kernel doing "
             "nothing; measured now, every kernel of a program pays it each run)\n",
             launch.one_thread_us, launch.all_threads_us, launch.threads,
             launch.threads == 1 ? "" : "s");
  fmt::print("A kernel is judged against the roof of the level its data fits in (its buffers' "
             "bytes against 'holds'); triad counts a, b and c once (STREAM's convention).\n");
  return 0;
}

} // namespace

void add_device_command(CLI::App& app) {
  auto args = std::make_shared<DeviceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "device", "Show this machine's measured limits (FMA peak, each memory level's bandwidth) "
                "that rooflines are judged against; measured on first use and stored");
  cmd->add_flag("--measure", args->measure, "measure the limits again and store them");
  add_format_option(cmd, args->format);
  cmd->add_option("--db", args->db, "the database (default: BEAMLAB_DB or the embedded one)");
  cmd->final_callback([args] { device(*args); });
}

} // namespace beamlab::cli

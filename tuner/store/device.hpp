// The machine's limits as the database records them, and a kernel's place under them.
#pragma once

#include <cstdint>
#include <optional>

#include <beamlab/tuning.hpp>

#include "db/database.hpp"

namespace beamlab::tuner {

/// The device's limits: the stored ones, else (or with `remeasure`) measured now with every
/// core (machine_limits.hpp: a few seconds) and stored when the database is writable. Stored
/// ones that other processes took more than kBusyElsewhere of the CPUs for are measured again
/// at each use, and replaced by a quieter measurement only.
/// `device_id` must be this machine's device (its fingerprint is this host's).
MachineLimits device_limits(db::Database& db, int64_t device_id, bool remeasure = false);

/// What a kernel moves and computes per run, as rooflines need it: from a task (its output is
/// slot 0), or from a stored kernel (its shapes; the output's bytes unknown if they don't parse).
KernelTraffic traffic_of(const KernelTask& task);
KernelTraffic traffic_of(const db::Kernel& kernel);

} // namespace beamlab::tuner

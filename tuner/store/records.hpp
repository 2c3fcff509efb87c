// The tuner's types as the database records them, and back: the machine, kernels, candidates;
// a search's settings and result as JSON (stored with a tuning, printed by `tune --json`).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "tuner/search/search.hpp"

namespace beamlab::tuner {

/// This machine as the database records it.
db::DeviceInfo this_device();

/// A kernel as the database records it, with its structure key (tuner/search/structure.hpp).
db::Kernel kernel_record(const KernelTask& task);
/// And back: the task a search of a stored kernel needs. The reason when the record doesn't
/// read back in this build (a bad AST or shapes, another hash recipe).
Expected<KernelTask> task_from_record(const db::Kernel& k);

/// A search's candidate as the database stores it, and back.
db::CandidateRow candidate_row(const Candidate& c);
Candidate candidate_from_row(const db::CandidateRow& r);
/// A status's name back to the status (error for an unknown one).
Status status_from_string(const std::string& name);

/// A finished search's outcome written into its tuning (status done): the heuristic's and the
/// winner's plans and times, the noise and the ties, how it stopped, its wall time. The one
/// shape of a tuning's outcome: the journal stores it, a batch reports it, a resume reads it.
void summarize(db::Tuning& t, const TuneResult& r);

/// A tuning's speedup as every view shows it (the CLI's summary, reports, Python, the GUI): the
/// heuristic's time over the winner's. A search's is the re-measurement's paired estimate with
/// its 95% interval; a plan taken from the cache has the ratio of its stored times, with no
/// interval. None while either time is unknown.
struct Speedup {
  double estimate = 1;
  std::optional<std::pair<double, double>> interval;
};
std::optional<Speedup> speedup_of(const db::Tuning& t);

/// Every setting of a search, as stored with its tuning.
nlohmann::json settings_json(const SearchSettings& s);
/// And back (missing fields keep their defaults: older records have fewer).
SearchSettings settings_from_json(const nlohmann::json& j);
/// A whole search result: the summary and every candidate.
nlohmann::json result_json(const TuneResult& r);

} // namespace beamlab::tuner

// Corpora: files naming the workloads a batch tuning run (or a benchmark run) covers.
//
//   {"name": "quick", "description": "...",
//    "workloads": [{"workload": "matmul", "params": {"M": 256, "N": 256, "K": 256},
//                   "dtype": "float32", "label": "matmul_256"}, ...]}
//
// Each entry names a built-in workload (beamlab/workloads.hpp) with its parameters (missing
// ones take the workload's defaults) and dtype. A bad entry is a UserError naming the file, the
// entry and the field.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <beamlab/beamlab.hpp>

namespace beamlab::tuner {

struct CorpusEntry {
  std::string workload;
  std::map<std::string, int64_t> params;
  std::string dtype = "float32";
  std::string label; ///< defaults to the workload and its parameters
};

struct Corpus {
  std::string path; ///< where it was read from ("" for a single workload)
  std::string name, description;
  std::vector<CorpusEntry> entries;
};

/// Reads and checks a corpus file (every entry is built once to check its parameters).
Corpus load_corpus(const std::string& path);
/// The same for a corpus's text; `path` names it in errors.
Corpus parse_corpus(const std::string& text, const std::string& path);

/// A one-entry corpus for a workload named on the command line.
Corpus single_workload(const std::string& workload, const std::map<std::string, int64_t>& params,
                       const std::string& dtype = "float32");

/// The entry's tensor program.
Tensor build_entry(const CorpusEntry& e);

} // namespace beamlab::tuner

// Corpora: files naming the workloads a batch tuning run (or a benchmark run) covers.
//
//   {"name": "quick", "description": "...",
//    "workloads": [{"workload": "matmul", "params": {"M": 256, "N": 256, "K": 256},
//                   "dtype": "float32", "label": "matmul_256"}, ...]}
//
// Each entry names a built-in workload (beamlab/workloads.hpp) with its parameters (missing
// ones take the workload's defaults) and dtype; or a user's own work:
//
//    {"model": "resnet18.onnx", "inputs": {"input": [1, 3, 224, 224]}}   an ONNX model (its
//        path relative to the corpus file; inputs: shapes for the model's symbolic dims)
//    {"expr": "(a.matmul(w) + b).relu()", "inputs": {"a": [64, 128], "w": [128, 256],
//     "b": [256]}, "dtype": "float32"}                                     an expression over
//        seeded random inputs of these shapes (frontends/expr)
//    {"kernel": "matmul.ir"}                                              a kernel in beamlab's
//        IR text (frontends/ir_text; as `beamlab run --save-kernels DIR` writes them)
//
// An entry whose kernels run over symbolic variables may say where to tune them, a list of
// values per variable (the lists of several variables pair up, so they are equally long):
//    {"kernel": "rows.ir", "tune_at": {"seq": [512, 64]}}
// Without it a kernel is tuned at each variable's upper bound and an eighth of it. Either way
// every candidate is checked there and at both ends of the variables' ranges. A model keeps its
// symbolic dims (dim_param) symbolic where the entry gives their ranges:
//    {"model": "bert.onnx", "vars": {"seq": [1, 512]}, "tune_at": {"seq": [512, 128]}}
//
// A bad entry is a UserError naming the file, the entry and the field.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <beamlab/beamlab.hpp>

namespace beamlab::tuner {

struct CorpusEntry {
  std::string workload; ///< a built-in workload, or empty for a model or an expression
  std::map<std::string, int64_t> params;
  std::string dtype = "float32";
  std::string model;                   ///< an ONNX file (resolved against the corpus file's folder)
  std::string expr;                    ///< an expression over `inputs`
  std::string kernel;                  ///< an IR text file (resolved like `model`)
  std::map<std::string, Shape> inputs; ///< the model's symbolic input shapes; expr's inputs
  std::vector<VarValues> tune_at;      ///< where its symbolic kernels are tuned (empty: default)
  std::vector<Variable> vars;          ///< a model's dims kept symbolic: the dim_params these name
  std::string label; ///< defaults to the workload and its parameters, the model's or
                     ///< kernel's file name, or the expression
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

/// The entry a command line names: a built-in workload with its parameters, an ONNX model, a
/// kernel's IR text file, or an expression, with `--input NAME=DIMS` flags (`input_flags`). Nothing
/// is built yet.
CorpusEntry workload_entry(const std::string& workload,
                           const std::map<std::string, int64_t>& params,
                           const std::string& dtype = "float32");
CorpusEntry model_entry(const std::string& path, const std::vector<std::string>& input_flags,
                        const std::vector<std::string>& var_flags = {});
/// A `--var NAME=LO..HI` word: a variable and its range (a UserError names `flag` otherwise).
Variable parse_var_range(const std::string& word, const std::string& flag);
/// Whether a `--var` word gives a range (NAME=LO..HI) rather than a value (NAME=VALUE).
bool is_var_range(const std::string& word);
CorpusEntry kernel_entry(const std::string& path);
CorpusEntry expr_entry(const std::string& expr, const std::vector<std::string>& input_flags,
                       const std::string& dtype = "float32");

/// Where an entry's program is timed: its tune_at, each binding checked against the plan's
/// variables (a UserError naming the entry otherwise); by default every variable at its upper
/// bound, then at an eighth of it. One empty binding for a program of fixed shapes.
std::vector<VarValues> entry_bindings(const CorpusEntry& entry, const ExecutionPlan& plan);

/// Whether a target names an ONNX model (MODEL.onnx), a kernel in IR text (KERNEL.ir), or a
/// corpus file (a path, a .json, or a readable file that is neither of those).
bool is_model_file(const std::string& target);
bool is_kernel_file(const std::string& target);
bool is_corpus_file(const std::string& target);

/// A workload's parameters from words like "--M 1024" or "--M=1024"; a UserError naming
/// `command` and the bad word otherwise.
std::map<std::string, int64_t> parse_params(const std::string& command,
                                            const std::vector<std::string>& words);

/// The entry a target names (as a command line or a run's settings give it): `expr` over
/// `inputs`, an ONNX model (its symbolic dims in `vars`, NAME=LO..HI words) or a kernel file,
/// else the built-in workload with `params` (words).
CorpusEntry target_entry(const std::string& command, const std::string& target,
                         const std::vector<std::string>& params, const std::string& expr,
                         const std::vector<std::string>& inputs, const std::string& dtype,
                         const std::vector<std::string>& vars = {});

/// A one-entry corpus of `e`, checked by building it once (a UserError names what is wrong).
Corpus single_entry(const CorpusEntry& e);

/// The entry's tensor program.
Program build_entry(const CorpusEntry& e);

} // namespace beamlab::tuner

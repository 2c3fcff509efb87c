// What the Python module runs and reads beyond tensors: realize with the tuning cache or a
// BEAM search, tune() as a journaled tuning run, the database's runs, tunings, candidates and
// cache entries as plain Python data, the built-in workloads, expressions and ONNX models.
#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <unistd.h>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include <beamlab/frontends/expr/expr.hpp>
#include <beamlab/frontends/onnx/model.hpp>
#include <beamlab/tuner/batch/batch.hpp>
#include <beamlab/tuner/batch/policy.hpp>
#include <beamlab/tuner/batch/session.hpp>
#include <beamlab/tuner/store/records.hpp>
#include <beamlab/tuner/store/run.hpp>

namespace py = pybind11;

namespace beamlab::python {
namespace {

std::string db_path(const std::optional<std::string>& db) {
  return db && !db->empty() ? *db : db::Database::default_path();
}

// The policies realize() uses, kept for the process (a BEAM policy remembers what it tuned).
// Never destroyed: a policy may be in use by a realize on another thread at exit.
struct Session {
  std::mutex mutex;
  HeuristicPolicy heuristic;
  std::map<std::string, std::unique_ptr<tuner::CachePolicy>> cached; ///< by database path
  std::map<std::pair<int, std::string>, std::unique_ptr<tuner::BeamPolicy>> beams;
  std::vector<std::unique_ptr<tuner::CachePolicy>> retired; ///< replaced after a tune()
};

Session& session() {
  static auto* s = new Session;
  return *s;
}

// ---------------------------------------------------------------- plain data

py::dict run_dict(const db::Run& r) {
  py::dict d;
  d["id"] = r.id;
  d["kind"] = db::to_string(r.kind);
  d["label"] = r.label;
  d["command"] = r.command;
  d["status"] = db::to_string(r.status);
  d["started_at"] = r.started_at;
  d["ended_at"] = r.ended_at;
  d["host"] = r.host;
  d["git_revision"] = r.git_revision;
  d["settings"] = py::module_::import("json").attr("loads")(r.settings.empty() ? "{}" : r.settings);
  return d;
}

py::object optional_ms(const std::optional<double>& ms) { return ms ? py::cast(*ms) : py::none(); }

// The tuning's speedup (tuner::speedup_of, as every view shows it) and its interval, if any.
void set_speedup(py::dict& d, const db::Tuning& t) {
  std::optional<tuner::Speedup> s = tuner::speedup_of(t);
  d["speedup"] = s ? py::cast(s->estimate) : py::none();
  d["speedup_interval"] = s && s->interval ? py::cast(*s->interval) : py::none();
}

py::dict tuning_dict(const db::Tuning& t, const std::optional<db::Kernel>& k) {
  py::dict d;
  d["id"] = t.id;
  d["run"] = t.run_id;
  d["kernel"] = k ? k->name : "";
  d["kernel_hash"] = k ? k->hash : "";
  d["flops"] = k ? k->flops : 0;
  d["bytes"] = k ? k->bytes : 0;
  d["workload"] = t.workload;
  d["threads"] = t.threads;
  d["status"] = db::to_string(t.status);
  d["heuristic_opts"] = t.heuristic_opts;
  d["winner_opts"] = t.winner_opts;
  d["heuristic_ms"] = optional_ms(t.heuristic_ms);
  d["winner_ms"] = optional_ms(t.winner_ms);
  set_speedup(d, t);
  d["tie_with_heuristic"] = t.tie_with_heuristic;
  d["noise"] = t.noise;
  d["fidelity"] = t.fidelity;
  d["iterations"] = t.iterations;
  d["stop_reason"] = t.stop_reason;
  d["error"] = t.error;
  d["wall_s"] = t.wall_s;
  return d;
}

py::dict candidate_dict(const db::CandidateRow& c) {
  py::dict d;
  d["seq"] = c.seq;
  d["opts"] = c.opts;
  d["parent"] = c.parent;
  d["iteration"] = c.iteration;
  d["status"] = c.status;
  d["error"] = c.error;
  d["compile_ms"] = c.compile_ms;
  d["code_bytes"] = c.code_bytes;
  d["max_error"] = c.max_error;
  d["duplicate_of"] = c.duplicate_of;
  d["samples_ms"] = c.samples_ms;
  return d;
}

py::dict cache_dict(const db::CacheEntry& e) {
  py::dict d;
  d["kernel"] = e.kernel_name;
  d["kernel_hash"] = e.kernel_hash;
  d["threads"] = e.threads;
  d["opts"] = e.opts;
  d["ms"] = e.ms;
  d["heuristic_ms"] = optional_ms(e.heuristic_ms);
  d["device"] = e.device;
  d["compiler"] = e.compiler;
  d["source"] = e.source;
  d["run"] = e.run_id ? py::cast(*e.run_id) : py::none();
  d["created_at"] = e.created_at;
  d["stale"] = e.stale;
  d["stale_reason"] = e.stale_reason;
  return d;
}

db::Database open_for_reading(const std::optional<std::string>& db) {
  std::string path = db_path(db);
  user_assert(::access(path.c_str(), F_OK) == 0)
      << "no database at '" << path << "': tune something first, or pass db=FILE";
  return db::Database(path, db::Database::Access::read_only);
}

// ---------------------------------------------------------------- tune

// Progress on stderr, one line per kernel, unless quiet.
class Progress : public tuner::BatchListener {
public:
  explicit Progress(bool quiet) : quiet_(quiet) {}
  void finished(const tuner::BatchKernel& k) override {
    if (quiet_) return;
    std::lock_guard lock(mutex_);
    std::string line = fmt::format("beamlab.tune: {} {}", k.task.name, tuner::to_string(k.outcome));
    if (std::optional<tuner::Speedup> s = tuner::speedup_of(k.result))
      line += fmt::format(": {:.4g} ms (heuristic {:.4g} ms, {:.2f}x)", k.tuned_ms(),
                          k.heuristic_ms(), s->estimate);
    std::fprintf(stderr, "%s\n", line.c_str());
  }

private:
  bool quiet_;
  std::mutex mutex_;
};

py::dict kernel_dict(const tuner::BatchKernel& k) {
  py::dict d;
  d["kernel"] = k.task.name;
  d["key"] = fmt::format("{:016x}", k.task.key);
  d["outcome"] = tuner::to_string(k.outcome);
  d["heuristic_ms"] = k.heuristic_ms() > 0 ? py::cast(k.heuristic_ms()) : py::none();
  d["tuned_ms"] = k.tuned_ms() > 0 ? py::cast(k.tuned_ms()) : py::none();
  set_speedup(d, k.result);
  d["heuristic_opts"] = k.result.heuristic_opts;
  d["winner_opts"] = k.result.winner_opts;
  d["tie_with_heuristic"] = k.result.tie_with_heuristic;
  d["candidates"] = k.candidates;
  d["statuses"] = k.status_counts;
  d["warm_seeds"] = k.warm_seeds;
  d["flops"] = k.task.flops;
  d["bytes"] = k.task.bytes;
  d["error"] = k.result.error;
  return d;
}

// beamlab.tune(): `st` as the keyword arguments give it (a resume reads the run's instead).
py::dict tune(const std::vector<Tensor>& outputs, tuner::TuneSettings st,
              const std::optional<std::string>& db, bool quiet, int64_t resume) {
  tuner::TuneRequest request;
  std::string path = db_path(db);
  request.db_path = path;
  request.resume_word = "resume=";
  if (resume >= 0) {
    request.resume = resume;
  } else {
    user_assert(st.beam >= 1 && st.beam <= 1024)
        << "tune: beam=" << st.beam << ": expected 1 to 1024";
    user_assert(st.runs >= 1) << "tune: runs=" << st.runs << ": expected at least 1";
    user_assert(st.max_candidates >= 1)
        << "tune: max_candidates=" << st.max_candidates << ": expected at least 1";
    user_assert(st.budget_s >= 0 && st.kernel_budget_s > 0)
        << "tune: budgets must be positive (budget=" << st.budget_s
        << ", kernel_budget=" << st.kernel_budget_s << ")";
    tuner::CacheMode mode = tuner::parse_cache_mode(st.cache, "tune: cache");
    user_assert(!st.warm_start || mode != tuner::CacheMode::off)
        << "tune: warm_start=True seeds searches from the tuning cache; it needs the database "
           "(not cache=\"off\")";
    Program program;
    program.outputs = outputs;
    std::vector<KernelTask>& tasks = request.tasks.emplace();
    for (const ScheduleItem& item : program.schedule().items) tasks.push_back(kernel_task(item));
    st.door = "python";
    st.what.workload = st.label.empty() ? "python" : st.label;
    st.cache = tuner::to_string(mode);
    request.command = fmt::format("beamlab.tune(..., beam={}{})  # Python", st.beam,
                                  st.warm_start ? ", warm_start=True" : "");
    request.settings = std::move(st);
  }
  tuner::SearchControl control;
  request.control = &control;
  tuner::TuneSession tuning(std::move(request));
  if (!quiet) {
    if (const db::Run* resumed = tuning.resumed())
      std::fprintf(stderr, "beamlab.tune: resuming run %lld: %s\n",
                   static_cast<long long>(resumed->id), resumed->command.c_str());
    if (!tuning.note().empty())
      std::fprintf(stderr, "beamlab.tune: note: %s\n", tuning.note().c_str());
  }

  // The batch runs on its own thread; this one keeps answering Ctrl-C (Python's signal
  // handlers run on the main thread only), which cancels the search and keeps the run.
  Progress progress(quiet);
  bool interrupted = false;
  std::future<tuner::BatchReport> done =
      std::async(std::launch::async, [&] { return tuning.run(progress); });
  while (true) {
    std::future_status ready;
    {
      py::gil_scoped_release release;
      ready = done.wait_for(std::chrono::milliseconds(100));
    }
    if (ready == std::future_status::ready) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;
      control.cancel();
    }
  }
  tuner::BatchReport report;
  try {
    report = done.get();
  } catch (...) {
    if (interrupted) PyErr_Clear();
    throw; // the run is recorded failed as it unwinds
  }
  if (interrupted) throw py::error_already_set(); // the KeyboardInterrupt PyErr_CheckSignals set
  if (tuner::writes(tuning.options().cache)) {    // the next realize reads the new plans
    Session& s = session();
    std::lock_guard lock(s.mutex);
    if (auto it = s.cached.find(path); it != s.cached.end()) {
      s.retired.push_back(std::move(it->second));
      s.cached.erase(it);
    }
  }
  py::dict out;
  out["run"] = tuning.run_id() > 0 ? py::cast(tuning.run_id()) : py::none();
  out["db"] = tuning.db_path().empty() ? py::none() : py::cast(tuning.db_path());
  out["wall_s"] = report.wall_s;
  py::list kernels;
  for (const tuner::BatchKernel& k : report.kernels) kernels.append(kernel_dict(k));
  out["kernels"] = kernels;
  return out;
}

} // namespace

RealizeOptions realize_options(std::optional<int> beam, const std::optional<std::string>& db,
                               int threads) {
  int width = beam ? *beam : tuner::beam_width_from_env();
  user_assert(width >= 0 && width <= 1024)
      << "beam=" << width << ": expected a beam width from 0 (no search) to 1024";
  user_assert(threads >= 0) << "threads=" << threads << ": expected 0 (every core) or more";
  std::string path = db_path(db);
  Session& s = session();
  std::lock_guard lock(s.mutex);
  if (width > 0) {
    std::unique_ptr<tuner::BeamPolicy>& p = s.beams[{width, path}];
    if (!p) {
      tuner::SearchSettings settings;
      settings.beam = width;
      p = std::make_unique<tuner::BeamPolicy>(settings);
      p->use_cache(path, tuner::CacheMode::use);
    }
    return {.threads = threads, .policy = p.get()};
  }
  if (::access(path.c_str(), R_OK) != 0) return {.threads = threads, .policy = &s.heuristic};
  std::unique_ptr<tuner::CachePolicy>& p = s.cached[path];
  if (!p) p = std::make_unique<tuner::CachePolicy>(path, tuner::CacheMode::read_only, s.heuristic);
  return {.threads = threads, .policy = p.get()};
}

void bind_tuning(py::module_& m) {
  m.def(
      "realize",
      [](const std::vector<Tensor*>& tensors, std::optional<int> beam,
         std::optional<std::string> db, int threads, const VarValues& values) {
        RealizeOptions o = realize_options(beam, db, threads);
        o.vars = values;
        py::gil_scoped_release release;
        Tensor::realize_all(tensors, o);
      },
      py::arg("tensors"), py::arg("beam") = py::none(), py::arg("db") = py::none(),
      py::arg("threads") = 0, py::arg("values") = VarValues{});

  m.def("_tune",
        [](const std::vector<Tensor>& outputs, int beam, double budget, double kernel_budget,
           int max_candidates, int runs, int threads, int jobs, std::optional<std::string> db,
           std::string cache, std::string label, bool quiet, bool warm_start, int64_t resume) {
          tuner::TuneSettings st;
          st.beam = beam;
          st.budget_s = budget;
          st.kernel_budget_s = kernel_budget;
          st.max_candidates = max_candidates;
          st.runs = runs;
          st.threads = threads;
          st.jobs = jobs;
          st.cache = std::move(cache);
          st.label = std::move(label);
          st.warm_start = warm_start;
          return tune(outputs, std::move(st), db, quiet, resume);
        });

  m.def(
      "default_db", [] { return db::Database::default_path(); },
      "The database used when none is given: BEAMLAB_DB, else ~/.cache/beamlab/beamlab.db");
  m.def(
      "runs",
      [](std::optional<std::string> db) {
        db::Database d = open_for_reading(db);
        py::list out;
        for (const db::Run& r : d.runs()) out.append(run_dict(r));
        return out;
      },
      py::arg("db") = py::none(), "Every run in the database, newest first, as dicts");
  m.def(
      "tunings",
      [](int64_t run, std::optional<std::string> db) {
        db::Database d = open_for_reading(db);
        user_assert(d.run(run)) << "no run " << run << " in '" << d.path()
                                << "' (beamlab.runs() lists them)";
        py::list out;
        for (const db::Tuning& t : d.tunings(run))
          out.append(tuning_dict(t, d.kernel(t.kernel_id)));
        return out;
      },
      py::arg("run"), py::arg("db") = py::none(), "A run's kernel searches, as dicts");
  m.def(
      "candidates",
      [](int64_t tuning, std::optional<std::string> db) {
        db::Database d = open_for_reading(db);
        user_assert(d.tuning(tuning)) << "no tuning " << tuning << " in '" << d.path()
                                      << "' (beamlab.tunings(run) lists a run's)";
        py::list out;
        for (const db::CandidateRow& c : d.candidates(tuning)) out.append(candidate_dict(c));
        return out;
      },
      py::arg("tuning"), py::arg("db") = py::none(),
      "Every candidate a search measured, with every timing sample, as dicts");
  m.def(
      "cache_entries",
      [](std::optional<std::string> db) {
        db::Database d = open_for_reading(db);
        py::list out;
        for (const db::CacheEntry& e : d.cache_entries()) out.append(cache_dict(e));
        return out;
      },
      py::arg("db") = py::none(), "The tuning cache's plans, as dicts");

  m.def(
      "workloads",
      [] {
        py::list out;
        for (const WorkloadInfo& w : workloads()) {
          py::dict d;
          d["name"] = w.name;
          d["description"] = w.description;
          d["params"] = w.defaults;
          std::vector<std::string> dtypes;
          for (DType t : w.dtypes) dtypes.push_back(t.str());
          d["dtypes"] = dtypes;
          out.append(d);
        }
        return out;
      },
      "The built-in workloads, with their parameters' defaults");
  m.def(
      "workload",
      [](const std::string& name, const std::string& dtype, const py::kwargs& params) {
        std::map<std::string, int64_t> p;
        for (auto [k, v] : params) p[k.cast<std::string>()] = v.cast<int64_t>();
        return build_workload(name, p, dtype);
      },
      py::arg("name"), py::arg("dtype") = "float32", "A built-in workload's output (lazy)");
  m.def("_expr", [](const std::string& text, const std::map<std::string, Tensor>& inputs) {
    return expr::evaluate(text, inputs);
  });

  py::class_<onnx::Model>(m, "OnnxModel", "An ONNX model, imported as a lazy tensor program")
      .def_property_readonly("path", &onnx::Model::path)
      .def_property_readonly("opset", &onnx::Model::opset)
      .def_property_readonly("inputs",
                             [](const onnx::Model& model) {
                               py::list out;
                               for (const onnx::ModelInput& i : model.inputs()) {
                                 py::dict d;
                                 d["name"] = i.name;
                                 d["dtype"] = i.dtype;
                                 py::list dims; // ints, and a kept variable's Dim
                                 for (const Dim& dim : i.shape)
                                   dims.append(dim.is_const() ? py::object(py::int_(dim.value()))
                                                              : py::cast(dim));
                                 d["shape"] = py::tuple(dims);
                                 out.append(d);
                               }
                               return out;
                             })
      .def_property_readonly("outputs", &onnx::Model::output_names)
      .def_property_readonly("op_counts", &onnx::Model::op_counts)
      .def_property_readonly("variables",
                             [](const onnx::Model& model) {
                               py::list out; // as beamlab.Variable makes them
                               for (const Variable& v : model.variables()) out.append(Dim(v));
                               return out;
                             })
      .def("random_inputs", &onnx::Model::random_inputs, py::arg("seed") = 1,
           "Seeded random inputs, by name")
      .def("_build", [](const onnx::Model& model, const std::map<std::string, Tensor>& feeds) {
        return model.build(feeds).outputs;
      });
  m.def("_load_onnx",
        [](const std::string& path, const std::map<std::string, std::vector<int64_t>>& dims,
           const std::map<std::string, Dim>& kept) {
          std::map<std::string, Shape> shapes(dims.begin(), dims.end());
          std::vector<Variable> variables;
          for (const auto& [name, d] : kept) {
            std::vector<Variable> vs = shape_variables(Shape{d});
            user_assert(vs.size() == 1 && d.coefficient() == 1 && vs[0].name == name)
                << "load_onnx: " << name << "=" << d.str() << " must be the Variable of that name, "
                << "e.g. " << name << "=beamlab.Variable(\"" << name << "\", 1, 512)";
            variables.push_back(vs[0]);
          }
          return onnx::Model::load(path, shapes, variables);
        });
}

} // namespace beamlab::python

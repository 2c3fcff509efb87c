// _beamlab: the compiled half of `import beamlab` (python/beamlab/__init__.py is the other).
// Errors keep the C++ messages: a UserError (the caller's input was wrong) is
// beamlab.UserError, a ValueError; a RuntimeFailure (I/O, the JIT, the database) is
// beamlab.RuntimeFailure, a RuntimeError.
#include "bindings.hpp"
#include <beamlab/tuning.hpp>

namespace py = pybind11;

PYBIND11_MODULE(_beamlab, m) {
  m.doc() = "beamlab: lazy tensors compiled to fused kernels, tuned by BEAM search";
  py::register_exception<beamlab::UserError>(m, "UserError", PyExc_ValueError);
  py::register_exception<beamlab::RuntimeFailure>(m, "RuntimeFailure", PyExc_RuntimeError);
  m.attr("__version__") = beamlab::host_identity().beamlab_version;
  m.def("compiler_identity", &beamlab::compiler_identity,
        "The compiler plans are tuned with: beamlab, LLVM, hash and Opt versions");
  beamlab::python::bind_tensor(m);
  beamlab::python::bind_tuning(m);
}

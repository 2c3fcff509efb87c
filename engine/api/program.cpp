// Programs; see beamlab/program.hpp.
#include <beamlab/program.hpp>

namespace beamlab {

Schedule Program::schedule() const {
  std::vector<UOpPtr> roots;
  for (const Tensor& t : outputs) roots.push_back(t.uop());
  return create_schedule(roots);
}

BufferMap Program::inputs() const {
  BufferMap out;
  for (const Tensor& t : outputs) Tensor::collect_inputs(t, out);
  return out;
}

Program& Program::realize(const RealizeOptions& options) {
  std::vector<Tensor*> ptrs;
  for (Tensor& t : outputs) ptrs.push_back(&t);
  Tensor::realize_all(ptrs, options);
  return *this;
}

} // namespace beamlab

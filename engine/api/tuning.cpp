// The tuner's view of a kernel; see beamlab/tuning.hpp.
#include <beamlab/tuning.hpp>

namespace beamlab {

int64_t reduce_length(const UOpPtr& ast) {
  int64_t n = 1;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Op::Range && u->arg().kind() == Arg::Kind::Tuple &&
        u->arg().items()[1].as_str() == "reduce")
      n *= u->src(0)->const_value();
  return n;
}

KernelTask kernel_task(const ScheduleItem& item) {
  KernelTask t{item.name, item.key, print_graph(item.ast), {}, reduce_length(item.ast)};
  for (const UOpPtr& b : item.buffers)
    t.buffers.push_back({b->dtype().scalar_type(), buffer_size(*b)});
  return t;
}

} // namespace beamlab

// A kernel over symbolic variables for the tuner's tests: a matmul over any number of rows.
#pragma once

#include <beamlab/tuning.hpp>

#include "engine/ir/kernel_ops.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/schedule/schedule.hpp"

namespace beamlab::test_support {

/// (seq x 64) @ (64 x 80) for seq in [1, 96], as one kernel ("r_seq_80_64").
inline KernelTask symbolic_matmul_task() {
  ScheduleItem item =
      Tensor::rand({96, 64}, 1).matmul(Tensor::rand({64, 80}, 2)).schedule().items.at(0);
  for (const UOpPtr& u : toposort(item.ast))
    if (u->op() == Op::Range && u->src(0)->is_const() && u->src(0)->const_value() == 96) {
      UOpPtr rows =
          kernel_range(UOp::variable("seq", 1, 96), u->arg().items()[0].as_int(), loop_kind(*u));
      item.ast = substitute(item.ast, {{u.get(), rows}});
      break;
    }
  item.name = kernel_name(item.ast);
  item.key = item.ast->hash();
  return kernel_task(item);
}

} // namespace beamlab::test_support

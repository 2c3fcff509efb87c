// beamlab's public C++ API: lazy tensors compiled to fused, tuned kernels.
//
//   #include <beamlab/beamlab.hpp>
//   beamlab::Tensor a = beamlab::Tensor::rand({512, 512}, 1), b = beamlab::Tensor::rand({512, 512},
//   2); std::vector<float> c = a.matmul(b).relu().to_vector<float>();
#pragma once

#include "engine/opt/opt.hpp"
#include "engine/realize/realize.hpp"
#include "engine/support/statistics.hpp"
#include "engine/tensor/plan.hpp"
#include "engine/tensor/tensor.hpp"
#include <beamlab/program.hpp>
#include <beamlab/workloads.hpp>

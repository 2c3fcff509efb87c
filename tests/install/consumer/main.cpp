// An outside program using the installed beamlab: a lazy program computed and checked by hand,
// then a BEAM search, whose sandboxed worker libbeamlab.so must find in the install tree.
#include <cstdio>
#include <vector>

#include <beamlab/beamlab.hpp>
#include <beamlab/tuner/batch/policy.hpp>

int main() {
  using beamlab::Tensor;
  Tensor a({1, 2, 3, 4}, {2, 2});
  std::vector<float> c = (a.matmul(Tensor::eye(2)) * 2 + 1).relu().to_vector<float>();
  if (c != std::vector<float>{3, 5, 7, 9}) {
    std::fprintf(stderr, "consumer: wrong values %g %g %g %g\n", c[0], c[1], c[2], c[3]);
    return 1;
  }
  beamlab::tuner::BeamPolicy beam({.beam = 1, .time_budget_s = 30, .candidate_budget = 6});
  Tensor r = (Tensor::rand({64, 64}, 1) * 3).sum({1});
  r.realize({.policy = &beam});
  std::vector<beamlab::tuner::TuneResult> results = beam.results();
  if (results.empty() || results[0].winner < 0 || results[0].candidates.size() < 2) {
    std::fprintf(stderr, "consumer: the search measured nothing\n");
    return 1;
  }
  std::printf("consumer: ok, %zu kernel(s) searched, %zu candidates in the first\n", results.size(),
              results[0].candidates.size());
  return 0;
}

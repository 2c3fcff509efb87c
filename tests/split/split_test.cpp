// Every kernel of a corpus, with the heuristic's plan for T threads, splits its parallel work
// into enough balanced chunks for T threads (parallel_profile), for T in {2, 8, 16, 64}: what a
// machine of any core count can check about a plan chosen for a bigger one. A kernel too small
// to pay for T threads (threads_worth) must fill the threads it pays for.
//
//   beamlab_split_tests CORPUS.json...    (each kernel once, by key; a table of the splits)
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tuner/batch/corpus.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab {
namespace {

std::vector<std::string> corpora; // from the command line

constexpr int kThreadCounts[] = {2, 8, 16, 64};

TEST(Split, EveryKernelFillsTheThreadsItsWorkPaysFor) {
  ASSERT_FALSE(corpora.empty()) << "usage: beamlab_split_tests CORPUS.json...";
  std::set<uint64_t> seen;
  int kernels = 0, smaller[std::size(kThreadCounts)] = {};
  double worst[std::size(kThreadCounts)] = {1, 1, 1, 1};
  for (const std::string& path : corpora) {
    tuner::Corpus corpus = tuner::load_corpus(path);
    for (const tuner::CorpusEntry& entry : corpus.entries) {
      Schedule schedule = tuner::build_entry(entry).schedule();
      for (const ScheduleItem& item : schedule.items) {
        if (!seen.insert(item.key).second) continue;
        ++kernels;
        for (size_t t = 0; t < std::size(kThreadCounts); ++t) {
          int threads = kThreadCounts[t];
          std::vector<Opt> opts = heuristic_opts(item.ast, threads);
          Expected<OptimizedKernel> k = apply_opts(item.ast, opts);
          ASSERT_TRUE(k) << item.name << " of " << entry.label << ": " << k.error();
          ParallelProfile p = parallel_profile(*k, threads);
          if (p.worth < threads) ++smaller[t];
          if (p.used > 1) worst[t] = std::min(worst[t], p.balance);
          EXPECT_TRUE(p.fills()) << item.name << " of " << entry.label << " at " << threads
                                 << " threads: " << p.chunks << " chunks on " << p.used
                                 << " threads (its " << p.work << " iterations pay for " << p.worth
                                 << "), balance " << p.balance << ", plan " << to_string(opts);
        }
      }
    }
  }
  std::printf("%d kernels; per thread count: kernels too small for all of them, worst balance\n",
              kernels);
  for (size_t t = 0; t < std::size(kThreadCounts); ++t)
    std::printf("  %2d threads: %3d smaller, worst balance %.3f\n", kThreadCounts[t], smaller[t],
                worst[t]);
}

} // namespace
} // namespace beamlab

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) beamlab::corpora.emplace_back(argv[i]);
  return RUN_ALL_TESTS();
}

// Compile, link and run a kernel graph in one call, for the code generator's tests.
#pragma once

#include <string>
#include <vector>

#include "engine/codegen/compile.hpp"
#include "engine/runtime/buffer.hpp"
#include "engine/runtime/jit_loader.hpp"
#include "engine/runtime/launch.hpp"

namespace beamlab::testing {

/// Compiles `graph` (a lowered kernel graph), links it and runs it over its parallel range on
/// `buffers` (DEFINE_GLOBAL slots in order); the compiled kernel, or the compile or link error.
inline Expected<CompiledKernel> compile_and_run(const UOpPtr& graph,
                                                const std::vector<Buffer*>& buffers,
                                                const std::vector<int64_t>& vars = {},
                                                int threads = 0, const std::string& name = "test") {
  Expected<CompiledKernel> k = compile_kernel(graph, {.name = name});
  if (!k) return k;
  auto entry = JitLoader::instance().load(k->object, k->name);
  if (!entry) return make_unexpected(entry.error());
  std::vector<void*> ptrs;
  for (Buffer* b : buffers) ptrs.push_back(b->data());
  launch((*entry)->entry(), ptrs.data(), vars.data(), k->parallel_extent, threads);
  return k;
}

} // namespace beamlab::testing

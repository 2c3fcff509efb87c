// The lowering pipeline's steps; see pipeline.hpp.
#include "engine/realize/pipeline.hpp"

#include <chrono>
#include <cstdio>

#include "engine/codegen/expand.hpp"
#include "engine/codegen/linearize.hpp"
#include "engine/codegen/lower.hpp"
#include "engine/codegen/partition.hpp"
#include "engine/codegen/split_vectors.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/support/knobs.hpp"

namespace beamlab {

Expected<OptimizedKernel> optimize_kernel(const UOpPtr& ast, const std::vector<Opt>& opts) {
  Expected<OptimizedKernel> k = apply_opts(ast, opts);
  if (k)
    for (const UOpPtr& stage : k->stages) print_after_step("apply_opts", stage);
  return k;
}

Expected<CompiledKernel> generate_code(const UOpPtr& stage, const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  UOpPtr partitioned = partition_loops(stage);
  print_after_step("partition", partitioned);
  UOpPtr expanded = expand_upcasts(partitioned);
  print_after_step("expand", expanded);
  UOpPtr lowered = lower_kernel(expanded);
  print_after_step("lower", lowered);
  UOpPtr split = split_wide_vectors(lowered);
  print_after_step("split", split);
  std::vector<UOpPtr> program = linearize(split);
  if (knob_lists("BEAMLAB_PRINT_AFTER", "linearize"))
    std::fprintf(stderr, "# after linearize (%s)\n%s", options.name.c_str(),
                 print_program(program).c_str());
  Expected<CompiledKernel> k = emit_kernel(program, options);
  if (k)
    k->compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return k;
}

Expected<std::shared_ptr<const LoadedKernel>> link_code(const CompiledKernel& kernel) {
  auto code = JitLoader::instance().load(kernel.object, kernel.name);
  if (code && knob_lists("BEAMLAB_PRINT_AFTER", "link"))
    std::fprintf(stderr, "# after link: %s, %zu bytes of object code\n", kernel.name.c_str(),
                 kernel.object.size());
  return code;
}

std::string stage_name(const std::string& kernel, const OptimizedKernel& optimized, size_t i) {
  if (i < optimized.main) return kernel + "_pack" + std::to_string(i);
  return i == optimized.main ? kernel : kernel + "_combine";
}

} // namespace beamlab

// beamlab: the command-line entry point. Subcommands live in their own files; this one only
// assembles them and turns errors into one-line messages and exit codes (kExitCodes in
// apps/usage.hpp, which `beamlab --help` ends with and the README lists):
//   0 success, 1 bad input (a file, an expression, a database, data a command cannot use),
//   2 bad command line (an unknown subcommand, option, workload or parameter, a bad option
//   value), 3 internal error or a failure of the machine, 4 `beamlab report --fail-above` found a
//   regression above its threshold, 130/143 `tune` stopped by SIGINT/SIGTERM (run kept).
#include <cstdio>
#include <new>

#include <CLI/CLI.hpp>

#include "apps/bench_command.hpp"
#include "apps/cache_command.hpp"
#include "apps/completion_command.hpp"
#include "apps/device_command.hpp"
#include "apps/ir_commands.hpp"
#include "apps/model_command.hpp"
#include "apps/replay_command.hpp"
#include "apps/report_command.hpp"
#include "apps/run_command.hpp"
#include "apps/tune_command.hpp"
#include "apps/usage.hpp"
#include "engine/runtime/openmp.hpp"
#include "engine/support/error.hpp"

namespace {

int run(int argc, char** argv) {
  // Named, so usage lines say "beamlab", not the path the binary was run by.
  CLI::App app{"beamlab: a tensor compiler with a BEAM-search autotuner", "beamlab"};
  app.set_version_flag("--version", "beamlab 0.1.0");
  app.set_help_all_flag("--help-all", "Print the help of every subcommand and exit");
  app.require_subcommand(1);
  beamlab::cli::add_ir_commands(app);
  beamlab::cli::add_run_command(app);
  int exit_code = 0;
  beamlab::cli::add_tune_command(app, exit_code);
  beamlab::cli::add_cache_command(app);
  beamlab::cli::add_device_command(app);
  beamlab::cli::add_bench_command(app);
  beamlab::cli::add_report_command(app, exit_code);
  beamlab::cli::add_replay_command(app);
  beamlab::cli::add_model_command(app);
  beamlab::cli::add_completion_command(app);
  app.footer(beamlab::cli::kExitCodes);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e); // --help, --version
    std::fprintf(stderr, "beamlab: error: %s\n",
                 beamlab::cli::describe_parse_error(app, e).c_str());
    return 2;
  } catch (const beamlab::cli::UsageError& e) {
    std::fprintf(stderr, "beamlab: error: %s%s\n", e.what(), beamlab::cli::help_hint(app).c_str());
    return 2;
  }
  return exit_code;
}

} // namespace

int main(int argc, char** argv) {
  beamlab::release_openmp_registration(); // nothing left in /dev/shm, however this ends
  try {
    return run(argc, argv);
  } catch (const beamlab::UserError& e) {
    std::fprintf(stderr, "beamlab: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "beamlab: error: out of memory: the work asked for more than this "
                         "machine could give; use smaller shapes (or fewer --jobs)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "beamlab: %s\n", e.what());
    return 3;
  } catch (...) {
    std::fprintf(stderr, "beamlab: unknown internal error\n");
    return 3;
  }
}

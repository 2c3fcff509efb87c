// The IR subcommands; see ir_commands.hpp. Each reads a graph in the text form of
// engine/ir/printer.hpp from a file or stdin ("-"), and reports errors as one line that names
// the input.
#include "apps/ir_commands.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/symbolic.hpp"
#include "engine/rewrite/verify.hpp"

namespace beamlab::cli {
namespace {

std::string read_input(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  user_assert(in) << "cannot read '" << path << "': " << std::strerror(errno)
                  << "; give the path of an IR text file, or - for stdin";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

UOpPtr load_graph(const std::string& path) {
  Expected<UOpPtr, ParseError> g = parse_graph(read_input(path));
  user_assert(g) << g.error().str(path == "-" ? "<stdin>" : path);
  return *g;
}

void run_demo() {
  UOpPtr x = UOp::variable("x", 0, 15), y = UOp::variable("y", 0, 3);
  UOpPtr row = UOp::range(UOp::const_int(Scalar::Index, 8), 0);
  UOpPtr col = UOp::range(UOp::const_int(Scalar::Index, 4), 1);
  UOpPtr flat = row * 4 + col; // a (8, 4) tensor's flat index, as a reshape would build it
  std::vector<UOpPtr> examples = {
      (x * 4 + y) / 4, (x * 4 + y) % 4,          (x / 2) * 2 + x % 2, flat / 4,
      flat % 4,        ((flat + 4) / 4) * 4 - 4, lt(x * 4 + y, 64),   maximum(row, col + 8)};
  fmt::print(
      "beamlab symbolic simplifier (x in [0, 15], y in [0, 3], r0 in [0, 8), r1 in [0, 4))\n\n");
  for (const UOpPtr& e : examples) {
    UOpPtr s = simplify(e);
    fmt::print("  {:<40} -> {:<16} [{}, {}]\n", to_expr(e), to_expr(s), s->vmin(), s->vmax());
  }
  UOpPtr e = sink({flat / 4, flat % 4});
  UOpPtr s = simplify(e);
  fmt::print("\nIR of un-flattening a (8, 4) index, before:\n{}\nafter:\n{}\n", print_graph(e),
             print_graph(s));
  fmt::print("stable hash of the simplified graph: {}\n", hash_hex(s->hash()));
}

// The graph in `path`, which must satisfy spec 'scalar' (the simplifier's domain); each bad
// node is listed, then a one-line error.
UOpPtr load_scalar_graph(const std::string& path) {
  UOpPtr g = load_graph(path);
  std::vector<std::string> errors = verify(g, spec_scalar());
  for (const std::string& e : errors) fmt::print(stderr, "{}: {}\n", path, e);
  user_assert(errors.empty()) << path << ": " << errors.size()
                              << " node(s) violate spec 'scalar' (listed above, numbered as by "
                                 "'beamlab ir print'); the symbolic "
                                 "IR holds constants, variables, ranges, ALU ops and casts";
  return g;
}

void check_graph(const std::string& path) {
  UOpPtr g = load_scalar_graph(path);
  fmt::print("{}: ok, {} nodes\n", path, toposort(g).size());
}

} // namespace

void add_ir_commands(CLI::App& app) {
  app.add_subcommand("demo", "Show the IR core at work: symbolic simplification of index math")
      ->callback(run_demo);

  auto* ir = app.add_subcommand("ir", "Read, simplify, verify or hash an IR text file");
  ir->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  auto add = [&](const char* name, const char* help, std::function<void(const std::string&)> fn) {
    auto* cmd = ir->add_subcommand(name, help);
    cmd->add_option("file", *path, "IR text file, or - for stdin")->required();
    cmd->callback([path, fn = std::move(fn)] { fn(*path); });
  };
  add("print", "Parse and print the graph in canonical numbering",
      [](const std::string& p) { fmt::print("{}", print_graph(load_graph(p))); });
  add("simplify", "Apply the symbolic simplifier and print the result",
      [](const std::string& p) { fmt::print("{}", print_graph(simplify(load_scalar_graph(p)))); });
  add("verify", "Check the graph against the scalar IR spec", check_graph);
  add("hash", "Print the graph's stable structural hash",
      [](const std::string& p) { fmt::print("{}\n", hash_hex(load_graph(p)->hash())); });
}

} // namespace beamlab::cli

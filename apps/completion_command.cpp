// The completion subcommand; see completion_command.hpp.
#include "apps/completion_command.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/cli_checks.hpp"
#include "apps/output.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab::cli {
namespace {

// What a command line can continue with once it has named the subcommands in `path`.
struct Completions {
  std::string path; ///< "cache list"; "" for beamlab itself
  std::vector<std::string> subcommands, options, words;
  std::vector<std::string> value_options;                     ///< options that take a value
  std::map<std::string, std::vector<std::string>> value_sets; ///< option -> its values
};

bool hidden(const CLI::App* app) { return app->get_group().empty(); }

// The values a one_of() check allows, from its description "{text, json}" in the type name.
std::vector<std::string> value_set(const CLI::Option* o) {
  std::string type = o->get_type_name();
  size_t open = type.find('{'), close = type.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  std::vector<std::string> values;
  for (std::string v : CLI::detail::split(type.substr(open + 1, close - open - 1), ','))
    values.push_back(CLI::detail::trim(v));
  return values;
}

// The workload names, for the commands whose first word may be one.
std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : workloads()) names.push_back(w.name);
  return names;
}

void collect(const CLI::App& app, const std::string& path, std::vector<Completions>& out) {
  Completions c;
  c.path = path;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App* s) { return !hidden(s); }))
    c.subcommands.push_back(s->get_name());
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty() || !o->nonpositional()) continue;
    std::vector<std::string> names;
    for (const std::string& n : o->get_snames()) names.push_back("-" + n);
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    c.options.insert(c.options.end(), names.begin(), names.end());
    if (o->get_expected_max() == 0) continue; // a flag
    c.value_options.insert(c.value_options.end(), names.begin(), names.end());
    if (std::vector<std::string> values = value_set(o); !values.empty())
      for (const std::string& n : names) c.value_sets[n] = values;
  }
  if (path == "run" || path == "tune") c.words = workload_names();
  out.push_back(c);
  for (const CLI::App* s : app.get_subcommands([](const CLI::App* s) { return !hidden(s); }))
    collect(*s, (path.empty() ? "" : path + " ") + s->get_name(), out);
}

std::string join(const std::vector<std::string>& words) {
  return fmt::format("{}", fmt::join(words, " "));
}

std::string bash_script(const CLI::App& app) {
  std::vector<Completions> all;
  collect(app, "", all);
  std::string subcommand_paths, per_path, value_sets, value_options;
  for (const Completions& c : all) {
    if (!c.path.empty()) subcommand_paths += fmt::format("      \"{}\") ;;\n", c.path);
    per_path += fmt::format("    \"{}\") subcommands=\"{}\" options=\"{}\" words=\"{}\" ;;\n",
                            c.path, join(c.subcommands), join(c.options), join(c.words));
    for (const auto& [option, values] : c.value_sets)
      value_sets += fmt::format("    \"{} {}\") COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); "
                                "return ;;\n",
                                c.path, option, join(values));
    for (const std::string& option : c.value_options)
      value_options += fmt::format("    \"{} {}\") return ;;\n", c.path, option);
  }
  return fmt::format(
      R"(# bash completion for beamlab; made by 'beamlab completion bash' from its command tree.
_beamlab() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} path="" next i
  # The subcommands named so far.
  for ((i = 1; i < COMP_CWORD; i++)); do
    next="${{path:+$path }}${{COMP_WORDS[i]}}"
    case "$next" in
{}      *) continue ;;
    esac
    path=$next
  done
  # An option's value: one of its set, else (no reply) a file name.
  case "$path $prev" in
{}  esac
  case "$path $prev" in
{}  esac
  local subcommands="" options="" words=""
  case "$path" in
{}  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$subcommands $words" -- "$cur"))
  fi
}}
complete -o default -F _beamlab beamlab
)",
      subcommand_paths, value_sets, value_options, per_path);
}

} // namespace

void add_completion_command(CLI::App& app) {
  auto output = std::make_shared<std::string>("-");
  CLI::App* cmd = app.add_subcommand("completion", "Print a shell completion script");
  cmd->group(""); // hidden: for the build and packagers
  cmd->add_option("shell", "the shell (bash)")->required()->check(one_of({"bash"}));
  cmd->add_option("-o,--output", *output, "write the script to FILE (-: stdout)");
  cmd->final_callback([&app, output] { write_output(*output, bash_script(app), "-o"); });
}

} // namespace beamlab::cli

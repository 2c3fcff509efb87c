// Bad command lines; see usage.hpp.
#include "apps/usage.hpp"

#include <exception>
#include <vector>

#include "engine/support/did_you_mean.hpp"

namespace beamlab::cli {
namespace {

bool is_hidden(const CLI::App* app) { return app->get_group().empty(); }

// The deepest subcommand the command line reached ("beamlab cache list" -> list).
const CLI::App* reached(const CLI::App& app) {
  const CLI::App* at = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App* s) { return s->parsed(); }))
      at = sub, deeper = true;
  }
  return at;
}

std::string command_path(const CLI::App* app) {
  std::string path = app->get_name();
  for (const CLI::App* p = app->get_parent(); p; p = p->get_parent())
    path.insert(0, p->get_name() + " ");
  return path;
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->get_group().empty()) continue; // hidden
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : o->get_snames()) names.push_back("-" + n);
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* s : cmd.get_subcommands([](const CLI::App* s) { return !is_hidden(s); }))
    names.push_back(s->get_name());
  return names;
}

// " (did you mean '--list'?)" for the first word the command line left over that is close to an
// option or a subcommand of `cmd`.
std::string suggestion(const CLI::App& cmd) {
  for (const std::string& word : cmd.remaining()) {
    std::string name = word.substr(0, word.find('='));
    std::string s =
        did_you_mean(name, name.starts_with("-") ? option_names(cmd) : subcommand_names(cmd));
    if (!s.empty()) return s;
  }
  return "";
}

// A word where a subcommand was required: an unknown subcommand.
std::string unknown_subcommand(const CLI::App& cmd) {
  for (const std::string& word : cmd.remaining())
    if (!word.starts_with("-")) return word;
  return "";
}

} // namespace

UsageReport::~UsageReport() noexcept(false) {
  // Never throw while another exception unwinds the stack: that would terminate.
  if (std::uncaught_exceptions() > 0) return;
  throw UsageError(msg_.str());
}

std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* cmd = reached(app);
  std::string message = e.what();
  std::string word = unknown_subcommand(*cmd);
  if (dynamic_cast<const CLI::RequiredError*>(&e) && !word.empty() &&
      !subcommand_names(*cmd).empty())
    message = "unknown subcommand '" + word + "'";
  return message + suggestion(*cmd) + help_hint(app);
}

std::string help_hint(const CLI::App& app) {
  return " (see '" + command_path(reached(app)) + " --help')";
}

std::string option_suggestion(const CLI::App& cmd, const std::string& word) {
  return did_you_mean(word.substr(0, word.find('=')), option_names(cmd));
}

} // namespace beamlab::cli

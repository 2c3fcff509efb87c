// IR and assembly side by side; see code_map.hpp.
#include "gui/code_map.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace beamlab::gui {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

namespace {

// The IR block an assembly line names in its comment: ".LBB0_4:  # %body10" and
// "# %bb.5:  # %exit11" both name theirs after "# %".
std::string block_comment(const std::string& line) {
  static const std::regex re(R"(#\s*%([A-Za-z0-9_.\-]+)\s*$)");
  std::smatch m;
  if (line.empty() || (line[0] != '.' && line[0] != '#')) return {};
  return std::regex_search(line, m, re) ? m[1].str() : std::string();
}

// An instruction line: a tab, then a mnemonic (not a directive, not a comment).
bool instruction(const std::string& line) {
  return line.size() > 1 && line[0] == '\t' && line[1] != '.' && line[1] != '#';
}

// The IR label a line declares ("body10:" or "body10:  ; preds = ..."), else "".
std::string ir_label(const std::string& line) {
  static const std::regex re(R"(^([A-Za-z0-9_.\-]+):)");
  std::smatch m;
  return std::regex_search(line, m, re) ? m[1].str() : std::string();
}

} // namespace

std::string AsmLoop::summary() const {
  std::string width = vector_bits > 0 ? fmt::format(", {}-bit vectors ({} float lanes)",
                                                    vector_bits, vector_bits / 32)
                                      : ", scalar";
  return fmt::format("loop %{}, depth {}{}: {} instructions, {} FMAs, {} memory operands{}",
                     ir_block, depth, innermost ? ", innermost" : "", instructions, fmas,
                     memory_operands, width);
}

std::vector<AsmLoop> asm_loops(const std::string& assembly) {
  static const std::regex header(R"(This (Inner )?Loop Header: Depth=(\d+))");
  static const std::regex label_re(R"(^(\.LBB[0-9_]+):)");
  std::vector<std::string> lines = split_lines(assembly);
  std::vector<AsmLoop> loops;
  std::string label, block;
  int label_line = 0;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const std::string& line = lines[static_cast<size_t>(i)];
    std::smatch m;
    if (std::regex_search(line, m, label_re)) label = m[1].str(), label_line = i;
    if (std::string b = block_comment(line); !b.empty()) block = b;
    if (!std::regex_search(line, m, header) || label.empty()) continue;
    AsmLoop l;
    l.label = label;
    l.ir_block = block;
    l.depth = std::stoi(m[2].str());
    l.innermost = m[1].matched;
    l.first_line = label_line;
    // Its last line: the last branch back to its label before the function ends.
    l.last_line = label_line;
    for (int j = label_line + 1; j < static_cast<int>(lines.size()); ++j) {
      const std::string& s = lines[static_cast<size_t>(j)];
      if (s.rfind("\t.cfi_endproc", 0) == 0 || s.rfind("\t.size", 0) == 0) break;
      if (instruction(s) && s[1] == 'j' && s.size() >= label.size() &&
          s.compare(s.size() - label.size(), label.size(), label) == 0)
        l.last_line = j;
    }
    for (int j = l.first_line; j <= l.last_line; ++j) {
      const std::string& s = lines[static_cast<size_t>(j)];
      if (!instruction(s)) continue;
      ++l.instructions;
      std::string mnemonic = s.substr(1, s.find_first_of(" \t", 1) - 1);
      if (mnemonic.rfind("vfmadd", 0) == 0 || mnemonic.rfind("vfnmadd", 0) == 0 ||
          mnemonic.rfind("vfmsub", 0) == 0 || mnemonic.rfind("vfnmsub", 0) == 0)
        ++l.fmas;
      if (s.find("(%") != std::string::npos) ++l.memory_operands;
      if (s.find("%zmm") != std::string::npos)
        l.vector_bits = std::max(l.vector_bits, 512);
      else if (s.find("%ymm") != std::string::npos)
        l.vector_bits = std::max(l.vector_bits, 256);
      else if (s.find("%xmm") != std::string::npos && mnemonic[0] == 'v' &&
               mnemonic.find("ss") == std::string::npos)
        l.vector_bits = std::max(l.vector_bits, 128);
    }
    loops.push_back(l);
  }
  return loops;
}

std::string asm_block_at(const std::string& assembly, int line) {
  std::vector<std::string> lines = split_lines(assembly);
  for (int i = std::min(line, static_cast<int>(lines.size()) - 1); i >= 0; --i)
    if (std::string b = block_comment(lines[static_cast<size_t>(i)]); !b.empty()) return b;
  return {};
}

int asm_block_line(const std::string& assembly, const std::string& block, int from) {
  std::vector<std::string> lines = split_lines(assembly);
  for (int i = std::max(from, 0); i < static_cast<int>(lines.size()); ++i)
    if (block_comment(lines[static_cast<size_t>(i)]) == block) return i;
  return -1;
}

std::string ir_block_at(const std::string& ir, int line) {
  std::vector<std::string> lines = split_lines(ir);
  for (int i = std::min(line, static_cast<int>(lines.size()) - 1); i >= 0; --i) {
    const std::string& s = lines[static_cast<size_t>(i)];
    if (s.rfind("define ", 0) == 0 || s == "}") return {};
    if (std::string l = ir_label(s); !l.empty()) return l;
  }
  return {};
}

int ir_block_line(const std::string& ir, const std::string& block, int from) {
  std::vector<std::string> lines = split_lines(ir);
  for (int i = std::max(from, 0); i < static_cast<int>(lines.size()); ++i)
    if (ir_label(lines[static_cast<size_t>(i)]) == block) return i;
  return -1;
}

} // namespace beamlab::gui

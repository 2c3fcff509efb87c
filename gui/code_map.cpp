// IR and assembly side by side; see code_map.hpp.
#include "gui/code_map.hpp"

#include <algorithm>
#include <map>
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

namespace {

// A basic block of the assembly: from its label (".LBB0_4:" or "# %bb.5:") to the line before
// the next block's, with the annotations LLVM's verbose assembly gives it ("This Loop Header",
// "in Loop: Header=BB0_1", "Parent Loop BB0_1"). A listing may hold several functions (a
// kernel's stages, each its own module, all with labels .LBB0_*): blocks know theirs.
struct AsmBlock {
  std::string label; ///< ".LBB0_4"; "" for a fall-through block ("# %bb.5:")
  std::string ir_block;
  std::string notes; ///< its label line's and annotation lines' text
  int first_line = 0, last_line = 0;
  int function = 0;
  std::string loop;                   ///< the innermost loop it is in: "BB0_1"; "" none
  std::vector<std::string> ancestors; ///< a loop header's: the loops around its loop
};

std::vector<AsmBlock> asm_blocks(const std::vector<std::string>& lines) {
  static const std::regex label_re(R"(^(\.LBB[0-9_]+):)");
  static const std::regex block_re(R"(^(\.LBB[0-9_]+:|# %bb\.[0-9]+:))");
  static const std::regex function_re(R"(^[A-Za-z_$][\w.$]*:)");
  std::vector<AsmBlock> blocks;
  bool in_notes = false;
  int function = 0;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const std::string& line = lines[static_cast<size_t>(i)];
    std::smatch m;
    bool starts_function = std::regex_search(line, m, function_re);
    if (starts_function || std::regex_search(line, m, block_re)) {
      if (!blocks.empty()) blocks.back().last_line = i - 1;
      if (starts_function && !blocks.empty()) ++function;
      AsmBlock b;
      if (std::regex_search(line, m, label_re)) b.label = m[1].str();
      b.ir_block = block_comment(line);
      b.notes = line;
      b.first_line = b.last_line = i;
      b.function = function;
      blocks.push_back(std::move(b));
      in_notes = true;
      continue;
    }
    if (blocks.empty()) continue;
    blocks.back().last_line = i;
    // The comment lines right under a label are its annotations.
    size_t text = line.find_first_not_of(" \t");
    if (in_notes && text != std::string::npos && line[text] == '#')
      blocks.back().notes += "\n" + line;
    else
      in_notes = false;
  }
  static const std::regex in_loop(R"(in Loop: Header=(BB[0-9_]+))");
  static const std::regex parent(R"(Parent Loop (BB[0-9_]+))");
  for (AsmBlock& b : blocks) {
    std::smatch m;
    if (!b.label.empty() && b.notes.find("Loop Header") != std::string::npos)
      b.loop = b.label.substr(2);
    else if (std::regex_search(b.notes, m, in_loop))
      b.loop = m[1].str();
    for (auto it = std::sregex_iterator(b.notes.begin(), b.notes.end(), parent);
         it != std::sregex_iterator(); ++it)
      b.ancestors.push_back((*it)[1].str());
  }
  return blocks;
}

} // namespace

std::vector<AsmLoop> asm_loops(const std::string& assembly) {
  static const std::regex header(R"(This (Inner )?Loop Header: Depth=(\d+))");
  std::vector<std::string> lines = split_lines(assembly);
  std::vector<AsmBlock> blocks = asm_blocks(lines);
  // Each loop header's ancestors, by function and loop name.
  std::map<std::pair<int, std::string>, const std::vector<std::string>*> ancestors;
  for (const AsmBlock& b : blocks)
    if (!b.label.empty() && b.loop == b.label.substr(2))
      ancestors[{b.function, b.loop}] = &b.ancestors;
  std::vector<AsmLoop> loops;
  for (const AsmBlock& h : blocks) {
    std::smatch m;
    if (h.label.empty() || !std::regex_search(h.notes, m, header)) continue;
    AsmLoop l;
    l.label = h.label;
    l.ir_block = h.ir_block;
    l.depth = std::stoi(m[2].str());
    l.innermost = m[1].matched;
    l.first_line = h.first_line;
    // Its blocks: those LLVM annotates as in it or in a loop inside it (block placement can
    // put the header below its body, entered by a jump and looped back to by falling through),
    // and unannotated ones between the header and the last branch to it.
    int back = h.first_line;
    for (int j = h.first_line + 1; j < static_cast<int>(lines.size()); ++j) {
      const std::string& s = lines[static_cast<size_t>(j)];
      if (s.rfind("\t.cfi_endproc", 0) == 0 || s.rfind("\t.size", 0) == 0) break;
      if (instruction(s) && s[1] == 'j' && s.size() >= l.label.size() &&
          s.compare(s.size() - l.label.size(), l.label.size(), l.label) == 0)
        back = j;
    }
    // Loops inside it: their headers name it among their ancestors (in this function).
    const std::string name = l.label.substr(2);
    auto inside = [&](const AsmBlock& b) {
      if (b.function != h.function || b.loop.empty()) return false;
      if (b.loop == name) return true;
      auto a = ancestors.find({b.function, b.loop});
      return a != ancestors.end() &&
             std::find(a->second->begin(), a->second->end(), name) != a->second->end();
    };
    l.last_line = h.last_line;
    std::vector<const AsmBlock*> members;
    for (const AsmBlock& b : blocks)
      if (&b == &h || inside(b) ||
          (b.function == h.function && b.loop.empty() && b.first_line > h.first_line &&
           b.first_line <= back)) {
        members.push_back(&b);
        l.last_line = std::max(l.last_line, b.last_line);
      }
    for (const AsmBlock* b : members)
      for (int j = b->first_line; j <= b->last_line; ++j) {
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

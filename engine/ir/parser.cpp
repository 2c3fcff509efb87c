// The IR text parser; see parser.hpp.
#include "engine/ir/parser.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

namespace beamlab {

std::string ParseError::str(std::string_view source_name) const {
  return fmt::format("{}:{}:{}: {}", source_name, line, column, message);
}

namespace {

constexpr int kMaxArgDepth = 64;

// A cursor over one line; failures record the first error and make every later step fail.
class Cursor {
public:
  Cursor(std::string_view text, int line) : text_(text), line_(line) {}

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size() || text_[pos_] == '#';
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool expect(char c, std::string_view what) {
    if (accept(c)) return true;
    return fail(fmt::format("expected '{}' {}", c, what));
  }
  // A run of characters that can make up a word: ops, dtypes, numbers, keywords.
  std::string_view word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  bool fail(std::string message) { return fail_at(pos_, std::move(message)); }
  bool fail_at(size_t pos, std::string message) {
    if (!error_) error_ = ParseError{line_, static_cast<int>(pos) + 1, std::move(message)};
    return false;
  }
  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  std::string_view rest() const { return text_.substr(pos_); }
  bool failed() const { return error_.has_value(); }
  ParseError error() const { return *error_; }

  static bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '+' || c == '*' || c == '[' || c == ']';
  }

private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_;
  std::optional<ParseError> error_;
};

bool parse_string(Cursor& c, std::string& out) {
  std::string_view rest = c.rest();
  size_t i = 1; // past the opening quote
  while (i < rest.size() && rest[i] != '"') {
    char ch = rest[i++];
    if (ch != '\\') {
      out += ch;
      continue;
    }
    if (i >= rest.size()) break;
    char esc = rest[i++];
    if (esc == 'n')
      out += '\n';
    else if (esc == '"' || esc == '\\')
      out += esc;
    else if (esc == 'x') {
      unsigned value = 0;
      auto [end, ec] = i + 2 <= rest.size()
                           ? std::from_chars(rest.data() + i, rest.data() + i + 2, value, 16)
                           : std::from_chars_result{rest.data() + i, std::errc::invalid_argument};
      if (ec != std::errc() || end != rest.data() + i + 2)
        return c.fail_at(c.pos() + i, "bad \\x escape: expected two hex digits");
      out += static_cast<char>(value);
      i += 2;
    } else {
      return c.fail_at(c.pos() + i - 1, "unknown escape in string; use \\\", \\\\, \\n or \\xHH");
    }
  }
  if (i >= rest.size()) return c.fail("unterminated string");
  c.set_pos(c.pos() + i + 1);
  return true;
}

bool parse_number(Cursor& c, std::string_view w, size_t start, Arg& out) {
  bool looks_float = w.find_first_of(".eE") != std::string_view::npos || w.ends_with("inf") ||
                     w.ends_with("nan") || w.starts_with("nan_");
  if (!looks_float) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec == std::errc::result_out_of_range) return c.fail_at(start, "integer out of int64 range");
    if (ec != std::errc() || end != w.data() + w.size())
      return c.fail_at(start, fmt::format("bad argument '{}'", w));
    out = Arg(v);
    return true;
  }
  if (w == "inf" || w == "-inf") {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    out = Arg(w[0] == '-' ? -kInf : kInf);
    return true;
  }
  if (w == "nan" || w == "-nan") {
    out = Arg(w[0] == '-' ? -std::nan("") : std::nan(""));
    return true;
  }
  if (w.starts_with("nan_0x")) { // a NaN with a payload, by its bits: nan_0x7ff8000000000001
    uint64_t bits = 0;
    std::string_view hex = w.substr(6);
    auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
    if (ec != std::errc() || end != hex.data() + hex.size() || hex.size() != 16 ||
        !std::isnan(std::bit_cast<double>(bits)))
      return c.fail_at(start,
                       fmt::format("bad NaN '{}': expected nan_0x and 16 hex digits of a NaN", w));
    out = Arg(std::bit_cast<double>(bits));
    return true;
  }
  double v = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  // Out-of-range floats are rejected rather than rounded to inf, which would not read back.
  if (ec != std::errc() || end != w.data() + w.size())
    return c.fail_at(start, fmt::format("bad float '{}'", w));
  out = Arg(v);
  return true;
}

bool parse_arg_at(Cursor& c, Arg& out, int depth) {
  if (depth > kMaxArgDepth) return c.fail("argument nested too deeply");
  if (c.peek('"')) {
    std::string s;
    if (!parse_string(c, s)) return false;
    out = Arg(std::move(s));
    return true;
  }
  if (c.accept('(')) {
    std::vector<Arg> items;
    while (!c.accept(')')) {
      if (c.at_end()) return c.fail("unterminated tuple: expected ')'");
      Arg item;
      if (!parse_arg_at(c, item, depth + 1)) return false;
      items.push_back(std::move(item));
      if (!c.peek(')') && !c.expect(',', "between tuple items")) return false;
    }
    out = Arg(std::move(items));
    return true;
  }
  size_t start = (c.skip_space(), c.pos());
  std::string_view w = c.word();
  if (w.empty()) return c.fail("expected an argument");
  if (w == "none") return out = Arg(), true;
  if (w == "true" || w == "false") return out = Arg(w == "true"), true;
  if (std::optional<Op> op = parse_op(w)) return out = Arg(*op), true;
  if (std::isdigit(static_cast<unsigned char>(w[0])) || w[0] == '-' || w[0] == '+' || w == "inf" ||
      w.starts_with("nan"))
    return parse_number(c, w, start, out);
  return c.fail_at(start, fmt::format("bad argument '{}'", w));
}

class GraphParser {
public:
  Expected<UOpPtr, ParseError> parse(std::string_view text) {
    int line_no = 0;
    while (!text.empty()) {
      size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
      Cursor c(line, ++line_no);
      if (c.at_end()) continue;
      if (!parse_line(c)) return make_unexpected(c.error());
    }
    if (!last_)
      return make_unexpected(ParseError{std::max(line_no, 1), 1, "no nodes: the graph is empty"});
    return last_;
  }

private:
  bool parse_ref(Cursor& c, int64_t& id) {
    size_t start = (c.skip_space(), c.pos());
    if (!c.expect('%', "before a node id")) return false;
    std::string_view w = c.word();
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), id);
    if (w.empty() || ec != std::errc() || end != w.data() + w.size() || id < 0)
      return c.fail_at(start, fmt::format("bad node id '%{}': ids are whole numbers", w));
    return true;
  }

  bool parse_line(Cursor& c) {
    int64_t id = 0;
    size_t id_pos = (c.skip_space(), c.pos());
    if (!parse_ref(c, id)) return false;
    if (nodes_.contains(id)) return c.fail_at(id_pos, fmt::format("node %{} is defined twice", id));
    if (!c.expect('=', "after the node id")) return false;
    size_t op_pos = (c.skip_space(), c.pos());
    std::string_view op_word = c.word();
    std::optional<Op> op = parse_op(op_word);
    if (!op) return c.fail_at(op_pos, fmt::format("unknown op '{}'", op_word));
    size_t dtype_pos = (c.skip_space(), c.pos());
    std::string_view dtype_word = c.word();
    std::optional<DType> dtype = parse_dtype(dtype_word);
    if (!dtype) return c.fail_at(dtype_pos, fmt::format("unknown dtype '{}'", dtype_word));
    std::vector<UOpPtr> src;
    // Sources: '%' N { ',' '%' N }, so a comma must be followed by another source.
    for (bool more = c.peek('%'); more; more = c.accept(',')) {
      int64_t ref = 0;
      size_t ref_pos = (c.skip_space(), c.pos());
      if (!parse_ref(c, ref)) return false;
      auto it = nodes_.find(ref);
      if (it == nodes_.end())
        return c.fail_at(ref_pos, fmt::format("node %{} is used before it is defined", ref));
      src.push_back(it->second);
      if (c.peek('%')) return c.fail("expected ',' between sources");
    }
    Arg arg;
    if (c.accept(':') && !parse_arg_at(c, arg, 0)) return false;
    if (!c.at_end()) return c.fail("unexpected text after the node");
    Arity arity = op_arity(*op);
    auto n = static_cast<int>(src.size());
    if (n < arity.min || (arity.max >= 0 && n > arity.max)) {
      std::string range = arity.max < 0            ? fmt::format("at least {}", arity.min)
                          : arity.min == arity.max ? fmt::format("{}", arity.min)
                                                   : fmt::format("{} to {}", arity.min, arity.max);
      return c.fail_at(op_pos, fmt::format("{} takes {} sources, not {}", op_word, range, n));
    }
    last_ = UOp::make(*op, *dtype, std::move(src), std::move(arg));
    nodes_.emplace(id, last_);
    return true;
  }

  std::unordered_map<int64_t, UOpPtr> nodes_;
  UOpPtr last_;
};

} // namespace

Expected<UOpPtr, ParseError> parse_graph(std::string_view text) {
  return GraphParser().parse(text);
}

Expected<Arg, ParseError> parse_arg(std::string_view text) {
  Cursor c(text, 1);
  Arg out;
  if (!parse_arg_at(c, out, 0)) return make_unexpected(c.error());
  if (!c.at_end()) {
    c.fail("unexpected text after the argument");
    return make_unexpected(c.error());
  }
  return out;
}

} // namespace beamlab

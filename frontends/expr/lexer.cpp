// The expression tokenizer: Python's tokens for names, numbers, strings and operators, with
// line and column; the first stage of evaluate() and input_names().
#include "frontends/expr/syntax_internal.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace beamlab::expr {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Longest first, so "**" wins over "*" and "..." over ".".
constexpr std::array<std::string_view, 29> kOperators = {
    "...", "**", "//", "<=", ">=", "==", "!=", "<<", ">>", "(", ")", "[", "]", ",", ".",
    ":",   "=",  "+",  "-",  "*",  "/",  "%",  "@",  "<",  ">", "&", "|", "^", "~"};

class Lexer {
public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (skip_space(); i_ < text_.size(); skip_space()) out.push_back(next());
    out.push_back(Token{Tok::End, "", here()});
    return out;
  }

private:
  Pos here() const { return pos_; }
  char peek(size_t ahead = 0) const { return i_ + ahead < text_.size() ? text_[i_ + ahead] : '\0'; }
  void advance(size_t n = 1) {
    for (; n > 0 && i_ < text_.size(); --n, ++i_) {
      if (text_[i_] == '\n') {
        ++pos_.line;
        pos_.col = 1;
      } else {
        ++pos_.col;
      }
    }
  }

  // Spaces, line breaks and comments (# to the end of the line).
  void skip_space() {
    for (;;) {
      char c = peek();
      if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') advance();
        continue;
      }
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return;
      advance();
    }
  }

  Token next() {
    char c = peek();
    if (is_name_start(c)) return name();
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return number();
    if (c == '\'' || c == '"') return string();
    for (std::string_view op : kOperators) {
      if (text_.substr(i_, op.size()) != op) continue;
      Token t{Tok::Op, std::string(op), here()};
      advance(op.size());
      return t;
    }
    fail(here(), "unexpected character " + quoted(text_.substr(i_, 1)) + hint(c));
  }

  static std::string hint(char c) {
    if (c == '!') return " (write ~x or x.logical_not() for 'not')";
    if (c == '{' || c == '}') return " (dicts and sets are not part of expressions)";
    return "";
  }

  Token name() {
    Token t{Tok::Name, "", here()};
    size_t b = i_;
    while (is_name_char(peek())) advance();
    t.text = std::string(text_.substr(b, i_ - b));
    return t;
  }

  Token number() {
    Token t{Tok::Int, "", here()};
    size_t b = i_;
    while (is_digit(peek())) advance();
    if (peek() == '.') {
      t.kind = Tok::Float;
      advance();
      while (is_digit(peek())) advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      t.kind = Tok::Float;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (!is_digit(peek())) bad_number(t, b);
      while (is_digit(peek())) advance();
    }
    if (is_name_char(peek()) || peek() == '.') bad_number(t, b);
    t.text = std::string(text_.substr(b, i_ - b));
    const char* first = t.text.data();
    const char* last = first + t.text.size();
    if (t.kind == Tok::Int) {
      auto [end, ec] = std::from_chars(first, last, t.int_value);
      if (ec != std::errc() || end != last)
        fail(t.pos, "the integer " + t.text + " does not fit in 64 bits");
      return t;
    }
    auto [end, ec] = std::from_chars(first, last, t.float_value);
    if (ec == std::errc::result_out_of_range)
      t.float_value = std::strtod(t.text.c_str(), nullptr);
    else if (ec != std::errc() || end != last)
      bad_number(t, b);
    return t;
  }

  [[noreturn]] void bad_number(const Token& t, size_t b) {
    while (is_name_char(peek()) || peek() == '.') advance();
    fail(t.pos, "malformed number " + quoted(text_.substr(b, i_ - b)));
  }

  Token string() {
    Token t{Tok::String, "", here()};
    char quote = peek();
    advance();
    while (peek() != quote) {
      char c = peek();
      if (i_ >= text_.size() || c == '\n')
        fail(t.pos, "unterminated string (close it with " + std::string(1, quote) + ")");
      auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) fail(here(), "a control character in a string");
      if (c == '\\' && (peek(1) == quote || peek(1) == '\\')) advance();
      t.text += peek();
      advance();
    }
    advance();
    return t;
  }

  std::string_view text_;
  size_t i_ = 0;
  Pos pos_;
};

} // namespace

std::vector<Token> tokenize(std::string_view text) { return Lexer(text).run(); }

} // namespace beamlab::expr

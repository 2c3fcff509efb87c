// The expression front-end's syntax, shared by its files: positions and errors, tokens, the
// syntax tree and the parser. Private to frontends/expr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontends/expr/expr.hpp"

namespace beamlab::expr {

/// A place in the text, 1-based; the column counts bytes.
struct Pos {
  int line = 1;
  int col = 1;
};

/// A UserError that already names its position, so callers don't prefix it again.
class PositionedError : public UserError {
public:
  using UserError::UserError;
};

/// Throws the PositionedError "expr:LINE:COL: what".
[[noreturn]] void fail(Pos at, const std::string& what);

/// `text` in single quotes for a one-line message; bytes outside printable ASCII as \xNN.
std::string quoted(std::string_view text);

/// " (did you mean 'x'?)" for the candidate nearest `name` by edit distance, if it is close
/// enough to be a typo (at most a third of the name's length); "" otherwise.
std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates);

enum class Tok { Name, Int, Float, String, Op, End };

/// A token; `text` is the name, the operator, the string's value or the number's spelling.
struct Token {
  Tok kind = Tok::End;
  std::string text;
  Pos pos;
  int64_t int_value = 0;
  double float_value = 0;
};

/// The tokens of `text`, ending with an End token; a PositionedError for a character that
/// starts no token, a malformed number or an unterminated string.
std::vector<Token> tokenize(std::string_view text);

enum class NodeKind {
  Int,
  Float,
  Bool,
  None,
  String,
  Ellipsis,
  Name,
  Attr,
  Call,
  Index,
  Slice,
  Tuple,
  List,
  Unary,
  Binary
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

/// A syntax tree node. `kids` by kind: Attr (object), Call (callee, arguments...), Index
/// (object, items...), Slice (start, stop, step; null where left out), Tuple/List (items),
/// Unary (operand), Binary (lhs, rhs).
struct Node {
  NodeKind kind = NodeKind::None;
  Pos pos;          ///< the operator, name, attribute or bracket the node is about
  Pos start;        ///< where its text starts
  std::string text; ///< name, attribute, operator or string value
  int64_t int_value = 0;
  double float_value = 0;
  std::vector<NodePtr> kids;
  std::vector<std::string> keywords; ///< Call: one per argument, "" for a positional one
  std::vector<Pos> keyword_pos;      ///< Call: where each keyword is written
  int depth = 1;
};

/// The syntax tree of `text`; a PositionedError for anything malformed or nested too deep.
NodePtr parse(std::string_view text, const Limits& limits);

} // namespace beamlab::expr

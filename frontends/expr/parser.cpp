// The expression parser: precedence climbing (Pratt) over Python's expression grammar, from
// tokens to a syntax tree; the second stage of evaluate() and input_names().
//
//   expression := binary(0)
//   binary(p)  := unary (binop(q >= p) binary(q + 1))*        left-associative
//   unary      := ('-' | '+' | '~') unary | power
//   power      := postfix ['**' unary]                        so -x**2 is -(x**2), 2**-1 works
//   postfix    := atom ('.' NAME | '(' arguments ')' | '[' subscripts ']')*
//   atom       := INT | FLOAT | STRING | NAME | True | False | None | '...'
//               | '(' [expression (',' expression)* [',']] ')' | '[' ... ']'
//   arguments  := [NAME '='] expression (',' [NAME '='] expression)* [',']
//   subscript  := expression | [expression] ':' [expression] [':' [expression]]
//
// Recursion goes through unary() once per level of nesting, which counts it against
// Limits::max_nesting; every node checks its height against Limits::max_depth, so long chains
// (x+x+...+x) are bounded too and evaluating the tree never blows the stack.
#include "frontends/expr/syntax_internal.hpp"

#include <algorithm>
#include <utility>

namespace beamlab::expr {
namespace {

// Binding powers of the binary operators, loosest first as in Python: comparisons, |, ^, &,
// shifts, then + -, then * @ / // %. Unary operators and ** bind tighter, by structure.
int binding_power(const Token& t) {
  static constexpr std::pair<std::string_view, int> kTable[] = {
      {"<", 1}, {"<=", 1}, {">", 1}, {">=", 1}, {"==", 1}, {"!=", 1},
      {"|", 2}, {"^", 3},  {"&", 4}, {"<<", 5}, {">>", 5}, {"+", 6},
      {"-", 6}, {"*", 7},  {"@", 7}, {"/", 7},  {"//", 7}, {"%", 7}};
  if (t.kind != Tok::Op) return -1;
  for (auto [op, bp] : kTable)
    if (t.text == op) return bp;
  return -1;
}

bool is_comparison(std::string_view op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
}

// Python keywords that mean nothing on tensors, with what to write instead; "" for other names.
std::string keyword_hint(std::string_view name) {
  if (name == "and") return "'and' does not apply to tensors: use & or logical_and()";
  if (name == "or") return "'or' does not apply to tensors: use | or logical_or()";
  if (name == "not") return "'not' does not apply to tensors: use ~x or x.logical_not()";
  static constexpr std::string_view kOthers[] = {"if",  "else",  "lambda", "in",     "is",
                                                 "for", "while", "def",    "return", "import"};
  if (std::find(std::begin(kOthers), std::end(kOthers), name) != std::end(kOthers))
    return quoted(name) + " is not part of tensor expressions";
  return "";
}

std::string describe(const Token& t) {
  if (t.kind == Tok::End) return "the end of the text";
  if (t.kind == Tok::String) return "a string";
  return quoted(t.text);
}

std::string where(Pos p) { return std::to_string(p.line) + ":" + std::to_string(p.col); }

class Parser {
public:
  Parser(std::vector<Token> tokens, const Limits& limits)
      : tokens_(std::move(tokens)), limits_(limits) {}

  NodePtr run() {
    if (peek().kind == Tok::End) fail(peek().pos, "the expression is empty");
    NodePtr n = expression();
    const Token& t = peek();
    if (t.kind == Tok::End) return n;
    fail(t.pos, "unexpected " + describe(t) +
                    " after a complete expression (is an operator or a comma missing?)");
  }

private:
  // Counts one level of nesting for as long as it lives.
  class Nest {
  public:
    Nest(int& depth, int limit, Pos at) : depth_(depth) {
      if (++depth_ > limit)
        fail(at, "the expression nests more than " + std::to_string(limit) +
                     " levels of brackets or unary operators");
    }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    ~Nest() { --depth_; }

  private:
    int& depth_;
  };

  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(i_ + ahead, tokens_.size() - 1)];
  }
  bool at(std::string_view op) const { return peek().kind == Tok::Op && peek().text == op; }
  Token next() {
    Token t = peek();
    if (i_ + 1 < tokens_.size()) ++i_;
    return t;
  }
  void expect_close(std::string_view close, const Token& open) {
    if (at(close)) {
      next();
      return;
    }
    fail(peek().pos,
         "expected " + quoted(close) + " to close " + quoted(open.text) + " at " + where(open.pos));
  }

  NodePtr node(NodeKind kind, Pos pos, Pos start, std::vector<NodePtr> kids = {},
               std::string text = "") {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->pos = pos;
    n->start = start;
    n->text = std::move(text);
    for (const NodePtr& k : kids)
      if (k) n->depth = std::max(n->depth, k->depth + 1);
    if (n->depth > limits_.max_depth)
      fail(pos, "the expression is more than " + std::to_string(limits_.max_depth) +
                    " operations deep; split it into several expressions");
    n->kids = std::move(kids);
    return n;
  }
  static std::vector<NodePtr> pair(NodePtr a, NodePtr b) {
    std::vector<NodePtr> v;
    v.push_back(std::move(a));
    v.push_back(std::move(b));
    return v;
  }

  NodePtr expression() { return binary(0); }

  NodePtr binary(int min_bp) {
    NodePtr lhs = unary();
    bool compared = false;
    for (;;) {
      const Token& t = peek();
      if (t.kind == Tok::Name && !keyword_hint(t.text).empty()) fail(t.pos, keyword_hint(t.text));
      int bp = binding_power(t);
      if (bp < min_bp) return lhs;
      Token op = next();
      if (is_comparison(op.text) && compared)
        fail(op.pos, "chained comparisons (a < b < c) are not supported: write (a < b) & (b < c)");
      compared = compared || is_comparison(op.text);
      NodePtr rhs = binary(bp + 1);
      Pos start = lhs->start;
      lhs = node(NodeKind::Binary, op.pos, start, pair(std::move(lhs), std::move(rhs)), op.text);
    }
  }

  NodePtr unary() {
    Nest nest(nesting_, limits_.max_nesting, peek().pos);
    const Token& t = peek();
    if (t.kind == Tok::Name && t.text == "not") fail(t.pos, keyword_hint(t.text));
    if (!at("-") && !at("+") && !at("~")) return power();
    Token op = next();
    std::vector<NodePtr> kids;
    kids.push_back(unary());
    return node(NodeKind::Unary, op.pos, op.pos, std::move(kids), op.text);
  }

  NodePtr power() {
    NodePtr base = postfix();
    if (!at("**")) return base;
    Token op = next();
    NodePtr exponent = unary();
    Pos start = base->start;
    return node(NodeKind::Binary, op.pos, start, pair(std::move(base), std::move(exponent)), "**");
  }

  NodePtr postfix() {
    NodePtr n = atom();
    for (;;) {
      if (at("."))
        n = attribute(std::move(n));
      else if (at("("))
        n = call(std::move(n));
      else if (at("["))
        n = index(std::move(n));
      else
        return n;
    }
  }

  NodePtr attribute(NodePtr object) {
    next();
    if (peek().kind != Tok::Name)
      fail(peek().pos, "expected a name after '.', found " + describe(peek()));
    Token name = next();
    Pos start = object->start;
    std::vector<NodePtr> kids;
    kids.push_back(std::move(object));
    return node(NodeKind::Attr, name.pos, start, std::move(kids), name.text);
  }

  NodePtr call(NodePtr callee) {
    Token open = next();
    std::vector<NodePtr> kids;
    kids.push_back(std::move(callee));
    std::vector<std::string> keywords;
    std::vector<Pos> keyword_pos;
    while (!at(")")) {
      Pos kp = peek().pos;
      std::string keyword;
      if (peek().kind == Tok::Name && peek(1).kind == Tok::Op && peek(1).text == "=") {
        keyword = next().text;
        next();
        if (std::find(keywords.begin(), keywords.end(), keyword) != keywords.end())
          fail(kp, "the keyword argument " + quoted(keyword) + " is given twice");
      } else if (!keywords.empty() && !keywords.back().empty()) {
        fail(kp, "a positional argument follows a keyword argument (put it before the keywords)");
      }
      if (at("*") || at("**")) fail(peek().pos, "unpacking arguments with * is not supported");
      kids.push_back(expression());
      keywords.push_back(std::move(keyword));
      keyword_pos.push_back(kp);
      if (!at(",")) break;
      next();
    }
    expect_close(")", open);
    Pos pos = kids[0]->kind == NodeKind::Attr ? kids[0]->pos : kids[0]->start;
    Pos start = kids[0]->start;
    NodePtr n = node(NodeKind::Call, pos, start, std::move(kids));
    n->keywords = std::move(keywords);
    n->keyword_pos = std::move(keyword_pos);
    return n;
  }

  NodePtr index(NodePtr object) {
    Token open = next();
    std::vector<NodePtr> kids;
    kids.push_back(std::move(object));
    if (at("]")) fail(peek().pos, "expected an index inside '[]'");
    for (;;) {
      kids.push_back(subscript());
      if (!at(",")) break;
      next();
      if (at("]")) break;
    }
    expect_close("]", open);
    Pos start = kids[0]->start;
    return node(NodeKind::Index, open.pos, start, std::move(kids));
  }

  bool at_slice_end() const { return at(":") || at(",") || at("]"); }

  NodePtr subscript() {
    Pos start = peek().pos;
    NodePtr lo, hi, step;
    if (!at(":")) {
      lo = expression();
      if (!at(":")) return lo;
    }
    next();
    if (!at_slice_end()) hi = expression();
    if (at(":")) {
      next();
      if (!at(",") && !at("]")) step = expression();
    }
    std::vector<NodePtr> kids;
    kids.push_back(std::move(lo));
    kids.push_back(std::move(hi));
    kids.push_back(std::move(step));
    return node(NodeKind::Slice, start, start, std::move(kids));
  }

  NodePtr atom() {
    Token t = next();
    if (t.kind == Tok::Int || t.kind == Tok::Float) {
      NodePtr n = node(t.kind == Tok::Int ? NodeKind::Int : NodeKind::Float, t.pos, t.pos);
      n->int_value = t.int_value;
      n->float_value = t.float_value;
      n->text = t.text;
      return n;
    }
    if (t.kind == Tok::String) return node(NodeKind::String, t.pos, t.pos, {}, t.text);
    if (t.kind == Tok::Name) return name(t);
    if (t.kind == Tok::Op && t.text == "(") return parenthesized(t);
    if (t.kind == Tok::Op && t.text == "[") return list(t);
    if (t.kind == Tok::Op && t.text == "...") return node(NodeKind::Ellipsis, t.pos, t.pos);
    fail(t.pos, "expected an expression, found " + describe(t));
  }

  NodePtr name(const Token& t) {
    if (t.text == "True" || t.text == "False") {
      NodePtr n = node(NodeKind::Bool, t.pos, t.pos, {}, t.text);
      n->int_value = t.text == "True";
      return n;
    }
    if (t.text == "None") return node(NodeKind::None, t.pos, t.pos, {}, t.text);
    if (!keyword_hint(t.text).empty()) fail(t.pos, keyword_hint(t.text));
    return node(NodeKind::Name, t.pos, t.pos, {}, t.text);
  }

  NodePtr parenthesized(const Token& open) {
    if (at(")")) {
      next();
      return node(NodeKind::Tuple, open.pos, open.pos);
    }
    NodePtr first = expression();
    if (!at(",")) {
      expect_close(")", open);
      first->start = open.pos;
      return first;
    }
    std::vector<NodePtr> items;
    items.push_back(std::move(first));
    while (at(",")) {
      next();
      if (at(")")) break;
      items.push_back(expression());
    }
    expect_close(")", open);
    return node(NodeKind::Tuple, open.pos, open.pos, std::move(items));
  }

  NodePtr list(const Token& open) {
    std::vector<NodePtr> items;
    while (!at("]")) {
      items.push_back(expression());
      if (!at(",")) break;
      next();
    }
    expect_close("]", open);
    return node(NodeKind::List, open.pos, open.pos, std::move(items));
  }

  std::vector<Token> tokens_;
  const Limits& limits_;
  size_t i_ = 0;
  int nesting_ = 0;
};

} // namespace

NodePtr parse(std::string_view text, const Limits& limits) {
  return Parser(tokenize(text), limits).run();
}

} // namespace beamlab::expr

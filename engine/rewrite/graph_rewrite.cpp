// Whole-graph rewriting to a fixed point; see graph_rewrite.hpp.
//
// The walk runs on an explicit stack (graphs from long elementwise chains are deep). A frame
// goes through up to three stages:
//   Visit   - top-down: try the rules first; bottom-up: schedule the sources first.
//   Rebuild - the node with its sources replaced; bottom-up then tries the rules on it.
//   Forward - the node's result is whatever the node it became rewrote to.
// A frame's chain counts the rewrites that led to it, through rule outputs and their sources.
// A node is "in progress" from its Visit until its result is known. Meeting an in-progress
// node again means a rule rewrote a node into something that contains it or leads back to
// it: a loop, reported with the rule that started it.
#include "engine/rewrite/graph_rewrite.hpp"

#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "engine/ir/printer.hpp"
#include "engine/rewrite/verify.hpp"
#include "engine/support/knobs.hpp"

namespace beamlab {
namespace {

enum class Stage : uint8_t { Visit, Rebuild, Forward };

struct Frame {
  UOpPtr node;
  Stage stage = Stage::Visit;
  UOpPtr target;                          // Forward: the node whose result becomes ours
  const Rule<RewriteFn>* cause = nullptr; // the rule whose output this node is part of
  int64_t chain = 0;                      // rewrites in a row that led to this node
};

class GraphRewriter {
public:
  GraphRewriter(const PatternMatcher& pm, CtxRef ctx, const RewriteOptions& opts)
      : pm_(pm), ctx_(ctx), opts_(opts), limit_(knob_int("BEAMLAB_REWRITE_LIMIT", 10000)) {}

  UOpPtr run(const UOpPtr& root) {
    stack_.push_back(Frame{root, Stage::Visit, nullptr, nullptr, 0});
    while (!stack_.empty()) step();
    return result_.at(root.get()).second;
  }

private:
  void step() {
    Frame& f = stack_.back();
    switch (f.stage) {
    case Stage::Visit: return visit();
    case Stage::Rebuild: return rebuild();
    case Stage::Forward: return finish(result_.at(f.target.get()).second);
    }
  }

  void visit() {
    Frame& f = stack_.back();
    if (result_.contains(f.node.get())) return stack_.pop_back();
    if (!in_progress_.insert(f.node.get()).second) report_loop(f);
    if (opts_.top_down && try_rules(f.node)) return;
    stack_.back().stage = Stage::Rebuild;
    push_sources(stack_.back());
  }

  void rebuild() {
    Frame& f = stack_.back();
    std::vector<UOpPtr> src;
    src.reserve(f.node->src().size());
    for (const UOpPtr& s : f.node->src()) src.push_back(result_.at(s.get()).second);
    UOpPtr rebuilt = f.node->replace_src(std::move(src));
    if (opts_.top_down) {
      if (rebuilt == f.node) return finish(rebuilt);
      // New sources may enable rules on the node itself: rewrite the rebuilt node in turn.
      return forward_to(rebuilt, f.cause);
    }
    if (try_rules(rebuilt)) return;
    if (rebuilt != f.node) remember(rebuilt, rebuilt);
    finish(rebuilt);
  }

  // Applies the rules to `u` on behalf of the top frame; on a rewrite the frame forwards to
  // the rule's output, which is pushed to be rewritten.
  bool try_rules(const UOpPtr& u) {
    const Rule<RewriteFn>* fired = nullptr;
    UOpPtr out = pm_.rewrite(u, ctx_, &fired);
    if (!out) return false;
    Frame& f = stack_.back();
    if (++f.chain > limit_) report_runaway(*fired, out);
    forward_to(out, fired);
    return true;
  }

  void forward_to(const UOpPtr& target, const Rule<RewriteFn>* cause) {
    Frame& f = stack_.back();
    f.stage = Stage::Forward;
    f.target = target;
    int64_t chain = f.chain;
    stack_.push_back(Frame{target, Stage::Visit, nullptr, cause, chain});
  }

  // Sources inherit the frame's chain: a rule whose output keeps growing new sources that
  // rewrite again (x+c -> (x+(c+1))-1) is a loop in depth, and must reach the limit too.
  void push_sources(const Frame& f) {
    const auto& src = f.node->src();
    UOpPtr parent = f.node; // keeps `src` alive: `f` dangles once the stack grows
    const Rule<RewriteFn>* cause = f.cause;
    int64_t chain = f.chain;
    for (auto it = src.rbegin(); it != src.rend(); ++it)
      if (!result_.contains(it->get()))
        stack_.push_back(Frame{*it, Stage::Visit, nullptr, cause, chain});
  }

  void finish(const UOpPtr& result) {
    UOpPtr node = std::move(stack_.back().node);
    stack_.pop_back();
    in_progress_.erase(node.get());
    remember(node, result);
  }

  // Keys are kept alive with their entry so a freed node's address can't alias a new node.
  void remember(const UOpPtr& node, const UOpPtr& result) {
    result_.emplace(node.get(), std::make_pair(node, result));
  }

  [[noreturn]] void report_loop(const Frame& f) {
    internal_error << "rewrite loop in step '" << opts_.name << "': rule "
                   << (f.cause ? f.cause->origin : std::string("<none>"))
                   << " produced a node that is already being rewritten: " << op_name(f.node->op())
                   << " " << f.node->dtype().str() << " = " << to_expr(f.node).substr(0, 200);
    std::abort(); // unreachable: the report throws
  }

  [[noreturn]] void report_runaway(const Rule<RewriteFn>& rule, const UOpPtr& out) {
    internal_error << "rewrite loop in step '" << opts_.name << "': more than " << limit_
                   << " rewrites in a row without reaching a fixed point (BEAMLAB_REWRITE_LIMIT);"
                   << " the last was rule " << rule.origin << " producing " << op_name(out->op())
                   << " " << out->dtype().str();
    std::abort();
  }

  const PatternMatcher& pm_;
  CtxRef ctx_;
  const RewriteOptions& opts_;
  int64_t limit_;
  std::vector<Frame> stack_;
  std::unordered_set<const UOp*> in_progress_;
  std::unordered_map<const UOp*, std::pair<UOpPtr, UOpPtr>> result_;
};

} // namespace

void print_after_step(std::string_view step, const UOpPtr& graph) {
  if (!knob_lists("BEAMLAB_PRINT_AFTER", step)) return;
  std::fprintf(stderr, "# after %.*s\n%s", static_cast<int>(step.size()), step.data(),
               print_graph(graph).c_str());
}

UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, CtxRef ctx,
                     const RewriteOptions& opts) {
  UOpPtr out = GraphRewriter(pm, ctx, opts).run(root);
  print_after_step(opts.name, out);
  if (opts.spec && verification_enabled()) verify_or_throw(out, *opts.spec, opts.name);
  return out;
}

} // namespace beamlab

namespace beamlab {

UOpPtr substitute(const UOpPtr& root, const std::unordered_map<const UOp*, UOpPtr>& map) {
  if (map.empty()) return root;
  std::unordered_map<const UOp*, UOpPtr> done;
  for (const UOpPtr& u : toposort(root)) {
    if (auto it = map.find(u.get()); it != map.end()) {
      done.emplace(u.get(), it->second);
      continue;
    }
    bool changed = false;
    std::vector<UOpPtr> src;
    src.reserve(u->src().size());
    for (const UOpPtr& s : u->src()) {
      const UOpPtr& r = done.at(s.get());
      changed |= r != s;
      src.push_back(r);
    }
    done.emplace(u.get(), changed ? u->replace_src(std::move(src)) : u);
  }
  return done.at(root.get());
}

} // namespace beamlab

#include "tests/codegen/ast_interpreter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

#include "engine/ir/const_eval.hpp"
#include "engine/ir/printer.hpp"

namespace beamlab::testing {
namespace {

struct Value {
  int64_t i = 0;
  double f = 0;
};

class Interpreter {
public:
  explicit Interpreter(std::vector<RefBuffer>& buffers) : buffers_(buffers) {}

  void run_store(const UOpPtr& st) {
    std::vector<const UOp*> loops = open_ranges(st);
    std::map<const UOp*, int64_t> env;
    for_each_point(loops, 0, env, [&] {
      const UOpPtr& address = st->src(0);
      if (address->src().size() == 3 && eval(address->src(2), env).i == 0) return; // gated off
      int64_t slot = address->src(0)->arg().as_int();
      int64_t at = eval(address->src(1), env).i;
      Value v = eval(st->src(1), env);
      RefBuffer& b = buffers_[static_cast<size_t>(slot)];
      if (st->src(1)->dtype().is_float())
        b.floats.at(static_cast<size_t>(at)) = v.f;
      else
        b.ints.at(static_cast<size_t>(at)) = v.i;
    });
  }

private:
  // The RANGEs under `u` that no REDUCE on the way binds.
  static std::vector<const UOp*> open_ranges(const UOpPtr& u) {
    std::vector<const UOp*> out;
    std::unordered_set<const UOp*> seen;
    std::function<void(const UOpPtr&, std::unordered_set<const UOp*>&)> walk =
        [&](const UOpPtr& n, std::unordered_set<const UOp*>& bound) {
          if (n->op() == Op::Range && !bound.contains(n.get()) && seen.insert(n.get()).second)
            out.push_back(n.get());
          if (n->op() == Op::Reduce) {
            std::unordered_set<const UOp*> inner = bound;
            for (size_t k = 1; k < n->src().size(); ++k) inner.insert(n->src(k).get());
            walk(n->src(0), inner);
            return;
          }
          for (const UOpPtr& s : n->src()) walk(s, bound);
        };
    std::unordered_set<const UOp*> none;
    walk(u, none);
    return out;
  }

  static void for_each_point(const std::vector<const UOp*>& loops, size_t d,
                             std::map<const UOp*, int64_t>& env,
                             const std::function<void()>& body) {
    if (d == loops.size()) return body();
    for (int64_t v = 0; v < loops[d]->src(0)->const_value(); ++v) {
      env[loops[d]] = v;
      for_each_point(loops, d + 1, env, body);
    }
  }

  Value eval(const UOpPtr& u, std::map<const UOp*, int64_t>& env) {
    DType dt = u->dtype();
    switch (u->op()) {
    case Op::Range: return {env.at(u.get()), 0};
    case Op::Const:
      return dt.is_float() ? Value{0, u->arg().as_float()} : Value{u->const_value(), 0};
    case Op::Load: {
      const UOpPtr& address = u->src(0);
      if (address->src().size() == 3 && eval(address->src(2), env).i == 0) return {}; // gated off
      const RefBuffer& b = buffers_[static_cast<size_t>(address->src(0)->arg().as_int())];
      auto at = static_cast<size_t>(eval(address->src(1), env).i);
      return dt.is_float() ? Value{0, b.floats.at(at)} : Value{b.ints.at(at), 0};
    }
    case Op::Reduce: return eval_reduce(u, env);
    default: break;
    }
    std::vector<Arg> args;
    for (const UOpPtr& s : u->src()) {
      Value v = eval(s, env);
      args.push_back(s->dtype().is_float()  ? Arg(v.f)
                     : s->dtype().is_bool() ? Arg(v.i != 0)
                                            : Arg(v.i));
    }
    DType operand = u->op() == Op::Where ? dt : u->src(0)->dtype();
    std::optional<Arg> r = const_eval(u->op(), dt, operand, args);
    if (!r) {
      ADD_FAILURE() << "interpreter can't evaluate " << to_expr(u);
      return {};
    }
    if (r->kind() == Arg::Kind::Bool) return {r->as_bool(), 0};
    return r->is_float() ? Value{0, r->as_float()} : Value{r->as_int(), 0};
  }

  Value eval_reduce(const UOpPtr& u, std::map<const UOp*, int64_t>& env) {
    Op op = u->arg().as_op();
    DType dt = u->dtype();
    std::vector<const UOp*> loops;
    for (size_t k = 1; k < u->src().size(); ++k) loops.push_back(u->src(k).get());
    std::sort(loops.begin(), loops.end(), [](const UOp* a, const UOp* b) {
      return a->arg().items()[0].as_int() < b->arg().items()[0].as_int();
    });
    Arg acc = dt.is_float() ? Arg(op == Op::Max   ? -INFINITY
                                  : op == Op::Mul ? 1.0
                                                  : 0.0)
                            : Arg(op == Op::Max   ? dt.int_min()
                                  : op == Op::Mul ? int64_t{1}
                                                  : int64_t{0});
    for_each_point(loops, 0, env, [&] {
      Value v = eval(u->src(0), env);
      Arg x = dt.is_float() ? Arg(v.f) : Arg(v.i);
      Arg pair[] = {acc, x};
      acc = *const_eval(op, dt, dt, pair);
    });
    return dt.is_float() ? Value{0, acc.as_float()} : Value{acc.as_int(), 0};
  }

  std::vector<RefBuffer>& buffers_;
};

} // namespace

void interpret_kernel(const UOpPtr& ast, std::vector<RefBuffer>& buffers) {
  Interpreter interp(buffers);
  for (const UOpPtr& st : ast->src()) interp.run_store(st);
}

} // namespace beamlab::testing

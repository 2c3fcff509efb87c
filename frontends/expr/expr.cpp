// Expressions; see expr.hpp. The last stage: walks the syntax tree (parser.cpp) and builds
// values. Names are inputs or the namespaces Tensor and dtypes; operators go to
// operators.cpp, calls to the method tables (methods.cpp, functions.cpp), subscripts to
// index.cpp. Errors name the position of the node that failed.
#include "frontends/expr/expr.hpp"

#include <algorithm>

#include "frontends/expr/value_internal.hpp"

namespace beamlab::expr {
namespace {

Value of_kind(Kind kind) {
  Value v;
  v.kind = kind;
  return v;
}

std::vector<std::string_view> tensor_attributes() { return {"shape", "ndim", "dtype", "T"}; }
bool tensor_attribute_named(std::string_view name) {
  std::vector<std::string_view> all = tensor_attributes();
  return std::find(all.begin(), all.end(), name) != all.end();
}

template <class... Lists>
std::vector<std::string_view> joined(const Lists&... lists) {
  std::vector<std::string_view> out;
  (out.insert(out.end(), lists.begin(), lists.end()), ...);
  return out;
}

class Evaluator {
public:
  Evaluator(const std::map<std::string, Tensor>& inputs, const Limits& limits)
      : inputs_(inputs), limits_(limits) {}

  Value eval(const Node& n) {
    Value v = dispatch(n);
    v.pos = n.start;
    return v;
  }

private:
  Value dispatch(const Node& n) {
    switch (n.kind) {
    case NodeKind::Int: return Value::integer(n.int_value);
    case NodeKind::Float: return Value::real(n.float_value);
    case NodeKind::Bool: return Value::boolean(n.int_value != 0);
    case NodeKind::None: return Value();
    case NodeKind::String: {
      Value v = of_kind(Kind::String);
      v.s = n.text;
      return v;
    }
    case NodeKind::Ellipsis: return of_kind(Kind::Ellipsis);
    case NodeKind::Name: return name(n);
    case NodeKind::Attr: return attribute(n);
    case NodeKind::Call: return call(n);
    case NodeKind::Index: return index(n);
    case NodeKind::Slice: break; // the parser makes slices only as items of a subscript
    case NodeKind::Tuple: return sequence(n, Kind::Tuple);
    case NodeKind::List: return sequence(n, Kind::List);
    case NodeKind::Unary: return apply_unary(n.text, eval(*n.kids[0]), n.pos);
    case NodeKind::Binary: {
      Value a = eval(*n.kids[0]);
      Value b = eval(*n.kids[1]);
      return apply_binary(n.text, a, b, n.pos, limits_);
    }
    }
    internal_error << "expr: a syntax node of kind " << static_cast<int>(n.kind) << " out of place";
    return {};
  }

  Value name(const Node& n) {
    if (n.text == "Tensor") return of_kind(Kind::TensorClass);
    if (n.text == "dtypes") return of_kind(Kind::DTypes);
    auto it = inputs_.find(n.text);
    if (it != inputs_.end()) return it->second;
    fail(n.pos, "unknown input " + quoted(n.text) + input_hint(n.text));
  }

  std::string input_hint(std::string_view name) const {
    std::vector<std::string_view> names;
    for (const auto& [k, v] : inputs_) names.push_back(k);
    std::string hint = did_you_mean(name, names);
    if (!hint.empty()) return hint;
    if (names.empty()) return " (no inputs were given)";
    std::string list;
    for (size_t i = 0; i < names.size() && i < 20; ++i)
      list += (i ? ", " : "") + std::string(names[i]);
    return " (the inputs: " + list + (names.size() > 20 ? ", ...)" : ")");
  }

  Value sequence(const Node& n, Kind kind) {
    std::vector<Value> items;
    for (const NodePtr& k : n.kids) items.push_back(eval(*k));
    return Value::sequence(kind, std::move(items));
  }

  Value attribute(const Node& n) {
    Value obj = eval(*n.kids[0]);
    const std::string& name = n.text;
    if (obj.kind == Kind::Tensor) return tensor_attribute(*obj.tensor, name, n.pos);
    if (obj.kind == Kind::DTypes) {
      if (std::optional<DType> d = dtype_named(name)) {
        Value v = of_kind(Kind::DType);
        v.dtype = *d;
        return v;
      }
      fail(n.pos, "unknown dtype " + quoted(name) + did_you_mean(name, dtype_names()));
    }
    if (obj.kind == Kind::TensorClass) {
      if (find_function(name) || find_method(name))
        fail(n.pos, "Tensor." + name + " is a function: call it, Tensor." + name + "(...)");
      fail(n.pos, "Tensor has no function " + quoted(name) +
                      did_you_mean(name, joined(function_names(), method_names())));
    }
    fail(n.pos, describe(obj) + " has no attribute " + quoted(name));
  }

  static Value tensor_attribute(const Tensor& t, const std::string& name, Pos at) {
    if (name == "shape") {
      std::vector<Value> dims;
      for (int64_t d : t.shape()) dims.push_back(Value::integer(d));
      return Value::sequence(Kind::Tuple, std::move(dims));
    }
    if (name == "ndim") return Value::integer(t.ndim());
    if (name == "dtype") {
      Value v = of_kind(Kind::DType);
      v.dtype = t.dtype();
      return v;
    }
    if (name == "T") {
      try {
        return t.transpose();
      } catch (const UserError& e) {
        fail(at, std::string("T: ") + e.what());
      }
    }
    if (find_method(name)) fail(at, quoted(name) + " is a method: call it, ." + name + "()");
    fail(at, "unknown attribute " + quoted(name) +
                 did_you_mean(name, joined(tensor_attributes(), method_names())));
  }

  Value call(const Node& n) {
    const Node& callee = *n.kids[0];
    if (callee.kind == NodeKind::Name && callee.text == "Tensor") return run(constructor(), n, {});
    if (callee.kind != NodeKind::Attr) {
      if (callee.kind == NodeKind::Name) name(callee); // an unknown name is reported as such
      fail(callee.start, "only methods (x.relu()), Tensor's functions (Tensor.cat(...)) and "
                         "Tensor(...) can be called");
    }
    Value obj = eval(*callee.kids[0]);
    const std::string& name = callee.text;
    if (obj.kind == Kind::Tensor) {
      if (const Method* m = find_method(name)) return run(*m, n, obj.tensor);
      if (tensor_attribute_named(name))
        fail(callee.pos, quoted(name) + " is an attribute: write ." + name + " without ()");
      fail(callee.pos, "unknown method " + quoted(name) +
                           did_you_mean(name, joined(method_names(), tensor_attributes())));
    }
    if (obj.kind == Kind::TensorClass) return tensor_function(n, name);
    if (obj.kind == Kind::DTypes) fail(callee.pos, "dtypes." + name + " is not callable");
    if (find_method(name) && obj.is_number())
      fail(callee.pos, quoted(name) + " is a tensor method, and this is " + describe(obj) +
                           " (make a tensor of it with Tensor(...))");
    fail(callee.pos, describe(obj) + " has no method " + quoted(name));
  }

  // Tensor.name(...): a function like Tensor.cat, or a method called unbound, Tensor.relu(x).
  Value tensor_function(const Node& n, const std::string& name) {
    if (const Method* f = find_function(name)) return run(*f, n, {});
    if (const Method* m = find_method(name)) return run(*m, n, {}, true);
    fail(n.kids[0]->pos, "Tensor has no function " + quoted(name) +
                             did_you_mean(name, joined(function_names(), method_names())));
  }

  Value run(const Method& m, const Node& call, std::optional<Tensor> self, bool unbound = false) {
    std::vector<Value> positional;
    std::vector<Keyword> keywords;
    for (size_t i = 1; i < call.kids.size(); ++i) {
      Value v = eval(*call.kids[i]);
      const std::string& keyword = call.keywords[i - 1];
      if (keyword.empty())
        positional.push_back(std::move(v));
      else
        keywords.push_back(Keyword{keyword, call.keyword_pos[i - 1], std::move(v)});
    }
    if (unbound) {
      if (positional.empty() || positional[0].kind != Kind::Tensor)
        fail(call.pos, "Tensor." + std::string(m.name) + " needs a tensor as its first argument");
      self = positional[0].tensor;
      positional.erase(positional.begin());
    }
    Args args(m, call.pos, std::move(self), std::move(positional), std::move(keywords), limits_);
    return invoke(m, args);
  }

  Value index(const Node& n) {
    Value obj = eval(*n.kids[0]);
    if (obj.is_sequence()) return item_of(obj, n);
    if (obj.kind != Kind::Tensor) fail(n.pos, describe(obj) + " cannot be indexed");
    std::vector<IndexItem> items;
    for (size_t i = 1; i < n.kids.size(); ++i) items.push_back(index_item(*n.kids[i]));
    try {
      return index_tensor(*obj.tensor, items, n.pos);
    } catch (const PositionedError&) {
      throw;
    } catch (const UserError& e) {
      fail(n.pos, e.what());
    }
  }

  IndexItem index_item(const Node& k) {
    IndexItem it;
    it.pos = k.start;
    if (k.kind == NodeKind::Slice) {
      it.kind = IndexItem::Kind::Slice;
      it.start = slice_bound(k.kids[0]);
      it.stop = slice_bound(k.kids[1]);
      it.step = slice_bound(k.kids[2]);
      return it;
    }
    Value v = eval(k);
    if (v.kind == Kind::Int) {
      it.i = v.i;
      return it;
    }
    if (v.kind == Kind::Tensor)
      fail(k.start, "indexing with a tensor is not supported (use gather)");
    if (v.kind != Kind::None && v.kind != Kind::Ellipsis)
      fail(k.start, "an index needs an integer, a slice, None or '...', not " + describe(v));
    it.kind = v.kind == Kind::None ? IndexItem::Kind::NewAxis : IndexItem::Kind::Ellipsis;
    return it;
  }

  std::optional<int64_t> slice_bound(const NodePtr& k) {
    if (!k) return std::nullopt;
    Value v = eval(*k);
    if (v.kind == Kind::None) return std::nullopt;
    if (v.kind != Kind::Int)
      fail(k->start, "a slice bound needs an integer or None, not " + describe(v));
    return v.i;
  }

  Value item_of(const Value& seq, const Node& n) {
    if (n.kids.size() != 2 || n.kids[1]->kind == NodeKind::Slice)
      fail(n.pos, describe(seq) + " takes one integer index");
    Value v = eval(*n.kids[1]);
    if (v.kind != Kind::Int)
      fail(v.pos, "an index of " + describe(seq) + " needs an integer, not " + describe(v));
    auto size = static_cast<int64_t>(seq.items.size());
    if (v.i < -size || v.i >= size)
      fail(v.pos, "index " + std::to_string(v.i) + " is out of range for " + describe(seq) +
                      " of " + std::to_string(size));
    return seq.items[static_cast<size_t>(v.i < 0 ? v.i + size : v.i)];
  }

  const std::map<std::string, Tensor>& inputs_;
  const Limits& limits_;
};

void collect_names(const Node& n, std::vector<std::string>& out) {
  bool input = n.kind == NodeKind::Name && n.text != "Tensor" && n.text != "dtypes";
  if (input && std::find(out.begin(), out.end(), n.text) == out.end()) out.push_back(n.text);
  for (const NodePtr& k : n.kids)
    if (k) collect_names(*k, out);
}

} // namespace

Tensor evaluate(std::string_view text, const std::map<std::string, Tensor>& inputs,
                const Limits& limits) {
  NodePtr root = parse(text, limits);
  Value v = Evaluator(inputs, limits).eval(*root);
  if (v.kind == Kind::Tensor) return *v.tensor;
  if (v.kind == Kind::Float) return Tensor(v.f, Scalar::Float32);
  if (v.is_integral())
    return Tensor(v.number(), v.kind == Kind::Bool ? Scalar::Bool : Scalar::Int32);
  fail(root->start, "the expression is " + describe(v) + ", not a tensor");
}

std::vector<std::string> input_names(std::string_view text, const Limits& limits) {
  std::vector<std::string> out;
  collect_names(*parse(text, limits), out);
  return out;
}

} // namespace beamlab::expr

// ONNX models; see model.hpp.
#include "frontends/onnx/model.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "frontends/onnx/node.hpp"
#include "frontends/onnx/tensor_proto.hpp"

namespace beamlab::onnx {

struct ModelImpl {
  std::string path, base_dir;
  ::onnx::ModelProto proto;
  int64_t opset = 0;
  std::vector<ModelInput> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, int64_t> op_counts;
  std::map<std::string, Value> initializers;
  std::set<std::string> into_blocks; // conv_outputs_into_blocks of the main graph
};

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// `s` with its control characters escaped ("\n", "\x08"): names a model file gives (an input's,
// a node's) may hold any bytes, and an error naming them stays one line.
std::string escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    else
      out += c;
  }
  return out;
}

int64_t default_opset(const ::onnx::ModelProto& m, const std::string& path) {
  (void)path;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0; // only other domains' ops; each is reported as unsupported where it is used
}

// The input's shape: the model's fixed dims, symbolic ones from `given`, or the Variable named
// by a dim's dim_param.
Shape resolve_shape(const ::onnx::ValueInfoProto& vi, const InputShapes& given,
                    const std::vector<Variable>& variables, const std::string& path) {
  const auto& tt = vi.type().tensor_type();
  const std::string& name = vi.name();
  auto it = given.find(name);
  if (!tt.has_shape()) {
    user_assert(it != given.end()) << path << ": input '" << name << "' has no shape in the "
                                   << "model; give it with --input " << name << "=1x3x224x224";
    return it->second;
  }
  const auto& dims = tt.shape().dim();
  if (it != given.end()) {
    const Shape& s = it->second;
    user_assert(static_cast<int>(s.size()) == dims.size())
        << path << ": --input " << name << "=" << shape_str(s) << " has rank " << s.size()
        << " but the model's input has rank " << dims.size();
    for (int i = 0; i < dims.size(); ++i)
      user_assert(!dims[i].has_dim_value() || dims[i].dim_value() == s[static_cast<size_t>(i)])
          << path << ": --input " << name << "=" << shape_str(s) << " contradicts the model, "
          << "which fixes dim " << i << " to " << dims[i].dim_value();
    return s;
  }
  Shape s;
  for (int i = 0; i < dims.size(); ++i) {
    const std::string& param = dims[i].dim_param();
    auto var = std::find_if(variables.begin(), variables.end(),
                            [&](const Variable& v) { return !param.empty() && v.name == param; });
    if (var != variables.end()) {
      s.emplace_back(*var);
      continue;
    }
    user_assert(dims[i].has_dim_value() && dims[i].dim_value() >= 0)
        << path << ": input '" << name << "' dim " << i << " is symbolic"
        << (param.empty() ? "" : " ('" + param + "')") << "; give the shape with --input " << name
        << "=..."
        << (param.empty() ? ""
                          : ", or keep it symbolic over a range with --var " + param + "=1..512");
    s.push_back(dims[i].dim_value());
  }
  return s;
}

// An input must fit in this machine's memory (with room for the rest of the program).
void check_fits(const ModelInput& in, const std::string& path) {
  double ram = machine_memory_bytes();
  double bytes = static_cast<double>(in.dtype.itemsize());
  for (const Dim& d : in.shape) bytes *= static_cast<double>(d.max());
  user_assert(bytes <= ram / 2) << path << ": input '" << in.name << "' " << shape_str(in.shape)
                                << " needs " << fmt::format("{:.3g}", bytes / 1e9)
                                << " GB, more than half of this machine's "
                                << fmt::format("{:.3g}", ram / 1e9)
                                << " GB; give a smaller shape with --input " << in.name << "=...";
}

// ONNX's checker. It looks for external data relative to the working directory, so it
// checks a copy without it; decode() reads that data, relative to the model.
void check(const ::onnx::ModelProto& proto) {
  auto external = [](const ::onnx::TensorProto& t) {
    return t.data_location() == ::onnx::TensorProto::EXTERNAL;
  };
  const auto& inits = proto.graph().initializer();
  if (std::none_of(inits.begin(), inits.end(), external)) {
    ::onnx::checker::check_model(proto);
    return;
  }
  ::onnx::ModelProto copy = proto;
  for (auto& t : *copy.mutable_graph()->mutable_initializer()) {
    if (!external(t)) continue;
    t.clear_external_data();
    t.set_data_location(::onnx::TensorProto::DEFAULT);
    t.set_raw_data(std::string(1, '\0')); // a placeholder the checker counts as data
  }
  ::onnx::checker::check_model(copy);
}

// Elementwise ops that keep channel blocks (Value::blocks). The blocks' padding channels are
// read only by the next convolution's zero weights, so they need only stay finite: these ops
// keep a finite value finite (a division could make it infinite, and 0 * inf is NaN).
const std::set<std::string>& blocked_elementwise() {
  static const std::set<std::string> ops = {
      "Abs", "Add", "Clip", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu",
      "Mul", "Neg", "Relu", "Sigmoid",     "Sub",       "Tanh"};
  return ops;
}

// When node `op` runs on channel blocks: an elementwise op whose tensor inputs are all blocks
// of one shape, or single values, with one block input at least. Fills `blocks` with the
// inputs to run it on and returns the channel count (0: it runs as it is).
int64_t keeps_channel_blocks(const std::string& op, const std::vector<const Value*>& inputs,
                             std::vector<Value>& blocks) {
  if (!blocked_elementwise().count(op)) return 0;
  auto blocked =
      std::find_if(inputs.begin(), inputs.end(), [](const Value* v) { return v && v->blocks; });
  if (blocked == inputs.end()) return 0;
  const Value& first = **blocked;
  for (const Value* v : inputs) {
    if (!v || !v->tensor) continue;
    bool same = v->blocks && v->shape == first.shape && v->blocks->shape() == first.blocks->shape();
    bool single = !v->blocks && shape_numel(v->shape) == 1 && v->shape.size() <= first.shape.size();
    if (!same && !single) return 0;
  }
  for (const Value* v : inputs) blocks.push_back(!v ? Value() : v->blocks ? Value(*v->blocks) : *v);
  return first.shape[1];
}

// The Convs of graph `g` whose outputs reach a depthwise Conv through elementwise ops that keep
// channel blocks (MobileNetV2's first layer): they store their output in blocks straight away,
// where a copy would otherwise block it for the depthwise convolution. Only what the import
// will run on blocks counts: a Conv whose weight initializer is (C, 1, kh, kw) with group = C,
// and ops whose other inputs are single values (initializers or Constants of one element).
std::set<std::string> conv_outputs_into_blocks(const ::onnx::GraphProto& g) {
  std::map<std::string, std::vector<const ::onnx::NodeProto*>> readers;
  std::map<std::string, std::vector<int64_t>> dims; // of initializers and Constants
  for (const auto& t : g.initializer()) dims[t.name()] = {t.dims().begin(), t.dims().end()};
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input())
      if (readers[in].empty() || readers[in].back() != &n) readers[in].push_back(&n);
    if (n.op_type() != "Constant" || n.output_size() != 1) continue;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value") dims[n.output(0)] = {a.t().dims().begin(), a.t().dims().end()};
      if (a.name() == "value_float" || a.name() == "value_int") dims[n.output(0)] = {};
    }
  }
  auto single = [&](const std::string& name) {
    auto d = dims.find(name);
    return d != dims.end() && shape_numel(Shape(d->second.begin(), d->second.end())) == 1;
  };
  auto depthwise = [&](const ::onnx::NodeProto& n) {
    int64_t group = 1;
    for (const auto& a : n.attribute())
      if (a.name() == "group") group = a.i();
    auto w = n.input_size() > 1 ? dims.find(n.input(1)) : dims.end();
    return group > 1 && w != dims.end() && w->second.size() == 4 && w->second[0] == group &&
           w->second[1] == 1;
  };
  std::map<std::string, bool> memo; // value -> whether it reaches one
  std::function<bool(const std::string&)> reaches = [&](const std::string& value) {
    if (auto m = memo.find(value); m != memo.end()) return m->second;
    memo[value] = false;
    bool found = false;
    for (const ::onnx::NodeProto* r : readers[value]) {
      if (found || (!r->domain().empty() && r->domain() != "ai.onnx")) continue;
      if (r->op_type() == "Conv" && r->input(0) == value && depthwise(*r)) found = true;
      bool others_single = std::all_of(r->input().begin(), r->input().end(), [&](const auto& in) {
        return in == value || in.empty() || single(in);
      });
      if (blocked_elementwise().count(r->op_type()) && r->output_size() == 1 && others_single &&
          reaches(r->output(0)))
        found = true;
    }
    return memo[value] = found;
  };
  std::set<std::string> out;
  for (const auto& n : g.node())
    if (n.op_type() == "Conv" && n.domain().empty() && n.output_size() == 1 && !depthwise(n) &&
        reaches(n.output(0)))
      out.insert(n.output(0));
  return out;
}

// The initializers a dense 2-D Conv reads as its weight (Cout, C, kh, kw) with Cout a
// multiple of kBlock.
constexpr int64_t kBlock = 16;
std::set<std::string> blockable_conv_weights(const ::onnx::GraphProto& g,
                                             const std::map<std::string, HostTensor>& inits) {
  std::set<std::string> out;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Conv" || !n.domain().empty() || n.input_size() < 2) continue;
    auto group = std::find_if(n.attribute().begin(), n.attribute().end(),
                              [](const auto& a) { return a.name() == "group"; });
    if (group != n.attribute().end() && group->i() != 1) continue;
    auto w = inits.find(n.input(1));
    if (w != inits.end() && w->second.shape.size() == 4 && w->second.shape[0] % kBlock == 0)
      out.insert(n.input(1));
  }
  return out;
}

// A convolution weight (Cout, C, kh, kw) stored blocked, (Cout/16, C, kh, kw, 16) as oneDNN's
// OIhw16o, and read through a view of its original shape: sixteen output channels of one tap
// are one contiguous vector, so a convolution can keep output channels in vector lanes
// (a 7x7 layer's rows are too short for them) and load its weights in whole vectors. The copy
// is made once, when the model loads.
Tensor blocked_conv_weight(const HostTensor& h) {
  const Shape& s = h.shape;
  int64_t cout = s[0], inner = s[1] * s[2] * s[3];
  auto item = static_cast<size_t>(h.dtype.itemsize());
  std::vector<std::byte> bytes(h.bytes.size());
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t to = ((o / kBlock) * inner + i) * kBlock + o % kBlock;
      std::copy_n(h.bytes.begin() + static_cast<std::ptrdiff_t>((o * inner + i) * item), item,
                  bytes.begin() + static_cast<std::ptrdiff_t>(to * item));
    }
  Tensor blocked = to_constant({h.dtype, {cout / kBlock, s[1], s[2], s[3], kBlock}, bytes});
  return blocked.permute({0, 4, 1, 2, 3}).reshape(s);
}

void prepare(ModelImpl& m, const InputShapes& given, const std::vector<Variable>& variables) {
  const std::string& path = m.path;
  user_assert(m.proto.has_graph()) << path << ": the model has no graph; is it an ONNX model?";
  m.opset = default_opset(m.proto, path);
  user_assert(m.opset <= kNewestKnownOpset)
      << path << ": opset " << m.opset << " is newer than beamlab knows (up to "
      << kNewestKnownOpset << "); re-export the model with opset_version=" << kMaxOpset;
  // Debian's libonnx 1.12 checks models of IR version 8 and opset 17 at most; a newer model
  // is checked node by node as it converts.
  try {
    if (m.opset <= 17 && m.proto.ir_version() <= 8) check(m.proto);
  } catch (const std::exception& e) {
    user_error << path << ": the ONNX checker rejects the model: " << first_line(e.what());
  }
  const auto& g = m.proto.graph();
  std::map<std::string, HostTensor> decoded;
  for (const auto& init : g.initializer())
    decoded[init.name()] = decode(init, m.base_dir, path + ": initializer '" + init.name() + "'");
  std::set<std::string> blocked = blockable_conv_weights(g, decoded);
  for (const auto& [name, h] : decoded)
    m.initializers[name] = given_value(h, blocked.count(name) ? blocked_conv_weight : to_constant);
  for (const Variable& v : variables) {
    std::set<std::string> params; // the symbolic dims of the inputs --input leaves open
    for (const auto& vi : g.input())
      if (!given.count(vi.name()) && !m.initializers.count(vi.name()))
        for (const auto& d : vi.type().tensor_type().shape().dim())
          if (!d.dim_param().empty()) params.insert(d.dim_param());
    std::string names;
    for (const std::string& p : params) names += (names.empty() ? "" : ", ") + p;
    user_assert(params.count(v.name))
        << path << ": --var " << v.name << "=" << v.lo << ".." << v.hi
        << " names no symbolic dim of the model's inputs ("
        << (names.empty() ? "it has none left open" : "its dims: " + names) << ")";
  }
  for (const auto& vi : g.input()) {
    if (m.initializers.count(vi.name())) continue;
    user_assert(vi.type().has_tensor_type())
        << path << ": input '" << vi.name() << "' is not a tensor (sequences, maps and "
        << "optionals are not supported)";
    ModelInput in{
        vi.name(),
        dtype_of(vi.type().tensor_type().elem_type(), path + ": input '" + vi.name() + "'"),
        resolve_shape(vi, given, variables, path)};
    check_fits(in, path);
    m.inputs.push_back(std::move(in));
  }
  for (const auto& [name, shape] : given) {
    std::string names;
    bool known = false;
    for (const ModelInput& i : m.inputs) {
      names += (names.empty() ? "" : ", ") + i.name;
      known |= i.name == name;
    }
    user_assert(known) << path << ": --input names '" << name
                       << "', which is not an input of the model (its inputs: " << names << ")";
  }
  for (const auto& o : g.output()) m.outputs.push_back(o.name());
  for (const auto& n : g.node()) ++m.op_counts[n.op_type()];
  m.into_blocks = conv_outputs_into_blocks(g);
}

std::string node_label(const ::onnx::NodeProto& n, int index, int64_t opset) {
  std::string name = n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'";
  std::string domain = n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + ".";
  return "node " + name + " (" + domain + n.op_type() + ", opset " + std::to_string(opset) + ")";
}

void convert(const ModelImpl& m, const ::onnx::NodeProto& n, int index,
             std::map<std::string, Value>& env, int64_t opset);

// A subgraph (an If branch, a Loop or Scan body) over `inputs`, the enclosing graph's values in
// scope (its own names shadow them): its outputs in order.
std::vector<Value> run_subgraph(const ModelImpl& m, const ::onnx::GraphProto& g,
                                const std::map<std::string, Value>& outer,
                                const std::vector<Value>& inputs, int64_t opset) {
  user_assert(static_cast<size_t>(g.input_size()) == inputs.size())
      << "the subgraph '" << g.name() << "' takes " << g.input_size() << " inputs, not "
      << inputs.size();
  std::map<std::string, Value> env = outer;
  for (int i = 0; i < g.input_size(); ++i) env[g.input(i).name()] = inputs[static_cast<size_t>(i)];
  for (const auto& init : g.initializer()) {
    env[init.name()] =
        given_value(decode(init, m.base_dir, "initializer '" + init.name() + "'"), to_constant);
  }
  for (int i = 0; i < g.node_size(); ++i) convert(m, g.node(i), i, env, opset);
  std::vector<Value> outs;
  for (const auto& o : g.output()) {
    auto it = env.find(o.name());
    user_assert(it != env.end()) << "the subgraph's output '" << o.name() << "' is never computed";
    outs.push_back(it->second);
  }
  return outs;
}

// A function's attributes with defaults (FunctionProto.attribute_proto, field 11, newer than
// Debian's libonnx 1.12, which keeps it among the message's unknown fields).
std::map<std::string, ::onnx::AttributeProto> function_defaults(const ::onnx::FunctionProto& f) {
  constexpr int kAttributeProto = 11;
  std::map<std::string, ::onnx::AttributeProto> out;
  const auto& unknown = f.unknown_fields();
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& field = unknown.field(i);
    ::onnx::AttributeProto a;
    if (field.number() == kAttributeProto &&
        field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
        a.ParseFromString(field.length_delimited()))
      out[a.name()] = a;
  }
  return out;
}

// A call of a model-local function (FunctionProto), inlined: its body converted over the call's
// inputs alone (a function sees nothing else), at the function's own default-domain opset, each
// attribute reference (ref_attr_name) bound to the call's attribute of that name, else the
// function's default for it, else left out (the op's own default).
std::vector<Value> call_function(const ModelImpl& m, const ::onnx::FunctionProto& f,
                                 const ::onnx::NodeProto& call,
                                 const std::vector<const Value*>& inputs, int64_t opset) {
  std::map<std::string, ::onnx::AttributeProto> given = function_defaults(f);
  for (const auto& a : call.attribute()) given[a.name()] = a;
  std::map<std::string, Value> env;
  for (int i = 0; i < f.input_size(); ++i)
    if (static_cast<size_t>(i) < inputs.size() && inputs[static_cast<size_t>(i)])
      env[f.input(i)] = *inputs[static_cast<size_t>(i)];
  int64_t body_opset = opset;
  for (const auto& o : f.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") body_opset = o.version();
  for (int i = 0; i < f.node_size(); ++i) {
    ::onnx::NodeProto n = f.node(i);
    ::onnx::NodeProto bound = n;
    bound.clear_attribute();
    for (const auto& a : n.attribute()) {
      if (a.ref_attr_name().empty()) {
        *bound.add_attribute() = a;
        continue;
      }
      if (auto it = given.find(a.ref_attr_name()); it != given.end()) {
        ::onnx::AttributeProto copy = it->second;
        copy.set_name(a.name());
        *bound.add_attribute() = copy;
      }
    }
    convert(m, bound, i, env, body_opset);
  }
  std::vector<Value> outs;
  for (const std::string& o : f.output()) {
    auto it = env.find(o);
    user_assert(it != env.end()) << "the function's output '" << o << "' is never computed";
    outs.push_back(it->second);
  }
  return outs;
}

const ::onnx::FunctionProto* function_for(const ModelImpl& m, const ::onnx::NodeProto& n) {
  for (const auto& f : m.proto.functions())
    if (f.name() == n.op_type() && f.domain() == n.domain()) return &f;
  return nullptr;
}

// Runs one node's converter; errors get the file and the node in front (a subgraph's node
// after the node holding it).
void convert(const ModelImpl& m, const ::onnx::NodeProto& n, int index,
             std::map<std::string, Value>& env, int64_t opset) {
  std::string where = m.path + ": " + node_label(n, index, opset);
  bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
  const ::onnx::FunctionProto* function = function_for(m, n);
  auto it = converters().find(n.op_type());
  user_assert(function || (default_domain && it != converters().end()))
      << where << ": this op is not supported";
  user_assert(function || opset > 0) << where << ": the model imports no default-domain opset; "
                                     << "re-export it (e.g. torch.onnx.export with "
                                     << "opset_version=" << kMaxOpset << ")";
  if (int64_t v = function ? 0 : version_after_max(n.op_type(), opset); v > 0)
    user_error << where << ": " << n.op_type() << "-" << v << " is newer than beamlab's "
               << n.op_type() << " (versions up to opset " << kMaxOpset
               << "); re-export the model with opset_version=" << kMaxOpset;
  std::vector<const Value*> inputs;
  for (const std::string& name : n.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto v = env.find(name);
    user_assert(v != env.end()) << where << ": input '" << name
                                << "' is not computed before it (the graph is not sorted)";
    inputs.push_back(&v->second);
  }
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  std::vector<Value> in_blocks;
  int64_t channels = function ? 0 : keeps_channel_blocks(n.op_type(), inputs, in_blocks);
  if (channels > 0)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i]) inputs[i] = &in_blocks[i];
  std::vector<Value> outs;
  Node node(n, opset, inputs, m.base_dir,
            [&m, &env, opset](const ::onnx::GraphProto& g, const std::vector<Value>& in) {
              return run_subgraph(m, g, env, in, opset);
            });
  const std::string file = m.path + ": ";
  auto inner = [&](const char* what) { // a subgraph node's error names the file already
    std::string s = what;
    return s.rfind(file, 0) == 0 ? s.substr(file.size()) : s;
  };
  try {
    std::optional<std::vector<Value>> folded;
    if (!function && channels == 0) folded = fold_shape_arithmetic(node);
    outs = function ? call_function(m, *function, n, inputs, opset)
           : folded ? std::move(*folded)
                    : it->second(node);
  } catch (const UserError& e) {
    throw UserError(where + ": " + inner(e.what()));
  } catch (const InternalError& e) {
    throw InternalError(where + ": " + inner(e.what()));
  }
  for (int i = 0; i < n.output_size(); ++i) {
    if (n.output(i).empty()) continue;
    user_assert(static_cast<size_t>(i) < outs.size())
        << where << ": output " << i << " ('" << n.output(i) << "') is not supported";
    Value& out = outs[static_cast<size_t>(i)];
    if (channels > 0)
      out = Value::from_blocks(*out.tensor, channels);
    else if (m.into_blocks.count(n.output(i)) && Tensor::channel_blocks_enabled() && !out.blocks &&
             out.tensor && out.tensor->ndim() == 4 && out.dtype == Scalar::Float32)
      out = Value::from_blocks(out.tensor->to_channel_blocks(), out.shape[1]);
    env[n.output(i)] = out;
  }
}

} // namespace

void parse_input_shape(const std::string& text, InputShapes& shapes, const std::string& flag) {
  size_t eq = text.find('=');
  user_assert(eq != std::string::npos && eq > 0)
      << flag << " '" << text << "': expected NAME=DIMS like input=1x3x224x224";
  std::string name = text.substr(0, eq), dims = text.substr(eq + 1);
  Shape shape;
  std::stringstream ss(dims);
  for (std::string d; !dims.empty() && std::getline(ss, d, 'x');) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    user_assert(ec == std::errc{} && p == d.data() + d.size() && v >= 1)
        << flag << " '" << text << "': dimension '" << d
        << "' is not a positive integer; expected NAME=DIMS like input=1x3x224x224";
    shape.push_back(v);
  }
  user_assert(!shapes.count(name))
      << flag << " '" << text << "': input '" << name << "' is given twice";
  shapes[name] = shape;
}

Model Model::load(const std::string& path, const InputShapes& input_shapes,
                  const std::vector<Variable>& variables) {
  std::error_code ec;
  user_assert(std::filesystem::is_regular_file(path, ec))
      << "cannot read the model '" << path << "': no such file; check the path";
  std::ifstream f(path, std::ios::binary);
  user_assert(f) << "cannot read the model '" << path << "'; check its permissions";
  std::stringstream bytes;
  bytes << f.rdbuf();
  return parse(bytes.str(), path, input_shapes, variables);
}

Model Model::parse(std::string_view bytes, const std::string& path, const InputShapes& input_shapes,
                   const std::vector<Variable>& variables) {
  auto m = std::make_shared<ModelImpl>();
  m->path = path;
  m->base_dir = std::filesystem::path(path).parent_path().string();
  user_assert(bytes.size() < (size_t{1} << 31))
      << path << ": larger than 2 GiB; keep the weights as external data beside the model";
  user_assert(m->proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      << path << ": not an ONNX model (it does not parse as a ModelProto; is the file "
      << "truncated or of another format?)";
  try {
    prepare(*m, input_shapes, variables);
  } catch (const UserError& e) {
    throw UserError(escaped(e.what()));
  }
  Model model;
  model.impl_ = std::move(m);
  return model;
}

const std::string& Model::path() const { return impl_->path; }
int64_t Model::opset() const { return impl_->opset; }
const std::vector<ModelInput>& Model::inputs() const { return impl_->inputs; }
const std::vector<std::string>& Model::output_names() const { return impl_->outputs; }
const std::map<std::string, int64_t>& Model::op_counts() const { return impl_->op_counts; }

std::vector<Variable> Model::variables() const {
  std::vector<Variable> out;
  for (const ModelInput& in : impl_->inputs)
    for (const Variable& v : shape_variables(in.shape))
      if (std::none_of(out.begin(), out.end(), [&](const Variable& w) { return w.name == v.name; }))
        out.push_back(v);
  return out;
}

Program Model::build(const std::map<std::string, Tensor>& feeds) const {
  const ModelImpl& m = *impl_;
  std::map<std::string, Value> env = m.initializers;
  for (const ModelInput& in : m.inputs) {
    auto it = feeds.find(in.name);
    if (it == feeds.end() && shape_numel(in.shape) == 0) { // an empty input needs no data
      env[in.name] = Value::empty(in.shape, in.dtype);
      continue;
    }
    user_assert(it != feeds.end()) << m.path << ": input '" << in.name << "' is not given";
    const Tensor& t = it->second;
    user_assert(t.shape() == in.shape && t.dtype() == in.dtype)
        << m.path << ": input '" << in.name << "' must be " << in.dtype.str() << " "
        << shape_str(in.shape) << ", not " << t.dtype().str() << " " << shape_str(t.shape());
    env[in.name] = t;
  }
  const auto& nodes = m.proto.graph().node();
  Program p;
  for (int i = 0; i < nodes.size(); ++i) {
    convert(m, nodes[i], i, env, m.opset);
    const ::onnx::NodeProto& n = nodes[i];
    std::string name = n.name().empty() ? fmt::format("{}#{}", n.op_type(), i) : n.name();
    for (const std::string& out : n.output())
      if (auto it = env.find(out); !out.empty() && it != env.end() && it->second.tensor)
        p.names.push_back({it->second.tensor->uop(), name});
  }
  for (const std::string& name : m.outputs) {
    auto it = env.find(name);
    user_assert(it != env.end()) << m.path << ": output '" << name << "' is never computed";
    const Value& v = it->second;
    if (!v.tensor && v.ints) {
      for (const Dim& d : *v.ints) {
        user_assert(d.is_const())
            << m.path << ": output '" << name << "' is the shape value (" << d << ", ...), "
            << "which holds a symbolic size; beamlab's outputs are tensors of numbers; give the "
            << "model's dims numbers with --input";
      }
    }
    user_assert(v.tensor) << m.path << ": output '" << name << "' is an empty tensor "
                          << shape_str(v.shape) << "; beamlab does not compute on empty tensors";
    p.outputs.push_back(*it->second.tensor);
  }
  return p;
}

std::map<std::string, Tensor> Model::random_inputs(uint64_t seed) const {
  std::map<std::string, Tensor> feeds;
  for (const ModelInput& in : impl_->inputs) {
    // A symbolic input's values: those of its largest shape, flat, read row-major at each value.
    Shape shape = is_symbolic(in.shape) ? Shape{shape_numel(in.shape).max()} : in.shape;
    Tensor t = [&] {
      if (in.dtype.is_float()) return Tensor::rand(shape, seed++, in.dtype);
      // Integers and bools: 0 or 1, as host data (a buffer of the input's dtype).
      std::vector<float> bits = Tensor::rand(shape, seed++).to_vector<float>();
      std::vector<int64_t> v(bits.size());
      for (size_t i = 0; i < v.size(); ++i) v[i] = bits[i] < 0.5f ? 0 : 1;
      return Tensor(std::span<const int64_t>(v), shape, in.dtype);
    }();
    if (is_symbolic(in.shape)) {
      std::vector<std::byte> bytes = t.to_bytes();
      auto storage = std::make_shared<Buffer>(bytes.size());
      std::memcpy(storage->data(), bytes.data(), bytes.size());
      t = Tensor::from_storage(std::move(storage), in.shape, in.dtype);
    }
    feeds.emplace(in.name, t);
  }
  return feeds;
}

} // namespace beamlab::onnx

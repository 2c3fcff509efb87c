// The ONNX importer on models built here with libonnx's protobuf classes: values against the
// same program written with the Tensor API, fusion, input shapes, external data, and every
// user error as one line naming the file (and the node, op and opset).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include "frontends/onnx/model.hpp"
#include "tests/temp_dir.hpp"

namespace {

namespace bo = beamlab::onnx;
using beamlab::Shape;
using beamlab::Tensor;
using beamlab::UserError;

void add_dims(::onnx::ValueInfoProto* vi, const std::vector<std::string>& dims) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

void add_initializer(::onnx::GraphProto* g, const std::string& name, const Shape& shape,
                     const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

::onnx::NodeProto* add_node(::onnx::GraphProto* g, const std::string& op,
                            const std::vector<std::string>& in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (const std::string& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

// relu(x @ W + b): x (batch, 4), W (4, 3), b (3,).
::onnx::ModelProto linear_relu(const std::string& batch = "2", int64_t opset = 13) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("linear_relu");
  add_dims(g->add_input(), {batch, "4"});
  g->mutable_input(0)->set_name("x");
  add_initializer(g, "W", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  add_initializer(g, "b", {3}, {-30, 0, 1});
  add_node(g, "MatMul", {"x", "W"}, "xw");
  add_node(g, "Add", {"xw", "b"}, "z");
  add_node(g, "Relu", {"z"}, "y");
  add_dims(g->add_output(), {batch, "3"});
  g->mutable_output(0)->set_name("y");
  return m;
}

void add_ints(::onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values,
              bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

void int_attr(::onnx::NodeProto* n, const std::string& name, int64_t value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}

// Attention over a symbolic sequence, with the shape arithmetic exporters write around it:
// x (1, seq, 8) -> h = x @ W; its dims read with Shape -> Gather -> Unsqueeze -> Concat to split
// 2 heads of 4 (Reshape), (seq x seq) scores, softmax, heads merged back with Reshape to
// Shape(x); plus a position table P (1, 16, 8) cut to seq rows by a Slice whose end is
// Shape(x)[1]; and y2, y flattened to (1, 8*seq) by a shape computed with Mul.
::onnx::ModelProto symbolic_attention() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("attention");
  add_dims(g->add_input(), {"1", "seq", "8"});
  g->mutable_input(0)->set_name("x");
  std::vector<float> w(64), pos(16 * 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 11) / 11.0f - 0.5f;
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<float>(i % 13) / 13.0f;
  add_initializer(g, "W", {8, 8}, w);
  add_initializer(g, "P", {1, 16, 8}, pos);
  add_ints(g, "one", {1}, true);
  add_ints(g, "axis0", {0});
  add_ints(g, "axis1", {1});
  add_ints(g, "batch", {1});
  add_ints(g, "heads", {2, 4});
  add_ints(g, "zero", {0});
  add_ints(g, "eight", {8}, true);
  add_node(g, "MatMul", {"x", "W"}, "h");
  add_node(g, "Shape", {"h"}, "h_shape");
  add_node(g, "Gather", {"h_shape", "one"}, "seq");
  add_node(g, "Unsqueeze", {"seq", "axis0"}, "seq_1");
  int_attr(add_node(g, "Concat", {"batch", "seq_1", "heads"}, "split_shape"), "axis", 0);
  add_node(g, "Reshape", {"h", "split_shape"}, "split");
  auto perm = [](::onnx::NodeProto* n, const std::vector<int64_t>& p) {
    auto* a = n->add_attribute();
    a->set_name("perm");
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t v : p) a->add_ints(v);
  };
  perm(add_node(g, "Transpose", {"split"}, "q"), {0, 2, 1, 3});
  perm(add_node(g, "Transpose", {"q"}, "k"), {0, 1, 3, 2});
  add_node(g, "MatMul", {"q", "k"}, "scores");
  add_node(g, "Softmax", {"scores"}, "p");
  add_node(g, "MatMul", {"p", "q"}, "ctx");
  perm(add_node(g, "Transpose", {"ctx"}, "merged"), {0, 2, 1, 3});
  add_node(g, "Shape", {"x"}, "x_shape");
  add_node(g, "Reshape", {"merged", "x_shape"}, "attn");
  add_node(g, "Slice", {"P", "zero", "seq_1", "axis1"}, "pos");
  add_node(g, "Add", {"attn", "pos"}, "y");
  add_node(g, "Mul", {"seq", "eight"}, "flat");
  add_node(g, "Unsqueeze", {"flat", "axis0"}, "flat_1");
  int_attr(add_node(g, "Concat", {"batch", "flat_1"}, "flat_shape"), "axis", 0);
  add_node(g, "Reshape", {"y", "flat_shape"}, "y2");
  add_dims(g->add_output(), {"1", "seq", "8"});
  g->mutable_output(0)->set_name("y");
  add_dims(g->add_output(), {"1", "flat"});
  g->mutable_output(1)->set_name("y2");
  return m;
}

std::string write(const std::string& path, const ::onnx::ModelProto& m) {
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

class OnnxImport : public beamlab::test_support::TempDirTest {};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(OnnxImport, ValuesMatchTheTensorApiAndFuseIntoOneKernel) {
  bo::Model m = bo::Model::load(write(file("m.onnx"), linear_relu()));
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].shape, (Shape{2, 4}));
  Tensor x({1, -1, 2, 0.5f, 0, 1, 0, 1}, {2, 4});
  beamlab::Program p = m.build({{"x", x}});
  std::vector<Tensor>& out = p.outputs;
  ASSERT_EQ(out.size(), 1u);
  // Row 0: [1,-1,2,.5] @ W = [1-4+14+5, 2-5+16+5.5, 3-6+18+6] = [16, 18.5, 21]; + b, relu.
  // Row 1: [0,1,0,1] @ W = [4+10, 5+11, 6+12] = [14, 16, 18].
  std::vector<float> want = {0, 18.5f, 22, 0, 16, 19};
  EXPECT_EQ(out[0].to_vector<float>(), want);
  beamlab::Schedule s = p.schedule();
  ASSERT_EQ(s.items.size(), 1u); // matmul + bias + relu fuse: one kernel named by all three
  EXPECT_EQ(p.kernel_names(s)[0], (std::vector<std::string>{"MatMul_xw", "Add_z", "Relu_y"}));
}

TEST_F(OnnxImport, SymbolicDimsTakeTheGivenShape) {
  std::string path = write(file("m.onnx"), linear_relu("batch"));
  EXPECT_EQ(error_of([&] { bo::Model::load(path); }),
            path + ": input 'x' dim 0 is symbolic ('batch'); give the shape with --input x=..., "
                   "or keep it symbolic over a range with --var batch=1..512");
  bo::InputShapes shapes;
  bo::parse_input_shape("x=5x4", shapes, "--input");
  bo::Model m = bo::Model::load(path, shapes);
  EXPECT_EQ(m.build(m.random_inputs()).outputs[0].shape(), (Shape{5, 3}));
}

// A dim_param kept a Variable: the shape arithmetic around it is computed at import (Shape,
// Gather, Unsqueeze, Concat, Mul, a Slice ending at a dim), the model is built and compiled
// once, and the plan runs at each length; every output matches the model loaded with that
// length fixed (--input), at the range's ends and values between.
TEST_F(OnnxImport, ASymbolicDimRunsAtEveryLengthFromOneCompile) {
  std::string path = write(file("attention.onnx"), symbolic_attention());
  beamlab::Variable seq{"seq", 1, 16};
  bo::Model m = bo::Model::load(path, {}, {seq});
  EXPECT_EQ(beamlab::shape_str(m.inputs()[0].shape), "(1, seq, 8)");
  ASSERT_EQ(m.variables().size(), 1u);
  auto storage = std::make_shared<beamlab::Buffer>(16 * 8 * sizeof(float));
  Tensor x = Tensor::from_storage(storage, m.inputs()[0].shape, beamlab::Scalar::Float32);
  beamlab::Program p = m.build({{"x", x}});
  ASSERT_EQ(p.outputs.size(), 2u);
  EXPECT_EQ(beamlab::shape_str(p.outputs[0].shape()), "(1, seq, 8)");
  EXPECT_EQ(beamlab::shape_str(p.outputs[1].shape()), "(1, 8*seq)");
  beamlab::Schedule s = p.schedule();
  beamlab::ExecutionPlan plan = beamlab::ExecutionPlan::prepare(s, p.inputs());
  size_t kernels = plan.kernels().size();
  Tensor data = Tensor::randn({16, 8}, 3);
  std::vector<float> all = data.to_vector<float>();
  for (int64_t v : {16, 1, 5, 11}) {
    SCOPED_TRACE("seq=" + std::to_string(v));
    std::memcpy(storage->data(), all.data(), static_cast<size_t>(v * 8) * sizeof(float));
    plan.run({{"seq", v}});
    bo::InputShapes fixed_shape;
    bo::parse_input_shape("x=1x" + std::to_string(v) + "x8", fixed_shape, "--input");
    bo::Model fixed = bo::Model::load(path, fixed_shape);
    beamlab::Program want = fixed.build({{"x", data.slice(0, 0, v).reshape({1, v, 8})}});
    for (size_t o = 0; o < 2; ++o) {
      std::vector<float> w = want.outputs[o].to_vector<float>();
      auto buffer = plan.buffer(*s.outputs.at(o));
      const auto* got = static_cast<const float*>(buffer->data());
      ASSERT_EQ(static_cast<int64_t>(w.size()), 8 * v);
      for (size_t i = 0; i < w.size(); ++i)
        ASSERT_NEAR(got[i], w[i], 1e-5 + 1e-4 * std::fabs(w[i]))
            << "output " << o << " element " << i;
    }
  }
  EXPECT_EQ(plan.kernels().size(), kernels); // nothing compiled for a new length
}

TEST_F(OnnxImport, SymbolicDimErrors) {
  std::string path = write(file("attention.onnx"), symbolic_attention());
  // The position table has 16 rows: a sequence up to 20 could slice past it.
  EXPECT_EQ(error_of([&] {
              bo::Model::load(path, {}, {{"seq", 1, 20}})
                  .build(bo::Model::load(path, {}, {{"seq", 1, 20}}).random_inputs());
            }),
            path + ": node 'Slice_pos' (Slice, opset 13): the slice [0, seq) of axis 1 of "
                   "(1, 16, 8) may pass the dim's end; narrow the variables' ranges");
  EXPECT_EQ(error_of([&] {
              bo::Model::load(path, {}, {{"len", 1, 16}});
            }),
            path + ": --var len=1..16 names no symbolic dim of the model's inputs (its dims: seq)");
  // A symbolic size read as data (here an Add of it to a tensor) is refused with the way out.
  ::onnx::ModelProto m = symbolic_attention();
  add_node(m.mutable_graph(), "Add", {"seq", "P"}, "shifted");
  std::string as_data = write(file("data.onnx"), m);
  bo::Model dm = bo::Model::load(as_data, {}, {{"seq", 1, 16}});
  EXPECT_EQ(error_of([&] { dm.build(dm.random_inputs()); }),
            as_data + ": node 'Add_shifted' (Add, opset 13): input 0 ('seq') holds the "
                      "symbolic size seq; this op takes it as data, where beamlab reads symbolic "
                      "sizes only as shapes, slice bounds and shape arithmetic; give the model's "
                      "dims numbers with --input");
  // A Range to it from 1: positions beamlab can't slice from a table that starts at 0.
  ::onnx::ModelProto r = symbolic_attention();
  add_ints(r.mutable_graph(), "start", {1}, true);
  add_ints(r.mutable_graph(), "step", {1}, true);
  add_node(r.mutable_graph(), "Range", {"start", "seq", "step"}, "positions");
  std::string ranged = write(file("range.onnx"), r);
  bo::Model rm = bo::Model::load(ranged, {}, {{"seq", 1, 16}});
  EXPECT_EQ(error_of([&] { rm.build(rm.random_inputs()); }),
            ranged + ": node 'Range_positions' (Range, opset 13): a Range to the symbolic limit "
                     "seq from 1 by 1: beamlab runs one from 0 by a whole step that divides the "
                     "limit; give the model's dims numbers with --input");
}

// Positions computed from a symbolic length, as exporters write position ids and causal masks:
// Range(0, seq) added to each row (y = x + i) and compared with itself into a lower-triangular
// mask whose matmul with x is the running sum down the rows (z[i] = x[0] + ... + x[i]); one
// compile, checked against the sums computed here at each length.
TEST_F(OnnxImport, ARangeToASymbolicSizeGivesPositionsAndACausalMask) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("positions");
  add_dims(g->add_input(), {"1", "seq", "8"});
  g->mutable_input(0)->set_name("x");
  add_ints(g, "one", {1}, true);
  add_ints(g, "start", {0}, true);
  add_ints(g, "step", {1}, true);
  add_ints(g, "axis0", {0});
  add_ints(g, "axis1", {1});
  add_node(g, "Shape", {"x"}, "x_shape");
  add_node(g, "Gather", {"x_shape", "one"}, "seq");
  add_node(g, "Range", {"start", "seq", "step"}, "pos");
  int_attr(add_node(g, "Cast", {"pos"}, "posf"), "to", ::onnx::TensorProto::FLOAT);
  add_node(g, "Unsqueeze", {"posf", "axis1"}, "col");
  add_node(g, "Add", {"x", "col"}, "y");
  add_node(g, "Unsqueeze", {"pos", "axis0"}, "j");
  add_node(g, "Unsqueeze", {"pos", "axis1"}, "i");
  add_node(g, "LessOrEqual", {"j", "i"}, "mask");
  int_attr(add_node(g, "Cast", {"mask"}, "maskf"), "to", ::onnx::TensorProto::FLOAT);
  add_node(g, "MatMul", {"maskf", "x"}, "z");
  add_dims(g->add_output(), {"1", "seq", "8"});
  g->mutable_output(0)->set_name("y");
  add_dims(g->add_output(), {"1", "seq", "8"});
  g->mutable_output(1)->set_name("z");
  std::string path = write(file("positions.onnx"), m);
  bo::Model model = bo::Model::load(path, {}, {{"seq", 1, 40}});
  auto storage = std::make_shared<beamlab::Buffer>(40 * 8 * sizeof(float));
  Tensor x = Tensor::from_storage(storage, model.inputs()[0].shape, beamlab::Scalar::Float32);
  beamlab::Program p = model.build({{"x", x}});
  beamlab::Schedule s = p.schedule();
  beamlab::ExecutionPlan plan = beamlab::ExecutionPlan::prepare(s, p.inputs());
  size_t kernels = plan.kernels().size();
  std::vector<float> all = Tensor::randn({40, 8}, 5).to_vector<float>();
  for (int64_t v : {40, 1, 7, 33}) {
    SCOPED_TRACE("seq=" + std::to_string(v));
    std::memcpy(storage->data(), all.data(), static_cast<size_t>(v * 8) * sizeof(float));
    plan.run({{"seq", v}});
    const auto* y = static_cast<const float*>(plan.buffer(*s.outputs.at(0))->data());
    const auto* z = static_cast<const float*>(plan.buffer(*s.outputs.at(1))->data());
    std::vector<float> running(8, 0.0f);
    for (int64_t i = 0; i < v; ++i)
      for (int64_t c = 0; c < 8; ++c) {
        auto e = static_cast<size_t>(i * 8 + c);
        running[static_cast<size_t>(c)] += all[e];
        ASSERT_FLOAT_EQ(y[e], all[e] + static_cast<float>(i)) << "y[" << i << ", " << c << "]";
        ASSERT_NEAR(z[e], running[static_cast<size_t>(c)], 1e-4) << "z[" << i << ", " << c << "]";
      }
  }
  EXPECT_EQ(plan.kernels().size(), kernels);
}

// Shape arithmetic folded at import computes what the ops' converters do: each case's nodes
// run once on integer initializers (known at import, so folded on the host) and once on the
// same values fed as graph inputs (so built as kernels); outputs and shapes must agree.
TEST_F(OnnxImport, FoldedShapeArithmeticMatchesTheConvertedOps) {
  struct Case {
    std::vector<std::string> nodes; // "Op:in1,in2:out[:attr=value]", in order; the last is y
    std::map<std::string, std::vector<int64_t>> values;
    std::set<std::string> scalars; // values of shape ()
  };
  std::vector<Case> cases = {
      {{"Add:a,b:y"}, {{"a", {5, -3, 7}}, {"b", {2}}}, {}},
      {{"Sub:a,b:y"}, {{"a", {5, -3, 7}}, {"b", {2}}}, {"b"}},
      {{"Mul:a,b:y"}, {{"a", {5, -3, 7}}, {"b", {-4, 2, 0}}}, {}},
      {{"Div:a,b:y"}, {{"a", {7, -7, 9}}, {"b", {2}}}, {}},
      {{"Max:a,b:y"}, {{"a", {7, -7, 9}}, {"b", {2, 3, 10}}}, {}},
      {{"Min:a,b:y"}, {{"a", {7, -7, 9}}, {"b", {2}}}, {}},
      {{"Neg:a:y"}, {{"a", {4, -2}}}, {}},
      {{"Equal:a,b:c", "Where:c,a,b:y"}, {{"a", {1, 2, 3}}, {"b", {2, 2, 5}}}, {}},
      {{"Cast:a:y:to=6"}, {{"a", {5, -1, 4294967297}}}, {}},
      {{"Gather:a,i:y"}, {{"a", {10, 20, 30}}, {"i", {-1, 0}}}, {}},
      {{"Gather:a,i:y"}, {{"a", {10, 20, 30}}, {"i", {1}}}, {"i"}},
      {{"Slice:a,s,e:y"}, {{"a", {10, 20, 30, 40}}, {"s", {1}}, {"e", {-1}}}, {}},
      {{"Slice:a,s,e,x,st:y"},
       {{"a", {10, 20, 30, 40}}, {"s", {-1}}, {"e", {-10}}, {"x", {0}}, {"st", {-1}}},
       {}},
      {{"Slice:a,s,e,x,st:y"}, // a step past any length: the first element
       {{"a", {10, 20, 30}}, {"s", {0}}, {"e", {3}}, {"x", {0}}, {"st", {INT64_MAX}}},
       {}},
      {{"Slice:a,s,e,x,st:y"},
       {{"a", {10, 20, 30}}, {"s", {-1}}, {"e", {-4}}, {"x", {0}}, {"st", {INT64_MIN}}},
       {}},
      {{"Concat:a,b:y:axis=0"}, {{"a", {1, 2}}, {"b", {3}}}, {}},
      {{"Unsqueeze:a,x:y"}, {{"a", {5}}, {"x", {0}}}, {"a"}},
      {{"Unsqueeze:a,x:y"}, {{"a", {5}}, {"x", {0, 1}}}, {"a"}},
      {{"Squeeze:a,x:y"}, {{"a", {5}}, {"x", {0}}}, {}},
  };
  auto build = [&](const Case& c, bool fold) {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("ints");
    for (const auto& [name, v] : c.values) {
      if (fold) {
        add_ints(g, name, v, c.scalars.count(name) > 0);
        continue;
      }
      auto* in = g->add_input();
      in->set_name(name);
      auto* tt = in->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(::onnx::TensorProto::INT64);
      auto* shape = tt->mutable_shape();
      if (!c.scalars.count(name)) shape->add_dim()->set_dim_value(static_cast<int64_t>(v.size()));
    }
    for (const std::string& text : c.nodes) {
      std::vector<std::string> parts;
      std::stringstream ss(text);
      for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
      std::vector<std::string> ins;
      std::stringstream is(parts[1]);
      for (std::string p; std::getline(is, p, ',');) ins.push_back(p);
      auto* n = add_node(g, parts[0], ins, parts[2]);
      if (parts.size() > 3) {
        size_t eq = parts[3].find('=');
        int_attr(n, parts[3].substr(0, eq), std::stoll(parts[3].substr(eq + 1)));
      }
    }
    auto* y = g->add_output();
    y->set_name("y");
    y->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::INT64);
    y->mutable_type()->mutable_tensor_type()->mutable_shape(); // of any rank: not checked
    return m;
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    SCOPED_TRACE("case " + std::to_string(k) + ": " + c.nodes.back());
    bo::Model folded = bo::Model::load(write(file("fold.onnx"), build(c, true)));
    bo::Model converted = bo::Model::load(write(file("conv.onnx"), build(c, false)));
    std::map<std::string, Tensor> feeds;
    for (const auto& [name, v] : c.values)
      feeds.emplace(name, Tensor(std::span<const int64_t>(v),
                                 c.scalars.count(name) ? Shape{} : Shape{int64_t(v.size())},
                                 beamlab::Scalar::Int64));
    Tensor want = converted.build(feeds).outputs.at(0), got = folded.build({}).outputs.at(0);
    EXPECT_EQ(beamlab::shape_str(got.shape()), beamlab::shape_str(want.shape()));
    EXPECT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(got.cast(beamlab::Scalar::Int64).to_vector<int64_t>(),
              want.cast(beamlab::Scalar::Int64).to_vector<int64_t>());
  }
}

TEST_F(OnnxImport, InputShapeErrors) {
  std::string path = write(file("m.onnx"), linear_relu("batch"));
  bo::InputShapes bad_dim, bad_rank, unknown, twice;
  bo::parse_input_shape("x=5x7", bad_dim, "--input");
  EXPECT_EQ(error_of([&] { bo::Model::load(path, bad_dim); }),
            path + ": --input x=(5, 7) contradicts the model, which fixes dim 1 to 4");
  bo::parse_input_shape("x=5", bad_rank, "--input");
  EXPECT_EQ(error_of([&] { bo::Model::load(path, bad_rank); }),
            path + ": --input x=(5,) has rank 1 but the model's input has rank 2");
  bo::parse_input_shape("x=5x4", unknown, "--input");
  bo::parse_input_shape("y=5x4", unknown, "--input");
  EXPECT_EQ(error_of([&] { bo::Model::load(path, unknown); }),
            path + ": --input names 'y', which is not an input of the model (its inputs: x)");
  bo::InputShapes huge;
  bo::parse_input_shape("x=100000000000x4", huge, "--input");
  EXPECT_THAT(error_of([&] { bo::Model::load(path, huge); }),
              testing::StartsWith(path +
                                  ": input 'x' (100000000000, 4) needs 1.6e+03 GB, more than "
                                  "half of this machine's "));
  EXPECT_EQ(error_of([&] { bo::parse_input_shape("x=5xq", twice, "--input"); }),
            "--input 'x=5xq': dimension 'q' is not a positive integer; expected NAME=DIMS like "
            "input=1x3x224x224");
  EXPECT_EQ(error_of([&] { bo::parse_input_shape("5x4", twice, "--input"); }),
            "--input '5x4': expected NAME=DIMS like input=1x3x224x224");
}

TEST_F(OnnxImport, BadFilesAreOneLineErrors) {
  std::string good = write(file("m.onnx"), linear_relu());
  std::string bytes;
  {
    std::ifstream f(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::string cut = file("cut.onnx");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::string text = file("text.onnx");
  std::ofstream(text) << "this is not a model\n";
  const std::string not_onnx = ": not an ONNX model (it does not parse as a ModelProto; is the "
                               "file truncated or of another format?)";
  EXPECT_EQ(error_of([&] { bo::Model::load(cut); }), cut + not_onnx);
  EXPECT_EQ(error_of([&] { bo::Model::load(text); }), text + not_onnx);
  EXPECT_EQ(error_of([&] { bo::Model::load(file("none.onnx")); }),
            "cannot read the model '" + file("none.onnx") + "': no such file; check the path");
  std::string newer = write(file("new.onnx"), linear_relu("2", 29));
  EXPECT_EQ(error_of([&] { bo::Model::load(newer); }),
            newer + ": opset 29 is newer than beamlab knows (up to 28); re-export the model "
                    "with opset_version=21");
}

// Opsets past the converters' (21) load, and run, while none of their ops changed after 21; the
// first op that did is named with its version. An opset libonnx 1.12 can't check (18+) is
// checked node by node: an undefined input is still an error naming the node.
TEST_F(OnnxImport, NewerOpsetsNameTheOpVersionTheyNeed) {
  for (int64_t opset : {18, 20, 21, 23, 28}) {
    std::string path = write(file("o" + std::to_string(opset) + ".onnx"), linear_relu("2", opset));
    bo::Model model = bo::Model::load(path);
    EXPECT_EQ(model.opset(), opset);
    Tensor x(std::vector<float>{1, 2, 3, 4, -1, -2, -3, -4}, {2, 4});
    EXPECT_EQ(model.build({{"x", x}}).outputs.at(0).to_vector<float>(),
              (std::vector<float>{40, 80, 91, 0, 0, 0}))
        << "opset " << opset;
  }
  ::onnx::ModelProto cast = linear_relu("2", 23);
  add_node(cast.mutable_graph(), "Cast", {"y"}, "y2")->add_attribute()->set_name("to");
  std::string path = write(file("cast23.onnx"), cast);
  bo::Model model = bo::Model::load(path);
  EXPECT_EQ(error_of([&] { model.build(model.random_inputs()); }),
            path + ": node 'Cast_y2' (Cast, opset 23): Cast-23 is newer than beamlab's Cast "
                   "(versions up to opset 21); re-export the model with opset_version=21");
  ::onnx::ModelProto unsorted = linear_relu("2", 20);
  unsorted.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  std::string bad = write(file("unsorted.onnx"), unsorted);
  bo::Model broken = bo::Model::load(bad);
  EXPECT_EQ(error_of([&] { broken.build(broken.random_inputs()); }),
            bad + ": node 'Add_z' (Add, opset 20): input 'nowhere' is not computed before it (the "
                  "graph is not sorted)");
}

TEST_F(OnnxImport, UnsupportedOpsAndBadNodesNameTheNode) {
  ::onnx::ModelProto m = linear_relu();
  m.mutable_graph()->mutable_node(2)->set_op_type("Frobnicate");
  m.mutable_graph()->mutable_node(2)->set_domain("com.example");
  m.add_opset_import()->set_domain("com.example");
  std::string path = write(file("custom.onnx"), m);
  bo::Model model = bo::Model::load(path);
  EXPECT_EQ(error_of([&] { model.build(model.random_inputs()); }),
            path + ": node 'Relu_y' (com.example.Frobnicate, opset 13): this op is not supported");
  ::onnx::ModelProto shapes = linear_relu();
  shapes.mutable_graph()->mutable_initializer(0)->clear_dims();
  shapes.mutable_graph()->mutable_initializer(0)->add_dims(3);
  shapes.mutable_graph()->mutable_initializer(0)->add_dims(4);
  std::string mismatch = write(file("mismatch.onnx"), shapes);
  bo::Model bad = bo::Model::load(mismatch);
  EXPECT_EQ(error_of([&] { bad.build(bad.random_inputs()); }),
            mismatch + ": node 'MatMul_xw' (MatMul, opset 13): matmul: (2, 4) @ (3, 4): inner "
                       "dimensions differ (4 vs 3)");
}

// If runs the branch its condition picks, its subgraph seeing the outer graph's values; an
// error in a branch's node names both nodes, on one line.
TEST_F(OnnxImport, IfRunsTheChosenBranchAndNamesItsNodesInErrors) {
  auto with_if = [&](bool cond, const std::string& then_op) {
    ::onnx::ModelProto m = linear_relu("2", 20);
    auto* g = m.mutable_graph();
    auto* c = g->add_initializer();
    c->set_name("cond");
    c->set_data_type(::onnx::TensorProto::BOOL);
    c->add_int32_data(cond ? 1 : 0);
    auto* n = add_node(g, "If", {"cond"}, "picked");
    auto branch = [&](const char* name, const std::string& op) {
      auto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(::onnx::AttributeProto::GRAPH);
      auto* b = a->mutable_g();
      b->set_name(name);
      add_node(b, op, {"y"}, "out");
      add_dims(b->add_output(), {"2", "3"});
      b->mutable_output(0)->set_name("out");
    };
    branch("then_branch", then_op);
    branch("else_branch", "Neg");
    g->mutable_output(0)->set_name("picked");
    return m;
  };
  Tensor x(std::vector<float>{1, 2, 3, 4, -1, -2, -3, -4}, {2, 4});
  for (bool cond : {true, false}) {
    std::string path = write(file("if.onnx"), with_if(cond, "Sqrt"));
    bo::Model model = bo::Model::load(path);
    std::vector<float> y = model.build({{"x", x}}).outputs.at(0).to_vector<float>();
    EXPECT_FLOAT_EQ(y[1], cond ? std::sqrt(80.0f) : -80.0f);
  }
  std::string path = write(file("bad_if.onnx"), with_if(true, "Frobnicate"));
  bo::Model model = bo::Model::load(path);
  EXPECT_EQ(error_of([&] {
              model.build({{"x", x}});
            }),
            path + ": node 'If_picked' (If, opset 20): node 'Frobnicate_out' (Frobnicate, opset "
                   "20): this op is not supported");
}

// A model-local function (as PyTorch's exporter writes for modules it keeps whole) is inlined:
// its body over the call's inputs, its attribute references bound to the call's attributes.
TEST_F(OnnxImport, ModelLocalFunctionsAreInlined) {
  ::onnx::ModelProto m = linear_relu("2", 20);
  m.set_ir_version(9);
  auto* call = m.mutable_graph()->mutable_node(2);
  call->set_op_type("LeakyTwice");
  call->set_domain("local");
  auto* alpha = call->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(::onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  auto* import = m.add_opset_import();
  import->set_domain("local");
  import->set_version(1);
  auto* f = m.add_functions();
  f->set_name("LeakyTwice");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  f->add_attribute("alpha");
  f->add_opset_import()->set_version(18);
  auto* leaky = f->add_node();
  leaky->set_op_type("LeakyRelu");
  leaky->add_input("a");
  leaky->add_output("t");
  auto* ref = leaky->add_attribute();
  ref->set_name("alpha");
  ref->set_type(::onnx::AttributeProto::FLOAT);
  ref->set_ref_attr_name("alpha");
  auto* add = f->add_node();
  add->set_op_type("Add");
  add->add_input("t");
  add->add_input("t");
  add->add_output("b");
  std::string path = write(file("function.onnx"), m);
  bo::Model model = bo::Model::load(path);
  Tensor x(std::vector<float>{1, 2, 3, 4, -1, -2, -3, -4}, {2, 4});
  // z = x @ W + b = (40, 80, 91) and (-100, -80, -89); 2 * leaky_relu(z, 0.5)
  EXPECT_EQ(model.build({{"x", x}}).outputs.at(0).to_vector<float>(),
            (std::vector<float>{80, 160, 182, -100, -80, -89}));
  // A call without the attribute takes the function's default (attribute_proto, field 11 of
  // FunctionProto, which libonnx 1.12 keeps as an unknown field).
  m.mutable_graph()->mutable_node(2)->clear_attribute();
  ::onnx::AttributeProto fallback;
  fallback.set_name("alpha");
  fallback.set_type(::onnx::AttributeProto::FLOAT);
  fallback.set_f(0.25f);
  f->mutable_unknown_fields()->AddLengthDelimited(11, fallback.SerializeAsString());
  std::string defaults = write(file("function_default.onnx"), m);
  bo::Model with_default = bo::Model::load(defaults);
  EXPECT_EQ(with_default.build({{"x", x}}).outputs.at(0).to_vector<float>(),
            (std::vector<float>{80, 160, 182, -50, -40, -44.5f}));
}

TEST_F(OnnxImport, ExternalDataIsReadBesideTheModel) {
  ::onnx::ModelProto m = linear_relu();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  std::vector<float> values(w->float_data().begin(), w->float_data().end());
  w->clear_float_data();
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto add_kv = [&](const std::string& k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add_kv("location", "weights.bin");
  add_kv("offset", "16");
  std::string path = write(file("ext.onnx"), m);
  std::string blob(16, 'x');
  blob.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  std::ofstream(file("weights.bin"), std::ios::binary) << blob;
  bo::Model model = bo::Model::load(path);
  Tensor x({1, -1, 2, 0.5f, 0, 1, 0, 1}, {2, 4});
  EXPECT_EQ(model.build({{"x", x}}).outputs[0].to_vector<float>(),
            (std::vector<float>{0, 18.5f, 22, 0, 16, 19}));
  std::filesystem::remove(file("weights.bin"));
  EXPECT_EQ(error_of([&] { bo::Model::load(path); }),
            path + ": initializer 'W': cannot read its external data '" + file("weights.bin") +
                "'; keep the data file beside the model");
  w->mutable_external_data(0)->set_value("../../etc/passwd");
  std::string outside = write(file("outside.onnx"), m);
  EXPECT_EQ(error_of([&] { bo::Model::load(outside); }),
            outside + ": initializer 'W': external data '../../etc/passwd' is outside the model's "
                      "folder; keep the data file beside the model");
}

} // namespace

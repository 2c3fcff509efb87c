// Expressions against the same tensors built by hand with the Tensor API: every case's text
// must give the hand-built tensor's shape, dtype and values. Covers the brief's examples,
// Python's precedence, keyword arguments, tuples and lists, indexing, the functions of Tensor
// and every method in the table; then input_names().
#include <gtest/gtest.h>

#include <cmath>

#include "tests/expr/expr_helpers.hpp"

namespace beamlab::expr::testing {
namespace {

using Build = Tensor (*)(const Inputs&);

struct Case {
  const char* name;
  const char* text;
  Build build;
};

Tensor row(const Tensor& t, int64_t r) { return t.slice(0, r, r + 1).reshape({t.shape()[1]}); }

// clang-format off
constexpr Case kCases[] = {
    // the brief's examples
    {"matmul_bias_relu", "(a.matmul(w) + bias).relu()", [](const Inputs& in) { return (in.a.matmul(in.w) + in.bias).relu(); }},
    {"softmax", "x.softmax(-1)", [](const Inputs& in) { return in.x.softmax(-1); }},
    {"layernorm_by_hand", "(x - x.mean(axis=-1, keepdim=True)) / (x.var(-1, keepdim=True) + 1e-5).sqrt()",
     [](const Inputs& in) { return (in.x - in.x.mean({-1}, true)) / (in.x.var({-1}, true) + 1e-5).sqrt(); }},
    {"at_operator", "a @ w", [](const Inputs& in) { return in.a.matmul(in.w); }},
    {"reshape_varargs", "x.reshape(4, -1).sum(1)", [](const Inputs& in) { return in.x.reshape({4, -1}).sum({1}); }},
    {"reshape_tuple", "x.reshape((3, -1))", [](const Inputs& in) { return in.x.reshape({3, -1}); }},
    {"reshape_tuple_brief", "x.reshape((4, -1))", [](const Inputs& in) { return in.x.reshape({4, -1}); }},
    {"reshape_list", "x.reshape([2, 12])", [](const Inputs& in) { return in.x.reshape({2, 12}); }},
    {"permute", "x.permute(1, 0)", [](const Inputs& in) { return in.x.permute({1, 0}); }},
    {"permute_tuple", "t.permute((2, 0, 1))", [](const Inputs& in) { return in.t.permute({2, 0, 1}); }},
    {"neg_pow", "-x ** 2", [](const Inputs& in) { return -in.x.pow(2.0); }},
    {"pow_of_neg", "(-x) ** 2", [](const Inputs& in) { return (-in.x).pow(2.0); }},
    {"maximum_number", "x.maximum(0)", [](const Inputs& in) { return in.x.maximum(0.0); }},
    {"maximum_tensor", "x.maximum(y)", [](const Inputs& in) { return in.x.maximum(in.y); }},
    {"slices", "t[1:3, :, ::2]", [](const Inputs& in) {
       Tensor r = in.t.slice(0, 1, 3);
       Tensor parts[] = {r.slice(2, 0, 1), r.slice(2, 2, 3), r.slice(2, 4, 5)};
       return Tensor::cat(parts, 2);
     }},
    {"conv2d", "img.conv2d(k, padding=1)", [](const Inputs& in) { return in.img.conv2d(in.k, std::nullopt, 1, 1); }},
    {"where", "m.where(a, b)", [](const Inputs& in) { return in.m.where(in.a, in.b); }},
    {"where_scaled", "(x > 0).where(x, 0.1 * x)", [](const Inputs& in) { return (in.x > 0.0).where(in.x, 0.1 * in.x); }},
    {"where_numbers", "m.where(1, 0)", [](const Inputs& in) { return in.m.where(1.0, 0.0); }},
    {"where_mixed", "m.where(a, 0)", [](const Inputs& in) { return in.m.where(in.a, in.a.scalar_like(0)); }},
    {"cast_string", "x.cast('float16')", [](const Inputs& in) { return in.x.cast(Scalar::Float16); }},
    {"cast_dtypes", "x.cast(dtypes.float16)", [](const Inputs& in) { return in.x.cast(Scalar::Float16); }},
    {"cast_half", "x.half()", [](const Inputs& in) { return in.x.cast(Scalar::Float16); }},
    {"cast_like", "a.cast(i.dtype)", [](const Inputs& in) { return in.a.cast(Scalar::Int32); }},
    {"bitcast", "x.bitcast(dtypes.int32)", [](const Inputs& in) { return in.x.bitcast(Scalar::Int32); }},
    {"cat_function", "Tensor.cat(a, b, dim=1)", [](const Inputs& in) { Tensor ts[] = {in.a, in.b}; return Tensor::cat(ts, 1); }},
    {"cat_method", "a.cat(b, dim=1)", [](const Inputs& in) { Tensor ts[] = {in.a, in.b}; return Tensor::cat(ts, 1); }},
    {"cat_list", "Tensor.cat([a, b, a])", [](const Inputs& in) { Tensor ts[] = {in.a, in.b, in.a}; return Tensor::cat(ts, 0); }},
    {"cat_tuple", "Tensor.cat((a, b), dim=0)", [](const Inputs& in) { Tensor ts[] = {in.a, in.b}; return Tensor::cat(ts, 0); }},
    {"stack", "Tensor.stack(a, b, dim=2)", [](const Inputs& in) { Tensor ts[] = {in.a, in.b}; return Tensor::stack(ts, 2); }},
    {"stack_method", "a.stack(b)", [](const Inputs& in) { Tensor ts[] = {in.a, in.b}; return Tensor::stack(ts, 0); }},
    // literals, keyword arguments, tuples
    {"float_and_bool_literals", "x * 1e-5 + True", [](const Inputs& in) { return in.x * 1e-5 + 1.0; }},
    {"keepdim_positional", "x.sum(0, True)", [](const Inputs& in) { return in.x.sum({0}, true); }},
    {"axis_tuple", "x.sum(axis=(0, 1))", [](const Inputs& in) { return in.x.sum({0, 1}); }},
    {"dim_alias", "x.mean((0, 1), keepdim=True)", [](const Inputs& in) { return in.x.mean({0, 1}, true); }},
    {"reduce_all", "x.sum()", [](const Inputs& in) { return in.x.sum(); }},
    {"softmax_dim_keyword", "x.softmax(dim=0)", [](const Inputs& in) { return in.x.softmax(0); }},
    {"axis_none", "x.max(axis=None)", [](const Inputs& in) { return in.x.max(); }},
    {"trailing_comma", "x.reshape(4, 6,)", [](const Inputs& in) { return in.x; }},
    // precedence and associativity
    {"mul_before_add", "a + b * a", [](const Inputs& in) { return in.a + in.b * in.a; }},
    {"parens", "(a + b) * a", [](const Inputs& in) { return (in.a + in.b) * in.a; }},
    {"sub_left_assoc", "a - b - a", [](const Inputs& in) { return (in.a - in.b) - in.a; }},
    {"div_left_assoc", "a / b / a", [](const Inputs& in) { return (in.a / in.b) / in.a; }},
    {"pow_right_assoc", "t ** 2 ** 0.5", [](const Inputs& in) { return in.t.pow(std::sqrt(2.0)); }},
    {"pow_before_mul", "a * 2 ** 3", [](const Inputs& in) { return in.a * 8.0; }},
    {"neg_of_neg", "a - -b", [](const Inputs& in) { return in.a - (-in.b); }},
    {"negative_exponent", "t ** -1", [](const Inputs& in) { return in.t.pow(-1.0); }},
    {"method_before_neg", "-a.relu()", [](const Inputs& in) { return -(in.a.relu()); }},
    {"neg_number_pow", "-2 ** 2 * x", [](const Inputs& in) { return -4.0 * in.x; }},
    {"matmul_same_level_as_mul", "a * b @ w", [](const Inputs& in) { return (in.a * in.b).matmul(in.w); }},
    {"matmul_before_add", "bias + a @ w * 2", [](const Inputs& in) { return in.bias + in.a.matmul(in.w) * 2.0; }},
    {"and_before_eq", "i & 6 == 2", [](const Inputs& in) { return (in.i & in.i.scalar_like(6)).eq(in.i.scalar_like(2)); }},
    {"add_before_shift", "i << 1 + 1", [](const Inputs& in) { return in.i.lshift(2); }},
    {"and_before_xor", "i ^ 3 & 1", [](const Inputs& in) { return in.i ^ in.i.scalar_like(1); }},
    {"xor_before_or", "i | 8 ^ 1", [](const Inputs& in) { return in.i | in.i.scalar_like(9); }},
    {"invert_before_and", "~m & m", [](const Inputs& in) { return in.m.bitwise_not() & in.m; }},
    {"compare_after_arith", "a + 1 < b * 2", [](const Inputs& in) { return (in.a + 1.0).lt(in.b * 2.0); }},
    // numbers fold as in Python
    {"folded_shape", "x.reshape(2 * 2, -1)", [](const Inputs& in) { return in.x.reshape({4, -1}); }},
    {"floor_div_and_mod", "x * (7 // 2) + 7 % 3", [](const Inputs& in) { return in.x * 3.0 + 1.0; }},
    {"negative_floor_div", "x * (-7 // 2)", [](const Inputs& in) { return in.x * -4.0; }},
    {"true_division", "x / (1 / 4)", [](const Inputs& in) { return in.x / 0.25; }},
    // comparisons and integer ops on tensors
    {"lt", "a < b", [](const Inputs& in) { return in.a.lt(in.b); }},
    {"le_number", "a <= 0", [](const Inputs& in) { return in.a.le(in.a.scalar_like(0)); }},
    {"eq", "a == a", [](const Inputs& in) { return in.a.eq(in.a); }},
    {"ne", "a != b", [](const Inputs& in) { return in.a.ne(in.b); }},
    {"ge", "a >= b", [](const Inputs& in) { return in.a.ge(in.b); }},
    {"number_gt_tensor", "0.5 > a", [](const Inputs& in) { return in.a.scalar_like(0.5).gt(in.a); }},
    {"int_floordiv", "-i // 4", [](const Inputs& in) { return (-in.i).floordiv(in.i.scalar_like(4)); }},
    {"int_mod", "(i - 3) % 4", [](const Inputs& in) { return (in.i - 3.0).mod(in.i.scalar_like(4)); }},
    {"int_pow", "i ** 2", [](const Inputs& in) { return in.i.pow(2.0); }},
    {"tensor_pow_tensor", "t ** t", [](const Inputs& in) { return in.t.pow(in.t); }},
    {"number_pow_tensor", "2 ** t", [](const Inputs& in) { return in.t.scalar_like(2).pow(in.t); }},
    {"rshift", "i >> 1", [](const Inputs& in) { return in.i.rshift(1); }},
    // attributes
    {"shape_attribute", "x.reshape(x.shape[0] * 2, -1)", [](const Inputs& in) { return in.x.reshape({8, -1}); }},
    {"shape_negative_index", "x.shape[-1] * x", [](const Inputs& in) { return 6.0 * in.x; }},
    {"transpose_attribute", "x.T", [](const Inputs& in) { return in.x.transpose(); }},
    {"ndim_attribute", "x.sum(x.ndim - 1)", [](const Inputs& in) { return in.x.sum({1}); }},
    // indexing
    {"reverse", "t[::-1]", [](const Inputs& in) { return in.t.flip({0}); }},
    {"int_index", "t[-1]", [](const Inputs& in) { return in.t.slice(0, 2, 3).reshape({4, 5}); }},
    {"new_axis", "t[None, 0]", [](const Inputs& in) { return in.t.slice(0, 0, 1).reshape({1, 4, 5}); }},
    {"ellipsis", "t[..., 1]", [](const Inputs& in) { return in.t.slice(2, 1, 2).reshape({3, 4}); }},
    {"negative_stride", "x[1::2, ::-3]", [](const Inputs& in) {
       Tensor rows[] = {in.x.slice(0, 1, 2), in.x.slice(0, 3, 4)};
       Tensor r = Tensor::cat(rows, 0);
       Tensor cols[] = {r.slice(1, 5, 6), r.slice(1, 2, 3)};
       return Tensor::cat(cols, 1);
     }},
    {"scalar_index", "x[-1, -1] * a", [](const Inputs& in) { return in.x.slice(0, 3, 4).slice(1, 5, 6).reshape({}) * in.a; }},
    {"trailing_new_axis", "x[..., None]", [](const Inputs& in) { return in.x.reshape({4, 6, 1}); }},
    {"clamped_bounds", "x[-100:100, 2:-1]", [](const Inputs& in) { return in.x.slice(1, 2, 5); }},
    {"step_past_end", "x[:, 1::10]", [](const Inputs& in) { return in.x.slice(1, 1, 2); }},
    // the functions of Tensor, and Tensor(...)
    {"arange", "Tensor.arange(6).reshape(2, 3) + i", [](const Inputs& in) { return Tensor::arange(6).reshape({2, 3}) + in.i; }},
    {"arange_float", "Tensor.arange(0, 1, 0.25)", [](const Inputs&) { return Tensor::arange(0, 1, 0.25, Scalar::Float32); }},
    {"zeros", "Tensor.zeros(2, 3) + a", [](const Inputs& in) { return Tensor::zeros({2, 3}) + in.a; }},
    {"ones_tuple", "Tensor.ones((2, 3)) * a", [](const Inputs& in) { return Tensor::ones({2, 3}) * in.a; }},
    {"full", "Tensor.full((2, 3), 3) * a", [](const Inputs& in) { return Tensor::full({2, 3}, 3) * in.a; }},
    {"eye", "Tensor.eye(3) @ w", [](const Inputs& in) { return Tensor::eye(3).matmul(in.w); }},
    {"linspace", "Tensor.linspace(0, 1, 5)", [](const Inputs&) { return Tensor::linspace(0, 1, 5); }},
    {"rand", "Tensor.rand(2, 3, seed=4)", [](const Inputs&) { return Tensor::rand({2, 3}, 4); }},
    {"randn", "Tensor.randn((2, 3), dtype=dtypes.float64)", [](const Inputs&) { return Tensor::randn({2, 3}, 0, Scalar::Float64); }},
    {"einsum", "Tensor.einsum('ij,jk->ik', a, w)", [](const Inputs& in) { Tensor ops[] = {in.a, in.w}; return Tensor::einsum("ij,jk->ik", ops); }},
    {"unbound_method", "Tensor.relu(x)", [](const Inputs& in) { return in.x.relu(); }},
    {"unbound_with_args", "Tensor.sum(x, 1)", [](const Inputs& in) { return in.x.sum({1}); }},
    {"tensor_from_list", "Tensor([1, 2, 3]) * a", [](const Inputs& in) {
       int32_t v[] = {1, 2, 3};
       return Tensor(std::span<const int32_t>(v), {3}) * in.a;
     }},
    {"tensor_from_nested", "Tensor([[1.5, 2], [3, 4], [5, 6]]).T", [](const Inputs&) {
       return Tensor({1.5f, 2, 3, 4, 5, 6}, {3, 2}).transpose();
     }},
    {"tensor_scalar", "Tensor(2.5) * a", [](const Inputs& in) { return Tensor(2.5) * in.a; }},
    {"tensor_bools", "Tensor([True, False, True], dtype='int8')", [](const Inputs&) {
       return Tensor({1.0f, 0.0f, 1.0f}, {3}, Scalar::Int8);
     }},
    {"zeros_like", "a.zeros_like() + a.ones_like(dtype='int32')", [](const Inputs&) {
       return Tensor::zeros({2, 3}) + Tensor::ones({2, 3}, Scalar::Int32);
     }},
    {"full_like", "a.full_like(7)", [](const Inputs&) { return Tensor::full({2, 3}, 7); }},
    {"numel", "a * a.numel()", [](const Inputs& in) { return in.a * 6.0; }},
    // movement
    {"transpose_keywords", "x.transpose(dim0=0, dim1=1)", [](const Inputs& in) { return in.x.transpose(0, 1); }},
    {"flatten", "t.flatten(1)", [](const Inputs& in) { return in.t.flatten(1); }},
    {"flatten_keyword", "t.flatten(start_dim=0, end_dim=1)", [](const Inputs& in) { return in.t.flatten(0, 1); }},
    {"pad_pairs", "a.pad(((1, 1), (0, 2)))", [](const Inputs& in) { return in.a.pad({{1, 1}, {0, 2}}); }},
    {"pad_flat", "a.pad((1, 2))", [](const Inputs& in) { return in.a.pad({{0, 0}, {1, 2}}); }},
    {"pad_value", "a.pad(((1, 1), None), value=2)", [](const Inputs& in) { return in.a.pad({{1, 1}, {0, 0}}, 2); }},
    {"shrink", "t.shrink(((0, 1), None, (1, 3)))", [](const Inputs& in) { return in.t.shrink({{0, 1}, {0, 4}, {1, 3}}); }},
    {"expand", "a.expand(4, 2, 3)", [](const Inputs& in) { return in.a.expand({4, 2, 3}); }},
    {"expand_keep", "bias.reshape(1, 4).expand(3, -1)", [](const Inputs& in) { return in.bias.reshape({1, 4}).expand({3, -1}); }},
    {"squeeze", "a.unsqueeze(0).squeeze(0)", [](const Inputs& in) { return in.a; }},
    {"squeeze_all", "a.unsqueeze(dim=1).squeeze()", [](const Inputs& in) { return in.a; }},
    {"flip", "a.flip(1)", [](const Inputs& in) { return in.a.flip({1}); }},
    {"flip_tuple", "a.flip((0, 1))", [](const Inputs& in) { return in.a.flip({0, 1}); }},
    {"repeat", "a.repeat(2, 1)", [](const Inputs& in) { return in.a.repeat({2, 1}); }},
    {"gather", "a.gather(1, i % 3)", [](const Inputs& in) { return in.a.gather(1, in.i.mod(in.i.scalar_like(3))); }},
    {"slice_method", "t.slice(2, 1, 3)", [](const Inputs& in) { return in.t.slice(2, 1, 3); }},
    {"take", "x.take(i % 4)", [](const Inputs& in) { return in.x.take(in.i.mod(in.i.scalar_like(4))); }},
    {"scatter", "a.scatter(1, i % 3, b, reduce='add')", [](const Inputs& in) {
       return in.a.scatter(1, in.i.mod(in.i.scalar_like(3)), in.b, "add");
     }},
    {"one_hot", "(i % 4).one_hot(4)", [](const Inputs& in) { return in.i.mod(in.i.scalar_like(4)).one_hot(4); }},
    {"triu", "x.triu(1) + x.tril(diagonal=-1)", [](const Inputs& in) { return in.x.triu(1) + in.x.tril(-1); }},
    {"topk", "x.topk(2)[0] + x.topk(2, largest=False)[1]", [](const Inputs& in) {
       return in.x.topk(2).first + in.x.topk(2, -1, false).second;
     }},
    {"sort", "x.sort(0, descending=True)[0]", [](const Inputs& in) { return in.x.sort(0, true).first; }},
    {"view", "x.view(-1)", [](const Inputs& in) { return in.x.reshape({-1}); }},
    {"contiguous", "x.contiguous()", [](const Inputs& in) { return in.x.contiguous(); }},
    // reductions
    {"var_keywords", "x.var(-1, keepdim=True, correction=0)", [](const Inputs& in) { return in.x.var({-1}, true, 0); }},
    {"std", "x.std()", [](const Inputs& in) { return in.x.std(); }},
    {"argmax", "x.argmax(axis=1)", [](const Inputs& in) { return in.x.argmax(1); }},
    {"argmin", "x.argmin()", [](const Inputs& in) { return in.x.argmin(); }},
    {"cumsum", "x.cumsum(1)", [](const Inputs& in) { return in.x.cumsum(1); }},
    {"logsumexp", "x.logsumexp(-1)", [](const Inputs& in) { return in.x.logsumexp(-1); }},
    {"max", "x.max(0)", [](const Inputs& in) { return in.x.max({0}); }},
    {"min_keepdim", "x.min(1, keepdim=True)", [](const Inputs& in) { return in.x.min({1}, true); }},
    {"prod", "x.prod(0)", [](const Inputs& in) { return in.x.prod({0}); }},
    {"any", "m.any(1)", [](const Inputs& in) { return in.m.any({1}); }},
    {"all", "m.all()", [](const Inputs& in) { return in.m.all(); }},
    {"log_softmax", "x.log_softmax(0)", [](const Inputs& in) { return in.x.log_softmax(0); }},
    // composite
    {"matmul_dtype", "a.matmul(w, dtype=dtypes.float64)", [](const Inputs& in) { return in.a.matmul(in.w, Scalar::Float64); }},
    {"linear", "a.linear(w.T, bias)", [](const Inputs& in) { return in.a.linear(in.w.transpose(), in.bias); }},
    {"max_pool2d", "img.max_pool2d(2)", [](const Inputs& in) { return in.img.max_pool2d(2); }},
    {"max_pool2d_keywords", "img.max_pool2d(kernel_size=3, stride=1, padding=1)",
     [](const Inputs& in) { return in.img.max_pool2d(3, 1, 1); }},
    {"avg_pool2d_pair", "img.avg_pool2d(kernel_size=(2, 2))", [](const Inputs& in) { return in.img.avg_pool2d(2); }},
    {"conv2d_keywords", "img.conv2d(k, bias[:3], stride=2, padding=(1, 1))", [](const Inputs& in) {
       return in.img.conv2d(in.k, in.bias.slice(0, 0, 3), 2, 1);
     }},
    {"layernorm", "x.layernorm()", [](const Inputs& in) { return in.x.layernorm(); }},
    {"layernorm_eps", "x.layernorm(eps=1e-3)", [](const Inputs& in) { return in.x.layernorm(-1, 1e-3); }},
    {"layernorm_affine", "x.layernorm(weight=y[0], bias=y[1])", [](const Inputs& in) {
       return in.x.layernorm(row(in.y, 0), row(in.y, 1));
     }},
    {"batchnorm", "img.batchnorm(bias[:2], bias[1:3], bias[2:], bias[:2] + 1)", [](const Inputs& in) {
       Tensor b = in.bias;
       return in.img.batchnorm(b.slice(0, 0, 2), b.slice(0, 1, 3), b.slice(0, 2, 4), b.slice(0, 0, 2) + 1.0);
     }},
    {"attention", "x.scaled_dot_product_attention(x, y, is_causal=True)", [](const Inputs& in) {
       return in.x.scaled_dot_product_attention(in.x, in.y, std::nullopt, true);
     }},
    {"attention_mask", "x.scaled_dot_product_attention(x, y, attn_mask=Tensor.ones(4, 4, dtype=dtypes.bool))",
     [](const Inputs& in) { return in.x.scaled_dot_product_attention(in.x, in.y, Tensor::ones({4, 4}, Scalar::Bool)); }},
    // elementwise methods with arguments
    {"clamp", "x.clamp(-0.5, 0.5)", [](const Inputs& in) { return in.x.clamp(-0.5, 0.5); }},
    {"clip_min", "x.clip(min_=0)", [](const Inputs& in) { return in.x.clamp(0, std::nullopt); }},
    {"clamp_max", "x.clamp(max=1)", [](const Inputs& in) { return in.x.clamp(std::nullopt, 1); }},
    {"softplus", "x.softplus(beta=2)", [](const Inputs& in) { return in.x.softplus(2); }},
    {"leaky_relu", "x.leaky_relu(0.2)", [](const Inputs& in) { return in.x.leaky_relu(0.2); }},
    {"leaky_relu_keyword", "x.leaky_relu(neg_slope=0.1)", [](const Inputs& in) { return in.x.leaky_relu(0.1); }},
    {"pow_method", "t.pow(3)", [](const Inputs& in) { return in.t.pow(3.0); }},
    {"lshift_method", "i.lshift(bits=2)", [](const Inputs& in) { return in.i.lshift(2); }},
    {"logical", "m.logical_and(a > 0).logical_or(m.logical_not())", [](const Inputs& in) {
       return in.m.logical_and(in.a > 0.0).logical_or(in.m.logical_not());
     }},
    {"bitwise", "i.bitwise_and(5).bitwise_or(i).bitwise_xor(2).bitwise_not()", [](const Inputs& in) {
       Tensor s = in.i.bitwise_and(in.i.scalar_like(5)).bitwise_or(in.i);
       return s.bitwise_xor(s.scalar_like(2)).bitwise_not();
     }},
    // layout of the text
    {"multi_line", "a +\n  b  # a comment\n", [](const Inputs& in) { return in.a + in.b; }},
    {"double_quotes", "x.cast(\"float64\")", [](const Inputs& in) { return in.x.cast(Scalar::Float64); }},
};
// clang-format on

class ExprCase : public ::testing::TestWithParam<Case> {};

TEST_P(ExprCase, MatchTheTensorApi) {
  Inputs in;
  const Case& c = GetParam();
  Tensor got = evaluate(c.text, in.map());
  EXPECT_TRUE(same_values(got, c.build(in))) << c.text;
}

INSTANTIATE_TEST_SUITE_P(Cases, ExprCase, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

// Methods with no arguments map onto the Tensor method of the same name.
TEST(ExprValues, UnaryMethods) {
  using F = Tensor (Tensor::*)() const;
  const std::pair<const char*, F> methods[] = {{"neg", &Tensor::neg},
                                               {"abs", &Tensor::abs},
                                               {"sqrt", &Tensor::sqrt},
                                               {"rsqrt", &Tensor::rsqrt},
                                               {"reciprocal", &Tensor::reciprocal},
                                               {"exp", &Tensor::exp},
                                               {"log", &Tensor::log},
                                               {"exp2", &Tensor::exp2},
                                               {"log2", &Tensor::log2},
                                               {"sin", &Tensor::sin},
                                               {"cos", &Tensor::cos},
                                               {"tan", &Tensor::tan},
                                               {"tanh", &Tensor::tanh},
                                               {"sigmoid", &Tensor::sigmoid},
                                               {"erf", &Tensor::erf},
                                               {"floor", &Tensor::floor},
                                               {"ceil", &Tensor::ceil},
                                               {"round", &Tensor::round},
                                               {"trunc", &Tensor::trunc},
                                               {"square", &Tensor::square},
                                               {"sign", &Tensor::sign},
                                               {"relu", &Tensor::relu},
                                               {"relu6", &Tensor::relu6},
                                               {"gelu", &Tensor::gelu},
                                               {"silu", &Tensor::silu},
                                               {"swish", &Tensor::silu},
                                               {"hardswish", &Tensor::hardswish},
                                               {"mish", &Tensor::mish},
                                               {"logical_not", &Tensor::logical_not}};
  Inputs in;
  Tensor x = in.x * 3.0;
  for (auto [name, f] : methods) {
    std::string text = "(x * 3)." + std::string(name) + "()";
    EXPECT_TRUE(same_values(evaluate(text, in.map()), (x.*f)())) << text;
  }
  EXPECT_TRUE(same_values(evaluate("i.bitwise_not()", in.map()), in.i.bitwise_not()));
  EXPECT_TRUE(same_values(evaluate("a.float() + i.double() + i.long() + m.int()", in.map()),
                          in.a.cast(Scalar::Float32) + in.i.cast(Scalar::Float64) +
                              in.i.cast(Scalar::Int64) + in.m.cast(Scalar::Int32)));
  EXPECT_TRUE(same_values(evaluate("a.bool()", in.map()), in.a.cast(Scalar::Bool)));
}

// Methods with one operand take a tensor or a number (a scalar of the receiver's kind).
TEST(ExprValues, BinaryMethods) {
  using F = Tensor (Tensor::*)(const Tensor&) const;
  const std::pair<const char*, F> methods[] = {
      {"div", &Tensor::div},         {"floordiv", &Tensor::floordiv},
      {"mod", &Tensor::mod},         {"pow", &Tensor::pow},
      {"maximum", &Tensor::maximum}, {"minimum", &Tensor::minimum},
      {"eq", &Tensor::eq},           {"ne", &Tensor::ne},
      {"lt", &Tensor::lt},           {"le", &Tensor::le},
      {"gt", &Tensor::gt},           {"ge", &Tensor::ge}};
  Inputs in;
  Tensor t = in.t.reshape({3, 4, 5}), u = in.t.flip({0}) + 0.5;
  for (auto [name, f] : methods) {
    std::string with_tensor = "t." + std::string(name) + "(t.flip(0) + 0.5)";
    EXPECT_TRUE(same_values(evaluate(with_tensor, in.map()), (t.*f)(u))) << with_tensor;
    std::string with_number = "t." + std::string(name) + "(0.75)";
    EXPECT_TRUE(same_values(evaluate(with_number, in.map()), (t.*f)(t.scalar_like(0.75))))
        << with_number;
  }
  EXPECT_TRUE(same_values(evaluate("t.add(2).sub(t).mul(t, )", in.map()), (t + 2.0 - t) * t));
  EXPECT_TRUE(same_values(evaluate("a.dot(w) + a.matmul(x=w)", in.map()),
                          in.a.matmul(in.w) + in.a.matmul(in.w)));
}

TEST(ExprValues, NumbersBecomeScalarTensors) {
  Inputs in;
  EXPECT_TRUE(same_values(evaluate("1 + 2", {}), Tensor(3, Scalar::Int32)));
  EXPECT_TRUE(same_values(evaluate("2.5", {}), Tensor(2.5)));
  EXPECT_TRUE(same_values(evaluate("3 > 2", {}), Tensor(1, Scalar::Bool)));
  EXPECT_TRUE(same_values(evaluate("2 ** 62 // 2 ** 60 - 7 % -3", {}), Tensor(6, Scalar::Int32)));
  EXPECT_TRUE(same_values(evaluate("(1 << 4) | 3 ^ 1 & 7", {}), Tensor(18, Scalar::Int32)));
  EXPECT_TRUE(same_values(evaluate("-7.5 // 2 + -7.5 % 2", {}), Tensor(-4 + 0.5)));
  EXPECT_TRUE(same_values(evaluate("x.shape[0]", in.map()), Tensor(4, Scalar::Int32)));
}

// The text builds the same graph the Tensor API does: equal tensors share their interned UOps.
TEST(ExprValues, SameGraphAsTheTensorApi) {
  Inputs in;
  Tensor got = evaluate("(a.matmul(w) + bias).relu()", in.map());
  EXPECT_EQ(got.uop(), (in.a.matmul(in.w) + in.bias).relu().uop());
}

TEST(ExprInputNames, InFirstUseOrder) {
  using V = std::vector<std::string>;
  EXPECT_EQ(input_names("(a.matmul(w) + b).relu()"), (V{"a", "w", "b"}));
  EXPECT_EQ(input_names("Tensor.cat(x, y, x, dim=1).cast(dtypes.float16)"), (V{"x", "y"}));
  EXPECT_EQ(input_names("x.sum(axis=k) + x.shape[0]"), (V{"x", "k"}));
  EXPECT_EQ(input_names("q[r:s, ...] + 1"), (V{"q", "r", "s"}));
  EXPECT_EQ(input_names("1 + 2"), V{});
  EXPECT_THROW(input_names("a +"), UserError);
}

} // namespace
} // namespace beamlab::expr::testing

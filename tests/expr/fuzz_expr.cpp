// libFuzzer target for the expression front-end: the tokenizer, the parser, argument binding
// and the lazy graph building of Tensor's API over a few small inputs. Nothing is realized.
//
// Properties checked on every input:
//   * whatever the text, the only exception is a one-line UserError "expr:LINE:COL: ..."
//     (an InternalError or any other exception escapes and aborts);
//   * input_names() parses exactly what evaluate() parses: if it fails, evaluate() fails too;
//     if evaluate() succeeds, every name input_names() lists is an input.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "frontends/expr/expr.hpp"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text, const std::string& detail) {
  std::fprintf(stderr, "fuzz_expr: %s\ntext: %.*s\n%s\n", what, static_cast<int>(text.size()),
               text.data(), detail.c_str());
  std::abort();
}

const std::map<std::string, beamlab::Tensor>& inputs() {
  using beamlab::Scalar;
  using beamlab::Tensor;
  static const std::map<std::string, Tensor> kInputs = {
      {"a", Tensor::full({2, 3}, 0.5)},           {"b", Tensor::ones({3})},
      {"w", Tensor::full({3, 4}, -1.5)},          {"i", Tensor::arange(6).reshape({2, 3})},
      {"m", Tensor::zeros({2, 3}, Scalar::Bool)}, {"h", Tensor::ones({2, 3}, Scalar::Float16)},
      {"img", Tensor::ones({1, 2, 4, 4})},        {"k", Tensor::ones({3, 2, 3, 3})}};
  return kInputs;
}

bool well_formed(const std::string& message) {
  return message.rfind("expr:", 0) == 0 && message.find('\n') == std::string::npos;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace beamlab;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  expr::Limits limits;
  limits.max_elements = int64_t{1} << 20; // host-filled tensors (arange, rand) stay small
  std::vector<std::string> names;
  bool parsed = true;
  try {
    names = expr::input_names(text, limits);
  } catch (const UserError& e) {
    if (!well_formed(e.what())) fail("input_names: a malformed message", text, e.what());
    parsed = false;
  }
  try {
    (void)expr::evaluate(text, inputs(), limits);
  } catch (const UserError& e) {
    if (!well_formed(e.what())) fail("evaluate: a malformed message", text, e.what());
    return 0;
  }
  if (!parsed) fail("evaluate accepts what input_names rejects", text, "");
  for (const std::string& n : names)
    if (!inputs().count(n)) fail("input_names lists a name that is no input", text, n);
  return 0;
}

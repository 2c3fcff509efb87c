// Helpers of the expression tests: the inputs they evaluate over, comparing a tensor built
// from text with one built by hand, and catching an expression's error message.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "frontends/expr/expr.hpp"

namespace beamlab::expr::testing {

/// Named inputs of several shapes and dtypes, as members and as the map evaluate() takes.
struct Inputs {
  Tensor a = Tensor::rand({2, 3}, 1) * 2.0 - 1.0;
  Tensor b = Tensor::rand({2, 3}, 2) * 2.0 - 1.0;
  Tensor w = Tensor::rand({3, 4}, 3) - 0.5;
  Tensor bias = Tensor::rand({4}, 4);
  Tensor x = Tensor::randn({4, 6}, 5);
  Tensor y = Tensor::randn({4, 6}, 6);
  Tensor t = Tensor::rand({3, 4, 5}, 7);
  Tensor img = Tensor::rand({1, 2, 5, 5}, 8);
  Tensor k = Tensor::rand({3, 2, 3, 3}, 9) - 0.5;
  Tensor i = Tensor::arange(6).reshape({2, 3});
  Tensor m = Tensor::rand({2, 3}, 10) > 0.5;

  std::map<std::string, Tensor> map() const {
    return {{"a", a}, {"b", b},     {"w", w}, {"bias", bias}, {"x", x}, {"y", y},
            {"t", t}, {"img", img}, {"k", k}, {"i", i},       {"m", m}};
  }
};

/// Realizes both and compares shape, dtype and every value (NaNs equal, 1e-5 relative).
inline ::testing::AssertionResult same_values(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure()
           << "shape " << shape_str(got.shape()) << ", want " << shape_str(want.shape());
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure()
           << "dtype " << got.dtype().str() << ", want " << want.dtype().str();
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    bool both_nan = std::isnan(g[i]) && std::isnan(w[i]);
    if (both_nan || g[i] == w[i] || std::abs(g[i] - w[i]) <= 1e-5f * std::max(1.0f, std::abs(w[i])))
      continue;
    return ::testing::AssertionFailure() << "element " << i << " is " << g[i] << ", want " << w[i];
  }
  return ::testing::AssertionSuccess();
}

/// The message of the UserError evaluating `text` raises, or "no error".
inline std::string error_of(const std::string& text, const std::map<std::string, Tensor>& inputs,
                            const Limits& limits = {}) {
  try {
    (void)evaluate(text, inputs, limits);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

} // namespace beamlab::expr::testing

// A reference interpreter for integer/bool scalar UOp graphs, for differential tests.
//
// Written independently of the simplifier and of const_eval: plain C++ arithmetic on
// int64, wrapped to the dtype's width after every op, truncating division, C remainder.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "engine/ir/uop.hpp"

namespace beamlab::testing {

/// Values of the leaves: variables by name, ranges by axis id.
struct Point {
  std::map<std::string, int64_t> vars;
  std::map<int64_t, int64_t> ranges;
};

class Evaluator {
public:
  explicit Evaluator(const Point& p) : point_(p) {}
  /// The value of `u`; division by zero or an unsupported op fails the calling test.
  int64_t eval(const UOpPtr& u);

private:
  static int64_t wrap(int64_t v, DType dt);
  const Point& point_;
  std::unordered_map<const UOp*, int64_t> memo_;
};

} // namespace beamlab::testing

// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (inference form: the value,
// no gradient). The class axis is 1; a target picks its class by a one-hot compare, so a
// target out of range (or equal to ignore_index) contributes nothing. 'mean' divides by the
// picked weights' sum (the count of kept targets without weights), as ONNX's reference does.
#include "frontends/onnx/node.hpp"

namespace beamlab::onnx {
namespace {

Tensor nll(const Node& n, const Tensor& input, const Tensor& target,
           const std::optional<Tensor>& weight) {
  user_assert(input.ndim() >= 2 && target.ndim() == input.ndim() - 1)
      << "input must be (N, C, ...) and target (N, ...), not " << shape_str(input.shape())
      << " and " << shape_str(target.shape());
  int64_t c = input.shape()[1];
  Shape along(static_cast<size_t>(input.ndim()), 1);
  along[1] = c;
  Tensor t = target.cast(Scalar::Int64).unsqueeze(1);
  Tensor hit = t.eq(Tensor::arange(0, static_cast<double>(c), 1, Scalar::Int64).reshape(along));
  if (n.has_attr("ignore_index")) {
    double ignore = static_cast<double>(n.attr_int("ignore_index", 0));
    hit = hit.logical_and(t.ne(Tensor(ignore, Scalar::Int64)));
  }
  Tensor zero = input.scalar_like(0);
  Tensor picked = hit.where(input, zero).sum({1});
  Tensor w = weight ? hit.where(weight->cast(input.dtype()).reshape(along), zero).sum({1})
                    : hit.cast(input.dtype()).sum({1});
  Tensor loss = -picked * w;
  std::string reduction = n.attr_string("reduction", "mean");
  if (reduction == "none") return loss;
  if (reduction == "sum") return loss.sum();
  user_assert(reduction == "mean")
      << "reduction '" << reduction << "' is not one of none, sum, mean";
  return loss.sum() / w.sum();
}

} // namespace

void add_loss_ops(ConverterTable& t) {
  t["NegativeLogLikelihoodLoss"] = [](const Node& n) {
    return std::vector<Value>{nll(n, n.in(0), n.in(1), n.opt(2))};
  };
  t["SoftmaxCrossEntropyLoss"] = [](const Node& n) {
    Tensor log_prob = n.in(0).log_softmax(1);
    return std::vector<Value>{nll(n, log_prob, n.in(1), n.opt(2)), log_prob};
  };
}

} // namespace beamlab::onnx

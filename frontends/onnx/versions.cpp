// Op versions above opset 21; see versions.hpp.
#include "frontends/onnx/versions.hpp"

#include <map>
#include <vector>

namespace beamlab::onnx {

int64_t version_after_max(const std::string& op, int64_t opset) {
  // Every default-domain op with a version above 21, from ONNX 1.23's docs/Changelog.md.
  static const std::map<std::string, std::vector<int64_t>> kNewer = {
      {"Acos", {22}},
      {"Acosh", {22}},
      {"Asin", {22}},
      {"Asinh", {22}},
      {"Atan", {22}},
      {"Atanh", {22}},
      {"Attention", {23, 24, 25}},
      {"AveragePool", {22}},
      {"Bernoulli", {22}},
      {"BitCast", {26}},
      {"Cast", {23, 24, 25}},
      {"CastLike", {23, 24, 25}},
      {"CausalConvWithState", {27}},
      {"Celu", {28}},
      {"Constant", {23, 24, 25}},
      {"ConstantOfShape", {23, 24, 25}},
      {"Conv", {22}},
      {"ConvTranspose", {22}},
      {"Cos", {22}},
      {"Cosh", {22}},
      {"CumProd", {26}},
      {"DeformConv", {22}},
      {"DequantizeLinear", {23, 24, 25}},
      {"Det", {22}},
      {"Dropout", {22}},
      {"Elu", {22}},
      {"EyeLike", {22}},
      {"Flatten", {23, 24, 25}},
      {"GRU", {22}},
      {"GlobalAveragePool", {22}},
      {"GlobalLpPool", {22}},
      {"GlobalMaxPool", {22}},
      {"GridSample", {22}},
      {"HardSigmoid", {22}},
      {"HardSwish", {22}},
      {"Identity", {23, 24, 25}},
      {"If", {23, 24, 25}},
      {"InstanceNormalization", {22}},
      {"LSTM", {22}},
      {"LinearAttention", {27}},
      {"Loop", {23, 24, 25}},
      {"LpNormalization", {22}},
      {"LpPool", {22}},
      {"MaxPool", {22}},
      {"MaxRoiPool", {22}},
      {"MaxUnpool", {22}},
      {"Mish", {22}},
      {"Multinomial", {22}},
      {"NegativeLogLikelihoodLoss", {22}},
      {"Pad", {23, 24, 25}},
      {"QuantizeLinear", {23, 24, 25}},
      {"RMSNormalization", {23}},
      {"RNN", {22}},
      {"RandomNormal", {22}},
      {"RandomNormalLike", {22}},
      {"RandomUniform", {22}},
      {"RandomUniformLike", {22}},
      {"Range", {27}},
      {"Reshape", {23, 24, 25}},
      {"RoiAlign", {22}},
      {"RotaryEmbedding", {23}},
      {"Round", {22}},
      {"Scan", {23, 24, 25}},
      {"Selu", {22}},
      {"Shape", {23, 24, 25}},
      {"Sin", {22}},
      {"Sinh", {22}},
      {"Size", {23, 24, 25}},
      {"Softplus", {22}},
      {"Softsign", {22}},
      {"SplitToSequence", {24}},
      {"Squeeze", {23, 24, 25}},
      {"SwiGLU", {28}},
      {"Swish", {24}},
      {"Tan", {22}},
      {"TensorScatter", {24}},
      {"ThresholdedRelu", {22}},
      {"TopK", {24}},
      {"Transpose", {23, 24, 25}},
      {"Unsqueeze", {23, 24, 25}}};
  auto it = kNewer.find(op);
  if (it == kNewer.end()) return 0;
  int64_t newest = 0;
  for (int64_t v : it->second)
    if (v <= opset) newest = v;
  return newest;
}

} // namespace beamlab::onnx

// libFuzzer over ONNX model bytes: parsing, ONNX's checker, initializer decoding and input
// shape resolution must end in a model or a UserError, never a crash, a hang or another
// exception. (Building runs kernels, so the fuzzer stops at the parsed model.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "frontends/onnx/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    beamlab::onnx::Model m = beamlab::onnx::Model::parse(bytes, "fuzz.onnx");
    (void)m.inputs();
  } catch (const beamlab::UserError& e) {
    std::string_view what = e.what();
    if (what.empty() || what.find('\n') != std::string_view::npos) std::abort(); // one line
  }
  return 0;
}

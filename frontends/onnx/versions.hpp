// Which version of a default-domain op a model's opset means, and whether beamlab knows it.
//
// A model imports one opset of the default domain; each op it uses is then the op's newest
// version at or below that opset. beamlab's converters implement every version up to opset 21
// (kMaxOpset): Debian's libonnx 1.12 names the versions up to 17, and what opsets 18 to 21
// changed each converter handles by its node's opset. Versions above 21, up to ONNX's opset 28
// (kNewestKnownOpset), are known by number only, so a model of a newer opset loads when none
// of its ops changed after 21, and otherwise fails on the first op that did, naming it.
#pragma once

#include <cstdint>
#include <string>

namespace beamlab::onnx {

/// The newest opset whose every op version the converters implement.
inline constexpr int64_t kMaxOpset = 21;
/// The newest opset whose op versions are known (ONNX 1.23's).
inline constexpr int64_t kNewestKnownOpset = 28;

/// The version of `op` that opset `opset` means when it is newer than kMaxOpset (the op changed
/// after 21), else 0.
int64_t version_after_max(const std::string& op, int64_t opset);

} // namespace beamlab::onnx

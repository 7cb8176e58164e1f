// The converter suites' view of a conversion: the model an ONNX graph converts to, and
// the kinds of its ops in order (what fused into what).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "edgegan/edgegan.h"

namespace edgegan::testing {

inline std::shared_ptr<const Model> converted_model(const std::string& onnx_bytes) {
  return Model::from_bytes(converter::convert_onnx(onnx_bytes, "t.onnx").egan);
}

inline std::vector<std::string> op_kinds(const Model& m) {
  std::vector<std::string> k;
  for (const auto& op : m.ops()) k.push_back(op.kind);
  return k;
}

}  // namespace edgegan::testing

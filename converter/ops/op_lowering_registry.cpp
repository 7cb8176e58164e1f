// The table of op lowerings, built from the schema's list of kinds (entry K is
// op_lowering<K>(), defined in that kind's file), and the ONNX op types each takes.
#include <map>

#include "converter/errors.h"
#include "engine/format/op_kind_table.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

using LoweringFn = const OpLowering& (*)();
struct Lowerings {
  template <schema::OpKind K>
  static constexpr LoweringFn at = &op_lowering<K>;
};
constexpr auto kLowerings = op_kind_table<Lowerings>();

const std::map<std::string, const OpLowering*>& by_onnx_op() {
  static const std::map<std::string, const OpLowering*> map = [] {
    std::map<std::string, const OpLowering*> m;
    for (LoweringFn fn : kLowerings)
      for (const std::string& onnx : fn().onnx_ops())
        if (!m.emplace(onnx, &fn()).second) throw ConvertError("internal: two kinds lower ONNX op '" + onnx + "'");
    return m;
  }();
  return map;
}

}  // namespace

const OpLowering& op_lowering(schema::OpKind kind) {
  const int i = op_kind_index(kind);
  if (i < 0) throw ConvertError("internal: unknown op kind " + std::to_string(static_cast<int>(kind)));
  return kLowerings[static_cast<size_t>(i)]();
}

const OpLowering* lowering_of_onnx(const std::string& onnx_op) {
  const auto& m = by_onnx_op();
  const auto it = m.find(onnx_op);
  return it == m.end() ? nullptr : it->second;
}

}  // namespace edgegan::converter

// The table of op lowerings, built from the schema's list of kinds (entry K is
// op_lowering<K>(), defined in that kind's file), and the ONNX op types each takes.
#include <array>
#include <map>
#include <utility>

#include "converter/errors.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

using LoweringFn = const OpLowering& (*)();

template <size_t... I>
constexpr std::array<LoweringFn, sizeof...(I)> lowering_table(std::index_sequence<I...>) {
  return {&op_lowering<static_cast<schema::OpKind>(I + 1)>...};  // kind 0 is NONE
}

constexpr auto kLowerings = lowering_table(std::make_index_sequence<static_cast<size_t>(schema::OpKind_MAX)>{});

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
  const int k = static_cast<int>(kind);
  if (k < 1 || k > static_cast<int>(schema::OpKind_MAX)) throw ConvertError("internal: unknown op kind " + std::to_string(k));
  return kLowerings[static_cast<size_t>(k - 1)]();
}

const OpLowering* lowering_of_onnx(const std::string& onnx_op) {
  const auto& m = by_onnx_op();
  const auto it = m.find(onnx_op);
  return it == m.end() ? nullptr : it->second;
}

}  // namespace edgegan::converter

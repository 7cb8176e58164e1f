// The table of op definitions, built from the schema's list of kinds: entry K is
// op_definition<K>(), which the op's own file defines. Adding a kind to the schema
// without defining it (or deleting an op's file) leaves op_definition<K> undefined,
// and the link fails naming it; there is no list of ops to keep in step here.
#include <array>
#include <utility>

#include "engine/ops/op_def.h"

namespace edgegan {
namespace {

using DefinitionFn = const OpDef& (*)();

template <size_t... I>
constexpr std::array<DefinitionFn, sizeof...(I)> definition_table(std::index_sequence<I...>) {
  // Kind 0 is NONE; kinds 1..OpKind_MAX are the ops.
  return {&op_definition<static_cast<schema::OpKind>(I + 1)>...};
}

constexpr auto kDefinitions = definition_table(std::make_index_sequence<static_cast<size_t>(schema::OpKind_MAX)>{});

}  // namespace

const OpDef& op_def(schema::OpKind kind) {
  const int k = static_cast<int>(kind);
  if (k < 1 || k > static_cast<int>(schema::OpKind_MAX)) throw Error("unknown op kind " + std::to_string(k));
  return kDefinitions[static_cast<size_t>(k - 1)]();
}

std::string op_label(const schema::Op& op, int index) {
  return "op " + std::to_string(index) + (op.name() ? " '" + op.name()->str() + "'" : std::string());
}

cpu::Epilogue KernelArgs::epilogue(const schema::Epilogue* ep) const {
  cpu::Epilogue e;
  if (!ep) return e;
  e.bias = weights.f32(ep->bias());
  e.activation = to_cpu(ep->activation());
  e.alpha = ep->alpha();
  e.beta = ep->beta();
  e.slope = weights.f32(ep->slope());
  return e;
}

}  // namespace edgegan

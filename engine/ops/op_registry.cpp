// The table of op definitions, built from the schema's list of kinds: entry K is
// op_definition<K>(), which the op's own file defines. Adding a kind to the schema
// without defining it (or deleting an op's file) leaves op_definition<K> undefined,
// and the link fails naming it; there is no list of ops to keep in step here.
#include "engine/format/op_kind_table.h"
#include "engine/ops/op_def.h"

namespace edgegan {
namespace {

struct Definitions {
  template <schema::OpKind K>
  static constexpr const OpDef& (*at)() = &op_definition<K>;
};
constexpr auto kDefinitions = op_kind_table<Definitions>();

}  // namespace

const OpDef& op_def(schema::OpKind kind) {
  const int i = op_kind_index(kind);
  if (i < 0) throw Error("unknown op kind " + std::to_string(static_cast<int>(kind)));
  return kDefinitions[static_cast<size_t>(i)]();
}

std::string op_label(const schema::Op& op, int index) {
  return "op " + std::to_string(index) + (op.name() ? " '" + op.name()->str() + "'" : std::string());
}

cpu::Epilogue KernelArgs::epilogue(const schema::Epilogue* ep) const {
  cpu::Epilogue e;
  if (!ep) return e;
  e.bias = weights.f32(ep->bias());
  e.activation = to_activation(ep->activation());
  e.alpha = ep->alpha();
  e.beta = ep->beta();
  e.slope = weights.f32(ep->slope());
  return e;
}

}  // namespace edgegan

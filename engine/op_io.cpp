#include "engine/model_impl.h"

namespace edgegan {

std::vector<int> op_inputs(const schema::Op& op) {
  switch (op.kind_type()) {
    case schema::OpKind_ConvTranspose2D: return {op.kind_as_ConvTranspose2D()->input()};
    case schema::OpKind_Conv2D: return {op.kind_as_Conv2D()->input()};
    case schema::OpKind_Dense: return {op.kind_as_Dense()->input()};
    case schema::OpKind_Embedding: return {op.kind_as_Embedding()->indices()};
    case schema::OpKind_Concat: return {op.kind_as_Concat()->inputs()->begin(), op.kind_as_Concat()->inputs()->end()};
    case schema::OpKind_Reshape: return {op.kind_as_Reshape()->input()};
    case schema::OpKind_ChannelAffine: return {op.kind_as_ChannelAffine()->input()};
    case schema::OpKind_Elementwise: return {op.kind_as_Elementwise()->input()};
    default: return {};
  }
}

int op_output(const schema::Op& op) {
  switch (op.kind_type()) {
    case schema::OpKind_ConvTranspose2D: return op.kind_as_ConvTranspose2D()->output();
    case schema::OpKind_Conv2D: return op.kind_as_Conv2D()->output();
    case schema::OpKind_Dense: return op.kind_as_Dense()->output();
    case schema::OpKind_Embedding: return op.kind_as_Embedding()->output();
    case schema::OpKind_Concat: return op.kind_as_Concat()->output();
    case schema::OpKind_Reshape: return op.kind_as_Reshape()->output();
    case schema::OpKind_ChannelAffine: return op.kind_as_ChannelAffine()->output();
    case schema::OpKind_Elementwise: return op.kind_as_Elementwise()->output();
    default: return -1;
  }
}

}  // namespace edgegan

#include "engine/ops/op_kernel.h"

namespace edgegan {

cpu::Activation to_cpu(schema::Activation a) {
  switch (a) {
    case schema::Activation_Relu: return cpu::Activation::kRelu;
    case schema::Activation_LeakyRelu: return cpu::Activation::kLeakyRelu;
    case schema::Activation_Tanh: return cpu::Activation::kTanh;
    case schema::Activation_Sigmoid: return cpu::Activation::kSigmoid;
    default: return cpu::Activation::kNone;
  }
}

cpu::Epilogue make_epilogue(const Model::Impl& model, const schema::Epilogue* ep) {
  cpu::Epilogue e;
  if (!ep) return e;
  e.bias = model.f32(ep->bias());
  e.activation = to_cpu(ep->activation());
  e.alpha = ep->alpha();
  return e;
}

cpu::ConvShape deconv_shape_of(const Model::Impl& m, const schema::ConvTranspose2D& op, int64_t batch) {
  const TensorDesc& x = m.tensors[static_cast<size_t>(op.input())];
  const TensorDesc& y = m.tensors[static_cast<size_t>(op.output())];
  return {batch, op.in_channels(), op.out_channels(),
          {x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), y.dims[1]},
          {x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), y.dims[2]}};
}

cpu::ConvShape conv_shape_of(const Model::Impl& m, const schema::Conv2D& op, int64_t batch) {
  const TensorDesc& x = m.tensors[static_cast<size_t>(op.input())];
  const TensorDesc& y = m.tensors[static_cast<size_t>(op.output())];
  return {batch, op.in_channels(), op.out_channels(),
          {x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), y.dims[1]},
          {x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), y.dims[2]}};
}

std::unique_ptr<OpKernel> create_cpu_op(const Model::Impl& m, const schema::Op& op, ConvTransposeAlgo algo, int64_t batch, int threads,
                                        MemoryTracker* tracker) {
  switch (op.kind_type()) {
    case schema::OpKind_ConvTranspose2D: return make_conv_transpose2d(m, *op.kind_as_ConvTranspose2D(), algo, batch, threads, tracker);
    case schema::OpKind_Conv2D: return make_conv2d(m, *op.kind_as_Conv2D(), batch);
    case schema::OpKind_Dense: return make_dense(m, *op.kind_as_Dense(), batch);
    case schema::OpKind_Embedding: return make_embedding(m, *op.kind_as_Embedding(), batch, op.name() ? op.name()->str() : "");
    case schema::OpKind_Concat: return make_concat(m, *op.kind_as_Concat(), batch);
    case schema::OpKind_Reshape: return make_reshape(m, *op.kind_as_Reshape(), batch);
    case schema::OpKind_ChannelAffine: return make_channel_affine(m, *op.kind_as_ChannelAffine(), batch);
    case schema::OpKind_Elementwise: return make_elementwise(m, *op.kind_as_Elementwise(), batch);
    default: throw Error("unsupported op kind");  // unreachable: validation rejects unknown kinds
  }
}

}  // namespace edgegan

// Text pieces `inspect` and messages share across op definitions.
#pragma once

#include <string>

#include "egan_generated.h"
#include "engine/model_impl.h"
#include "engine/text_stream.h"

namespace edgegan {

inline const char* activation_name(schema::Activation a) {
  switch (a) {
    case schema::Activation_None: return "";
    case schema::Activation_Relu: return "relu";
    case schema::Activation_LeakyRelu: return "leaky_relu";
    case schema::Activation_Tanh: return "tanh";
    case schema::Activation_Sigmoid: return "sigmoid";
    case schema::Activation_Elu: return "elu";
    case schema::Activation_Selu: return "selu";
    case schema::Activation_Clip: return "clip";
    case schema::Activation_HardSigmoid: return "hard_sigmoid";
    case schema::Activation_HardSwish: return "hard_swish";
    case schema::Activation_Softplus: return "softplus";
    case schema::Activation_Mish: return "mish";
    case schema::Activation_PRelu: return "prelu";
    case schema::Activation_Gelu: return "gelu";
    case schema::Activation_GeluTanh: return "gelu_tanh";
    case schema::Activation_Silu: return "silu";
  }
  return "";
}

// " relu", " leaky_relu(0.2)" or "".
inline std::string activation_text(schema::Activation a, float alpha, float beta = 0.f) {
  if (a == schema::Activation_None) return "";
  std::string s = std::string(" ") + activation_name(a);
  auto os = text_stream();
  if (a == schema::Activation_LeakyRelu || a == schema::Activation_Elu) os << "(" << alpha << ")";
  if (a == schema::Activation_Selu || a == schema::Activation_Clip || a == schema::Activation_HardSigmoid) os << "(" << alpha << "," << beta << ")";
  return s + os.str();
}

// " +bias relu" and the like.
inline std::string epilogue_text(const schema::Epilogue* ep) {
  if (!ep) return "";
  return (ep->bias() ? std::string(" +bias") : std::string()) + activation_text(ep->activation(), ep->alpha(), ep->beta());
}

// " + residual t12 'name'" for a fused residual Add (Conv2D, GroupNorm), or "" (-1: none).
inline std::string residual_text(const Model::Impl& m, int residual) {
  if (residual < 0 || static_cast<size_t>(residual) >= m.tensors.size()) return "";
  return " + residual t" + std::to_string(residual) + " '" + m.tensors[static_cast<size_t>(residual)].name + "'";
}

// "k4x4 s2x2 pads(t,l,b,r) 1,1,1,1 +bias relu", for Conv2D and ConvTranspose2D alike.
template <typename ConvOp>
std::string conv_text(const ConvOp& c) {
  auto os = text_stream();
  os << "k" << c.kernel_h() << "x" << c.kernel_w() << " s" << c.stride_h() << "x" << c.stride_w() << " pads(t,l,b,r) " << c.pad_top()
     << "," << c.pad_left() << "," << c.pad_bottom() << "," << c.pad_right();
  if (c.dilation_h() != 1 || c.dilation_w() != 1) os << " dilation " << c.dilation_h() << "x" << c.dilation_w();
  if (c.groups() != 1) os << " groups " << c.groups();
  os << epilogue_text(c.epilogue());
  return os.str();
}

}  // namespace edgegan

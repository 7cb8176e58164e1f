// The model file's activation numbering is the kernels' one (kernels_common/activation.h,
// the enum every backend uses): a kernel reads the file's value as it is. Both sides are
// listed here once, so a value added to one and not the other fails the build.
#pragma once

#include "egan_generated.h"
#include "kernels_common/activation.h"

namespace edgegan {

static_assert(static_cast<int>(schema::Activation_MAX) + 1 == kernels::kActivationCount, "schema and kernels list the same activations");
constexpr bool same_activation(schema::Activation file, kernels::Activation kernel) { return static_cast<int>(file) == static_cast<int>(kernel); }
static_assert(same_activation(schema::Activation_None, kernels::Activation::kNone) &&
                  same_activation(schema::Activation_Relu, kernels::Activation::kRelu) &&
                  same_activation(schema::Activation_LeakyRelu, kernels::Activation::kLeakyRelu) &&
                  same_activation(schema::Activation_Tanh, kernels::Activation::kTanh) &&
                  same_activation(schema::Activation_Sigmoid, kernels::Activation::kSigmoid) &&
                  same_activation(schema::Activation_Elu, kernels::Activation::kElu) &&
                  same_activation(schema::Activation_Selu, kernels::Activation::kSelu) &&
                  same_activation(schema::Activation_Clip, kernels::Activation::kClip) &&
                  same_activation(schema::Activation_HardSigmoid, kernels::Activation::kHardSigmoid) &&
                  same_activation(schema::Activation_HardSwish, kernels::Activation::kHardSwish) &&
                  same_activation(schema::Activation_Softplus, kernels::Activation::kSoftplus) &&
                  same_activation(schema::Activation_Mish, kernels::Activation::kMish) &&
                  same_activation(schema::Activation_PRelu, kernels::Activation::kPRelu) &&
                  same_activation(schema::Activation_Gelu, kernels::Activation::kGelu) &&
                  same_activation(schema::Activation_GeluTanh, kernels::Activation::kGeluTanh) &&
                  same_activation(schema::Activation_Silu, kernels::Activation::kSilu),
              "schema::Activation and kernels::Activation number the activations alike");

// A file's activation as every backend's kernels take it.
inline kernels::Activation to_activation(schema::Activation a) { return static_cast<kernels::Activation>(a); }

}  // namespace edgegan

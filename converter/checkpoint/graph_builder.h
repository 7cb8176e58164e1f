// Writes the ONNX graph a detected architecture computes, node by node, with the
// checkpoint's tensors as initializers, so a checkpoint goes through the same
// lowering, fusions, phase split and checks as an exported ONNX model.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "converter/checkpoint/state_dict.h"

namespace edgegan::converter::checkpoint {

class GraphBuilder {
 public:
  GraphBuilder();
  // The image input [N, channels, height, width] (the batch symbolic).
  std::string input(const std::string& name, int64_t channels, int64_t height, int64_t width);
  void output(const std::string& value);

  // A 2-D convolution, stride 1, padding kernel/2 on each side, weights [Cout, Cin, k, k]
  // (each value times `scale`: a residual scale folded into the layer).
  std::string conv(const std::string& x, const std::string& name, const TensorData& weight, const TensorData* bias, float scale = 1.f);
  // ... of any stride and symmetric padding (odd or even kernels).
  std::string conv_strided(const std::string& x, const std::string& name, const TensorData& weight, const TensorData* bias, int64_t stride,
                           int64_t pad);
  // A transposed convolution, weights [Cin, Cout, k, k].
  std::string conv_transpose(const std::string& x, const std::string& name, const TensorData& weight, const TensorData* bias,
                             int64_t stride, int64_t pad, int64_t output_padding);
  // A reflection pad of `pad` on each side; with align >= 2 the far sides (bottom,
  // right) grow at each planned size until the padded sides are multiples of align.
  std::string reflect_pad(const std::string& x, int64_t pad, int64_t align = 0);
  // x's top-left corner of `scale` x ref's height and width, at each planned size.
  std::string crop_to(const std::string& x, const std::string& ref, int64_t scale);
  // x[:, :, c:-c, c:-c], as torch's F.pad by -c: a negative Pad, which (unlike a Slice's
  // fixed rows) holds at every size the engine re-plans for.
  std::string crop(const std::string& x, int64_t c);
  // The mean over each channel's map, kept as [N, C, 1, 1].
  std::string mean_hw(const std::string& x);
  // Channels [begin, end) of x.
  std::string slice_channels(const std::string& x, int64_t begin, int64_t end);
  // GroupNorm over `groups` groups with per-channel scale and shift, epsilon 1e-5.
  std::string group_norm(const std::string& x, const std::string& name, int64_t groups, const TensorData& scale, const TensorData& shift);
  // Per-channel normalisation of each sample's map (no affine parameters), epsilon 1e-5.
  std::string instance_norm(const std::string& x, int64_t channels);
  // Inference BatchNorm with the running statistics, epsilon 1e-5.
  std::string batch_norm(const std::string& x, const std::string& name, const TensorData& scale, const TensorData& shift,
                         const TensorData& mean, const TensorData& var);
  std::string relu(const std::string& x);
  std::string tanh(const std::string& x);
  std::string leaky_relu(const std::string& x, float alpha);
  std::string prelu(const std::string& x, const std::string& name, const TensorData& slope);
  std::string add(const std::string& a, const std::string& b);
  std::string mul(const std::string& x, float scalar);
  std::string mul(const std::string& a, const std::string& b);  // two run-time tensors
  // x plus a constant per channel ([1, C, 1, 1]; one value: a scalar).
  std::string add_constant(const std::string& x, const std::vector<float>& per_channel);
  std::string sigmoid(const std::string& x);
  std::string silu(const std::string& x);  // x * sigmoid(x), as torch exports nn.SiLU
  std::string mish(const std::string& x);  // x * tanh(softplus(x))
  std::string gelu(const std::string& x);  // x * (1 + erf(x / sqrt 2)) / 2, torch's exact GELU
  std::string concat(const std::vector<std::string>& xs);
  std::string upsample_nearest(const std::string& x, int64_t factor);
  std::string pixel_shuffle(const std::string& x, int64_t factor);
  // torch's pixel_unshuffle: Reshape [N, C, H/b, b, W/b, b], Transpose, Reshape [N, C*b*b, H/b, W/b].
  std::string pixel_unshuffle(const std::string& x, int64_t channels, int64_t height, int64_t width, int64_t factor);

  // torch.repeat_interleave(x, factor^2, dim=1): each channel factor^2 times in a row, as
  // nearest up-sampling by factor then a pixel unshuffle (SpaceToDepth, CRD) make it.
  std::string repeat_channels(const std::string& x, int64_t factor);
  // DySample's sampling: F.grid_sample(x as groups of channels, bilinear, border,
  // align_corners False) at the points of `offsets` [N, 2*groups, Ho, Wo] (channel
  // k*groups + g: coordinate k of group g), given in input pixels from each output
  // pixel's source pixel (a GridSample with the converter's edgegan_groups and
  // edgegan_offsets attributes).
  std::string grid_sample_offsets(const std::string& x, const std::string& offsets, int64_t groups);

  const onnx::ModelProto& model() const { return model_; }

 private:
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs, const std::string& name = "");
  std::string floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values);
  std::string ints(const std::vector<int64_t>& values);
  std::string fresh(const std::string& stem);

  onnx::ModelProto model_;
  int counter_ = 0;
};

}  // namespace edgegan::converter::checkpoint

// The converter's form of an engine model, between ONNX lowering and the
// flatbuffers writer. Weights are still in ONNX layouts here; the writer packs
// them (and splits every transposed convolution into its phases).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "converter/onnx_graph.h"
#include "egan_generated.h"

namespace edgegan::converter {

struct IrTensor {
  std::string name;
  bool is_int = false;
  bool nhwc = false;                 // rank-4 maps, and rank-3 maps [N, C, L] stored [N, 1, L, C]
  std::vector<int64_t> dims;         // storage order, dims[0] = -1
};

// An op of the engine, named by the schema's kind (one name from file to kernel).
struct IrOp {
  schema::OpKind kind = schema::OpKind_NONE;
  std::string name;                  // source node name(s), "conv+bn+relu" after fusion
  // The run-time tensors it reads. Conv2D and GroupNorm: [x], or [x, residual] with a
  // fused residual Add (y = op(x) + residual, only with activation None; residual_of), so
  // every IR pass that counts readers or renumbers tensors sees the residual too.
  std::vector<int> inputs;
  int output = -1;
  ConvGeometry geometry;             // conv, conv transpose
  // ONNX layouts: ConvTranspose [Cin][Cout][kh][kw], Conv [Cout][Cin][kh][kw], Dense [in][out],
  // Embedding [rows][dim], ChannelAffine: scale.
  std::vector<float> weights;
  std::vector<float> bias;           // bias, or ChannelAffine shift; empty = none
  schema::Activation activation = schema::Activation_None;
  float alpha = 0.01f;
  float beta = 0.f;                  // the activation's second parameter
  std::vector<float> slope;          // activation PRelu (fused): one slope per output channel
  int64_t in_features = 0, out_features = 0;  // Dense; Embedding rows / dim
  int axis = 0;                      // Concat, Slice: storage order
  int64_t start = 0, step = 1;       // Slice
  schema::PoolKind pool_kind = schema::PoolKind_Average;  // Pool (geometry: kernel, strides, dilations, pads, out_h/out_w)
  bool ceil_mode = false, count_include_pad = false;      // Pool
  int64_t norm_groups = 0;           // GroupNorm (weights: scale, bias: shift, per channel)
  float epsilon = 0.f;               // GroupNorm
  // Binary: the operation and, when one operand is the constant `weights` (in storage
  // order), which one (0: a, 1: b; -1: none) and its storage dims (the output's rank).
  schema::BinaryOperation binary_operation = schema::BinaryOperation_Add;
  int constant_operand = -1;
  std::vector<int64_t> constant_dims;
  // Pad: [top, left, bottom, right] (negative crops), schema::PadMode, constant fill.
  int64_t pads[4] = {0, 0, 0, 0};
  int pad_mode = 0;
  float pad_value = 0.f;
  // Pad: far pads following the planned size (schema Pad.align, .size_of): pad_align >= 2
  // grows them to multiples of it; with pad_size_scale >= 1 the op's inputs are [x, ref]
  // and its output is pad_size_scale x ref's height and width.
  int64_t pad_align = 0, pad_size_scale = 0;
  // DepthToSpace: block, schema::DepthToSpaceMode, direction.
  int64_t block = 1;
  int depth_to_space_mode = 0;
  bool space_to_depth = false;
  // Resize: schema::ResizeMode / ResizeCoordinates / ResizeNearest, cubic A, scales (0: from sizes).
  int resize_mode = 0, resize_coordinates = 0, resize_nearest = 0;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float scale_h = 0.f, scale_w = 0.f;
  // GridSample: schema::GridSampleMode / GridSamplePadding, align_corners, channel groups,
  // offsets (the grid in input pixels from each output pixel's source pixel).
  int grid_mode = 0, grid_padding = 0;
  bool align_corners = false, grid_offsets = false;
  int64_t grid_groups = 1;
  // Conv2D: a fused input map (converter/conv_input_maps.h): nearest upsampling factors
  // (H, W), then pads [top, left, bottom, right] in schema::PadMode input_pad_mode.
  int64_t input_upsample[2] = {1, 1};
  int64_t input_pads[4] = {0, 0, 0, 0};
  int input_pad_mode = 0;
  // SlidingChannelConv (geometry: the Conv's, in_channels the unstacked input's; weights [Cout][window][kh][kw]).
  int64_t window = 0, start_stride = 0;
  // UnaryMath: schema::UnaryMathOperation and Pow's exponent. Reduce: schema::ReduceOperation.
  int unary_operation = 0;
  float exponent = 1.f;
  int reduce_operation = 0;
  std::vector<int> axes;             // Reduce: storage axes, increasing
  std::vector<int> perm;             // Transpose: storage order
  // ModulatedConv2D (inputs [x, style]): the nested convolution's kind, whose geometry and
  // ONNX-layout weights are this op's; with demodulate, epsilon and the squared sums
  // [Cout][Cin]; bias and activation the op's epilogue.
  schema::OpKind modulated_conv = schema::OpKind_NONE;
  bool demodulate = false;
  std::vector<float> squared_sums;
};

// A Conv2D's or GroupNorm's fused residual (its second input), or -1.
inline int residual_of(const IrOp& op) {
  const bool takes_one = op.kind == schema::OpKind_Conv2D || op.kind == schema::OpKind_GroupNorm;
  return takes_one && op.inputs.size() > 1 ? op.inputs[1] : -1;
}

struct IrInput {
  int tensor = -1;
  schema::InputRole role = schema::InputRole_Other;
  int64_t noise_size = 0, label_count = 0;
};

struct IrOutput {
  int tensor = -1;
  schema::OutputRole role = schema::OutputRole_Other;
  float value_min = NAN, value_max = NAN;
};

struct IrModel {
  std::vector<IrTensor> tensors;
  std::vector<IrOp> ops;
  std::vector<IrInput> inputs;
  std::vector<IrOutput> outputs;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string source_sha256;
  int batchnorms_folded = 0;
  int activations_fused = 0;
  int residuals_fused = 0;
};

// ONNX graph -> engine IR: checks batch independence, lowers each node through the
// lowering of its kind (converter/ops/), which folds BatchNorm and bias Adds into their
// producers and fuses activations; assigns NHWC layouts and roles.
IrModel lower_to_ir(const OnnxGraph& graph, const onnx::ModelProto& model);  // `model`: graph's source

}  // namespace edgegan::converter

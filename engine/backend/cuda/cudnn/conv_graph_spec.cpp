#include "engine/backend/cuda/cudnn/conv_graph_spec.h"

#include "kernels_common/conv_transpose2d_phase_convs.h"

namespace edgegan::cuda::cudnn {

namespace {

// The schema's activation as a fused pointwise epilogue; false for one the cuDNN path
// does not fuse (it then leaves the layer to the project's kernels).
bool pointwise_of(schema::Activation a, Pointwise& p) {
  switch (a) {
    case schema::Activation_None: p = Pointwise::kNone; return true;
    case schema::Activation_Relu: p = Pointwise::kRelu; return true;
    case schema::Activation_LeakyRelu: p = Pointwise::kLeakyRelu; return true;
    case schema::Activation_Tanh: p = Pointwise::kTanh; return true;
    case schema::Activation_Sigmoid: p = Pointwise::kSigmoid; return true;
    case schema::Activation_Elu: p = Pointwise::kElu; return true;
    case schema::Activation_Selu: p = Pointwise::kSelu; return true;
    case schema::Activation_Clip: p = Pointwise::kClip; return true;
    case schema::Activation_HardSigmoid: p = Pointwise::kHardSigmoid; return true;
    case schema::Activation_HardSwish: p = Pointwise::kHardSwish; return true;
    case schema::Activation_Softplus: p = Pointwise::kSoftplus; return true;
    case schema::Activation_Mish: p = Pointwise::kMish; return true;
    case schema::Activation_PRelu: p = Pointwise::kPRelu; return true;
    default: return false;  // an activation added to the schema later: the project's kernels run it
  }
}

const char* pointwise_name(Pointwise p) {
  switch (p) {
    case Pointwise::kNone: return "";
    case Pointwise::kRelu: return " relu";
    case Pointwise::kLeakyRelu: return " leakyrelu";
    case Pointwise::kTanh: return " tanh";
    case Pointwise::kSigmoid: return " sigmoid";
    case Pointwise::kElu: return " elu";
    case Pointwise::kSelu: return " selu";
    case Pointwise::kClip: return " clip";
    case Pointwise::kHardSigmoid: return " hardsigmoid";
    case Pointwise::kHardSwish: return " hardswish";
    case Pointwise::kSoftplus: return " softplus";
    case Pointwise::kMish: return " mish";
    case Pointwise::kPRelu: return " prelu";
  }
  return "";
}

// What every graph of the layer shares: batch, channels, epilogue, output image.
bool common_spec(const KernelArgs& a, const kernels::ConvShape& s, const schema::Epilogue* ep, int residual, ConvGraphSpec& c,
                 std::string& refusal) {
  c.precision = a.precision;
  c.batch = s.batch;
  c.in_channels = s.in_channels, c.out_channels = s.out_channels;
  c.in_channels_padded = padded_channels(s.in_channels, a.precision);
  c.out_channels_padded = padded_channels(s.out_channels, a.precision);
  c.in_image_pixels = s.h.in * s.w.in, c.in_row_pixels = s.w.in;
  c.out_image_pixels = s.h.out * s.w.out, c.out_row_pixels = s.w.out;
  c.bias = ep && ep->bias() != 0;
  if (ep) {
    if (!pointwise_of(ep->activation(), c.activation)) {
      refusal = "its activation is not one the cuDNN graphs fuse";
      return false;
    }
    c.alpha = ep->alpha(), c.beta = ep->beta();
  }
  c.residual = residual >= 0;
  return true;
}

}  // namespace

int64_t padded_channels(int64_t channels, Precision precision) {
  return kernels::padded_channel_count(channels, precision == Precision::kFp16 ? 8 : 1);
}

std::string ConvGraphSpec::describe() const {
  std::string d = "conv " + std::to_string(kernel_h) + "x" + std::to_string(kernel_w) + " s" + std::to_string(stride_h) + " " +
                  std::to_string(in_channels) + "->" + std::to_string(out_channels);
  if (in_channels_padded != in_channels || out_channels_padded != out_channels)
    d += " (padded " + std::to_string(in_channels_padded) + "->" + std::to_string(out_channels_padded) + ")";
  d += " " + std::to_string(out_h) + "x" + std::to_string(out_w);
  if (out_row_step > 1 || out_col_step > 1) d += " every " + std::to_string(out_row_step) + "x" + std::to_string(out_col_step);
  d += " b" + std::to_string(batch) + " " + to_string(precision) + (bias ? " bias" : "") + pointwise_name(activation) + (residual ? " +residual" : "");
  return d;
}

ConvGraphLayer conv_graph_layer(const KernelArgs& a) {
  ConvGraphLayer layer;
  if (const auto* op = a.op.kind_as_Conv2D()) {
    if (op->groups() != 1) {
      layer.refusal = "grouped convolutions run on the project's kernels";
      return layer;
    }
    if (op->input_upsample_h() != 1 || op->input_upsample_w() != 1 || op->input_pad_top() || op->input_pad_left() || op->input_pad_bottom() ||
        op->input_pad_right()) {
      layer.refusal = "a fused input map (reflect pad, nearest upsampling) runs on the project's gather";
      return layer;
    }
    const kernels::ConvShape s = a.conv_shape(*op);
    ConvGraphSpec c;
    if (!common_spec(a, s, op->epilogue(), op->residual(), c, layer.refusal)) return layer;
    c.in_h = s.h.in, c.in_w = s.w.in;
    c.kernel_h = s.h.kernel, c.kernel_w = s.w.kernel, c.stride_h = s.h.stride, c.stride_w = s.w.stride;
    c.dilation_h = s.h.dilation, c.dilation_w = s.w.dilation;
    c.pad_top = s.h.pad_begin, c.pad_bottom = s.h.pad_end, c.pad_left = s.w.pad_begin, c.pad_right = s.w.pad_end;
    c.out_h = s.h.out, c.out_w = s.w.out;
    c.filter_buffer = op->weights();
    c.filter = kernels::FilterSource{.f32 = a.weights.is_f16(op->weights()) ? nullptr : a.weights.f32(op->weights()),
                                     .f16 = a.weights.is_f16(op->weights()) ? a.weights.f16(op->weights()) : nullptr,
                                     .taps_h = s.h.kernel,
                                     .taps_w = s.w.kernel,
                                     .layout = kernels::PanelLayout(s.in_channels, s.out_channels, 0)};
    layer.convs.push_back(c);
    return layer;
  }
  if (const auto* op = a.op.kind_as_ConvTranspose2D()) {
    if (op->groups() != 1) {
      layer.refusal = "grouped transposed convolutions run on the project's kernels";
      return layer;
    }
    const kernels::ConvShape s = a.conv_shape(*op);
    std::vector<kernels::PhaseConv> phases;
    std::string why;
    if (!kernels::conv_transpose2d_phase_convs(s, phases, &why)) {
      layer.refusal = why;
      return layer;
    }
    ConvGraphSpec common;
    if (!common_spec(a, s, op->epilogue(), /*residual=*/-1, common, layer.refusal)) return layer;
    for (const kernels::PhaseConv& p : phases) {
      const auto* stored = op->phases()->Get(static_cast<uint32_t>(p.phase_h * s.w.stride + p.phase_w));
      ConvGraphSpec c = common;
      c.in_h = p.h.in_length, c.in_w = p.w.in_length;
      c.in_offset_pixels = p.h.in_begin * s.w.in + p.w.in_begin;
      c.kernel_h = p.h.taps, c.kernel_w = p.w.taps;
      c.pad_top = p.h.pad_before, c.pad_bottom = p.h.pad_after, c.pad_left = p.w.pad_before, c.pad_right = p.w.pad_after;
      c.out_h = p.h.out_count, c.out_w = p.w.out_count;
      c.out_offset_pixels = p.h.out_begin * s.w.out + p.w.out_begin;
      c.out_row_step = s.h.stride, c.out_col_step = s.w.stride;
      c.filter_buffer = stored->weights();
      const bool f16 = a.weights.is_f16(stored->weights());
      c.filter = kernels::FilterSource{.f32 = f16 ? nullptr : a.weights.f32(stored->weights()),
                                       .f16 = f16 ? a.weights.f16(stored->weights()) : nullptr,
                                       .taps_h = p.h.taps,
                                       .taps_w = p.w.taps,
                                       .layout = kernels::PanelLayout(s.in_channels, s.out_channels, op->weight_panel_columns()),
                                       .flip_taps = true};
      layer.convs.push_back(c);
    }
    return layer;
  }
  layer.refusal = "not a convolution";
  return layer;
}

}  // namespace edgegan::cuda::cudnn

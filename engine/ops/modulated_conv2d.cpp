// ModulatedConv2D: StyleGAN2's modulated convolution with constant weights. The input's
// channels are scaled by the sample's style into scratch, the nested Conv2D or
// ConvTranspose2D runs on that scratch through its own CPU kernel (every algorithm those
// have: GEMM, Winograd, the phase-split transposed one), then the output channels are
// scaled by the demodulation coefficients, computed from the style and the stored squared
// sums of the weights, with bias and activation in the same pass. The per-sample weights
// W * style that the exported graphs form are never made. Backward: the gradients of the
// input and the style (through the nested kernel's input gradient and the demodulation);
// the op's weights are not trained.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/modulated_conv/modulated_conv.h"

namespace edgegan {
namespace {

constexpr uint64_t kAlign = 64;
uint64_t aligned(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The nested convolution's channels (its kind is checked by validate).
int64_t conv_in_channels(const schema::Op& conv) {
  return conv.kind_type() == schema::OpKind_Conv2D ? conv.kind_as_Conv2D()->in_channels() : conv.kind_as_ConvTranspose2D()->in_channels();
}
int64_t conv_out_channels(const schema::Op& conv) {
  return conv.kind_type() == schema::OpKind_Conv2D ? conv.kind_as_Conv2D()->out_channels() : conv.kind_as_ConvTranspose2D()->out_channels();
}

// fp32 at any session precision: the nested kernel runs on this kernel's float copies
// (an fp16 session's adapter wraps this op), never on the arena's halves.
KernelArgs nested_args(const KernelArgs& a, const schema::Op& conv) {
  return {a.model, conv, a.weights, a.batch, a.threads, a.conv_transpose2d_algo, Precision::kFp32, a.tracker, a.filter_copy_budget,
          a.training, {0}, a.zero_insert_backward};
}

class ModulatedConv2DKernel final : public OpKernel {
 public:
  ModulatedConv2DKernel(const KernelArgs& a, const schema::ModulatedConv2D& op)
      : conv_(op_def(*op.conv()).create_cpu_kernel(nested_args(a, *op.conv()))),
        input_(op.input()), style_(op.style()), output_(op.output()), batch_(a.batch),
        in_channels_(conv_in_channels(*op.conv())), out_channels_(conv_out_channels(*op.conv())),
        demodulate_(op.demodulate()), epsilon_(op.epsilon()), wsq_(op.demodulate() ? a.weights.f32(op.squared_sums()) : nullptr),
        epilogue_(a.epilogue(op.epilogue())) {
    if (a.training && !cpu::activation_invertible(epilogue_.activation))
      throw Error("ModulatedConv2D: the backward of a fused " + std::string(schema::EnumNameActivation(op.epilogue()->activation())) +
                  " is not implemented");
    const TensorDesc& x = a.tensor(input_);
    const TensorDesc& y = a.tensor(output_);
    in_pixels_ = x.dims[1] * x.dims[2];
    out_pixels_ = y.dims[1] * y.dims[2];
    scaled_bytes_ = aligned(static_cast<uint64_t>(batch_ * in_pixels_ * in_channels_) * sizeof(float));
    coefficient_bytes_ = aligned(static_cast<uint64_t>(batch_ * out_channels_) * sizeof(float));
  }
  const char* kernel_name() const override { return conv_->kernel_name(); }
  uint64_t workspace_bytes() const override { return scaled_bytes_ + coefficient_bytes_ + conv_->workspace_bytes(); }
  uint64_t repacked_weight_bytes() const override { return conv_->repacked_weight_bytes(); }
  uint64_t macs() const override {
    return conv_->macs() + static_cast<uint64_t>(batch_ * (in_pixels_ * in_channels_ + out_channels_ * in_channels_ + out_pixels_ * out_channels_));
  }
  uint64_t weight_bytes_read(uint64_t stored_bytes) const override { return stored_bytes; }
  void run(const RunContext& ctx) override {
    float* scaled = reinterpret_cast<float*>(ctx.workspace);
    float* coefficients = reinterpret_cast<float*>(ctx.workspace + scaled_bytes_);
    const float* style = ctx.f32(style_);
    cpu::modulated_conv_scale_input(batch_, in_pixels_, in_channels_, style, ctx.f32(input_), scaled);
    // The nested kernel reads the scaled copy where the input is: the same table of
    // addresses with that one entry moved (sized once, so runs allocate nothing).
    tensors_.assign(ctx.tensors->begin(), ctx.tensors->end());
    tensors_[static_cast<size_t>(input_)] = reinterpret_cast<uint8_t*>(scaled);
    RunContext inner = ctx;
    inner.tensors = &tensors_;
    inner.workspace = ctx.workspace + scaled_bytes_ + coefficient_bytes_;
    conv_->run(inner);
    if (demodulate_) cpu::modulated_conv_demodulation(batch_, in_channels_, out_channels_, style, wsq_, epsilon_, coefficients);
    cpu::modulated_conv_finish_output(batch_, out_pixels_, out_channels_, demodulate_ ? coefficients : nullptr, epilogue_.bias,
                                      ctx.f32(output_), epilogue_.activation, epilogue_.alpha, epilogue_.beta);
  }
  uint64_t backward_workspace_bytes() const override {
    return backward_layout(nullptr).bytes + std::max(conv_->workspace_bytes(), conv_->backward_workspace_bytes());
  }
  // With g = dy through the activation, c the nested conv's output and d the coefficients:
  // dc = g * d, dd[n][o] = sum_p g * c; the nested kernel takes dc to d(x * s); then
  // dx = d(x * s) * s and ds[n][i] = sum_p d(x * s) * x - sum_o dd[n][o] d^3 s[n][i] Wsq[o][i].
  void backward(const BackwardContext& b) override {
    const RunContext& ctx = b.ctx;
    const int64_t in_count = batch_ * in_pixels_ * in_channels_, out_count = batch_ * out_pixels_ * out_channels_;
    Scratch w = backward_layout(ctx.workspace);
    float* g = b.grad(output_);
    cpu::activation_backward(out_count, ctx.f32(output_), g, epilogue_.activation, epilogue_.alpha, epilogue_.beta);
    const float* x = ctx.f32(input_);
    const float* style = ctx.f32(style_);
    // The forward again, without its last pass: the scaled input and the conv's output.
    cpu::modulated_conv_scale_input(batch_, in_pixels_, in_channels_, style, x, w.scaled);
    tensors_.assign(ctx.tensors->begin(), ctx.tensors->end());
    tensors_[static_cast<size_t>(input_)] = reinterpret_cast<uint8_t*>(w.scaled);
    tensors_[static_cast<size_t>(output_)] = reinterpret_cast<uint8_t*>(w.conv);
    RunContext inner = ctx;
    inner.tensors = &tensors_;
    inner.workspace = w.rest;
    conv_->run(inner);
    if (demodulate_) {
      cpu::modulated_conv_demodulation(batch_, in_channels_, out_channels_, style, wsq_, epsilon_, w.d);
      for (int64_t n = 0; n < batch_; ++n) {
        float* dd = w.dd + n * out_channels_;
        const float* d = w.d + n * out_channels_;
        for (int64_t o = 0; o < out_channels_; ++o) dd[o] = 0.f;
        for (int64_t p = 0; p < out_pixels_; ++p) {
          float* gp = g + (n * out_pixels_ + p) * out_channels_;
          const float* cp = w.conv + (n * out_pixels_ + p) * out_channels_;
          for (int64_t o = 0; o < out_channels_; ++o) {
            dd[o] += gp[o] * cp[o];
            gp[o] *= d[o];
          }
        }
      }
    }
    // The nested kernel's input gradient, d(x * s), into scratch (dc is the output's gradient).
    gradients_.assign(b.gradients->begin(), b.gradients->end());
    gradients_[static_cast<size_t>(input_)] = reinterpret_cast<uint8_t*>(w.dscaled);
    gradients_[static_cast<size_t>(output_)] = reinterpret_cast<uint8_t*>(g);
    BackwardContext nb;
    nb.ctx = inner;
    nb.gradients = &gradients_;
    nb.want_input = &kWant;
    nb.accumulate_input = &kOverwrite;
    conv_->backward(nb);
    if (b.wants(0)) {
      float* dx = input_gradient_target(b, input_, 0, w.scratch);
      cpu::modulated_conv_scale_input(batch_, in_pixels_, in_channels_, style, w.dscaled, dx);
      finish_input_gradient(b, input_, 0, dx, in_count);
    }
    if (b.wants(1)) {
      float* ds = input_gradient_target(b, style_, 1, w.scratch);
      for (int64_t n = 0; n < batch_; ++n) {
        float* dsn = ds + n * in_channels_;
        for (int64_t i = 0; i < in_channels_; ++i) dsn[i] = 0.f;
        for (int64_t p = 0; p < in_pixels_; ++p) {
          const float* gp = w.dscaled + (n * in_pixels_ + p) * in_channels_;
          const float* xp = x + (n * in_pixels_ + p) * in_channels_;
          for (int64_t i = 0; i < in_channels_; ++i) dsn[i] += gp[i] * xp[i];
        }
        if (!demodulate_) continue;
        const float* sn = style + n * in_channels_;
        for (int64_t o = 0; o < out_channels_; ++o) {
          const float d = w.d[n * out_channels_ + o], k = w.dd[n * out_channels_ + o] * d * d * d;
          const float* wo = wsq_ + o * in_channels_;
          for (int64_t i = 0; i < in_channels_; ++i) dsn[i] -= k * sn[i] * wo[i];
        }
      }
      finish_input_gradient(b, style_, 1, ds, batch_ * in_channels_);
    }
  }

 private:
  std::unique_ptr<OpKernel> conv_;
  int input_, style_, output_;
  int64_t batch_, in_channels_, out_channels_, in_pixels_ = 0, out_pixels_ = 0;
  bool demodulate_;
  float epsilon_;
  const float* wsq_;
  cpu::Epilogue epilogue_;
  uint64_t scaled_bytes_ = 0, coefficient_bytes_ = 0;
  std::vector<uint8_t*> tensors_, gradients_;
  inline static const std::vector<char> kWant{1}, kOverwrite{0};

  struct Scratch {
    float *scaled, *conv, *d, *dd, *dscaled, *scratch;
    uint8_t* rest;  // the nested kernel's workspace (its forward's, then its backward's)
    uint64_t bytes;
  };
  Scratch backward_layout(uint8_t* base) const {
    ScratchLayout l(base);
    Scratch s{};
    s.scaled = l.take(batch_ * in_pixels_ * in_channels_);
    s.conv = l.take(batch_ * out_pixels_ * out_channels_);
    s.d = l.take(batch_ * out_channels_);
    s.dd = l.take(batch_ * out_channels_);
    s.dscaled = l.take(batch_ * in_pixels_ * in_channels_);
    s.scratch = l.take(batch_ * in_pixels_ * in_channels_);  // an accumulated input's gradient (x's or the style's)
    s.rest = base ? base + l.bytes() : nullptr;
    s.bytes = l.bytes();
    return s;
  }
};

class ModulatedConv2DDef final : public OpDef {
 public:
  const char* name() const override { return "ModulatedConv2D"; }
  std::vector<int> inputs(const schema::Op& o) const override {
    const auto& op = *o.kind_as_ModulatedConv2D();
    return {op.input(), op.style()};
  }
  int output(const schema::Op& op) const override { return op.kind_as_ModulatedConv2D()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_ModulatedConv2D();
    const schema::Op* conv = op.conv();
    if (!conv || (conv->kind_type() != schema::OpKind_Conv2D && conv->kind_type() != schema::OpKind_ConvTranspose2D))
      v.fail("conv must be a Conv2D or ConvTranspose2D op");
    const bool transposed = conv->kind_type() == schema::OpKind_ConvTranspose2D;
    const int conv_input = transposed ? conv->kind_as_ConvTranspose2D()->input() : conv->kind_as_Conv2D()->input();
    const int conv_output = transposed ? conv->kind_as_ConvTranspose2D()->output() : conv->kind_as_Conv2D()->output();
    if (conv_input != op.input() || conv_output != op.output()) v.fail("conv must read this op's input and write its output");
    const TensorDesc& s = v.use(op.style(), "style");
    v.expect_float(s);
    // The nested op defines the output (its checks are the Conv2D's or ConvTranspose2D's).
    OpValidator inner = v.at(" conv");
    op_def(*conv).validate(*conv, inner);
    const schema::Epilogue* conv_ep = transposed ? conv->kind_as_ConvTranspose2D()->epilogue() : conv->kind_as_Conv2D()->epilogue();
    if (conv_ep && (conv_ep->bias() != 0 || conv_ep->activation() != schema::Activation_None || conv_ep->slope() != 0))
      v.fail("conv must have no epilogue (bias and activation are this op's, after the demodulation)");
    if (!transposed && conv->kind_as_Conv2D()->residual() >= 0) v.fail("conv must have no residual");
    const int64_t cin = conv_in_channels(*conv), cout = conv_out_channels(*conv);
    if (s.dims.size() != 2 || s.dims[1] != cin)
      v.fail("style must be [N, " + std::to_string(cin) + "] (one scale per input channel), not " + dims_text(s.dims));
    if (op.demodulate()) {
      v.expect_buffer(op.squared_sums(), static_cast<uint64_t>(cin * cout), "squared_sums", false);
      if (!(op.epsilon() >= 0.f)) v.fail("epsilon must be >= 0");
    }
    v.check_epilogue(op.epilogue(), cout);
    if (op.epilogue() && op.epilogue()->activation() == schema::Activation_PRelu) v.fail("a PRelu epilogue is not supported");
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& op = *o.kind_as_ModulatedConv2D();
    op_def(*op.conv()).describe(m, *op.conv(), info);  // the convolution's attributes and phases
    auto os = text_stream();
    os << (op.conv()->kind_type() == schema::OpKind_ConvTranspose2D ? "transposed " : "") << info.attributes;
    os << (op.demodulate() ? " demodulated" : " modulated") << epilogue_text(op.epilogue());
    info.attributes = os.str();
    info.weight_bytes += m.buffer_bytes(op.squared_sums()) + (op.epilogue() ? m.buffer_bytes(op.epilogue()->bias()) : 0);
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<ModulatedConv2DKernel>(a, *a.op.kind_as_ModulatedConv2D());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_ModulatedConv2D>() {
  static const ModulatedConv2DDef def;
  return def;
}

}  // namespace edgegan

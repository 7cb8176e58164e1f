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

#include "engine/ops/modulated_conv2d.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/modulated_conv/modulated_conv.h"

namespace edgegan {
namespace {

// The nested convolution's channels (its kind is checked by validate).
int64_t conv_in_channels(const schema::Op& conv) {
  return conv.kind_type() == schema::OpKind_Conv2D ? conv.kind_as_Conv2D()->in_channels() : conv.kind_as_ConvTranspose2D()->in_channels();
}
int64_t conv_out_channels(const schema::Op& conv) {
  return conv.kind_type() == schema::OpKind_Conv2D ? conv.kind_as_Conv2D()->out_channels() : conv.kind_as_ConvTranspose2D()->out_channels();
}

uint64_t aligned(uint64_t bytes, uint64_t align) { return (bytes + align - 1) / align * align; }

// fp32 at any session precision: on the CPU the nested kernel runs on this kernel's
// float copies (an fp16 session's adapter wraps this op), never on the arena's halves.
KernelArgs cpu_nested_args(const KernelArgs& a, const schema::ModulatedConv2D& op) {
  KernelArgs n = modulated_conv_nested_args(a, op, true);
  n.precision = Precision::kFp32;
  return n;
}

class ModulatedConv2DKernel final : public OpKernel {
 public:
  ModulatedConv2DKernel(const KernelArgs& a, const schema::ModulatedConv2D& op)
      : g_(a, op, kAlign, sizeof(float)), conv_(op_def(*op.conv()).create_cpu_kernel(cpu_nested_args(a, op))),
        epsilon_(op.epsilon()), wsq_(op.demodulate() ? a.weights.f32(op.squared_sums()) : nullptr), epilogue_(a.epilogue(op.epilogue())),
        tensors_(g_), gradients_(g_) {
    if (a.training && !cpu::activation_invertible(epilogue_.activation))
      throw Error("ModulatedConv2D: the backward of a fused " + std::string(schema::EnumNameActivation(op.epilogue()->activation())) +
                  " is not implemented");
  }
  const char* kernel_name() const override { return conv_->kernel_name(); }
  uint64_t workspace_bytes() const override { return g_.workspace_bytes(*conv_); }
  uint64_t repacked_weight_bytes() const override { return conv_->repacked_weight_bytes(); }
  uint64_t macs() const override {
    return conv_->macs() + static_cast<uint64_t>(g_.input_count() + g_.batch * g_.out_channels * g_.in_channels + g_.output_count());
  }
  uint64_t weight_bytes_read(uint64_t stored_bytes) const override { return stored_bytes; }
  void run(const RunContext& ctx) override {
    float* scaled = reinterpret_cast<float*>(g_.scaled(ctx));
    float* coefficients = reinterpret_cast<float*>(g_.coefficients(ctx));
    const float* style = ctx.f32(g_.style);
    cpu::modulated_conv_scale_input(g_.batch, g_.in_pixels, g_.in_channels, style, ctx.f32(g_.input), scaled);
    conv_->run(tensors_.nested_run_context(ctx, g_));
    if (g_.demodulate) cpu::modulated_conv_demodulation(g_.batch, g_.in_channels, g_.out_channels, style, wsq_, epsilon_, coefficients);
    cpu::modulated_conv_finish_output(g_.batch, g_.out_pixels, g_.out_channels, g_.demodulate ? coefficients : nullptr, epilogue_.bias,
                                      ctx.f32(g_.output), epilogue_.activation, epilogue_.alpha, epilogue_.beta);
  }
  uint64_t backward_workspace_bytes() const override {
    return backward_layout(nullptr).bytes + std::max(conv_->workspace_bytes(), conv_->backward_workspace_bytes());
  }
  // With g = dy through the activation, c the nested conv's output and d the coefficients:
  // dc = g * d, dd[n][o] = sum_p g * c; the nested kernel takes dc to d(x * s); then
  // dx = d(x * s) * s and ds[n][i] = sum_p d(x * s) * x - sum_o dd[n][o] d^3 s[n][i] Wsq[o][i].
  void backward(const BackwardContext& b) override {
    const RunContext& ctx = b.ctx;
    Scratch w = backward_layout(ctx.workspace);
    float* g = b.grad(g_.output);
    cpu::activation_backward(g_.output_count(), ctx.f32(g_.output), g, epilogue_.activation, epilogue_.alpha, epilogue_.beta);
    const float* x = ctx.f32(g_.input);
    const float* style = ctx.f32(g_.style);
    // The forward again, without its last pass: the scaled input and the conv's output.
    cpu::modulated_conv_scale_input(g_.batch, g_.in_pixels, g_.in_channels, style, x, w.scaled);
    RunContext inner = ctx;
    inner.tensors = tensors_.moved(*ctx.tensors, {{g_.input, reinterpret_cast<uint8_t*>(w.scaled)}, {g_.output, reinterpret_cast<uint8_t*>(w.conv)}});
    inner.workspace = w.rest;
    conv_->run(inner);
    if (g_.demodulate) {
      cpu::modulated_conv_demodulation(g_.batch, g_.in_channels, g_.out_channels, style, wsq_, epsilon_, w.d);
      for (int64_t n = 0; n < g_.batch; ++n) {
        float* dd = w.dd + n * g_.out_channels;
        const float* d = w.d + n * g_.out_channels;
        for (int64_t o = 0; o < g_.out_channels; ++o) dd[o] = 0.f;
        for (int64_t p = 0; p < g_.out_pixels; ++p) {
          float* gp = g + (n * g_.out_pixels + p) * g_.out_channels;
          const float* cp = w.conv + (n * g_.out_pixels + p) * g_.out_channels;
          for (int64_t o = 0; o < g_.out_channels; ++o) {
            dd[o] += gp[o] * cp[o];
            gp[o] *= d[o];
          }
        }
      }
    }
    // The nested kernel's input gradient, d(x * s), into scratch (dc is the output's gradient).
    BackwardContext nb;
    nb.ctx = inner;
    nb.gradients = gradients_.moved(*b.gradients, {{g_.input, reinterpret_cast<uint8_t*>(w.dscaled)}, {g_.output, reinterpret_cast<uint8_t*>(g)}});
    nb.want_input = &kWant;
    nb.accumulate_input = &kOverwrite;
    conv_->backward(nb);
    if (b.wants(0)) {
      float* dx = input_gradient_target(b, g_.input, 0, w.scratch);
      cpu::modulated_conv_scale_input(g_.batch, g_.in_pixels, g_.in_channels, style, w.dscaled, dx);
      finish_input_gradient(b, g_.input, 0, dx, g_.input_count());
    }
    if (b.wants(1)) {
      float* ds = input_gradient_target(b, g_.style, 1, w.scratch);
      for (int64_t n = 0; n < g_.batch; ++n) {
        float* dsn = ds + n * g_.in_channels;
        for (int64_t i = 0; i < g_.in_channels; ++i) dsn[i] = 0.f;
        for (int64_t p = 0; p < g_.in_pixels; ++p) {
          const float* gp = w.dscaled + (n * g_.in_pixels + p) * g_.in_channels;
          const float* xp = x + (n * g_.in_pixels + p) * g_.in_channels;
          for (int64_t i = 0; i < g_.in_channels; ++i) dsn[i] += gp[i] * xp[i];
        }
        if (!g_.demodulate) continue;
        const float* sn = style + n * g_.in_channels;
        for (int64_t o = 0; o < g_.out_channels; ++o) {
          const float d = w.d[n * g_.out_channels + o], k = w.dd[n * g_.out_channels + o] * d * d * d;
          const float* wo = wsq_ + o * g_.in_channels;
          for (int64_t i = 0; i < g_.in_channels; ++i) dsn[i] -= k * sn[i] * wo[i];
        }
      }
      finish_input_gradient(b, g_.style, 1, ds, g_.batch * g_.in_channels);
    }
  }

 private:
  static constexpr uint64_t kAlign = 64;
  const ModulatedConvGeometry g_;
  std::unique_ptr<OpKernel> conv_;
  float epsilon_;
  const float* wsq_;
  cpu::Epilogue epilogue_;
  ModulatedConvNestedTable tensors_, gradients_;
  inline static const std::vector<char> kWant{1}, kOverwrite{0};

  struct Scratch {
    float *scaled, *conv, *d, *dd, *dscaled, *scratch;
    uint8_t* rest;  // the nested kernel's workspace (its forward's, then its backward's)
    uint64_t bytes;
  };
  Scratch backward_layout(uint8_t* base) const {
    ScratchLayout l(base);
    Scratch s{};
    s.scaled = l.take(g_.input_count());
    s.conv = l.take(g_.output_count());
    s.d = l.take(g_.coefficient_count());
    s.dd = l.take(g_.coefficient_count());
    s.dscaled = l.take(g_.input_count());
    s.scratch = l.take(g_.input_count());  // an accumulated input's gradient (x's or the style's)
    s.rest = base ? base + l.bytes() : nullptr;
    s.bytes = l.bytes();
    return s;
  }
};

}  // namespace

ModulatedConvGeometry::ModulatedConvGeometry(const KernelArgs& a, const schema::ModulatedConv2D& op, uint64_t align, uint64_t scaled_value_bytes)
    : input(op.input()), style(op.style()), output(op.output()), batch(a.batch), in_channels(conv_in_channels(*op.conv())),
      out_channels(conv_out_channels(*op.conv())), in_pixels(a.tensor(input).dims[1] * a.tensor(input).dims[2]),
      out_pixels(a.tensor(output).dims[1] * a.tensor(output).dims[2]), demodulate(op.demodulate()),
      scaled_bytes(aligned(static_cast<uint64_t>(input_count()) * scaled_value_bytes, align)),
      coefficient_bytes(aligned(static_cast<uint64_t>(coefficient_count()) * sizeof(float), align)), tensor_count(a.model.tensors.size()) {}

const char* ModulatedConvGeometry::refusal(const schema::ModulatedConv2D& op) {
  return op.epilogue() && op.epilogue()->activation() == schema::Activation_PRelu ? "a PRelu epilogue is not supported" : nullptr;
}

KernelArgs modulated_conv_nested_args(const KernelArgs& a, const schema::ModulatedConv2D& op, bool training) {
  return {a.model, *op.conv(), a.weights, a.batch, a.threads, a.conv_transpose2d_algo, a.precision, a.tracker, a.filter_copy_budget,
          training && a.training, {0}, training && a.zero_insert_backward};
}

const std::vector<uint8_t*>* ModulatedConvNestedTable::moved(const std::vector<uint8_t*>& base, std::initializer_list<std::pair<int, uint8_t*>> entries) {
  table_.assign(base.begin(), base.end());
  for (const auto& [tensor, address] : entries) table_[static_cast<size_t>(tensor)] = address;
  return &table_;
}

namespace {

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

// ConvTranspose2D on Vulkan over the file's phase sub-kernels (kernels_vulkan/
// conv_transpose2d): each output value finds its phase from its position and sums
// only that phase's taps, so no zero is inserted or read and the phases' outputs land
// interleaved in place; bias and the activation or PRelu slope fused. The sub-kernels
// are repacked once, when the kernel is built, from the file's column panels (fp16
// widened) into plain [groups][taps_h][taps_w][Cin/groups][Cout/groups] per phase.
// Whatever algorithm the session asks for, this is the one run: the zero-insertion and
// col2im baselines are the CPU's and CUDA's.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_common/conv_transpose2d_phases.h"

namespace edgegan::vulkan {
namespace {

class ConvTranspose2DVulkan final : public OpKernel {
 public:
  ConvTranspose2DVulkan(const KernelArgs& a, Context& c, const schema::ConvTranspose2D& op)
      : upload_(a, c, 20), input_(op.input()), output_(op.output()), shape_(a.conv_shape(op)), groups_(op.groups()) {
    const kernels::ConvShape& s = shape_;
    const int64_t groups = op.groups();
    const int64_t values[] = {s.batch, s.h.in, s.w.in, s.in_channels, s.h.out, s.w.out, s.out_channels, s.h.stride, s.w.stride,
                              s.h.pad_begin, s.w.pad_begin, groups};
    for (int i = 0; i < 12; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    set_epilogue(upload_, op.epilogue(), 12, 15, 16);

    // Per axis and residue: (taps, where its offsets start), then the offsets.
    kernels::ConvTranspose2DSubKernels w;
    w.phases_h = kernels::split_conv_transpose_axis(s.h);
    w.phases_w = kernels::split_conv_transpose_axis(s.w);
    w.panel_columns = op.weight_panel_columns();
    upload_.set(17, axis_table(w.phases_h));
    upload_.set(18, axis_table(w.phases_w));

    // The phases' weights, fp16 ones widened, seen per group.
    std::vector<std::vector<float>> widened;
    for (const auto* p : *op.phases()) {
      if (p->weights() && a.weights.is_f16(p->weights())) {
        widened.push_back(a.model.widened(p->weights()));
        w.sub_kernels.push_back(widened.back().data());
      } else {
        w.sub_kernels.push_back(p->weights() ? a.weights.f32(p->weights()) : nullptr);
      }
    }
    const kernels::ConvShape gs = kernels::conv_transpose2d_group_shape(s, groups);
    const auto views = kernels::conv_transpose2d_group_sub_kernels(s, groups, w);
    const kernels::PanelLayout layout(gs.in_channels, gs.out_channels, w.panel_columns);
    const size_t phases = w.phases_h.size() * w.phases_w.size();
    std::vector<int32_t> phase_offsets(phases, -1);
    std::vector<float> packed;
    for (size_t p = 0; p < phases; ++p) {
      if (!w.sub_kernels[p]) continue;
      const int64_t taps = static_cast<int64_t>(w.phases_h[p / w.phases_w.size()].taps.size() * w.phases_w[p % w.phases_w.size()].taps.size());
      const int64_t matrix = gs.in_channels * gs.out_channels;
      packed.assign(static_cast<size_t>(groups * taps * matrix), 0.f);
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t t = 0; t < taps; ++t) {
          const float* src = views[static_cast<size_t>(g)].sub_kernels[p] + t * matrix;
          float* dst = packed.data() + (g * taps + t) * matrix;
          for (int64_t ci = 0; ci < gs.in_channels; ++ci)
            for (int64_t co = 0; co < gs.out_channels; ++co) dst[ci * gs.out_channels + co] = src[layout.index(ci, co)];
        }
      phase_offsets[p] = upload_.floats(packed.data(), packed.size());
    }
    upload_.set(19, upload_.ints(phase_offsets.data(), phase_offsets.size()));
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_conv_transpose2d_split"; }
  uint64_t macs() const override { return conv_transpose2d_macs(shape_, ConvTranspose2DAlgo::kSplit) / static_cast<uint64_t>(groups_); }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("conv_transpose2d", upload_.half(), p, static_cast<uint64_t>(shape_.batch * shape_.h.out * shape_.w.out * shape_.out_channels));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int axis_table(const std::vector<kernels::AxisPhase>& phases) {
    std::vector<int32_t> table(phases.size() * 2);
    const int at = upload_.ints(table.data(), table.size());
    for (size_t r = 0; r < phases.size(); ++r) {
      std::vector<int32_t> offsets(phases[r].offsets.begin(), phases[r].offsets.end());
      upload_.set(at + static_cast<int>(2 * r), static_cast<int32_t>(offsets.size()));
      upload_.set(at + static_cast<int>(2 * r + 1), offsets.empty() ? 0 : upload_.ints(offsets.data(), offsets.size()));
    }
    return at;
  }
  Upload upload_;
  int input_, output_;
  kernels::ConvShape shape_;
  int groups_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ConvTranspose2D>(const KernelArgs& a, Context& c) {
  return std::make_unique<ConvTranspose2DVulkan>(a, c, *a.op.kind_as_ConvTranspose2D());
}

}  // namespace edgegan::vulkan

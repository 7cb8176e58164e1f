// Pad on Vulkan: every mode of the CPU's (constant, reflect, edge, wrap; asymmetric and
// negative pads) through per-axis source tables built once from kernels::pad_source.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/pad_geometry.h"
#include "kernels_common/pad_shape.h"

namespace edgegan::vulkan {
namespace {

std::vector<int32_t> source_table(const kernels::PadAxis& axis, kernels::PadMode mode) {
  std::vector<int32_t> t(static_cast<size_t>(axis.out()));
  for (int64_t o = 0; o < axis.out(); ++o) t[static_cast<size_t>(o)] = static_cast<int32_t>(kernels::pad_source(axis, mode, o));
  return t;
}

class PadVulkan final : public SingleDispatchKernel {
 public:
  PadVulkan(const KernelArgs& a, Context& c, const schema::Pad& op) : SingleDispatchKernel(a, c, "pad", 8, {op.input(), op.output()}) {
    const TensorDesc& x = a.tensor(op.input());
    const PadGeometry g = pad_geometry(op, x.dims, op.size_of() >= 0 ? a.tensor(op.size_of()).dims : std::vector<int64_t>{});
    const kernels::PadAxis h = g.h, w = g.w;
    const auto mode = static_cast<kernels::PadMode>(op.mode());
    count_ = a.batch * h.out() * w.out() * x.dims[3];
    const int64_t values[] = {x.dims[1], x.dims[2], x.dims[3], h.out(), w.out()};
    for (int i = 0; i < 5; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    const std::vector<int32_t> rows = source_table(h, mode), cols = source_table(w, mode);
    upload_.set(5, upload_.ints(rows.data(), rows.size()));
    upload_.set(6, upload_.ints(cols.data(), cols.size()));
    upload_.set_f(7, op.value());
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_pad"; }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Pad>(const KernelArgs& a, Context& c) {
  return std::make_unique<PadVulkan>(a, c, *a.op.kind_as_Pad());
}

}  // namespace edgegan::vulkan

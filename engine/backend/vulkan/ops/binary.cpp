// Binary on Vulkan: y = a (+ - * /) b with the CPU's broadcasting, per output dimension
// its size and each operand's stride (0 where it broadcasts); a constant operand (a
// weight buffer) is read from the kernel's upload.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class BinaryVulkan final : public SingleDispatchKernel {
 public:
  BinaryVulkan(const KernelArgs& args, Context& c, const schema::Binary& op)
      : SingleDispatchKernel(args, c, "binary", 4 + 3 * kernels::kBinaryMaxRank, {op.a(), op.b(), op.output()}) {
    const BinaryLayout layout = binary_layout(args, op);
    const kernels::BinaryShape& s = layout.shape;
    in_place_ = layout.in_place;
    count_ = kernels::binary_elements(s.out, s.rank);
    upload_.set(0, static_cast<int32_t>(op.operation()));
    upload_.set(1, s.rank);
    int64_t stride_a = 1, stride_b = 1;
    for (int d = s.rank - 1; d >= 0; --d) {
      upload_.set(4 + 3 * d, static_cast<int32_t>(s.out[d]));
      upload_.set(5 + 3 * d, static_cast<int32_t>(s.a[d] == 1 ? 0 : stride_a));
      upload_.set(6 + 3 * d, static_cast<int32_t>(s.b[d] == 1 ? 0 : stride_b));
      stride_a *= s.a[d], stride_b *= s.b[d];
    }
    // A constant operand (tensor -1, address 0 in the shader) is read from the upload.
    const int constant = (op.a() < 0 || op.b() < 0) ? upload_.weights(op.constant()) : -1;
    upload_.set(2, op.a() < 0 ? constant : -1);
    upload_.set(3, op.b() < 0 ? constant : -1);
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_binary"; }
  bool works_in_place() const override { return in_place_ >= 0; }
  int in_place_input() const override { return in_place_; }

 private:
  int in_place_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Binary>(const KernelArgs& a, Context& c) {
  return std::make_unique<BinaryVulkan>(a, c, *a.op.kind_as_Binary());
}

}  // namespace edgegan::vulkan

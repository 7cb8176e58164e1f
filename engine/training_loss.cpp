// The public loss entry point (edgegan/trainer.h) over the loss kernels.
#include "edgegan/trainer.h"
#include "kernels_cpu/loss/loss.h"

namespace edgegan {

double loss_and_gradient(Loss loss, const Tensor& prediction, const std::vector<float>& target, Tensor* gradient) {
  if (prediction.dtype != DType::kFloat32) throw Error("loss: the prediction must be float32");
  if (prediction.f32.size() != target.size() || prediction.f32.empty())
    throw Error("loss: the prediction holds " + std::to_string(prediction.f32.size()) + " values, the target " + std::to_string(target.size()));
  if (!gradient) throw Error("loss: no gradient tensor given");
  *gradient = prediction;
  const auto n = static_cast<int64_t>(target.size());
  switch (loss) {
    case Loss::kMse: return cpu::mse_loss(n, prediction.f32.data(), target.data(), gradient->f32.data());
    case Loss::kL1: return cpu::l1_loss(n, prediction.f32.data(), target.data(), gradient->f32.data());
    case Loss::kBceWithLogits: return cpu::bce_with_logits_loss(n, prediction.f32.data(), target.data(), gradient->f32.data());
  }
  throw Error("loss: unknown loss");
}

}  // namespace edgegan

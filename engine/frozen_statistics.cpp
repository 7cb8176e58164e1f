#include "engine/frozen_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/backend/cpu_half_storage.h"
#include "engine/ops/half_route.h"
#include "kernels_cpu/channel_affine/channel_affine.h"

namespace edgegan {
namespace {

// The norm as a per-sample channel affine map.
class FrozenGroupNorm final : public OpKernel {
 public:
  FrozenGroupNorm(const KernelArgs& a, const schema::GroupNorm& op)
      : input_(op.input()), output_(op.output()), residual_(op.residual()), channels_(op.channels()), groups_(op.groups()),
        pixels_(a.tensor(op.input()).dims[1] * a.tensor(op.input()).dims[2]), scale_(a.weights.f32(op.scale())), shift_(a.weights.f32(op.shift())),
        epsilon_(op.epsilon()), activation_(to_activation(op.activation())), alpha_(op.alpha()), beta_(op.beta()),
        affine_(static_cast<size_t>(2 * a.batch * op.channels())) {}
  const char* kernel_name() const override { return "group_norm_frozen"; }
  void set(const float* values) { values_ = values; }
  void run(const RunContext& ctx) override {
    const int64_t C = channels_, per_group = C / groups_;
    for (int64_t n = 0; n < ctx.batch; ++n) {
      float* a = affine_.data() + 2 * n * C;
      for (int64_t c = 0; c < C; ++c) {
        const float* moments = values_ + (n * groups_ + c / per_group) * 2;
        const double r = static_cast<double>(scale_[c]) / std::sqrt(static_cast<double>(moments[1]) + epsilon_);
        a[c] = static_cast<float>(r);
        a[C + c] = static_cast<float>(static_cast<double>(shift_[c]) - static_cast<double>(moments[0]) * r);
      }
    }
    constexpr int64_t kChunk = 2048;  // pixels per task
    const int64_t chunks = (pixels_ + kChunk - 1) / kChunk, tasks = ctx.batch * chunks;
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    const float* residual = residual_ >= 0 ? ctx.f32(residual_) : nullptr;
#pragma omp parallel for schedule(static) num_threads(ctx.threads) if (ctx.threads > 1 && tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t n = t / chunks, p0 = (t % chunks) * kChunk, count = std::min(kChunk, pixels_ - p0);
      const int64_t offset = (n * pixels_ + p0) * C;
      const float* a = affine_.data() + 2 * n * C;
      cpu::channel_affine(count, C, a, a + C, x + offset, y + offset, activation_, alpha_, beta_);
      if (residual) cpu::add_residual(y + offset, count, C, C, residual + offset);
    }
  }
  void backward(const BackwardContext&) override { throw Error("internal: frozen statistics are for inference"); }

 private:
  int input_, output_, residual_;
  int64_t channels_, groups_, pixels_;
  const float* scale_;
  const float* shift_;
  float epsilon_;
  cpu::Activation activation_;
  float alpha_, beta_;
  std::vector<float> affine_;  // per sample: scale[C], shift[C]
  const float* values_ = nullptr;
};

// The reduction's output, as given.
class FrozenReduce final : public OpKernel {
 public:
  FrozenReduce(const KernelArgs& a, const schema::Reduce& op, int64_t per_sample) : output_(op.output()), per_sample_(per_sample) { (void)a; }
  const char* kernel_name() const override { return "reduce_frozen"; }
  void set(const float* values) { values_ = values; }
  void run(const RunContext& ctx) override {
    std::memcpy(ctx.f32(output_), values_, static_cast<size_t>(ctx.batch * per_sample_) * sizeof(float));
  }
  void backward(const BackwardContext&) override { throw Error("internal: frozen statistics are for inference"); }

 private:
  int output_;
  int64_t per_sample_;
  const float* values_ = nullptr;
};

// Owns the fp32 kernel (behind the half adapter in an fp16 plan) and, where the plan's
// scratch for the op is too small for it, a scratch of its own.
template <typename Fp32>
class Frozen final : public FrozenStatisticsKernel {
 public:
  Frozen(std::unique_ptr<Fp32> fp32, const KernelArgs& args, uint64_t planned_workspace) : fp32_(fp32.get()) {
    runner_ = half_storage(args) ? half_storage_adapter(std::move(fp32), op_def(args.op), args) : std::unique_ptr<OpKernel>(std::move(fp32));
    if (runner_->workspace_bytes() > planned_workspace) own_.resize(runner_->workspace_bytes());
  }
  const char* kernel_name() const override { return runner_->kernel_name(); }
  void set_values(const float* values) override { fp32_->set(values); }
  void run(const RunContext& ctx) override {
    if (own_.empty()) return runner_->run(ctx);
    RunContext inner = ctx;
    inner.workspace = own_.data();
    runner_->run(inner);
  }
  void check_run() override { runner_->check_run(); }
  void backward(const BackwardContext& b) override { runner_->backward(b); }

 private:
  Fp32* fp32_;
  std::unique_ptr<OpKernel> runner_;
  std::vector<uint8_t> own_;
};

}  // namespace

std::optional<StatisticLayer> statistic_layer(const Model::Impl& m, int op_index) {
  const schema::Op& op = *m.root->ops()->Get(static_cast<uint32_t>(op_index));
  StatisticLayer layer;
  layer.op = op_index;
  if (const auto* norm = op.kind_as_GroupNorm()) {
    layer.kind = StatisticLayer::Kind::kMoments;
    layer.input = norm->input();
    layer.channels = norm->channels();
    layer.groups = norm->groups();
    return layer;
  }
  if (const auto* reduce = op.kind_as_Reduce()) {
    const TensorDesc& x = m.tensors[static_cast<size_t>(reduce->input())];
    if (x.layout != Layout::kNHWC || x.dims.size() != 4 || !reduce->axes()) return std::nullopt;
    std::vector<int> axes(reduce->axes()->begin(), reduce->axes()->end());
    if (axes != std::vector<int>{1, 2} && axes != std::vector<int>{1, 2, 3}) return std::nullopt;
    layer.kind = StatisticLayer::Kind::kReduce;
    layer.input = reduce->input();
    layer.channels = x.dims[3];
    layer.reduce = static_cast<int>(reduce->operation());
    layer.reduces_channels = axes.size() == 3;
    return layer;
  }
  return std::nullopt;
}

std::unique_ptr<FrozenStatisticsKernel> frozen_statistics_kernel(const StatisticLayer& layer, const KernelArgs& args, uint64_t planned_workspace) {
  if (layer.kind == StatisticLayer::Kind::kMoments)
    return std::make_unique<Frozen<FrozenGroupNorm>>(std::make_unique<FrozenGroupNorm>(args, *args.op.kind_as_GroupNorm()), args, planned_workspace);
  return std::make_unique<Frozen<FrozenReduce>>(std::make_unique<FrozenReduce>(args, *args.op.kind_as_Reduce(), layer.floats_per_sample()), args,
                                                planned_workspace);
}

}  // namespace edgegan

// Whole-map statistics fixed from outside a run: a GroupNorm (InstanceNorm is one with a
// channel per group) normalises with the mean and variance of its whole map, a Reduce
// over H and W (squeeze-and-excitation's mean) gives one value per channel of the whole
// map. A tile of a picture sees only its own part of each map; ImageToImage gathers the
// whole picture's statistics over its tiles and has every tile use them. In a run with
// frozen statistics the op's place is taken by a kernel of this file: the norm becomes a
// per-sample channel affine (scale = gamma / sqrt(var + eps), shift = beta - mean *
// scale, then the op's activation and residual), the Reduce a copy of its values. These
// are the only ops with such statistics, so this file names their kinds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "engine/ops/op_def.h"

namespace edgegan {

struct StatisticLayer {
  enum class Kind {
    kMoments,  // GroupNorm: per sample and group, the mean and (biased) variance
    kReduce,   // Reduce over H and W: per sample, its output (per channel, or one value)
  };
  Kind kind = Kind::kMoments;
  int op = -1;
  int input = -1;  // the NHWC tensor the statistics are of
  int64_t channels = 0;
  int64_t groups = 1;              // kMoments: groups of channels / groups consecutive channels
  int reduce = 0;                  // kReduce: schema::ReduceOperation
  bool reduces_channels = false;   // kReduce: over C too (one value per sample)
  // Frozen values per sample: kMoments [groups][mean, variance]; kReduce the output.
  int64_t floats_per_sample() const { return kind == Kind::kMoments ? 2 * groups : (reduces_channels ? 1 : channels); }
};

// Op `op`'s whole-map statistic if it has one that can be gathered over tiles (a
// GroupNorm; a Reduce over axes 1, 2 (and 3) of an NHWC map); nullopt otherwise.
std::optional<StatisticLayer> statistic_layer(const Model::Impl& model, int op);

// What runs in the op's place with frozen statistics. `values` (batch x
// floats_per_sample, owned by the caller) are read in each run.
class FrozenStatisticsKernel : public OpKernel {
 public:
  virtual void set_values(const float* values) = 0;
};

// The kernel for `layer` in a plan made with `args` (an fp16 plan on the CPU: behind the
// half-storage adapter). `planned_workspace`: the op's scratch in that plan; a kernel
// needing more keeps its own.
std::unique_ptr<FrozenStatisticsKernel> frozen_statistics_kernel(const StatisticLayer& layer, const KernelArgs& args, uint64_t planned_workspace);

}  // namespace edgegan

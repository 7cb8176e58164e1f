// One stride-2 GAN generator layer (output exactly twice the input), ready to run on
// the CPU kernels the way a session runs it: random input, weights and bias (fixed
// seed; a bias and no activation, as bench/peers.sh gives every peer),
// the split sub-kernels in the converter's column panels, an fp16 copy, the heads'
// pixel-lanes weights packed once, the Winograd form's filters where it pays, and the full kernels the zero-insertion and col2im
// baselines read. Shared by the Google Benchmark (conv_transpose2d_algorithms_bench) and the
// peer-protocol runner (edgegan_layers_bench).
#pragma once

#include <random>
#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_winograd.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_zero_insert.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_col2im.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::bench {

struct LayerSpec {
  const char* name;
  int in, cin, cout, kernel;
};

enum class Algo { kSplit, kZeroInsert, kCol2im, kSplitFp16w };

class ConvTranspose2DLayerFixture {
 public:
  ConvTranspose2DLayerFixture(const LayerSpec& l, int batch, Algo algo) : algo_(algo) {
    using namespace edgegan::cpu;
    const int64_t pad = (l.kernel - 1) / 2, out_pad = l.kernel % 2;  // k4: p1 op0; k5: p2 op1
    ConvAxis a{l.in, l.kernel, 2, 1, pad, pad, 0};
    a.out = conv_transpose_output_length(a.in, a.kernel, 2, 1, pad, pad, out_pad);
    shape_ = ConvShape{batch, l.cin, l.cout, a, a};
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    x_.resize(static_cast<size_t>(batch) * l.in * l.in * l.cin);
    std::vector<float> w(static_cast<size_t>(l.cin) * l.cout * l.kernel * l.kernel);
    for (auto& v : x_) v = d(rng);
    for (auto& v : w) v = d(rng);
    bias_.resize(static_cast<size_t>(l.cout));
    for (auto& v : bias_) v = d(rng);
    y_.resize(static_cast<size_t>(batch * a.out * a.out * l.cout));
    split_.phases_h = split_conv_transpose_axis(shape_.h);
    split_.phases_w = split_conv_transpose_axis(shape_.w);
    // In the converter's layout (column panels), as a session reads them from the file.
    split_.panel_columns = kWeightPanelColumns;
    packed_ = pack_conv_transpose2d_weights(shape_, split_.phases_h, split_.phases_w, w.data(), split_.panel_columns);
    for (const auto& p : packed_) split_.sub_kernels.push_back(p.data());
    if (algo == Algo::kSplitFp16w) {  // the same sub-kernels stored as halves (edgegan-convert --weights fp16)
      ConvTranspose2DWeights halves{split_.phases_h, split_.phases_w, {}, {}, split_.panel_columns};
      for (const auto& p : packed_) {
        halves_.emplace_back(p.size());
        for (size_t i = 0; i < p.size(); ++i) halves_.back()[i] = float_to_half(p[i]);
        halves.sub_kernels_f16.push_back(halves_.back().data());
      }
      split_ = halves;
    }
    // Heads on the pixel-lanes path: their weights in that kernel's order, packed once
    // as a session does when it loads the model.
    lanes_ = plan_pixel_lanes(shape_, split_.phases_h, split_.phases_w);
    if (lanes_.ok && (algo == Algo::kSplit || algo == Algo::kSplitFp16w)) {
      lanes_weights_.resize(static_cast<size_t>(lanes_.weight_floats()));
      pack_pixel_lanes_weights(shape_, split_, lanes_, lanes_weights_.data());
      split_.pixel_lanes_plan = &lanes_;
      split_.pixel_lanes = lanes_weights_.data();
    }
    // k = 2*stride layers where it pays: the Winograd form's transformed filters, made
    // once as a session does.
    if ((algo == Algo::kSplit || algo == Algo::kSplitFp16w) && conv_transpose2d_winograd_pays(shape_, split_)) {
      winograd_.resize(static_cast<size_t>(conv_transpose2d_winograd_weight_floats(shape_)));
      pack_conv_transpose2d_winograd_weights(shape_, split_, winograd_.data());
      split_.winograd = winograd_.data();
    }
    if (algo == Algo::kZeroInsert || algo == Algo::kCol2im) {
      full_.resize(w.size());
      assemble_conv_transpose2d_full_kernel(shape_, split_,
                                  algo == Algo::kZeroInsert ? FullKernelLayout::kTapsFirst : FullKernelLayout::kChannelsFirst,
                                  full_.data());
      ws_.resize(static_cast<size_t>(algo == Algo::kZeroInsert ? conv_transpose2d_zero_insert_workspace(shape_)
                                                               : conv_transpose2d_col2im_workspace(shape_)));
    }
  }
  ConvTranspose2DLayerFixture(const ConvTranspose2DLayerFixture&) = delete;  // split_ points into this object
  ConvTranspose2DLayerFixture& operator=(const ConvTranspose2DLayerFixture&) = delete;

  void run(int threads) {
    using namespace edgegan::cpu;
    const Epilogue ep{bias_.data(), Activation::kNone, 0};
    switch (algo_) {
      case Algo::kZeroInsert: conv_transpose2d_zero_insert(shape_, full_.data(), x_.data(), y_.data(), ws_.data(), ep, threads); break;
      case Algo::kCol2im: conv_transpose2d_col2im(shape_, full_.data(), x_.data(), y_.data(), ws_.data(), ep, threads); break;
      default:
        // Sized once per thread count, outside the timed calls, as a session plans it
        // into its arena.
        if (threads != split_ws_threads_) {
          split_ws_.resize(static_cast<size_t>(conv_transpose2d_split_workspace(shape_, split_, threads)));
          split_ws_threads_ = threads;
        }
        conv_transpose2d_split(shape_, split_, x_.data(), y_.data(), ep, threads, split_ws_.data(), static_cast<int64_t>(split_ws_.size()));
        break;
    }
  }

  const cpu::ConvShape& shape() const { return shape_; }
  const float* output() const { return y_.data(); }
  size_t workspace_bytes() const { return (ws_.size() + split_ws_.size()) * sizeof(float); }

 private:
  Algo algo_;
  int split_ws_threads_ = 0;  // the thread count split_ws_ is sized for (0: none yet)
  cpu::ConvShape shape_;
  std::vector<float> x_, y_, bias_, full_, ws_, split_ws_, lanes_weights_, winograd_;
  std::vector<std::vector<float>> packed_;
  std::vector<std::vector<uint16_t>> halves_;
  cpu::ConvTranspose2DWeights split_;
  cpu::PixelLanesPlan lanes_;
};

}  // namespace edgegan::bench

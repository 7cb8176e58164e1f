// Transposed-convolution algorithms side by side on GAN generator layers:
// split (the product) vs zero insertion vs GEMM+col2im, all on the same GEMM, so
// the ratios show the algorithm, not the tuning; split_fp16w is split on fp16
// weights (edgegan-convert --weights fp16). Random weights, fixed seed.
//   build/bench/deconv_algorithms_bench --benchmark_filter=dcgan64
#include <benchmark/benchmark.h>

#include <random>

#include "kernels_cpu/conv_transpose.h"
#include "kernels_cpu/conv_transpose_pixel_lanes.h"
#include "kernels_cpu/half.h"

namespace {

using namespace edgegan::cpu;

struct Layer {
  const char* name;
  int in, cin, cout, kernel;
};

// Stride 2, output exactly twice the input: pad = (k - 2) / 2 (+1 output_padding for odd k).
const Layer kLayers[] = {
    {"huge2_dcgan_4x4x1024_k5", 4, 1024, 512, 5},  {"huge2_dcgan_8x8x512_k5", 8, 512, 256, 5},
    {"huge2_dcgan_16x16x256_k5", 16, 256, 128, 5}, {"huge2_dcgan_32x32x128_k5", 32, 128, 3, 5},
    {"huge2_cgan_8x8x256_k4", 8, 256, 128, 4},     {"huge2_cgan_16x16x128_k4", 16, 128, 3, 4},
    {"dcgan64_4x4x512_k4", 4, 512, 256, 4},        {"dcgan64_8x8x256_k4", 8, 256, 128, 4},
    {"dcgan64_16x16x128_k4", 16, 128, 64, 4},      {"dcgan64_32x32x64_k4", 32, 64, 3, 4},
    {"large_64x64x128_k4", 64, 128, 64, 4},        {"large_128x128x64_k4", 128, 64, 64, 4},
};

DeconvShape shape_of(const Layer& l, int batch) {
  const int64_t pad = (l.kernel - 1) / 2, out_pad = l.kernel % 2;  // k4: p1 op0; k5: p2 op1
  DeconvAxis a{l.in, l.kernel, 2, 1, pad, pad, 0};
  a.out = deconv_output_length(a.in, a.kernel, 2, 1, pad, pad, out_pad);
  return DeconvShape{batch, l.cin, l.cout, a, a};
}

void run_layer(benchmark::State& state, const Layer& layer, int algo) {
  const int batch = static_cast<int>(state.range(0)), threads = static_cast<int>(state.range(1));
  const DeconvShape s = shape_of(layer, batch);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> x(static_cast<size_t>(batch * layer.in * layer.in * layer.cin)), w(static_cast<size_t>(layer.cin * layer.cout * layer.kernel * layer.kernel));
  for (auto& v : x) v = d(rng);
  for (auto& v : w) v = d(rng);
  std::vector<float> y(static_cast<size_t>(batch * s.h.out * s.w.out * layer.cout));
  SplitDeconvWeights split;
  split.phases_h = split_deconv_axis(s.h);
  split.phases_w = split_deconv_axis(s.w);
  // In the converter's layout (column panels), as a session reads them from the file.
  split.panel_columns = kWeightPanelColumns;
  const auto packed = pack_split_deconv_weights(s, split.phases_h, split.phases_w, w.data(), split.panel_columns);
  for (const auto& p : packed) split.sub_kernels.push_back(p.data());
  // split_fp16w: the same sub-kernels stored as halves (edgegan-convert --weights fp16).
  std::vector<std::vector<uint16_t>> halves;
  SplitDeconvWeights split16{split.phases_h, split.phases_w, {}, {}, split.panel_columns};
  for (const auto& p : packed) {
    halves.emplace_back(p.size());
    for (size_t i = 0; i < p.size(); ++i) halves.back()[i] = float_to_half(p[i]);
    split16.sub_kernels_f16.push_back(halves.back().data());
  }
  // Heads on the pixel-lanes path: their weights in that kernel's order, packed once
  // as a session does when it loads the model.
  const PixelLanesPlan lanes = plan_pixel_lanes(s, split.phases_h, split.phases_w);
  std::vector<float> lanes_weights, lanes_weights16;
  if (lanes.ok) {
    lanes_weights.resize(static_cast<size_t>(lanes.weight_floats()));
    lanes_weights16.resize(lanes_weights.size());
    pack_pixel_lanes_weights(s, split, lanes, lanes_weights.data());
    pack_pixel_lanes_weights(s, split16, lanes, lanes_weights16.data());
    split.pixel_lanes_plan = split16.pixel_lanes_plan = &lanes;
    split.pixel_lanes = lanes_weights.data();
    split16.pixel_lanes = lanes_weights16.data();
  }
  std::vector<float> full(w.size()), col(w.size()), ws;
  assemble_full_deconv_kernel(s, split, FullKernelLayout::kTapsFirst, full.data());
  assemble_full_deconv_kernel(s, split, FullKernelLayout::kChannelsFirst, col.data());
  if (algo == 1) ws.resize(static_cast<size_t>(conv_transpose2d_zero_insert_workspace(s)));
  if (algo == 2) ws.resize(static_cast<size_t>(conv_transpose2d_col2im_workspace(s)));
  const Epilogue ep{nullptr, Activation::kRelu, 0};
  for (auto _ : state) {
    if (algo == 0) conv_transpose2d_split(s, split, x.data(), y.data(), ep, threads);
    if (algo == 1) conv_transpose2d_zero_insert(s, full.data(), x.data(), y.data(), ws.data(), ep, threads);
    if (algo == 2) conv_transpose2d_col2im(s, col.data(), x.data(), y.data(), ws.data(), ep, threads);
    if (algo == 3) conv_transpose2d_split(s, split16, x.data(), y.data(), ep, threads);
    benchmark::DoNotOptimize(y.data());
  }
  const double macs = static_cast<double>(batch) * layer.in * layer.in * layer.kernel * layer.kernel * layer.cin * layer.cout;
  state.counters["useful_GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_KiB"] = static_cast<double>(ws.size() * 4) / 1024.0;
}

const int kRegistered = [] {
  const char* algos[] = {"split", "zero_insert", "col2im", "split_fp16w"};
  for (const Layer& l : kLayers)
    for (int a = 0; a < 4; ++a) {
      auto* b = benchmark::RegisterBenchmark((std::string(l.name) + "/" + algos[a]).c_str(), [&l, a](benchmark::State& st) { run_layer(st, l, a); })
                    ->ArgNames({"batch", "threads"})
                    ->Args({1, 1})->Args({1, 2})
                    ->Unit(benchmark::kMicrosecond)
                    ->UseRealTime();
      if (l.in <= 32) b->Args({16, 2});  // the large layers at batch 16 take ~1 GB of col2im workspace and seconds per run
    }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();

// Transposed-convolution algorithms side by side on GAN generator layers:
// split (the product) vs zero insertion vs GEMM+col2im, all on the same GEMM, so
// the ratios show the algorithm, not the tuning; split_fp16w is split on fp16
// weights (edgegan-convert --weights fp16). Random weights, fixed seed.
//   build/bench/conv_transpose2d_algorithms_bench --benchmark_filter=dcgan64
#include <benchmark/benchmark.h>

#include "bench/conv_transpose2d_layer_fixture.h"

namespace {

using edgegan::bench::Algo;
using edgegan::bench::ConvTranspose2DLayerFixture;
using edgegan::bench::LayerSpec;

// Stride 2, output exactly twice the input: pad = (k - 2) / 2 (+1 output_padding for odd k).
const LayerSpec kLayers[] = {
    {"huge2_dcgan_4x4x1024_k5", 4, 1024, 512, 5},  {"huge2_dcgan_8x8x512_k5", 8, 512, 256, 5},
    {"huge2_dcgan_16x16x256_k5", 16, 256, 128, 5}, {"huge2_dcgan_32x32x128_k5", 32, 128, 3, 5},
    {"huge2_cgan_8x8x256_k4", 8, 256, 128, 4},     {"huge2_cgan_16x16x128_k4", 16, 128, 3, 4},
    {"dcgan64_4x4x512_k4", 4, 512, 256, 4},        {"dcgan64_8x8x256_k4", 8, 256, 128, 4},
    {"dcgan64_16x16x128_k4", 16, 128, 64, 4},      {"dcgan64_32x32x64_k4", 32, 64, 3, 4},
    {"large_64x64x128_k4", 64, 128, 64, 4},        {"large_128x128x64_k4", 128, 64, 64, 4},
};

void run_layer(benchmark::State& state, const LayerSpec& layer, Algo algo) {
  const int batch = static_cast<int>(state.range(0)), threads = static_cast<int>(state.range(1));
  ConvTranspose2DLayerFixture f(layer, batch, algo);
  for (auto _ : state) {
    f.run(threads);
    benchmark::DoNotOptimize(f.output());
  }
  const double macs = static_cast<double>(batch) * layer.in * layer.in * layer.kernel * layer.kernel * layer.cin * layer.cout;
  state.counters["useful_GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_KiB"] = static_cast<double>(f.workspace_bytes()) / 1024.0;
}

const int kRegistered = [] {
  const std::pair<const char*, Algo> algos[] = {
      {"split", Algo::kSplit}, {"zero_insert", Algo::kZeroInsert}, {"col2im", Algo::kCol2im}, {"split_fp16w", Algo::kSplitFp16w}};
  for (const LayerSpec& l : kLayers)
    for (const auto& [algo_name, algo] : algos) {
      auto* b = benchmark::RegisterBenchmark((std::string(l.name) + "/" + algo_name).c_str(),
                                            [&l, algo = algo](benchmark::State& st) { run_layer(st, l, algo); })
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

// Backward of the transposed convolution (dX + dW) on the stride-2 layers of the
// DCGAN-64 generator (pytorch/examples, ngf 64, k4 s2 p1), batch 16: the split
// kernels (conv_transpose2d_backward.h, the product) against the zero-insertion
// backward (the baseline), on the same GEMM. dx_ms and dw_ms split each time.
// Also the convolutions of the DCGAN-64 discriminator (conv2d_backward.h), whose
// backward is the other half of a training step's backward work.
//   build/bench/conv_transpose2d_backward_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>

#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward_zero_insert.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace {

using namespace edgegan::cpu;

struct Layer {
  const char* name;
  int in, cin, cout;
};

const Layer kLayers[] = {
    {"dcgan64_4x4x512_to_8x8x256", 4, 512, 256},
    {"dcgan64_8x8x256_to_16x16x128", 8, 256, 128},
    {"dcgan64_16x16x128_to_32x32x64", 16, 128, 64},
    {"dcgan64_32x32x64_to_64x64x3", 32, 64, 3},
};

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

void run_layer(benchmark::State& state, const Layer& layer, bool zero_insert) {
  const int batch = static_cast<int>(state.range(0)), threads = static_cast<int>(state.range(1));
  ConvAxis a{layer.in, 4, 2, 1, 1, 1, 0};
  a.out = conv_transpose_output_length(a.in, 4, 2, 1, 1, 1, 0);
  const ConvShape s{batch, layer.cin, layer.cout, a, a};
  std::mt19937 rng(1);
  auto random = [&](size_t n) { return random_floats(rng, n); };
  const auto x = random(static_cast<size_t>(batch * a.in * a.in * layer.cin));
  const auto w = random(static_cast<size_t>(layer.cin * layer.cout * 16));
  const auto dy = random(static_cast<size_t>(batch * a.out * a.out * layer.cout));
  std::vector<float> dx(x.size()), dfull(w.size()), full(w.size()), ws;
  ConvTranspose2DWeights split;
  split.phases_h = split_conv_transpose_axis(s.h);
  split.phases_w = split_conv_transpose_axis(s.w);
  split.panel_columns = kWeightPanelColumns;  // as the converter writes them
  const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data(), split.panel_columns);
  auto dsub = packed;
  std::vector<float*> dsub_ptr;
  for (size_t p = 0; p < packed.size(); ++p) {
    split.sub_kernels.push_back(packed[p].data());
    dsub_ptr.push_back(dsub[p].data());
  }
  assemble_conv_transpose2d_full_kernel(s, split, FullKernelLayout::kTapsFirst, full.data());
  if (zero_insert)
    ws.resize(static_cast<size_t>(std::max(conv_transpose2d_zero_insert_backward_input_workspace(s),
                                           conv_transpose2d_zero_insert_backward_weights_workspace(s))));
  else
    ws.resize(static_cast<size_t>(conv_transpose2d_backward_input_workspace(s)));
  double dx_ms = 0, dw_ms = 0;
  for (auto _ : state) {
    auto t = Clock::now();
    if (zero_insert) conv_transpose2d_zero_insert_backward_input(s, full.data(), dy.data(), dx.data(), ws.data(), threads);
    else conv_transpose2d_backward_input(s, split, dy.data(), dx.data(), ws.data(), threads);
    dx_ms += ms_since(t);
    t = Clock::now();
    if (zero_insert) conv_transpose2d_zero_insert_backward_weights(s, x.data(), dy.data(), dfull.data(), ws.data(), threads);
    else conv_transpose2d_backward_weights(s, split.phases_h, split.phases_w, x.data(), dy.data(), dsub_ptr, threads);
    dw_ms += ms_since(t);
    benchmark::DoNotOptimize(dx.data());
    benchmark::DoNotOptimize(dfull.data());
    benchmark::DoNotOptimize(dsub_ptr.data());
  }
  state.counters["dx_ms"] = benchmark::Counter(dx_ms, benchmark::Counter::kAvgIterations);
  state.counters["dw_ms"] = benchmark::Counter(dw_ms, benchmark::Counter::kAvgIterations);
  // Useful MACs (what the split kernels multiply): dX and dW each batch*in^2*16*Cin*Cout / (stride^2 trimmed taps).
  const double macs = 2.0 * static_cast<double>(conv_transpose_useful_pairs(a)) * static_cast<double>(conv_transpose_useful_pairs(a)) * batch * layer.cin * layer.cout;
  state.counters["useful_GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_KiB"] = static_cast<double>(ws.size() * 4) / 1024.0;
}

// The discriminator's k4 s2 p1 convolutions: in x in x cin -> in/2 x in/2 x cout.
const Layer kConvLayers[] = {
    {"dcgan64_D_64x64x3_to_32x32x64", 64, 3, 64},
    {"dcgan64_D_32x32x64_to_16x16x128", 32, 64, 128},
    {"dcgan64_D_16x16x128_to_8x8x256", 16, 128, 256},
    {"dcgan64_D_8x8x256_to_4x4x512", 8, 256, 512},
};

void run_conv_layer(benchmark::State& state, const Layer& layer) {
  const int batch = static_cast<int>(state.range(0)), threads = static_cast<int>(state.range(1));
  ConvAxis a{layer.in, 4, 2, 1, 1, 1, 0};
  a.out = conv_output_length(a.in, 4, 2, 1, 1, 1);
  const ConvShape s{batch, layer.cin, layer.cout, a, a};
  std::mt19937 rng(1);
  auto random = [&](size_t n) { return random_floats(rng, n); };
  const auto x = random(static_cast<size_t>(batch * a.in * a.in * layer.cin));
  const auto w = random(static_cast<size_t>(layer.cin * layer.cout * 16));  // packed [kh][kw][Cin][Cout]
  const auto dy = random(static_cast<size_t>(batch * a.out * a.out * layer.cout));
  std::vector<float> dx(x.size()), dw(w.size()), ws(static_cast<size_t>(conv2d_backward_input_workspace(s)));
  double dx_ms = 0, dw_ms = 0;
  for (auto _ : state) {
    auto t = Clock::now();
    conv2d_backward_input(s, w.data(), dy.data(), dx.data(), ws.data(), threads);
    dx_ms += ms_since(t);
    t = Clock::now();
    conv2d_backward_weights(s, x.data(), dy.data(), dw.data(), threads);
    dw_ms += ms_since(t);
    benchmark::DoNotOptimize(dx.data());
    benchmark::DoNotOptimize(dw.data());
  }
  state.counters["dx_ms"] = benchmark::Counter(dx_ms, benchmark::Counter::kAvgIterations);
  state.counters["dw_ms"] = benchmark::Counter(dw_ms, benchmark::Counter::kAvgIterations);
  const double macs = 2.0 * static_cast<double>(conv_useful_pairs(a)) * static_cast<double>(conv_useful_pairs(a)) * batch * layer.cin * layer.cout;
  state.counters["useful_GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

const int kRegistered = [] {
  for (const Layer& l : kLayers)
    for (bool zi : {false, true})
      benchmark::RegisterBenchmark((std::string("conv_transpose_backward/") + l.name + (zi ? "/zero_insert" : "/split")).c_str(),
                                   [&l, zi](benchmark::State& st) { run_layer(st, l, zi); })
          ->ArgNames({"batch", "threads"})
          ->Args({16, 1})
          ->Args({16, 2})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  for (const Layer& l : kConvLayers)
    benchmark::RegisterBenchmark((std::string("conv_backward/") + l.name).c_str(), [&l](benchmark::State& st) { run_conv_layer(st, l); })
        ->ArgNames({"batch", "threads"})
        ->Args({16, 1})
        ->Args({16, 2})
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();

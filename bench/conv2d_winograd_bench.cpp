// 3x3 stride-1 convolutions of the image-to-image and super-resolution generators,
// batch 1: the direct path (conv2d_trimmed: per-tap indirect GEMMs) against the
// Winograd forms F(4x4, 3x3) (conv2d_winograd; its filters transformed in the timed
// run where the engine does so, for layers whose copy it does not keep) and F(6x6, 3x3)
// (conv2d_winograd_f6, filters made per task from the weights), at 1 and 2 threads. The shapes are the
// body layers of Real-ESRGAN's compact network (64 ch), ESRGAN's RRDB (64 ch, growth
// 32), CycleGAN's ResNet blocks (256 ch at 64x64), the fast-style TransformerNet
// (128 ch at 64x64, 32 ch at 256x256), pix2pix-scale maps and ESPCN's 64->32 layer. Where the Winograd form
// wins is what conv2d_winograd_pays encodes.
//   build/bench/conv2d_winograd_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv2d/conv2d_winograd.h"
#include "kernels_cpu/conv2d/conv2d_winograd_f6.h"

namespace {

using namespace edgegan::cpu;

struct Layer {
  int64_t h, w, cin, cout;
};
const Layer kLayers[] = {{128, 128, 64, 64}, {64, 64, 64, 64},   {64, 64, 64, 32},  {64, 64, 96, 32},  {64, 64, 256, 256},
                         {64, 64, 128, 128}, {256, 256, 32, 32}, {32, 32, 128, 128}, {16, 16, 256, 256}, {8, 8, 512, 512}, {64, 64, 256, 128}, {48, 48, 256, 256}, {32, 32, 256, 256},
                         {256, 256, 3, 32},  {128, 128, 16, 16}, {360, 640, 64, 32}};  // the last: ESPCN x3 on a 640x360 plane

struct Setup {
  ConvShape shape;
  std::vector<float> x, y, packed, transformed, bias, workspace;
};

Setup make(const Layer& l, int threads) {
  Setup s;
  ConvAxis h{l.h, 3, 1, 1, 1, 1, l.h}, w{l.w, 3, 1, 1, 1, 1, l.w};
  s.shape = ConvShape{1, l.cin, l.cout, h, w};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  auto fill = [&](std::vector<float>& v, size_t n) {
    v.resize(n);
    for (float& f : v) f = d(rng);
  };
  fill(s.x, static_cast<size_t>(l.h * l.w * l.cin));
  std::vector<float> onnx;
  fill(onnx, static_cast<size_t>(9 * l.cin * l.cout));
  s.packed.resize(onnx.size());
  pack_conv2d_weights(s.shape, onnx.data(), s.packed.data());
  s.transformed.resize(static_cast<size_t>(conv2d_winograd_weight_floats(s.shape)));
  pack_conv2d_winograd_weights(s.shape, s.packed.data(), s.transformed.data());
  fill(s.bias, static_cast<size_t>(l.cout));
  s.y.resize(static_cast<size_t>(l.h * l.w * l.cout));
  s.workspace.resize(static_cast<size_t>(std::max({conv2d_winograd_workspace(s.shape, threads) + conv2d_winograd_weight_floats(s.shape), conv2d_trimmed_workspace(s.shape, threads), conv2d_winograd_f6_workspace(s.shape, threads)})));
  return s;
}

enum class Form { kDirect, kF4, kF6 };
const char* const kFormNames[] = {"direct", "winograd", "winograd_f6"};

void run(benchmark::State& state, const Layer& l, int threads, Form form) {
  Setup s = make(l, threads);
  Epilogue ep;
  ep.bias = s.bias.data();
  ep.activation = Activation::kLeakyRelu;
  ep.alpha = 0.2f;
  for (auto _ : state) {
    if (form == Form::kF4) {
      const float* filters = s.transformed.data();
      float* ws = s.workspace.data();
      if (!conv2d_winograd_keeps_filters(s.shape)) {  // as the engine runs it
        pack_conv2d_winograd_weights(s.shape, s.packed.data(), ws, threads);
        filters = ws;
        ws += conv2d_winograd_weight_floats(s.shape);
      }
      conv2d_winograd(s.shape, filters, s.x.data(), s.y.data(), ep, threads, ws);
    } else if (form == Form::kF6) {
      conv2d_winograd_f6(s.shape, s.packed.data(), s.x.data(), s.y.data(), ep, threads, s.workspace.data());
    } else {
      conv2d_trimmed(s.shape, s.packed.data(), s.x.data(), s.y.data(), ep, threads, s.workspace.data());
    }
    benchmark::DoNotOptimize(s.y.data());
  }
  const double macs = static_cast<double>(l.h * l.w * l.cin * l.cout * 9);
  state.counters["GMAC/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["pays"] = form == Form::kF6 ? conv2d_winograd_f6_pays(s.shape, 1) : conv2d_winograd_pays(s.shape, 1) ? 1 : 0;
}

const bool registered = [] {
  for (const Layer& l : kLayers)
    for (int threads : {1, 2})
      for (Form form : {Form::kDirect, Form::kF4, Form::kF6}) {
        const std::string name = std::string(kFormNames[static_cast<int>(form)]) + "/" + std::to_string(l.h) + "x" + std::to_string(l.w) + "x" +
                                 std::to_string(l.cin) + "_" + std::to_string(l.cout) + "/t" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), [l, threads, form](benchmark::State& st) { run(st, l, threads, form); })
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.2);
      }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();

// Sliding-channel convolution layers at DSXplore's settings (cg 2/4/8, co 33%/50%) on
// 56x56x64 -> 128 and 28x28x128 -> 256, batch 1, forward and backward (dX + dW + db):
// edgegan's SlidingChannelConv kernels against edgegan's own channel-stack form (the
// Cout*gw channels gathered into a stack, then the grouped convolution with groups = Cout,
// as the converter runs a gather that is not sliding windows; backward: the grouped
// backward, then the stack's gradient scattered back onto the input's channels).
// bench/sliding_channel_conv_torch.py times PyTorch's channel-stack form on the same layers.
//   build/bench/sliding_channel_conv_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   (--benchmark_filter=scc_fwd/56x56x64_128/cg4_co50 for one case)
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv.h"

namespace {

using namespace edgegan::cpu;

struct Layer {
  const char* name;
  int64_t hw, cin, cout;
};
const Layer kLayers[] = {{"56x56x64_128", 56, 64, 128}, {"28x28x128_256", 28, 128, 256}};

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

struct Setup {
  SlidingChannelPlan plan;
  std::vector<int64_t> stack_index;  // stack channel -> input channel
  ConvShape stacked;                  // the grouped conv over the stack
  std::vector<float> x, w_packed, w_grouped, bias, dy;
};

Setup make(const Layer& l, int64_t cg, double co) {
  Setup s;
  const int64_t gw = l.cin / cg, stride = gw - static_cast<int64_t>(std::floor(co * static_cast<double>(gw)));
  ConvAxis a{l.hw, 1, 1, 1, 0, 0, l.hw};
  const ConvShape shape{1, l.cin, l.cout, a, a};
  s.plan = plan_sliding_channel_conv(shape, gw, sliding_channel_conv_starts(l.cin, l.cout, stride));
  for (int64_t o = 0; o < l.cout; ++o)
    for (int64_t j = 0; j < gw; ++j) s.stack_index.push_back((s.plan.start(o) + j) % l.cin);
  s.stacked = shape;
  s.stacked.in_channels = l.cout * gw;
  std::mt19937 rng(1);
  s.x = random_floats(rng, static_cast<size_t>(l.hw * l.hw * l.cin));
  const std::vector<float> w = random_floats(rng, static_cast<size_t>(l.cout * gw));
  s.w_packed.resize(w.size());
  pack_sliding_channel_conv_weights(s.plan, w.data(), s.w_packed.data());
  s.w_grouped.resize(w.size());
  pack_conv2d_grouped_weights(s.stacked, l.cout, w.data(), s.w_grouped.data());
  s.bias = random_floats(rng, static_cast<size_t>(l.cout));
  s.dy = random_floats(rng, static_cast<size_t>(l.hw * l.hw * l.cout));
  return s;
}

void gather_stack(const Setup& s, const float* x, float* stack) {
  const int64_t pixels = s.plan.shape.h.in * s.plan.shape.w.in, cin = s.plan.shape.in_channels, width = s.stacked.in_channels;
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t k = 0; k < width; ++k) stack[p * width + k] = x[p * cin + s.stack_index[static_cast<size_t>(k)]];
}

void scatter_stack(const Setup& s, const float* dstack, float* dx) {
  const int64_t pixels = s.plan.shape.h.in * s.plan.shape.w.in, cin = s.plan.shape.in_channels, width = s.stacked.in_channels;
  std::fill(dx, dx + pixels * cin, 0.f);
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t k = 0; k < width; ++k) dx[p * cin + s.stack_index[static_cast<size_t>(k)]] += dstack[p * width + k];
}

void report(benchmark::State& state, const Setup& s) {
  state.counters["stack_MB"] = static_cast<double>(s.stacked.h.in * s.stacked.w.in * s.stacked.in_channels) * 4 / 1e6;
}

void scc_forward(benchmark::State& state, const Layer& l, int64_t cg, double co) {
  const int threads = static_cast<int>(state.range(0));
  Setup s = make(l, cg, co);
  std::vector<float> y(static_cast<size_t>(l.hw * l.hw * l.cout)), ws(static_cast<size_t>(sliding_channel_conv_workspace(s.plan, threads)));
  for (auto _ : state) {
    sliding_channel_conv(s.plan, 1, s.w_packed.data(), s.x.data(), y.data(), Epilogue{s.bias.data()}, threads, ws.data());
    benchmark::DoNotOptimize(y.data());
  }
  report(state, s);
}

void scc_backward(benchmark::State& state, const Layer& l, int64_t cg, double co) {
  const int threads = static_cast<int>(state.range(0));
  Setup s = make(l, cg, co);
  std::vector<float> dx(s.x.size()), dw(s.w_packed.size()), db(s.bias.size());
  std::vector<float> ws(static_cast<size_t>(sliding_channel_conv_backward_workspace(s.plan, threads)));
  for (auto _ : state) {
    bias_backward(l.hw * l.hw, l.cout, s.dy.data(), db.data());
    sliding_channel_conv_backward_weights(s.plan, 1, s.x.data(), s.dy.data(), dw.data(), threads, ws.data());
    sliding_channel_conv_backward_input(s.plan, 1, s.w_packed.data(), s.dy.data(), dx.data(), threads, ws.data());
    benchmark::DoNotOptimize(dx.data());
  }
  report(state, s);
}

void stack_forward(benchmark::State& state, const Layer& l, int64_t cg, double co) {
  const int threads = static_cast<int>(state.range(0));
  Setup s = make(l, cg, co);
  std::vector<float> stack(static_cast<size_t>(l.hw * l.hw * s.stacked.in_channels)), y(static_cast<size_t>(l.hw * l.hw * l.cout));
  std::vector<float> ws(static_cast<size_t>(std::max<int64_t>(1, conv2d_grouped_workspace(s.stacked, l.cout, threads))));
  for (auto _ : state) {
    gather_stack(s, s.x.data(), stack.data());
    if (conv2d_is_depthwise(s.stacked, l.cout))
      conv2d_depthwise(s.stacked, s.w_grouped.data(), stack.data(), y.data(), Epilogue{s.bias.data()}, threads);
    else
      conv2d_grouped(s.stacked, l.cout, s.w_grouped.data(), stack.data(), y.data(), Epilogue{s.bias.data()}, threads, ws.data());
    benchmark::DoNotOptimize(y.data());
  }
  report(state, s);
}

void stack_backward(benchmark::State& state, const Layer& l, int64_t cg, double co) {
  const int threads = static_cast<int>(state.range(0));
  Setup s = make(l, cg, co);
  std::vector<float> stack(static_cast<size_t>(l.hw * l.hw * s.stacked.in_channels)), dstack(stack.size()), dx(s.x.size());
  std::vector<float> dw(s.w_grouped.size()), db(s.bias.size());
  ConvInputGradient view = plan_conv2d_input_gradient(conv2d_group_shape(s.stacked, l.cout));
  const int64_t ws_floats = std::max<int64_t>(1, conv2d_grouped_backward_workspace(s.stacked, l.cout, threads));
  std::vector<float> ws(static_cast<size_t>(ws_floats));
  const bool depthwise = conv2d_is_depthwise(s.stacked, l.cout);
  for (auto _ : state) {
    gather_stack(s, s.x.data(), stack.data());  // the forward's stack (kept or recomputed)
    bias_backward(l.hw * l.hw, l.cout, s.dy.data(), db.data());
    if (depthwise) {
      conv2d_depthwise_backward_weights(s.stacked, stack.data(), s.dy.data(), dw.data(), threads);
      conv2d_depthwise_backward_input(s.stacked, s.w_grouped.data(), s.dy.data(), dstack.data(), threads);
    } else {
      conv2d_grouped_backward(s.stacked, l.cout, view, s.w_grouped.data(), stack.data(), s.dy.data(), dstack.data(), dw.data(), ws.data(),
                              ws_floats, threads);
    }
    scatter_stack(s, dstack.data(), dx.data());
    benchmark::DoNotOptimize(dx.data());
  }
  report(state, s);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Layer& l : kLayers)
    for (int64_t cg : {2, 4, 8})
      for (double co : {0.33, 0.5}) {
        const std::string tag = std::string(l.name) + "/cg" + std::to_string(cg) + "_co" + std::to_string(static_cast<int>(co * 100 + 0.5));
        for (auto [name, fn] : {std::pair{"scc_fwd/", &scc_forward}, std::pair{"stack_fwd/", &stack_forward},
                                std::pair{"scc_bwd/", &scc_backward}, std::pair{"stack_bwd/", &stack_backward}})
          benchmark::RegisterBenchmark((name + tag).c_str(), fn, l, cg, co)
              ->ArgName("threads")
              ->Arg(1)
              ->Arg(2)
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
      }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

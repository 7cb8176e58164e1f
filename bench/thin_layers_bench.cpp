// Thin layers, interleaved round by round on the same data, medians of the rounds:
// transposed convolutions with 1-8 output channels on the phase-lanes path against the
// path the split kernel takes without it (GEMM tiles, the dot kernel or pixel lanes),
// and convolutions from 1-4 input channels on conv2d_thin against conv2d_trimmed.
//   build/bench/thin_layers_bench [rounds] [threads]
// Prints per layer: both medians, their spread (min-max over rounds) and the useful
// GMAC/s (the split's multiply-adds: input pixels x taps x Cin x Cout).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_thin.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_phase_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"

namespace {

using namespace edgegan::cpu;

struct Layer {
  const char* name;
  int64_t h, w, cin, cout, kernel, stride, pad, output_padding;
};
const Layer kLayers[] = {
    {"fsrcnn_x3_head_360x640x56_k9s3", 360, 640, 56, 1, 9, 3, 4, 2},
    {"fsrcnn_x2_head_360x640x56_k9s2", 360, 640, 56, 1, 9, 2, 4, 1},
    {"fsrcnn_x4_head_180x320x56_k9s4", 180, 320, 56, 1, 9, 4, 4, 3},
    {"rgb_k9s3_128x128x32", 128, 128, 32, 3, 9, 3, 4, 2},
    {"rgb8_k6s2_128x128x32", 128, 128, 32, 8, 6, 2, 2, 0},
    {"dcgan_head_32x32x128_k5s2", 32, 32, 128, 3, 5, 2, 2, 1},
    {"dcgan_head_32x32x64_k4s2", 32, 32, 64, 3, 4, 2, 1, 0},
    {"head4_64x64x64_k4s2", 64, 64, 64, 4, 4, 2, 1, 0},
    {"head8_64x64x64_k4s2", 64, 64, 64, 8, 4, 2, 1, 0},
    {"head8_64x64x64_k3s2", 64, 64, 64, 8, 3, 2, 1, 1},
    {"head1_16x16x256_k4s2", 16, 16, 256, 1, 4, 2, 1, 0},
    {"head3_8x8x512_k4s2", 8, 8, 512, 3, 4, 2, 1, 0},
    {"dot_k5s3_180x320x56_c1", 180, 320, 56, 1, 5, 3, 2, 2},
    {"dot_k7s2_128x128x32_c3", 128, 128, 32, 3, 7, 2, 3, 1},
    {"dot_k4s2_128x128x16_c4", 128, 128, 16, 4, 4, 2, 1, 0},
    {"dot_k3s2_128x128x32_c1", 128, 128, 32, 1, 3, 2, 1, 1},
    {"dot_k6s3_64x64x64_c2", 64, 64, 64, 2, 6, 3, 1, 0},
};

// Stride-1 convolutions from a few channels; reflect: the pad is a fused reflect input map.
struct ConvLayer {
  const char* name;
  int64_t h, w, cin, cout, kernel;
  bool reflect;
};
const ConvLayer kConvLayers[] = {
    {"espcn_360x640_k5_1to64", 360, 640, 1, 64, 5, false},
    {"fsrcnn_360x640_k5_1to56", 360, 640, 1, 56, 5, false},
    {"style_thin_256_k9_3to8_reflect", 256, 256, 3, 8, 9, true},
    {"style_256_k9_3to32_reflect", 256, 256, 3, 32, 9, true},
    {"rgb_256_k3_3to16", 256, 256, 3, 16, 3, false},
    {"espcn_360x640_k3_32to9", 360, 640, 32, 9, 3, false},
    {"fsrcnn_360x640_k3_12to12", 360, 640, 12, 12, 3, false},
    {"k3_256_16to8", 256, 256, 16, 8, 3, false},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7, threads = argc > 2 ? std::atoi(argv[2]) : 1;
  std::printf("ISA %s, %d thread(s), %d rounds\n", isa_name(active_isa()), threads, rounds);
  std::printf("%-34s %-10s %10s %16s %10s %16s %8s %9s\n", "layer", "old path", "old ms", "spread", "new ms", "spread", "GMAC/s", "new/old");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (const Layer& l : kLayers) {
    ConvShape s;
    s.in_channels = l.cin;
    s.out_channels = l.cout;
    s.h = {l.h, l.kernel, l.stride, 1, l.pad, l.pad, 0};
    s.w = {l.w, l.kernel, l.stride, 1, l.pad, l.pad, 0};
    s.h.out = conv_transpose_output_length(l.h, l.kernel, l.stride, 1, l.pad, l.pad, l.output_padding);
    s.w.out = conv_transpose_output_length(l.w, l.kernel, l.stride, 1, l.pad, l.pad, l.output_padding);
    std::vector<float> x(static_cast<size_t>(l.h * l.w * l.cin)), wt(static_cast<size_t>(l.cin * l.cout * l.kernel * l.kernel)),
        y(static_cast<size_t>(s.h.out * s.w.out * l.cout));
    for (float& v : x) v = u(rng);
    for (float& v : wt) v = u(rng);
    ConvTranspose2DWeights split;
    split.phases_h = split_conv_transpose_axis(s.h);
    split.phases_w = split_conv_transpose_axis(s.w);
    const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, wt.data(), kWeightPanelColumns);
    for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    // As a session prepares it: the plan and the packed weights made once.
    const PhaseLanesPlan plan = plan_phase_lanes(s, split.phases_h, split.phases_w);
    std::vector<float> lanes(static_cast<size_t>(plan.ok ? plan.weight_floats() : 0));
    if (plan.ok) pack_phase_lanes_weights(s, split, plan, lanes.data());
    ConvTranspose2DWeights with = split, without = split;
    with.phase_lanes_plan = &plan;
    with.phase_lanes = lanes.data();
    without.allow_phase_lanes = false;
    const bool forced = plan.ok && !conv_transpose2d_split_phase_lanes(s, with);
    if (forced) with.phase_lanes_plan = nullptr;  // the rule declines it: time the kernel directly
    std::vector<float> ws_with(static_cast<size_t>(plan.ok ? phase_lanes_workspace_floats(plan, threads) : 0)),
        ws_without(static_cast<size_t>(conv_transpose2d_split_workspace(s, without, threads)));
    Epilogue ep;
    auto time_once = [&](bool phase_lanes) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!phase_lanes) conv_transpose2d_split(s, without, x.data(), y.data(), ep, threads, ws_without.data(), static_cast<int64_t>(ws_without.size()));
      else conv_transpose2d_phase_lanes(s, with, plan, lanes.data(), x.data(), y.data(), ep, threads, ws_with.data());
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    if (!plan.ok) {
      std::printf("%-34s not planned\n", l.name);
      continue;
    }
    std::vector<double> old_ms, new_ms;
    time_once(false), time_once(true);  // warm
    for (int r = 0; r < rounds; ++r) {
      // Each round: a few calls of each, alternating, the minimum of each (one round's
      // best is its least disturbed call on this shared machine).
      double o = 1e30, n = 1e30;
      for (int i = 0; i < 3; ++i) o = std::min(o, time_once(false)), n = std::min(n, time_once(true));
      old_ms.push_back(o), new_ms.push_back(n);
    }
    const double macs = static_cast<double>(l.h * l.w) * l.kernel * l.kernel * l.cin * l.cout;  // stride-free: every input pixel x every tap
    const double om = median(old_ms), nm = median(new_ms);
    char os[40], ns[40];
    std::snprintf(os, sizeof os, "%.3f-%.3f", *std::min_element(old_ms.begin(), old_ms.end()), *std::max_element(old_ms.begin(), old_ms.end()));
    std::snprintf(ns, sizeof ns, "%.3f-%.3f", *std::min_element(new_ms.begin(), new_ms.end()), *std::max_element(new_ms.begin(), new_ms.end()));
    std::printf("%-34s %-10s %10.3f %16s %10.3f %16s %8.1f %8.2fx%s\n", l.name, "split", om, os, nm, ns, macs / nm * 1e-6, om / nm,
                forced ? "  (rule: not taken)" : "");
  }
  std::printf("\n%-34s %-10s %10s %16s %10s %16s %8s %9s\n", "conv layer", "old path", "old ms", "spread", "new ms", "spread", "GMAC/s", "new/old");
  for (const ConvLayer& l : kConvLayers) {
    ConvShape s;
    s.in_channels = l.cin;
    s.out_channels = l.cout;
    const int64_t pad = l.kernel / 2;
    // With a reflect map the convolution sees the padded map and pads nothing itself.
    s.h = {l.h + (l.reflect ? 2 * pad : 0), l.kernel, 1, 1, l.reflect ? 0 : pad, l.reflect ? 0 : pad, l.h};
    s.w = {l.w + (l.reflect ? 2 * pad : 0), l.kernel, 1, 1, l.reflect ? 0 : pad, l.reflect ? 0 : pad, l.w};
    std::vector<float> x(static_cast<size_t>(l.h * l.w * l.cin)), wt(static_cast<size_t>(l.cin * l.cout * l.kernel * l.kernel)),
        packed(wt.size()), y(static_cast<size_t>(l.h * l.w * l.cout));
    for (float& v : x) v = u(rng);
    for (float& v : wt) v = u(rng);
    pack_conv2d_weights(s, wt.data(), packed.data());
    std::vector<int32_t> rows(static_cast<size_t>(s.h.in)), cols(static_cast<size_t>(s.w.in));
    ConvInputMap map{};
    if (l.reflect) {
      InputMapAxis a;
      a.pad_begin = a.pad_end = pad;
      conv_input_map_table(l.h, a, PadMode::kReflect, rows.data());
      conv_input_map_table(l.w, a, PadMode::kReflect, cols.data());
      map = {rows.data(), cols.data(), l.h, l.w};
    }
    const ConvInputMap* m = l.reflect ? &map : nullptr;
    const bool applies = conv2d_thin_applies(s, 1);
    std::vector<float> ws_old(static_cast<size_t>(conv2d_trimmed_workspace(s, threads))), ws_new(static_cast<size_t>(conv2d_thin_workspace(s, threads)));
    Epilogue ep;
    auto time_once = [&](bool thin) {
      const auto t0 = std::chrono::steady_clock::now();
      if (thin) conv2d_thin(s, packed.data(), x.data(), y.data(), ep, threads, ws_new.data(), m);
      else conv2d_trimmed(s, packed.data(), x.data(), y.data(), ep, threads, ws_old.data(), m);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    std::vector<double> old_ms, new_ms;
    time_once(false), time_once(true);
    for (int r = 0; r < rounds; ++r) {
      double o = 1e30, n = 1e30;
      for (int i = 0; i < 3; ++i) o = std::min(o, time_once(false)), n = std::min(n, time_once(true));
      old_ms.push_back(o), new_ms.push_back(n);
    }
    const double macs = static_cast<double>(l.h * l.w) * l.kernel * l.kernel * l.cin * l.cout;
    const double om = median(old_ms), nm = median(new_ms);
    char os[40], ns[40];
    std::snprintf(os, sizeof os, "%.3f-%.3f", *std::min_element(old_ms.begin(), old_ms.end()), *std::max_element(old_ms.begin(), old_ms.end()));
    std::snprintf(ns, sizeof ns, "%.3f-%.3f", *std::min_element(new_ms.begin(), new_ms.end()), *std::max_element(new_ms.begin(), new_ms.end()));
    std::printf("%-34s %-10s %10.3f %16s %10.3f %16s %8.1f %8.2fx%s\n", l.name, "trimmed", om, os, nm, ns, macs / nm * 1e-6, om / nm,
                applies ? "" : "  (rule: not taken)");
  }
  return 0;
}

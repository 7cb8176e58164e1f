// The GPU side of the peer layer set (bench/peer_layers.py LAYERS, the same list as
// edgegan_layers_bench): each stride-2 ConvTranspose2d layer at batch 1 and 64 on the
// CUDA kernels, timed on the device (CUDA events around each call, activations already
// on the GPU, as PyTorch is timed by bench/cuda_peers.py), for the split implicit GEMM
// and the two baselines it replaces: zero insertion (upsampled input materialised,
// then a stride-1 convolution) and col2im (a GEMM into columns, then a gather).
// Then the stride-1 3x3 convolutions of the image-to-image and super-resolution
// generators (bench/make_image_models.py), planned for FP32 and for TF32.
// One JSON object per (layer, batch, algorithm) on stdout:
//   cuda_layers_bench [--repeat R] [--batches 1,64] [--kinds] [--layer SUBSTRING]
// --kinds adds a row per GEMM launch kind forced on each problem (unsplit): the
// measurements the planner's rules come from.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/conv_transpose2d/conv_transpose2d.h"
#include "kernels_cuda/gemm/conv_gemm.h"

namespace {

using edgegan::cuda::check_cuda;
namespace cuda = edgegan::cuda;
namespace cpu = edgegan::cpu;

struct Layer {
  const char* name;
  int side, cin, cout, kernel;
};
// name, input side, Cin, Cout, kernel (stride 2, output twice the input).
constexpr Layer kLayers[] = {
    {"huge2_dcgan_4x4x1024_k5", 4, 1024, 512, 5}, {"huge2_dcgan_8x8x512_k5", 8, 512, 256, 5},  {"huge2_dcgan_16x16x256_k5", 16, 256, 128, 5},
    {"huge2_dcgan_32x32x128_k5", 32, 128, 3, 5},  {"huge2_cgan_8x8x256_k4", 8, 256, 128, 4},   {"huge2_cgan_16x16x128_k4", 16, 128, 3, 4},
    {"dcgan64_4x4x512_k4", 4, 512, 256, 4},       {"dcgan64_8x8x256_k4", 8, 256, 128, 4},      {"dcgan64_16x16x128_k4", 16, 128, 64, 4},
    {"dcgan64_32x32x64_k4", 32, 64, 3, 4},        {"large_64x64x128_k4", 64, 128, 64, 4},      {"large_128x128x64_k4", 128, 64, 64, 4},
};

// Stride-1 3x3 convolutions with pads 1: name, side, Cin, Cout.
struct ConvLayer {
  const char* name;
  int side, cin, cout;
};
constexpr ConvLayer kConvLayers[] = {
    {"cyclegan_res_64x64x256_3x3", 64, 256, 256},  {"fast_style_res_128x128x128_3x3", 128, 128, 128}, {"realesr_compact_128x128x64_3x3", 128, 64, 64},
    {"esrgan_rrdb_64x64x64_3x3", 64, 64, 64},      {"esrgan_dense_64x64x160_to32_3x3", 64, 160, 32},
};

struct DeviceBytes {
  void* p = nullptr;
  explicit DeviceBytes(size_t n) { check_cuda(cudaMalloc(&p, std::max<size_t>(n, 4)), "malloc"); }
  ~DeviceBytes() { cudaFree(p); }
  float* f() const { return static_cast<float*>(p); }
};

void upload(void* dst, const std::vector<float>& v) { check_cuda(cudaMemcpy(dst, v.data(), v.size() * 4, cudaMemcpyHostToDevice), "upload"); }

// Median of `repeat` timed calls, after warm-up.
template <typename F>
double median_ms(F&& call, int repeat) {
  cudaEvent_t a, b;
  check_cuda(cudaEventCreate(&a), "event");
  check_cuda(cudaEventCreate(&b), "event");
  for (int i = 0; i < 5; ++i) call();
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    check_cuda(cudaEventRecord(a), "record");
    call();
    check_cuda(cudaEventRecord(b), "record");
    check_cuda(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, a, b), "elapsed");
    times.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Times every big-tile launch kind, unsplit, forced on one problem.
void time_kinds(const cuda::ConvGemmShape& shape, const cuda::ConvGemmArgs& args, int repeat,
                const std::function<void(const char*, const char*, double)>& report) {
  for (auto kind : {cuda::ConvGemmLaunch::Kind::kTiled64, cuda::ConvGemmLaunch::Kind::kTiled128, cuda::ConvGemmLaunch::Kind::kTensor128Tf32,
                    cuda::ConvGemmLaunch::Kind::kTensor128Tf32Pipelined}) {
    cuda::ConvGemmLaunch l;
    l.kind = kind;
    report("kind", l.name(), median_ms([&] { cuda::conv_gemm(shape, l, args, nullptr); }, repeat));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 50;
  std::vector<int> batches = {1, 64};
  bool kinds = false;
  std::string only;  // --layer: the layers whose names contain it
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--kinds")) kinds = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--kinds")) --i;
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--layer")) only = argv[i + 1];
    if (!std::strcmp(argv[i], "--batches")) {
      batches.clear();
      for (const char* p = argv[i + 1]; *p;) {
        batches.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p) ++p;
      }
    }
  }
  try {
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "device properties");
    std::cerr << "device: " << prop.name << ", " << prop.multiProcessorCount << " SMs\n";
    std::mt19937 rng(0);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (const Layer& layer : kLayers)
      for (int batch : batches) {
        if (std::string(layer.name).find(only) == std::string::npos) continue;
        cpu::ConvShape s;
        s.batch = batch, s.in_channels = layer.cin, s.out_channels = layer.cout;
        const int pad = (layer.kernel - 1) / 2, out_pad = layer.kernel % 2;
        s.h = {layer.side, layer.kernel, 2, 1, pad, pad - out_pad, 2 * layer.side};
        s.w = s.h;
        std::vector<float> x(static_cast<size_t>(batch) * layer.side * layer.side * layer.cin), w(static_cast<size_t>(layer.cin) * layer.cout * layer.kernel * layer.kernel),
            bias(static_cast<size_t>(layer.cout));
        for (auto* v : {&x, &w, &bias})
          for (float& f : *v) f = dist(rng);
        const size_t y_floats = static_cast<size_t>(batch) * 4 * layer.side * layer.side * layer.cout;
        DeviceBytes dx(x.size() * 4), dy(y_floats * 4), db(bias.size() * 4);
        upload(dx.p, x);
        upload(db.p, bias);
        const auto phases_h = cpu::split_conv_transpose_axis(s.h), phases_w = cpu::split_conv_transpose_axis(s.w);
        cpu::ConvTranspose2DWeights split;
        split.phases_h = phases_h, split.phases_w = phases_w;
        const auto packed = cpu::pack_conv_transpose2d_weights(s, phases_h, phases_w, w.data(), cpu::kWeightPanelColumns);
        std::vector<float> all;
        std::vector<long long> offsets;
        for (const auto& p : packed) offsets.push_back(static_cast<long long>(all.size())), all.insert(all.end(), p.begin(), p.end());
        for (const auto& p : packed) split.sub_kernels.push_back(p.data());
        split.panel_columns = cpu::kWeightPanelColumns;
        auto report = [&](const char* algo, const char* launch, double ms, double macs) {
          std::cout << "{\"layer\": \"" << layer.name << "\", \"batch\": " << batch << ", \"algo\": \"" << algo << "\", \"launch\": \"" << launch
                    << "\", \"ms\": " << ms << ", \"gflops\": " << 2e-6 * macs / ms << ", \"device\": \"" << prop.name << "\"}" << std::endl;
        };
        const double useful = static_cast<double>(batch) * layer.cin * layer.cout * cpu::conv_transpose_useful_pairs(s.h) * cpu::conv_transpose_useful_pairs(s.w);
        // split: FP32 (the default), and with TF32 tensor cores allowed (--precision tf32).
        for (const char* variant : {"split", "split_tf32"}) {
          const auto shape = cuda::conv_transpose2d_split_shape(s, phases_h, phases_w, offsets, static_cast<int>(cpu::kWeightPanelColumns));
          const auto l = cuda::plan_conv_gemm(shape, prop.multiProcessorCount,
                                              std::strcmp(variant, "split_tf32") ? cuda::GemmMath::kFp32 : cuda::GemmMath::kTf32);
          DeviceBytes dw(all.size() * 4), dt(shape.tasks.size() * sizeof(cuda::ConvGemmTask)), ws(l.workspace_bytes);
          upload(dw.p, all);
          check_cuda(cudaMemcpy(dt.p, shape.tasks.data(), shape.tasks.size() * sizeof(cuda::ConvGemmTask), cudaMemcpyHostToDevice), "tasks");
          cuda::ConvGemmArgs a;
          a.x = dx.f(), a.y = dy.f(), a.weights = dw.p, a.bias = db.f(), a.tasks = static_cast<cuda::ConvGemmTask*>(dt.p), a.workspace = ws.p;
          report(variant, l.name(), median_ms([&] { cuda::conv_gemm(shape, l, a, nullptr); }, repeat), useful);
          if (kinds && !std::strcmp(variant, "split"))
            time_kinds(shape, a, repeat, [&](const char* algo, const char* launch, double ms) { report(algo, launch, ms, useful); });
        }
        {  // zero insertion
          std::vector<float> taps_first(w.size());
          cpu::assemble_conv_transpose2d_full_kernel(s, split, cpu::FullKernelLayout::kTapsFirst, taps_first.data());
          const auto flipped = cuda::conv_transpose2d_flipped_kernel(s, taps_first.data());
          const auto shape = cuda::conv_transpose2d_zero_insert_shape(s);
          const auto l = cuda::plan_conv_gemm(shape, prop.multiProcessorCount);
          DeviceBytes dw(flipped.size() * 4), dt(sizeof(cuda::ConvGemmTask)), ws(l.workspace_bytes),
              up(static_cast<size_t>(cuda::conv_transpose2d_upsampled_floats(s)) * 4);
          upload(dw.p, flipped);
          check_cuda(cudaMemcpy(dt.p, shape.tasks.data(), sizeof(cuda::ConvGemmTask), cudaMemcpyHostToDevice), "tasks");
          cuda::ConvGemmArgs a;
          a.x = up.f(), a.y = dy.f(), a.weights = dw.p, a.bias = db.f(), a.tasks = static_cast<cuda::ConvGemmTask*>(dt.p), a.workspace = ws.p;
          report("zero-insert", l.name(), median_ms([&] {
                   cuda::conv_transpose2d_zero_insert_upsample(s, dx.f(), up.f(), nullptr);
                   cuda::conv_gemm(shape, l, a, nullptr);
                 }, repeat),
                 useful);
        }
        {  // col2im
          std::vector<float> channels_first(w.size());
          cpu::assemble_conv_transpose2d_full_kernel(s, split, cpu::FullKernelLayout::kChannelsFirst, channels_first.data());
          const auto shape = cuda::dense_gemm_shape(batch * layer.side * layer.side, layer.cin, layer.kernel * layer.kernel * layer.cout);
          const auto l = cuda::plan_conv_gemm(shape, prop.multiProcessorCount);
          DeviceBytes dw(channels_first.size() * 4), dt(sizeof(cuda::ConvGemmTask)), ws(l.workspace_bytes),
              columns(static_cast<size_t>(cuda::conv_transpose2d_columns_floats(s)) * 4);
          upload(dw.p, channels_first);
          check_cuda(cudaMemcpy(dt.p, shape.tasks.data(), sizeof(cuda::ConvGemmTask), cudaMemcpyHostToDevice), "tasks");
          cuda::ConvGemmArgs a;
          a.x = dx.f(), a.y = columns.f(), a.weights = dw.p, a.tasks = static_cast<cuda::ConvGemmTask*>(dt.p), a.workspace = ws.p;
          report("col2im", l.name(), median_ms([&] {
                   cuda::conv_gemm(shape, l, a, nullptr);
                   cuda::conv_transpose2d_col2im_gather(s, columns.f(), db.f(), {}, dy.f(), nullptr);
                 }, repeat),
                 useful);
        }
      }
    for (const ConvLayer& layer : kConvLayers)
      for (int batch : batches) {
        if (std::string(layer.name).find(only) == std::string::npos) continue;
        std::vector<float> x(static_cast<size_t>(batch) * layer.side * layer.side * layer.cin), w(static_cast<size_t>(9) * layer.cin * layer.cout),
            bias(static_cast<size_t>(layer.cout));
        for (auto* v : {&x, &w, &bias})
          for (float& f : *v) f = dist(rng);
        const size_t y_floats = static_cast<size_t>(batch) * layer.side * layer.side * layer.cout;
        DeviceBytes dx(x.size() * 4), dy(y_floats * 4), db(bias.size() * 4), dw(w.size() * 4);
        upload(dx.p, x), upload(db.p, bias), upload(dw.p, w);
        const auto shape = cuda::conv2d_gemm_shape(batch, layer.side, layer.side, layer.cin, layer.side, layer.side, layer.cout, 3, 3, 1, 1, 1, 1, 1, 1);
        DeviceBytes dt(sizeof(cuda::ConvGemmTask));
        check_cuda(cudaMemcpy(dt.p, shape.tasks.data(), sizeof(cuda::ConvGemmTask), cudaMemcpyHostToDevice), "tasks");
        const double macs = static_cast<double>(batch) * layer.side * layer.side * 9.0 * layer.cin * layer.cout;  // pads counted
        auto report = [&](const char* algo, const char* launch, double ms) {
          std::cout << "{\"layer\": \"" << layer.name << "\", \"batch\": " << batch << ", \"algo\": \"" << algo << "\", \"launch\": \"" << launch
                    << "\", \"ms\": " << ms << ", \"gflops\": " << 2e-6 * macs / ms << ", \"device\": \"" << prop.name << "\"}" << std::endl;
        };
        cuda::ConvGemmArgs a;
        a.x = dx.f(), a.y = dy.f(), a.weights = dw.p, a.bias = db.f(), a.tasks = static_cast<cuda::ConvGemmTask*>(dt.p);
        for (const char* variant : {"conv", "conv_tf32"}) {
          const auto l = cuda::plan_conv_gemm(shape, prop.multiProcessorCount, std::strcmp(variant, "conv_tf32") ? cuda::GemmMath::kFp32 : cuda::GemmMath::kTf32);
          DeviceBytes ws(l.workspace_bytes);
          a.workspace = ws.p;
          report(variant, l.name(), median_ms([&] { cuda::conv_gemm(shape, l, a, nullptr); }, repeat));
        }
        a.workspace = nullptr;
        if (kinds) time_kinds(shape, a, repeat, report);
      }
  } catch (const std::exception& e) {
    std::cerr << "cuda_layers_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

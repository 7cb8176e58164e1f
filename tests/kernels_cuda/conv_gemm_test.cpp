// The CUDA implicit GEMM against the CPU reference kernels, over many random shapes:
// convolutions, split transposed convolutions (one task per phase, the file's
// panelled sub-kernels as stored, fp32 and fp16), the zero-insertion and col2im
// baselines, and dense layers; every launch kind (64- and 128-wide tiles, the narrow
// head kernels, split K) forced on every shape it can run. Skips, with CUDA's
// reason, where no GPU is present.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>

#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/conv_transpose2d/conv_transpose2d.h"
#include "kernels_cuda/gemm/conv_gemm.h"
#include "tests/kernels_cuda/cuda_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::max_abs_diff;
using testing::random_floats;
using testing::uniform_int;
using testing::device_activation;
using testing::epilogue_for;
using testing::random_axis;

// The launches a shape can run: every tile kind with and without split K, and the
// head kernels where Cout <= 4; and what the planner picks.
std::vector<cuda::ConvGemmLaunch> launches_for(const cuda::ConvGemmShape& s) {
  std::vector<cuda::ConvGemmLaunch> out;
  for (auto kind : {cuda::ConvGemmLaunch::Kind::kTiled64, cuda::ConvGemmLaunch::Kind::kTiled128})
    for (int splits : {1, 3}) {
      cuda::ConvGemmLaunch l;
      l.kind = kind;
      l.k_splits = splits;
      l.workspace_bytes = splits > 1 ? static_cast<uint64_t>(splits) * s.tasks.size() * s.max_task_pixels() * s.cout * 4 : 0;
      out.push_back(l);
    }
  if (s.cout <= 4) {
    std::vector<cuda::ConvGemmLaunch::Kind> kinds = {cuda::ConvGemmLaunch::Kind::kNarrow, cuda::ConvGemmLaunch::Kind::kNarrowGroup8,
                                                     cuda::ConvGemmLaunch::Kind::kNarrowWarp};
    for (auto kind : kinds) {
      cuda::ConvGemmLaunch l;
      l.kind = kind;
      out.push_back(l);
    }
  }
  out.push_back(cuda::plan_conv_gemm(s, cuda::multiprocessor_count()));
  return out;
}

// TF32 operands (10-bit mantissas): products within about 2^-10 of FP32's, so sums of
// up to a few thousand products of values in [-1, 1] stay within 2e-2.
TEST(CudaConvGemm, Tf32TensorCoresStayWithinTheirPrecision) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(15);
  for (int trial = 0; trial < 10; ++trial) {
    const int batch = uniform_int(rng, 1, 200), in = uniform_int(rng, 1, 1000), out = uniform_int(rng, 5, 300);
    const auto x = random_floats(rng, static_cast<size_t>(batch * in));
    const auto w = random_floats(rng, static_cast<size_t>(in * out));
    std::vector<float> ref(static_cast<size_t>(batch * out));
    for (int n = 0; n < batch; ++n)
      for (int o = 0; o < out; ++o) {
        double acc = 0;
        for (int i = 0; i < in; ++i) acc += static_cast<double>(x[static_cast<size_t>(n * in + i)]) * w[static_cast<size_t>(i * out + o)];
        ref[static_cast<size_t>(n * out + o)] = static_cast<float>(acc);
      }
    const auto shape = cuda::dense_gemm_shape(batch, in, out);
    Device<float> dx(x), dw(w), y(ref.size());
    Device<cuda::ConvGemmTask> tasks(shape.tasks);
    for (int splits : {1, 2}) {
      cuda::ConvGemmLaunch l;
      l.kind = cuda::ConvGemmLaunch::Kind::kTensor128Tf32;
      l.k_splits = splits;
      l.workspace_bytes = static_cast<uint64_t>(splits) * batch * out * 4;
      Device<uint8_t> ws(static_cast<size_t>(l.workspace_bytes));
      cuda::ConvGemmArgs a;
      a.x = dx.get(), a.y = y.get(), a.weights = dw.get(), a.tasks = tasks.get(), a.workspace = ws.get();
      cuda::conv_gemm(shape, l, a, nullptr);
      cuda::check_cuda(cudaDeviceSynchronize(), "run");
      const float err = max_abs_diff(y.host(ref.size()), ref);
      EXPECT_LE(err, 2e-2f) << "trial " << trial;
      EXPECT_GT(err, 0.f) << "TF32 rounding should show";
    }
  }
}

// One launch of `s` on device x / weights (residual may be null); y's `floats` back on the host.
std::vector<float> run_launch(const cuda::ConvGemmShape& s, const cuda::ConvGemmLaunch& l, const Device<cuda::ConvGemmTask>& tasks, const float* x,
                              const void* weights, bool f16, const float* bias, cuda::ActivationParams act, const float* residual, size_t floats) {
  Device<float> y(floats);
  Device<uint8_t> ws(static_cast<size_t>(l.workspace_bytes));
  cuda::ConvGemmArgs a;
  a.x = x, a.y = y.get(), a.weights = weights, a.weights_f16 = f16, a.bias = bias, a.activation = act, a.residual = residual;
  a.tasks = tasks.get(), a.workspace = ws.get();
  cuda::conv_gemm(s, l, a, nullptr);
  cuda::check_cuda(cudaDeviceSynchronize(), "run");
  return y.host(floats);
}

// The two TF32 tensor-core kernels on one problem. Unsplit, they multiply the same
// TF32-rounded operands in the same order of 8-deep steps (the pipelined kernel's
// 32-deep slices only add steps of zeros past Cin), so they must agree to the last
// bits; split K (3 ways: slice boundaries differ between the two) against the FP32
// reference within TF32's precision. Problems the pipelined kernel cannot copy (fp16
// weights, channels not in fours) fall back to the register-staged kernel.
void expect_tf32_kernels_agree(const cuda::ConvGemmShape& s, const float* x, const void* weights, bool f16, const float* bias,
                               cuda::ActivationParams act, const std::vector<float>& ref, const std::string& what, const float* residual) {
  Device<cuda::ConvGemmTask> tasks(s.tasks);
  std::vector<float> unsplit[2];
  for (int splits : {1, 3})
    for (int pipelined = 0; pipelined < 2; ++pipelined) {
      cuda::ConvGemmLaunch l;
      l.kind = pipelined ? cuda::ConvGemmLaunch::Kind::kTensor128Tf32Pipelined : cuda::ConvGemmLaunch::Kind::kTensor128Tf32;
      l.k_splits = splits;
      l.workspace_bytes = static_cast<uint64_t>(splits) * s.tasks.size() * s.max_task_pixels() * s.cout * 4;
      const auto out = run_launch(s, l, tasks, x, weights, f16, bias, act, residual, ref.size());
      float scale = 1.f;
      for (float v : ref) scale = std::max(scale, std::fabs(v));
      ASSERT_LE(max_abs_diff(out, ref), 2e-2f * scale) << what << ", " << l.name() << " against FP32";
      if (splits == 1) unsplit[pipelined] = out;
    }
  ASSERT_LE(max_abs_diff(unsplit[1], unsplit[0]), 1e-6f)
      << what << ": the pipelined TF32 kernel against the register-staged one";
}

// Runs `s` on device x / weights with every launch; each result must match `ref`
// (residual: a device tensor of y's shape the epilogue adds, already in `ref`).
void expect_all_launches(const cuda::ConvGemmShape& s, const float* x, const void* weights, bool f16, const float* bias,
                         cuda::ActivationParams act, const std::vector<float>& ref, const std::string& what, const float* residual = nullptr) {
  Device<cuda::ConvGemmTask> tasks(s.tasks);
  for (const cuda::ConvGemmLaunch& l : launches_for(s))
    ASSERT_LE(max_abs_diff(run_launch(s, l, tasks, x, weights, f16, bias, act, residual, ref.size()), ref), 1e-4f) << what << ", launch " << l.name();
  if (s.cout > 4) expect_tf32_kernels_agree(s, x, weights, f16, bias, act, ref, what, residual);
}

cpu::ConvShape random_shape(std::mt19937& rng, bool transposed) {
  cpu::ConvShape s;
  s.batch = uniform_int(rng, 1, 3);
  // Channel counts around the tile edges and the vector widths, and 1-4 channel heads.
  const int choices[] = {1, 2, 3, 4, 5, 8, 13, 16, 17, 32, 64, 67, 130};
  s.in_channels = choices[uniform_int(rng, 0, 12)];
  s.out_channels = choices[uniform_int(rng, 0, 12)];
  s.h = random_axis(rng, transposed);
  s.w = random_axis(rng, transposed);
  return s;
}

std::vector<float> conv_output(const cpu::ConvShape& s) { return std::vector<float>(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels)); }

TEST(CudaConvGemm, ConvolutionMatchesReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const cpu::ConvShape s = random_shape(rng, false);
    if (s.h.out < 1 || s.w.out < 1) continue;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w_onnx = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const cpu::Epilogue ep = epilogue_for(trial, bias.data());
    auto ref = conv_output(s);
    cpu::conv2d_reference(s, x.data(), w_onnx.data(), ref.data(), ep);
    // ONNX [Cout][Cin][kh][kw] -> the file's [kh][kw][Cin][Cout].
    std::vector<float> w(w_onnx.size());
    for (int64_t co = 0; co < s.out_channels; ++co)
      for (int64_t ci = 0; ci < s.in_channels; ++ci)
        for (int64_t th = 0; th < s.h.kernel; ++th)
          for (int64_t tw = 0; tw < s.w.kernel; ++tw)
            w[static_cast<size_t>(((th * s.w.kernel + tw) * s.in_channels + ci) * s.out_channels + co)] =
                w_onnx[static_cast<size_t>(((co * s.in_channels + ci) * s.h.kernel + th) * s.w.kernel + tw)];
    const auto shape = cuda::conv2d_gemm_shape(
        static_cast<int>(s.batch), static_cast<int>(s.h.in), static_cast<int>(s.w.in), static_cast<int>(s.in_channels), static_cast<int>(s.h.out),
        static_cast<int>(s.w.out), static_cast<int>(s.out_channels), static_cast<int>(s.h.kernel), static_cast<int>(s.w.kernel),
        static_cast<int>(s.h.stride), static_cast<int>(s.w.stride), static_cast<int>(s.h.dilation), static_cast<int>(s.w.dilation),
        static_cast<int>(s.h.pad_begin), static_cast<int>(s.w.pad_begin));
    Device<float> dx(x), dw(w), db(bias);
    expect_all_launches(shape, dx.get(), dw.get(), false, db.get(), device_activation(ep), ref, "conv trial " + std::to_string(trial));
    // A residual added after the activation (a fused Add).
    const auto residual = random_floats(rng, ref.size());
    for (size_t i = 0; i < ref.size(); ++i) ref[i] += residual[i];
    Device<float> dr(residual);
    expect_all_launches(shape, dx.get(), dw.get(), false, db.get(), device_activation(ep), ref, "conv+residual trial " + std::to_string(trial),
                        dr.get());
  }
}

// Heads with deep filters (a style network's 9x9x32 -> 3, a CycleGAN's 7x7x64 -> 3):
// every tap's weights staged in dynamic shared memory past the 48 KB default, and
// beyond 96 KB (9x9x96) read from global memory; both against the reference.
TEST(CudaConvGemm, NarrowHeadsWithDeepFiltersMatchReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(16);
  for (const auto& [kernel, cin] : {std::pair{9, 32}, std::pair{7, 64}, std::pair{9, 96}, std::pair{3, 130}}) {
    cpu::ConvShape s;
    s.batch = 2, s.in_channels = cin, s.out_channels = 3;
    s.h = {20, kernel, 1, 1, kernel / 2, kernel / 2, 20};
    s.w = {17, kernel, 1, 1, kernel / 2, kernel / 2, 17};
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w_onnx = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const cpu::Epilogue ep = epilogue_for(3, bias.data());
    auto ref = conv_output(s);
    cpu::conv2d_reference(s, x.data(), w_onnx.data(), ref.data(), ep);
    std::vector<float> w(w_onnx.size());
    for (int64_t co = 0; co < s.out_channels; ++co)
      for (int64_t ci = 0; ci < s.in_channels; ++ci)
        for (int64_t t = 0; t < s.h.kernel * s.w.kernel; ++t)
          w[static_cast<size_t>((t * s.in_channels + ci) * s.out_channels + co)] = w_onnx[static_cast<size_t>((co * s.in_channels + ci) * s.h.kernel * s.w.kernel + t)];
    const auto shape = cuda::conv2d_gemm_shape(2, 20, 17, cin, 20, 17, 3, kernel, kernel, 1, 1, 1, 1, kernel / 2, kernel / 2);
    Device<float> dx(x), dw(w), db(bias);
    expect_all_launches(shape, dx.get(), dw.get(), false, db.get(), device_activation(ep), ref,
                        "head " + std::to_string(kernel) + "x" + std::to_string(kernel) + "x" + std::to_string(cin));
  }
}

TEST(CudaConvGemm, SplitTransposedConvolutionMatchesReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(12);
  for (int trial = 0; trial < 60; ++trial) {
    const cpu::ConvShape s = random_shape(rng, true);
    if (s.h.out < 1 || s.w.out < 1) continue;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const cpu::Epilogue ep = epilogue_for(trial, bias.data());
    auto ref = conv_output(s);
    cpu::conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
    const auto phases_h = cpu::split_conv_transpose_axis(s.h), phases_w = cpu::split_conv_transpose_axis(s.w);
    const int panel = trial % 2 ? static_cast<int>(cpu::kWeightPanelColumns) : 0;  // the converter's panels, and plain
    const auto packed = cpu::pack_conv_transpose2d_weights(s, phases_h, phases_w, w.data(), panel);
    // The phases one after the other in one buffer, addressed by offsets.
    std::vector<float> all;
    std::vector<long long> offsets;
    for (const auto& p : packed) offsets.push_back(static_cast<long long>(all.size())), all.insert(all.end(), p.begin(), p.end());
    const auto shape = cuda::conv_transpose2d_split_shape(s, phases_h, phases_w, offsets, panel);
    Device<float> dx(x), dw(all), db(bias);
    const std::string what = "split trial " + std::to_string(trial);
    expect_all_launches(shape, dx.get(), dw.get(), false, db.get(), device_activation(ep), ref, what);
    // fp16 weights read as halves, against the reference on the rounded weights.
    std::vector<uint16_t> halves(all.size());
    std::vector<float> rounded(w.size());
    for (size_t i = 0; i < all.size(); ++i) halves[i] = cpu::float_to_half(all[i]);
    for (size_t i = 0; i < w.size(); ++i) rounded[i] = cpu::half_to_float(cpu::float_to_half(w[i]));
    cpu::conv_transpose2d_reference(s, x.data(), rounded.data(), ref.data(), ep);
    Device<uint16_t> dh(halves);
    expect_all_launches(shape, dx.get(), dh.get(), true, db.get(), device_activation(ep), ref, what + " fp16");
  }
}

TEST(CudaConvGemm, ZeroInsertionAndCol2imBaselinesMatchReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(13);
  for (int trial = 0; trial < 40; ++trial) {
    const cpu::ConvShape s = random_shape(rng, true);
    if (s.h.out < 1 || s.w.out < 1) continue;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const cpu::Epilogue ep = epilogue_for(trial, bias.data());
    auto ref = conv_output(s);
    cpu::conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
    cpu::ConvTranspose2DWeights split;
    split.phases_h = cpu::split_conv_transpose_axis(s.h);
    split.phases_w = cpu::split_conv_transpose_axis(s.w);
    const auto packed = cpu::pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data());
    for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    Device<float> dx(x), db(bias);
    {  // zero insertion
      std::vector<float> taps_first(w.size());
      cpu::assemble_conv_transpose2d_full_kernel(s, split, cpu::FullKernelLayout::kTapsFirst, taps_first.data());
      Device<float> dw(cuda::conv_transpose2d_flipped_kernel(s, taps_first.data()));
      Device<float> x_up(static_cast<size_t>(cuda::conv_transpose2d_upsampled_floats(s)));
      cuda::conv_transpose2d_zero_insert_upsample(s, dx.get(), x_up.get(), nullptr);
      expect_all_launches(cuda::conv_transpose2d_zero_insert_shape(s), x_up.get(), dw.get(), false, db.get(), device_activation(ep), ref,
                          "zero-insert trial " + std::to_string(trial));
    }
    {  // col2im
      std::vector<float> channels_first(w.size());
      cpu::assemble_conv_transpose2d_full_kernel(s, split, cpu::FullKernelLayout::kChannelsFirst, channels_first.data());
      Device<float> dw(channels_first);
      const auto gemm = cuda::dense_gemm_shape(static_cast<int>(s.batch * s.h.in * s.w.in), static_cast<int>(s.in_channels),
                                               static_cast<int>(s.h.kernel * s.w.kernel * s.out_channels));
      Device<cuda::ConvGemmTask> tasks(gemm.tasks);
      Device<float> columns(static_cast<size_t>(cuda::conv_transpose2d_columns_floats(s))), y(ref.size());
      const auto l = cuda::plan_conv_gemm(gemm, cuda::multiprocessor_count());
      Device<uint8_t> ws(static_cast<size_t>(l.workspace_bytes));
      cuda::ConvGemmArgs a;
      a.x = dx.get(), a.y = columns.get(), a.weights = dw.get(), a.tasks = tasks.get(), a.workspace = ws.get();
      cuda::conv_gemm(gemm, l, a, nullptr);
      cuda::conv_transpose2d_col2im_gather(s, columns.get(), db.get(), device_activation(ep), y.get(), nullptr);
      cuda::check_cuda(cudaDeviceSynchronize(), "run");
      ASSERT_LE(max_abs_diff(y.host(ref.size()), ref), 1e-4f) << "col2im trial " << trial;
    }
  }
}

TEST(CudaConvGemm, DenseMatchesReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(14);
  for (int trial = 0; trial < 30; ++trial) {
    const int batch = uniform_int(rng, 1, 70), in = uniform_int(rng, 1, 300), out = uniform_int(rng, 1, 300);
    const auto x = random_floats(rng, static_cast<size_t>(batch * in));
    const auto w = random_floats(rng, static_cast<size_t>(in * out));
    std::vector<float> ref(static_cast<size_t>(batch * out));
    for (int n = 0; n < batch; ++n)
      for (int o = 0; o < out; ++o) {
        double acc = 0;
        for (int i = 0; i < in; ++i) acc += static_cast<double>(x[static_cast<size_t>(n * in + i)]) * w[static_cast<size_t>(i * out + o)];
        ref[static_cast<size_t>(n * out + o)] = static_cast<float>(acc);
      }
    Device<float> dx(x), dw(w);
    expect_all_launches(cuda::dense_gemm_shape(batch, in, out), dx.get(), dw.get(), false, nullptr, {}, ref, "dense trial " + std::to_string(trial));
  }
}

// Problems of many 128 x 128 tiles and deep reductions, where the pipelined kernel's
// ring wraps many times: 3x3 convolutions of an image-to-image network (with partial
// tiles at the map's and the channels' edges) and the split phases of a k4 s2
// transposed convolution in the converter's panels. Both TF32 kernels must agree, and
// the planner must pick the pipelined one with TF32 allowed where its rule says (Cout
// >= 128), and not for narrower outputs on few tiles.
TEST(CudaConvGemm, PipelinedTf32TilesOnLargeProblems) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(17);
  struct Case {
    bool transposed;
    int batch, side, cin, cout, kernel;
    bool planned;
  };
  for (const Case& c : {Case{false, 2, 37, 64, 132, 3, true}, Case{false, 1, 64, 128, 128, 3, true}, Case{false, 3, 20, 36, 68, 3, false},
                        Case{true, 2, 24, 128, 64, 4, false}, Case{true, 1, 16, 260, 128, 4, true}}) {
    cpu::ConvShape s;
    s.batch = c.batch, s.in_channels = c.cin, s.out_channels = c.cout;
    if (c.transposed) s.h = {c.side, c.kernel, 2, 1, 1, 1, 2 * c.side};
    else s.h = {c.side, c.kernel, 1, 1, c.kernel / 2, c.kernel / 2, c.side};
    s.w = s.h;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w_onnx = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const cpu::Epilogue ep = epilogue_for(c.side, bias.data());
    auto ref = conv_output(s);
    const std::string what = std::string(c.transposed ? "transposed " : "conv ") + std::to_string(c.side) + "x" + std::to_string(c.cin) + "->" +
                             std::to_string(c.cout);
    cuda::ConvGemmShape shape;
    std::vector<float> w;
    if (c.transposed) {
      cpu::conv_transpose2d_reference(s, x.data(), w_onnx.data(), ref.data(), ep);
      const auto phases_h = cpu::split_conv_transpose_axis(s.h), phases_w = cpu::split_conv_transpose_axis(s.w);
      const int panel = static_cast<int>(cpu::kWeightPanelColumns);
      std::vector<long long> offsets;
      for (const auto& p : cpu::pack_conv_transpose2d_weights(s, phases_h, phases_w, w_onnx.data(), panel))
        offsets.push_back(static_cast<long long>(w.size())), w.insert(w.end(), p.begin(), p.end());
      shape = cuda::conv_transpose2d_split_shape(s, phases_h, phases_w, offsets, panel);
    } else {
      cpu::conv2d_reference(s, x.data(), w_onnx.data(), ref.data(), ep);
      w.resize(w_onnx.size());
      const int64_t taps = s.h.kernel * s.w.kernel;
      for (int64_t co = 0; co < s.out_channels; ++co)
        for (int64_t ci = 0; ci < s.in_channels; ++ci)
          for (int64_t tap = 0; tap < taps; ++tap)
            w[static_cast<size_t>((tap * s.in_channels + ci) * s.out_channels + co)] = w_onnx[static_cast<size_t>((co * s.in_channels + ci) * taps + tap)];
      shape = cuda::conv2d_gemm_shape(c.batch, c.side, c.side, c.cin, c.side, c.side, c.cout, c.kernel, c.kernel, 1, 1, 1, 1, c.kernel / 2, c.kernel / 2);
    }
    EXPECT_EQ(cuda::plan_conv_gemm(shape, cuda::multiprocessor_count(), cuda::GemmMath::kTf32).kind == cuda::ConvGemmLaunch::Kind::kTensor128Tf32Pipelined,
              c.planned)
        << what;
    Device<float> dx(x), dw(w), db(bias);
    expect_tf32_kernels_agree(shape, dx.get(), dw.get(), false, db.get(), device_activation(ep), ref, what, nullptr);
  }
}

// A tiny map with deep channels (4x4x1024 -> 512, k5) does not fill the GPU with
// tiles: the planner splits K.
TEST(CudaConvGemm, TinyMapDeepChannelsSplitsK) {
  SKIP_WITHOUT_GPU();
  cpu::ConvShape s;
  s.batch = 1, s.in_channels = 1024, s.out_channels = 512;
  s.h = {4, 5, 2, 1, 2, 1, 8};
  s.w = s.h;
  const auto phases_h = cpu::split_conv_transpose_axis(s.h), phases_w = cpu::split_conv_transpose_axis(s.w);
  const auto shape = cuda::conv_transpose2d_split_shape(s, phases_h, phases_w, {0, 0, 0, 0}, 0);
  EXPECT_GT(cuda::plan_conv_gemm(shape, cuda::multiprocessor_count()).k_splits, 1);
}

}  // namespace
}  // namespace edgegan

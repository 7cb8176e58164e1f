#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#include "kernels_cuda/conv_transpose2d/conv_transpose2d_split.h"

namespace edgegan::cuda {
namespace {

constexpr int kMaxStride = 8;    // phases per axis held in the kernel's parameter block
constexpr int kMaxTaps = 16;     // taps per phase per axis

// Phase tables of one axis, passed by value (kernel parameter space, no global loads).
struct AxisTables {
  int stride, pad_begin, in, out;
  int tap_count[kMaxStride];
  int offsets[kMaxStride][kMaxTaps];
};

struct ConvTransposeParams {
  int batch, cin, cout;
  AxisTables h, w;
  long long phase_weight_offset[kMaxStride * kMaxStride];  // floats, into the packed weights
  int activation;
  float alpha;
};

__device__ float activate(float v, int a, float alpha) {
  switch (a) {
    case 1: return v > 0.f ? v : 0.f;
    case 2: return v > 0.f ? v : v * alpha;
    case 3: return tanhf(v);
    case 4: return 1.f / (1.f + expf(-v));
    default: return v;
  }
}

__device__ int floor_mod(int a, int b) {
  const int m = a % b;
  return m < 0 ? m + b : m;
}

// y[n, oh, ow, co]: NHWC. Consecutive threads take consecutive output channels,
// so weight reads (…, ci, co) and output writes coalesce.
__global__ void conv_transpose2d_split_kernel(ConvTransposeParams p, const float* __restrict__ x, const float* __restrict__ weights,
                                              const float* __restrict__ bias, float* __restrict__ y) {
  const long long total = static_cast<long long>(p.batch) * p.h.out * p.w.out * p.cout;
  for (long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int co = static_cast<int>(idx % p.cout);
    long long rest = idx / p.cout;
    const int ow = static_cast<int>(rest % p.w.out);
    rest /= p.w.out;
    const int oh = static_cast<int>(rest % p.h.out);
    const int n = static_cast<int>(rest / p.h.out);
    const int rh = floor_mod(oh + p.h.pad_begin, p.h.stride), rw = floor_mod(ow + p.w.pad_begin, p.w.stride);
    const int qh = (oh + p.h.pad_begin - rh) / p.h.stride, qw = (ow + p.w.pad_begin - rw) / p.w.stride;
    const int th_n = p.h.tap_count[rh], tw_n = p.w.tap_count[rw];
    const float* sub = weights + p.phase_weight_offset[rh * p.w.stride + rw];
    float acc = bias ? bias[co] : 0.f;
    for (int th = 0; th < th_n; ++th) {
      const int ih = qh - p.h.offsets[rh][th];
      if (ih < 0 || ih >= p.h.in) continue;  // trimmed
      for (int tw = 0; tw < tw_n; ++tw) {
        const int iw = qw - p.w.offsets[rw][tw];
        if (iw < 0 || iw >= p.w.in) continue;
        const float* xp = x + ((static_cast<long long>(n) * p.h.in + ih) * p.w.in + iw) * p.cin;
        const float* wp = sub + static_cast<long long>(th * tw_n + tw) * p.cin * p.cout + co;
        for (int ci = 0; ci < p.cin; ++ci) acc += xp[ci] * wp[static_cast<long long>(ci) * p.cout];
      }
    }
    y[idx] = activate(acc, p.activation, p.alpha);
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}

AxisTables tables(const cpu::ConvAxis& a, const std::vector<cpu::AxisPhase>& phases) {
  if (a.stride > kMaxStride) throw std::runtime_error("CUDA split deconv: stride > 8 is not supported yet");
  AxisTables t{};
  t.stride = static_cast<int>(a.stride);
  t.pad_begin = static_cast<int>(a.pad_begin);
  t.in = static_cast<int>(a.in);
  t.out = static_cast<int>(a.out);
  for (size_t r = 0; r < phases.size(); ++r) {
    if (phases[r].taps.size() > kMaxTaps) throw std::runtime_error("CUDA split deconv: more than 16 taps per phase");
    t.tap_count[r] = static_cast<int>(phases[r].taps.size());
    for (size_t k = 0; k < phases[r].offsets.size(); ++k) t.offsets[r][k] = static_cast<int>(phases[r].offsets[k]);
  }
  return t;
}

// Device buffer freed on scope exit.
struct DeviceBuffer {
  float* ptr = nullptr;
  explicit DeviceBuffer(size_t floats) { check(cudaMalloc(&ptr, std::max<size_t>(floats, 1) * sizeof(float)), "malloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
};

}  // namespace

bool device_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);  // leaves count untouched on failure
  if (e != cudaSuccess || count == 0) {
    if (why) *why = e != cudaSuccess ? std::string(cudaGetErrorString(e)) : "no CUDA device";
    return false;
  }
  return true;
}

void conv_transpose2d_split_host(const cpu::ConvShape& s, const cpu::ConvTranspose2DWeights& w, const float* x, float* y,
                                 const cpu::Epilogue& ep) {
  ConvTransposeParams p{};
  p.batch = static_cast<int>(s.batch);
  p.cin = static_cast<int>(s.in_channels);
  p.cout = static_cast<int>(s.out_channels);
  p.h = tables(s.h, w.phases_h);
  p.w = tables(s.w, w.phases_w);
  p.activation = static_cast<int>(ep.activation);
  p.alpha = ep.alpha;
  std::vector<float> packed;
  for (size_t i = 0; i < w.sub_kernels.size(); ++i) {
    p.phase_weight_offset[i] = static_cast<long long>(packed.size());
    const size_t n = w.phases_h[i / w.phases_w.size()].taps.size() * w.phases_w[i % w.phases_w.size()].taps.size() *
                     static_cast<size_t>(s.in_channels * s.out_channels);
    if (!n) continue;
    // The device kernel reads each tap plain [Cin][Cout]: undo the file's column panels.
    const size_t at = packed.size();
    packed.resize(at + n);
    cpu::repanel_matrices(static_cast<int64_t>(n) / (s.in_channels * s.out_channels), s.in_channels, s.out_channels,
                          w.panel_columns, 0, w.sub_kernels[i], packed.data() + at);
  }
  const size_t x_n = static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels);
  const size_t y_n = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
  DeviceBuffer dx(x_n), dw(packed.size()), dy(y_n), db(static_cast<size_t>(s.out_channels));
  check(cudaMemcpy(dx.ptr, x, x_n * sizeof(float), cudaMemcpyHostToDevice), "copy x");
  check(cudaMemcpy(dw.ptr, packed.data(), packed.size() * sizeof(float), cudaMemcpyHostToDevice), "copy weights");
  if (ep.bias) check(cudaMemcpy(db.ptr, ep.bias, static_cast<size_t>(s.out_channels) * sizeof(float), cudaMemcpyHostToDevice), "copy bias");
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<size_t>((y_n + threads - 1) / threads, 65535));
  conv_transpose2d_split_kernel<<<blocks, threads>>>(p, dx.ptr, dw.ptr, ep.bias ? db.ptr : nullptr, dy.ptr);
  check(cudaGetLastError(), "launch");
  check(cudaMemcpy(y, dy.ptr, y_n * sizeof(float), cudaMemcpyDeviceToHost), "copy y");
}

}  // namespace edgegan::cuda

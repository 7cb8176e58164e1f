#include "kernels_cuda/conv_transpose2d/conv_transpose2d.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_common/conv_transpose2d_phases.h"
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/common/nhwc.cuh"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(long long n) { return static_cast<int>(std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20)); }

struct Geometry {
  int batch, cin, cout, in_h, in_w, out_h, out_w, kh, kw, sh, sw, dh, dw, ph, pw;
};

Geometry geometry(const kernels::ConvShape& s) {
  return {static_cast<int>(s.batch), static_cast<int>(s.in_channels), static_cast<int>(s.out_channels),
          static_cast<int>(s.h.in), static_cast<int>(s.w.in), static_cast<int>(s.h.out), static_cast<int>(s.w.out),
          static_cast<int>(s.h.kernel), static_cast<int>(s.w.kernel), static_cast<int>(s.h.stride), static_cast<int>(s.w.stride),
          static_cast<int>(s.h.dilation), static_cast<int>(s.w.dilation), static_cast<int>(s.h.pad_begin), static_cast<int>(s.w.pad_begin)};
}

// Every element of x_up written once: x where both coordinates are multiples of the stride, else 0.
__global__ void upsample_with_zeros(Geometry g, const float* __restrict__ x, float* __restrict__ x_up) {
  const int up_h = (g.in_h - 1) * g.sh + 1, up_w = (g.in_w - 1) * g.sw + 1;
  const long long total = static_cast<long long>(g.batch) * up_h * up_w * g.cin;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const NhwcIndex at = nhwc_index(i, up_h, up_w, g.cin);
    float v = 0.f;
    if (at.h % g.sh == 0 && at.w % g.sw == 0) v = x[((at.n * g.in_h + at.h / g.sh) * g.in_w + at.w / g.sw) * g.cin + at.c];
    x_up[i] = v;
  }
}

// y[n, oh, ow, co] = act(bias + sum over taps landing on (oh, ow) of columns[n, ih, iw][th][tw][co]), in tap order.
__global__ void col2im_gather(Geometry g, const float* __restrict__ columns, const float* __restrict__ bias, ActivationParams activation,
                              float* __restrict__ y) {
  const long long total = static_cast<long long>(g.batch) * g.out_h * g.out_w * g.cout;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const NhwcIndex at = nhwc_index(i, g.out_h, g.out_w, g.cout);
    const int co = at.c;
    const long long n = at.n;
    float acc = 0.f;
    for (int th = 0; th < g.kh; ++th) {
      const int ih = transposed_source(at.h, g.ph, th, g.dh, g.sh, g.in_h);
      if (ih < 0) continue;
      for (int tw = 0; tw < g.kw; ++tw) {
        const int iw = transposed_source(at.w, g.pw, tw, g.dw, g.sw, g.in_w);
        if (iw < 0) continue;
        acc += columns[((static_cast<long long>(n) * g.in_h + ih) * g.in_w + iw) * g.kh * g.kw * g.cout +
                       (static_cast<long long>(th) * g.kw + tw) * g.cout + co];
      }
    }
    if (bias) acc += bias[co];
    y[i] = activate(acc, activation);
  }
}

// One output element per thread: the taps whose input lands on (oh, ow), each over the
// group's input channels; output channel co of group g reads W[g][th][tw][ci][co - g*cog].
__global__ void grouped_gather(Geometry g, int groups, const float* __restrict__ x, const float* __restrict__ w,
                               const float* __restrict__ bias, ActivationParams activation, float* __restrict__ y) {
  const long long total = static_cast<long long>(g.batch) * g.out_h * g.out_w * g.cout;
  const int cig = g.cin / groups, cog = g.cout / groups;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const NhwcIndex at = nhwc_index(i, g.out_h, g.out_w, g.cout);
    const int co = at.c;
    const long long n = at.n;
    const int group = co / cog, local = co - group * cog;
    float acc = 0.f;
    for (int th = 0; th < g.kh; ++th) {
      const int ih = transposed_source(at.h, g.ph, th, g.dh, g.sh, g.in_h);
      if (ih < 0) continue;
      for (int tw = 0; tw < g.kw; ++tw) {
        const int iw = transposed_source(at.w, g.pw, tw, g.dw, g.sw, g.in_w);
        if (iw < 0) continue;
        const float* xp = x + ((n * g.in_h + ih) * g.in_w + iw) * g.cin + static_cast<long long>(group) * cig;
        const float* wp = w + ((static_cast<long long>(group) * g.kh + th) * g.kw + tw) * cig * cog + local;
        for (int ci = 0; ci < cig; ++ci) acc = fmaf(__ldg(xp + ci), __ldg(wp + static_cast<long long>(ci) * cog), acc);
      }
    }
    if (bias) acc += __ldg(bias + co);
    y[i] = activate(acc, activation);
  }
}

}  // namespace

ConvGemmShape conv_transpose2d_split_shape(const kernels::ConvShape& s, const std::vector<kernels::AxisPhase>& phases_h,
                                           const std::vector<kernels::AxisPhase>& phases_w, const std::vector<long long>& phase_weight_offsets,
                                           int panel) {
  ConvGemmShape g;
  g.batch = static_cast<int>(s.batch), g.in_h = static_cast<int>(s.h.in), g.in_w = static_cast<int>(s.w.in);
  g.cin = static_cast<int>(s.in_channels), g.out_h = static_cast<int>(s.h.out), g.out_w = static_cast<int>(s.w.out);
  g.cout = static_cast<int>(s.out_channels), g.panel = panel;
  for (size_t a = 0; a < phases_h.size(); ++a)
    for (size_t b = 0; b < phases_w.size(); ++b) {
      const kernels::AxisPhase& ph = phases_h[a];
      const kernels::AxisPhase& pw = phases_w[b];
      ConvGemmTask t;
      t.q_begin_h = static_cast<int>(ph.q_begin), t.q_count_h = static_cast<int>(std::max<int64_t>(0, ph.q_end - ph.q_begin));
      t.q_begin_w = static_cast<int>(pw.q_begin), t.q_count_w = static_cast<int>(std::max<int64_t>(0, pw.q_end - pw.q_begin));
      t.out_step_h = static_cast<int>(s.h.stride), t.out_base_h = static_cast<int>(ph.residue - s.h.pad_begin);
      t.out_step_w = static_cast<int>(s.w.stride), t.out_base_w = static_cast<int>(pw.residue - s.w.pad_begin);
      t.taps_h = static_cast<int>(ph.taps.size()), t.taps_w = static_cast<int>(pw.taps.size());
      for (int k = 0; k < std::min(t.taps_h, kMaxTapsPerAxis); ++k) t.tap_offset_h[k] = -static_cast<int>(ph.offsets[static_cast<size_t>(k)]);
      for (int k = 0; k < std::min(t.taps_w, kMaxTapsPerAxis); ++k) t.tap_offset_w[k] = -static_cast<int>(pw.offsets[static_cast<size_t>(k)]);
      t.weights = phase_weight_offsets[a * phases_w.size() + b];
      g.tasks.push_back(t);
    }
  return g;
}

long long conv_transpose2d_upsampled_floats(const kernels::ConvShape& s) {
  return s.batch * ((s.h.in - 1) * s.h.stride + 1) * ((s.w.in - 1) * s.w.stride + 1) * s.in_channels;
}

ConvGemmShape conv_transpose2d_zero_insert_shape(const kernels::ConvShape& s) {
  const int up_h = static_cast<int>((s.h.in - 1) * s.h.stride + 1), up_w = static_cast<int>((s.w.in - 1) * s.w.stride + 1);
  return conv2d_gemm_shape(static_cast<int>(s.batch), up_h, up_w, static_cast<int>(s.in_channels), static_cast<int>(s.h.out),
                           static_cast<int>(s.w.out), static_cast<int>(s.out_channels), static_cast<int>(s.h.kernel),
                           static_cast<int>(s.w.kernel), 1, 1, static_cast<int>(s.h.dilation), static_cast<int>(s.w.dilation),
                           static_cast<int>((s.h.kernel - 1) * s.h.dilation - s.h.pad_begin),
                           static_cast<int>((s.w.kernel - 1) * s.w.dilation - s.w.pad_begin));
}

void conv_transpose2d_zero_insert_upsample(const kernels::ConvShape& s, const float* x, float* x_up, cudaStream_t stream) {
  upsample_with_zeros<<<blocks_for(conv_transpose2d_upsampled_floats(s)), kThreads, 0, stream>>>(geometry(s), x, x_up);
  check_cuda(cudaGetLastError(), "zero-insertion upsample launch");
}

std::vector<float> conv_transpose2d_flipped_kernel(const kernels::ConvShape& s, const float* taps_first) {
  const int64_t kh = s.h.kernel, kw = s.w.kernel, tap = s.in_channels * s.out_channels;
  std::vector<float> out(static_cast<size_t>(kh * kw * tap));
  for (int64_t th = 0; th < kh; ++th)
    for (int64_t tw = 0; tw < kw; ++tw)
      std::copy(taps_first + (th * kw + tw) * tap, taps_first + (th * kw + tw + 1) * tap,
                out.begin() + static_cast<std::ptrdiff_t>(((kh - 1 - th) * kw + (kw - 1 - tw)) * tap));
  return out;
}

long long conv_transpose2d_columns_floats(const kernels::ConvShape& s) {
  return s.batch * s.h.in * s.w.in * s.h.kernel * s.w.kernel * s.out_channels;
}

void conv_transpose2d_col2im_gather(const kernels::ConvShape& s, const float* columns, const float* bias, ActivationParams activation, float* y,
                                    cudaStream_t stream) {
  col2im_gather<<<blocks_for(s.batch * s.h.out * s.w.out * s.out_channels), kThreads, 0, stream>>>(geometry(s), columns, bias, activation, y);
  check_cuda(cudaGetLastError(), "col2im gather launch");
}

void conv_transpose2d_grouped_direct(const kernels::ConvShape& s, int groups, const float* x, const float* weights, const float* bias,
                                     ActivationParams activation, float* y, cudaStream_t stream) {
  const long long total = s.batch * s.h.out * s.w.out * s.out_channels;
  if (total <= 0) return;
  grouped_gather<<<blocks_for(total), kThreads, 0, stream>>>(geometry(s), groups, x, weights, bias, activation, y);
  check_cuda(cudaGetLastError(), "grouped transposed convolution launch");
}

std::vector<float> conv_transpose2d_grouped_full_kernel(const kernels::ConvShape& s, int groups, const kernels::ConvTranspose2DSubKernels& w) {
  // Each group's view of the phases is an ungrouped transposed convolution's weights:
  // reassembled by the CPU's own routine, one group after the other.
  const kernels::ConvShape gs = kernels::conv_transpose2d_group_shape(s, groups);
  const int64_t per_group = gs.h.kernel * gs.w.kernel * gs.in_channels * gs.out_channels;
  std::vector<float> full(static_cast<size_t>(per_group * groups));
  const auto views = kernels::conv_transpose2d_group_sub_kernels(s, groups, w);
  for (int g = 0; g < groups; ++g)
    kernels::assemble_conv_transpose2d_full_kernel(gs, views[static_cast<size_t>(g)], kernels::FullKernelLayout::kTapsFirst, full.data() + g * per_group);
  return full;
}

}  // namespace edgegan::cuda

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"

#include <algorithm>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/workspace.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"

namespace edgegan::cpu {

void conv_transpose2d_grouped_reference(const ConvShape& s, int64_t groups, const float* x, const float* w, float* y, const Epilogue& ep) {
  const int64_t cin = s.in_channels, cout = s.out_channels, cin_g = cin / groups, cout_g = cout / groups;
  const int64_t oh_n = s.h.out, ow_n = s.w.out;
  for (int64_t n = 0; n < s.batch; ++n) {
    float* yn = y + n * oh_n * ow_n * cout;
    for (int64_t p = 0; p < oh_n * ow_n; ++p)
      for (int64_t co = 0; co < cout; ++co) yn[p * cout + co] = ep.bias ? ep.bias[co] : 0.f;
    for (int64_t ih = 0; ih < s.h.in; ++ih)
      for (int64_t iw = 0; iw < s.w.in; ++iw)
        for (int64_t kh = 0; kh < s.h.kernel; ++kh)
          for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
            const int64_t oh = ih * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            const int64_t ow = iw * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
            if (oh < 0 || oh >= oh_n || ow < 0 || ow >= ow_n) continue;
            for (int64_t ci = 0; ci < cin; ++ci) {
              const float xv = x[((n * s.h.in + ih) * s.w.in + iw) * cin + ci];
              const int64_t g = ci / cin_g;
              for (int64_t c = 0; c < cout_g; ++c)
                yn[(oh * ow_n + ow) * cout + g * cout_g + c] += xv * w[((ci * cout_g + c) * s.h.kernel + kh) * s.w.kernel + kw];
            }
          }
    for (int64_t i = 0; i < oh_n * ow_n * cout; ++i) yn[i] = ep.activate(yn[i], i % cout);
  }
}

void conv_transpose2d_grouped_backward_reference(const ConvShape& s, int64_t groups, const float* x, const float* w, const float* dy,
                                                 float* dx, float* dw, float* db) {
  const int64_t cin = s.in_channels, cout = s.out_channels, cin_g = cin / groups, cout_g = cout / groups;
  if (dx) std::fill(dx, dx + s.batch * s.h.in * s.w.in * cin, 0.f);
  if (dw) std::fill(dw, dw + cin * cout_g * s.h.kernel * s.w.kernel, 0.f);
  if (db) bias_backward(s.batch * s.h.out * s.w.out, cout, dy, db);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t ih = 0; ih < s.h.in; ++ih)
      for (int64_t iw = 0; iw < s.w.in; ++iw)
        for (int64_t kh = 0; kh < s.h.kernel; ++kh)
          for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
            const int64_t oh = ih * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            const int64_t ow = iw * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
            if (oh < 0 || oh >= s.h.out || ow < 0 || ow >= s.w.out) continue;
            const float* g = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
            for (int64_t ci = 0; ci < cin; ++ci) {
              const int64_t xi = ((n * s.h.in + ih) * s.w.in + iw) * cin + ci, g0 = ci / cin_g * cout_g;
              for (int64_t c = 0; c < cout_g; ++c) {
                const int64_t wi = ((ci * cout_g + c) * s.h.kernel + kh) * s.w.kernel + kw;
                if (dx) dx[xi] += g[g0 + c] * w[wi];
                if (dw) dw[wi] += x[xi] * g[g0 + c];
              }
            }
          }
}

std::vector<std::vector<float>> pack_conv_transpose2d_grouped_weights(const ConvShape& s, int64_t groups,
                                                                  const std::vector<AxisPhase>& phases_h,
                                                                  const std::vector<AxisPhase>& phases_w, const float* w,
                                                                  int64_t panel_columns) {
  const ConvShape gs = conv_transpose2d_group_shape(s, groups);
  // Group g's weights [Cin/groups][Cout/groups][kh][kw] are one contiguous block of the ONNX tensor.
  const int64_t group_floats = gs.in_channels * gs.out_channels * s.h.kernel * s.w.kernel;
  std::vector<std::vector<float>> packed(phases_h.size() * phases_w.size());
  for (int64_t g = 0; g < groups; ++g) {
    const auto part = pack_conv_transpose2d_weights(gs, phases_h, phases_w, w + g * group_floats, panel_columns);
    for (size_t p = 0; p < part.size(); ++p) packed[p].insert(packed[p].end(), part[p].begin(), part[p].end());
  }
  return packed;
}

namespace {

// A head's pixel-lanes plan that is not ok: a narrow group takes the dot path (its
// scratch in the workspace) instead of planning and packing per call.
const PixelLanesPlan kNoPixelLanes{};

void copy_channels(int64_t pixels, int64_t width, const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pixels * width > 32768)
  for (int64_t p = 0; p < pixels; ++p) std::copy(src + p * src_stride, src + p * src_stride + width, dst + p * dst_stride);
}

int64_t groups_of(const std::vector<ConvTranspose2DWeights>& views) { return static_cast<int64_t>(views.size()); }

}  // namespace

std::vector<ConvTranspose2DWeights> conv_transpose2d_group_views(const ConvShape& s, int64_t groups, const ConvTranspose2DWeights& w) {
  std::vector<ConvTranspose2DWeights> views;
  for (ConvTranspose2DSubKernels& part : conv_transpose2d_group_sub_kernels(s, groups, w)) {
    ConvTranspose2DWeights v;
    static_cast<ConvTranspose2DSubKernels&>(v) = std::move(part);
    v.pixel_lanes_plan = &kNoPixelLanes;
    views.push_back(std::move(v));
  }
  return views;
}

int64_t conv_transpose2d_grouped_workspace(const ConvShape& s, const std::vector<ConvTranspose2DWeights>& views, int threads) {
  const ConvShape gs = conv_transpose2d_group_shape(s, groups_of(views));
  return s.batch * s.h.in * s.w.in * gs.in_channels + s.batch * s.h.out * s.w.out * gs.out_channels +
         conv_transpose2d_split_workspace(gs, views[0], threads);
}

void conv_transpose2d_grouped(const ConvShape& s, const std::vector<ConvTranspose2DWeights>& views, const float* x, float* y,
                              const Epilogue& ep, int threads, float* workspace, int64_t workspace_floats) {
  const int64_t groups = groups_of(views);
  const ConvShape gs = conv_transpose2d_group_shape(s, groups);
  const int64_t in_pixels = s.batch * s.h.in * s.w.in, out_pixels = s.batch * s.h.out * s.w.out;
  std::vector<float> own;
  const int64_t need = conv_transpose2d_grouped_workspace(s, views, threads);
  float* ws = workspace_or_own(workspace, workspace_floats, need, own);
  float* xg = ws;
  float* yg = xg + in_pixels * gs.in_channels;
  float* inner = yg + out_pixels * gs.out_channels;
  const int64_t inner_floats = need - (inner - ws);
  for (int64_t g = 0; g < groups; ++g) {
    copy_channels(in_pixels, gs.in_channels, x + g * gs.in_channels, s.in_channels, xg, gs.in_channels, threads);
    const Epilogue e = ep.from_column(g * gs.out_channels);
    conv_transpose2d_split(gs, views[static_cast<size_t>(g)], xg, yg, e, threads, inner, inner_floats);
    copy_channels(out_pixels, gs.out_channels, yg, gs.out_channels, y + g * gs.out_channels, s.out_channels, threads);
  }
}

int64_t conv_transpose2d_grouped_backward_workspace(const ConvShape& s, const std::vector<ConvTranspose2DWeights>& views, int threads) {
  const ConvShape gs = conv_transpose2d_group_shape(s, groups_of(views));
  const ConvTranspose2DWeights& v = views[0];
  // x_g, dy_g, dx_g, then the ungrouped kernels' scratch.
  return 2 * s.batch * s.h.in * s.w.in * gs.in_channels + s.batch * s.h.out * s.w.out * gs.out_channels +
         std::max(conv_transpose2d_backward_weights_workspace(gs, v.phases_h, v.phases_w, threads, v.panel_columns),
                  conv_transpose2d_backward_input_workspace(gs, threads));
}

void conv_transpose2d_grouped_backward(const ConvShape& s, const std::vector<ConvTranspose2DWeights>& views, const float* x,
                                       const float* dy, float* dx, const std::vector<float*>& d_sub_kernels,
                                       std::vector<float*>& group_d, int threads, float* workspace, int64_t workspace_floats) {
  const int64_t groups = groups_of(views);
  const ConvShape gs = conv_transpose2d_group_shape(s, groups);
  const int64_t in_pixels = s.batch * s.h.in * s.w.in, out_pixels = s.batch * s.h.out * s.w.out;
  std::vector<float> own;
  const int64_t need = conv_transpose2d_grouped_backward_workspace(s, views, threads);
  float* ws = workspace_or_own(workspace, workspace_floats, need, own);
  float* xg = ws;
  float* dxg = xg + in_pixels * gs.in_channels;
  float* dyg = dxg + in_pixels * gs.in_channels;
  float* inner = dyg + out_pixels * gs.out_channels;
  const int64_t inner_floats = need - (inner - ws);
  const ConvTranspose2DWeights& v0 = views[0];
  group_d.resize(d_sub_kernels.size());
  for (int64_t g = 0; g < groups; ++g) {
    const ConvTranspose2DWeights& v = views[static_cast<size_t>(g)];
    copy_channels(out_pixels, gs.out_channels, dy + g * gs.out_channels, s.out_channels, dyg, gs.out_channels, threads);
    if (!d_sub_kernels.empty()) {
      for (size_t p = 0; p < d_sub_kernels.size(); ++p) {
        const int64_t taps = static_cast<int64_t>(v0.phases_h[p / v0.phases_w.size()].taps.size() * v0.phases_w[p % v0.phases_w.size()].taps.size());
        group_d[p] = d_sub_kernels[p] ? d_sub_kernels[p] + g * taps * gs.in_channels * gs.out_channels : nullptr;
      }
      copy_channels(in_pixels, gs.in_channels, x + g * gs.in_channels, s.in_channels, xg, gs.in_channels, threads);
      conv_transpose2d_backward_weights(gs, v.phases_h, v.phases_w, xg, dyg, group_d, threads, v.panel_columns, inner);
    }
    if (dx) {
      conv_transpose2d_backward_input(gs, v, dyg, dxg, inner, threads, inner_floats);
      copy_channels(in_pixels, gs.in_channels, dxg, gs.in_channels, dx + g * gs.in_channels, s.in_channels, threads);
    }
  }
}

}  // namespace edgegan::cpu

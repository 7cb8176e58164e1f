#include "kernels_cpu/group_norm/group_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/common/workspace.h"

namespace edgegan::cpu {
namespace {

// Pixels per block of the statistics and normalisation passes: fixed, so the sums are
// grouped alike at every thread count (bit-identical results).
constexpr int64_t kBlockPixels = 256;

int64_t round16(int64_t floats) { return (floats + 15) / 16 * 16; }
int64_t blocks_of(const GroupNormShape& s) { return (s.pixels + kBlockPixels - 1) / kBlockPixels; }

// The scratch of both passes, carved from one float array (doubles first: 8-byte aligned).
struct Scratch {
  double* partial = nullptr;  // per (sample, block): 2C sums (forward: x and x²; backward: dy and dy·x̂)
  double* totals = nullptr;   // backward: per (sample, channel) 2 sums over the sample's blocks
  float* mean = nullptr;      // per (sample, channel): the channel's group mean, rounded to float
  float* mean_low = nullptr;  // ... and the rest (mean - that, rounded): x - mean loses nothing to rounding
  float* rstd = nullptr;      // per (sample, channel): 1 / sqrt(var + eps) of its group
  float* a = nullptr;         // per (sample, channel): forward rstd * scale; backward dy's factor
  float* b = nullptr;         // backward: per (sample, channel): factors of (x - mean) and 1
  float* c = nullptr;
  int64_t floats = 0;

  Scratch(const GroupNormShape& s, bool backward, float* base) {
    const int64_t nc = s.batch * s.channels;
    auto take = [&](int64_t n) {
      float* p = base ? base + floats : nullptr;
      floats += round16(n);
      return p;
    };
    partial = reinterpret_cast<double*>(take(s.batch * blocks_of(s) * s.channels * 4));
    if (backward) totals = reinterpret_cast<double*>(take(nc * 4));
    mean = take(nc);
    mean_low = take(nc);
    rstd = take(nc);
    a = take(nc);
    if (backward) {
      b = take(nc);
      c = take(nc);
    }
  }
};

// Per (sample, channel): its group's mean, rstd, and rstd * scale (scale may be null: backward).
void statistics(const GroupNormShape& s, const float* x, const float* scale, float epsilon, const Scratch& w, int threads) {
  const int64_t C = s.channels, P = s.pixels, blocks = blocks_of(s), tasks = s.batch * blocks;
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / blocks, p0 = (t % blocks) * kBlockPixels, p1 = std::min(P, p0 + kBlockPixels);
    const float* origin = x + n * P * C;  // the sample's first pixel: the shift of its sums
    double* sum = w.partial + t * 2 * C;
    double* sq = sum + C;
    std::fill(sum, sum + 2 * C, 0.0);
    for (int64_t p = p0; p < p1; ++p) {
      const float* row = origin + p * C;
      for (int64_t c = 0; c < C; ++c) {
        const double v = static_cast<double>(row[c]) - static_cast<double>(origin[c]);
        sum[c] += v;
        sq[c] += v * v;
      }
    }
  }
  const int64_t cg = C / s.groups, pairs = s.batch * s.groups;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t ng = 0; ng < pairs; ++ng) {
    const int64_t n = ng / s.groups, c0 = (ng % s.groups) * cg;
    const float* origin = x + n * P * C;
    // Per channel: mean and sum of squared deviations (shifted sums, combined in block order),
    // then the group's by the parallel-variance formula.
    double mean_sum = 0;
    for (int64_t c = c0; c < c0 + cg; ++c) {
      double sum = 0;
      for (int64_t b = 0; b < blocks; ++b) sum += w.partial[(n * blocks + b) * 2 * C + c];
      mean_sum += static_cast<double>(origin[c]) + sum / static_cast<double>(P);
    }
    const double mean = mean_sum / static_cast<double>(cg);
    double m2 = 0;
    for (int64_t c = c0; c < c0 + cg; ++c) {
      double sum = 0, sq = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        sum += w.partial[(n * blocks + b) * 2 * C + c];
        sq += w.partial[(n * blocks + b) * 2 * C + C + c];
      }
      const double channel_mean = static_cast<double>(origin[c]) + sum / static_cast<double>(P);
      const double d = channel_mean - mean;
      m2 += std::max(0.0, sq - sum * sum / static_cast<double>(P)) + static_cast<double>(P) * d * d;
    }
    const double var = m2 / static_cast<double>(P * cg);
    const double r = 1.0 / std::sqrt(var + static_cast<double>(epsilon));
    for (int64_t c = c0; c < c0 + cg; ++c) {
      w.mean[n * C + c] = static_cast<float>(mean);
      w.mean_low[n * C + c] = static_cast<float>(mean - static_cast<double>(static_cast<float>(mean)));
      w.rstd[n * C + c] = static_cast<float>(r);
      if (scale) w.a[n * C + c] = static_cast<float>(r * static_cast<double>(scale[c]));
    }
  }
}

}  // namespace

void group_norm_reference(const GroupNormShape& s, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                          Activation activation, float alpha, float beta, const float* residual) {
  const int64_t C = s.channels, P = s.pixels, cg = C / s.groups;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.groups; ++g) {
      const float* xs = x + n * P * C;
      double sum = 0;
      for (int64_t p = 0; p < P; ++p)
        for (int64_t c = g * cg; c < (g + 1) * cg; ++c) sum += xs[p * C + c];
      const double mean = sum / static_cast<double>(P * cg);
      double sq = 0;
      for (int64_t p = 0; p < P; ++p)
        for (int64_t c = g * cg; c < (g + 1) * cg; ++c) sq += (xs[p * C + c] - mean) * (xs[p * C + c] - mean);
      const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(P * cg) + epsilon);
      for (int64_t p = 0; p < P; ++p)
        for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
          const int64_t i = n * P * C + p * C + c;
          y[i] = activate(static_cast<float>((x[i] - mean) * rstd * scale[c] + shift[c]), activation, alpha, beta);
          if (residual) y[i] += residual[i];
        }
    }
}

int64_t group_norm_workspace(const GroupNormShape& s) { return Scratch(s, false, nullptr).floats; }
int64_t group_norm_backward_workspace(const GroupNormShape& s) { return Scratch(s, true, nullptr).floats; }

void group_norm(const GroupNormShape& s, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                Activation activation, float alpha, float beta, float* workspace, int threads, const float* residual) {
  std::vector<float> own;
  const Scratch w(s, false, workspace_or_own(workspace, group_norm_workspace(s), own));
  statistics(s, x, scale, epsilon, w, threads);
  const int64_t C = s.channels, P = s.pixels, blocks = blocks_of(s), tasks = s.batch * blocks;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / blocks, p0 = (t % blocks) * kBlockPixels, p1 = std::min(P, p0 + kBlockPixels);
    const float* mean = w.mean + n * C;
    const float* low = w.mean_low + n * C;
    const float* a = w.a + n * C;
    // Without an activation the residual is added in the same loop: each element of x and
    // the residual is read before y's is written, so y may alias either.
    const bool fused_residual = residual && activation == Activation::kNone;
    for (int64_t p = p0; p < p1; ++p) {
      const float* xr = x + (n * P + p) * C;
      float* yr = y + (n * P + p) * C;
      if (fused_residual) {
        const float* rr = residual + (n * P + p) * C;
        for (int64_t c = 0; c < C; ++c) yr[c] = (((xr[c] - mean[c]) - low[c]) * a[c] + shift[c]) + rr[c];
      } else {
        for (int64_t c = 0; c < C; ++c) yr[c] = ((xr[c] - mean[c]) - low[c]) * a[c] + shift[c];
      }
    }
    apply_activation(y + (n * P + p0) * C, p1 - p0, C, C, activation, alpha, beta);
    if (residual && !fused_residual) add_residual(y + (n * P + p0) * C, p1 - p0, C, C, residual + (n * P + p0) * C);
  }
}

void group_norm_backward(const GroupNormShape& s, const float* x, const float* scale, float epsilon, const float* dy, float* dx,
                         bool accumulate_dx, float* dscale, float* dshift, float* workspace, int threads) {
  std::vector<float> own;
  const Scratch w(s, true, workspace_or_own(workspace, group_norm_backward_workspace(s), own));
  statistics(s, x, scale, epsilon, w, threads);
  const int64_t C = s.channels, P = s.pixels, blocks = blocks_of(s), tasks = s.batch * blocks, cg = C / s.groups;
  // Per (sample, block, channel): sums of dy and dy * x̂.
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / blocks, p0 = (t % blocks) * kBlockPixels, p1 = std::min(P, p0 + kBlockPixels);
    const float* mean = w.mean + n * C;
    const float* low = w.mean_low + n * C;
    const float* rstd = w.rstd + n * C;
    double* g1 = w.partial + t * 2 * C;
    double* g2 = g1 + C;
    std::fill(g1, g1 + 2 * C, 0.0);
    for (int64_t p = p0; p < p1; ++p) {
      const float* xr = x + (n * P + p) * C;
      const float* gr = dy + (n * P + p) * C;
      for (int64_t c = 0; c < C; ++c) {
        const float xhat = ((xr[c] - mean[c]) - low[c]) * rstd[c];
        g1[c] += static_cast<double>(gr[c]);
        g2[c] += static_cast<double>(gr[c] * xhat);
      }
    }
  }
  // Per (sample, channel) totals over the blocks, in block order.
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < C; ++c) {
      double t1 = 0, t2 = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        t1 += w.partial[(n * blocks + b) * 2 * C + c];
        t2 += w.partial[(n * blocks + b) * 2 * C + C + c];
      }
      w.totals[(n * C + c) * 2] = t1;
      w.totals[(n * C + c) * 2 + 1] = t2;
    }
  if (dscale)
    for (int64_t c = 0; c < C; ++c) {
      double t1 = 0, t2 = 0;
      for (int64_t n = 0; n < s.batch; ++n) {
        t1 += w.totals[(n * C + c) * 2];
        t2 += w.totals[(n * C + c) * 2 + 1];
      }
      dshift[c] += static_cast<float>(t1);
      dscale[c] += static_cast<float>(t2);
    }
  if (!dx) return;
  // dx = rstd * (dy*scale - mean(dy*scale) - x̂ * mean(dy*scale * x̂)) over the group
  //    = dy * a[c] + (x - mean) * b + c.
  const double count = static_cast<double>(P * cg);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.groups; ++g) {
      double k1 = 0, k2 = 0;
      for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
        k1 += static_cast<double>(scale[c]) * w.totals[(n * C + c) * 2];
        k2 += static_cast<double>(scale[c]) * w.totals[(n * C + c) * 2 + 1];
      }
      k1 /= count;
      k2 /= count;
      const double r = w.rstd[n * C + g * cg];
      for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
        w.b[n * C + c] = static_cast<float>(-r * r * k2);
        w.c[n * C + c] = static_cast<float>(-r * k1);
      }
    }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / blocks, p0 = (t % blocks) * kBlockPixels, p1 = std::min(P, p0 + kBlockPixels);
    const float *mean = w.mean + n * C, *low = w.mean_low + n * C, *a = w.a + n * C, *b = w.b + n * C, *c0 = w.c + n * C;
    for (int64_t p = p0; p < p1; ++p) {
      const float* xr = x + (n * P + p) * C;
      const float* gr = dy + (n * P + p) * C;
      float* dr = dx + (n * P + p) * C;
      if (accumulate_dx)
        for (int64_t c = 0; c < C; ++c) dr[c] += gr[c] * a[c] + ((xr[c] - mean[c]) - low[c]) * b[c] + c0[c];
      else
        for (int64_t c = 0; c < C; ++c) dr[c] = gr[c] * a[c] + ((xr[c] - mean[c]) - low[c]) * b[c] + c0[c];
    }
  }
}

}  // namespace edgegan::cpu

#version 460
// GridSample of the NHWC map t0 [N][H][W][C] at the points of the grid t1
// [N][Ho][Wo][2*groups] into t2 [N][Ho][Wo][C] (kernels_common/grid_sample_shape.h has
// the formulas, which this follows line for line): one invocation per output value.
#include "common.glsl"

const int kBilinear = 0, kNearest = 1, kBicubic = 2;
const int kZeros = 0, kBorder = 1, kReflection = 2;

int g_padding, g_align;

float clamp_to(float c, int size) {
  const float hi = float(size - 1);
  return c > 0.0 ? (c < hi ? c : hi) : 0.0;
}

float reflect_about(float c, float twice_low, float twice_high) {
  if (twice_low == twice_high) return 0.0;
  const float low = twice_low * 0.5, span = (twice_high - twice_low) * 0.5;
  const float d = abs(c - low);
  const float extra = mod(d, span);
  const float flips = floor(d / span);
  return mod(flips, 2.0) == 0.0 ? extra + low : span - extra + low;
}

float pad(float c, int size) {
  if (g_padding == kBorder) return clamp_to(c, size);
  if (g_padding == kReflection) {
    const float l = float(size);
    c = g_align != 0 ? reflect_about(c, 0.0, 2.0 * (l - 1.0)) : reflect_about(c, -1.0, 2.0 * l - 1.0);
    return clamp_to(c, size);
  }
  return c;
}

// A padded float index as a pixel index, -1 outside the map.
int pixel(float c, int size) { return c >= 0.0 && c <= float(size - 1) ? int(c) : -1; }
bool near_map(float c, int size) { return c > -3.0 && c < float(size) + 2.0; }

float source(float v, int o, int size, int out_size, int offsets) {
  if (offsets != 0) return float(o / (out_size / size)) + v;
  const float l = float(size);
  return g_align != 0 ? (v + 1.0) * 0.5 * (l - 1.0) : ((v + 1.0) * l - 1.0) * 0.5;
}

void main() {
  const int H = param(0), W = param(1), C = param(2), Ho = param(3), Wo = param(4), groups = param(5), mode = param(6), offsets = param(9);
  g_padding = param(7);
  g_align = param(8);
  const int per_group = C / groups;
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int c = rest % C; rest /= C;
    const int ow = rest % Wo; rest /= Wo;
    const int oh = rest % Ho;
    const int n = rest / Ho;
    const int g = c / per_group;
    const uint point = uint(((n * Ho + oh) * Wo + ow) * 2 * groups);
    float cx = source(ld(pc.t1, point + uint(g)), ow, W, Wo, offsets);
    float cy = source(ld(pc.t1, point + uint(groups + g)), oh, H, Ho, offsets);
    int ix[4], iy[4];
    float wx[4], wy[4];
    int taps = 2;
    for (int k = 0; k < 4; ++k) { ix[k] = -1; iy[k] = -1; wx[k] = 0.0; wy[k] = 0.0; }
    if (mode == kBicubic) {
      taps = 4;
      const float bx = floor(cx), by = floor(cy);
      const float a = -0.75;
      for (int axis = 0; axis < 2; ++axis) {
        const float t = axis == 0 ? cx - bx : cy - by;
        const float x0 = t + 1.0, x1 = t, x2 = 1.0 - t, x3 = 2.0 - t;
        const float w0 = ((a * x0 - 5.0 * a) * x0 + 8.0 * a) * x0 - 4.0 * a;
        const float w1 = ((a + 2.0) * x1 - (a + 3.0)) * x1 * x1 + 1.0;
        const float w2 = ((a + 2.0) * x2 - (a + 3.0)) * x2 * x2 + 1.0;
        const float w3 = ((a * x3 - 5.0 * a) * x3 + 8.0 * a) * x3 - 4.0 * a;
        if (axis == 0) { wx[0] = w0; wx[1] = w1; wx[2] = w2; wx[3] = w3; }
        else { wy[0] = w0; wy[1] = w1; wy[2] = w2; wy[3] = w3; }
      }
      for (int k = 0; k < 4; ++k) {
        ix[k] = pixel(pad(bx - 1.0 + float(k), W), W);
        iy[k] = pixel(pad(by - 1.0 + float(k), H), H);
      }
    } else {
      cx = pad(cx, W);
      cy = pad(cy, H);
      if (mode == kNearest) {
        taps = 1;
        wx[0] = 1.0; wy[0] = 1.0;
        if (near_map(cx, W)) ix[0] = pixel(roundEven(cx), W);
        if (near_map(cy, H)) iy[0] = pixel(roundEven(cy), H);
      } else {
        if (near_map(cx, W)) {
          const float b = floor(cx);
          wx[0] = 1.0 - (cx - b); wx[1] = cx - b;
          ix[0] = pixel(b, W); ix[1] = pixel(b + 1.0, W);
        }
        if (near_map(cy, H)) {
          const float b = floor(cy);
          wy[0] = 1.0 - (cy - b); wy[1] = cy - b;
          iy[0] = pixel(b, H); iy[1] = pixel(b + 1.0, H);
        }
      }
    }
    float sum = 0.0;
    for (int a = 0; a < taps; ++a) {
      if (iy[a] < 0) continue;
      for (int b = 0; b < taps; ++b) {
        if (ix[b] < 0) continue;
        sum += wy[a] * wx[b] * ld(pc.t0, uint(((n * H + iy[a]) * W + ix[b]) * C + c));
      }
    }
    st(pc.t2, i, sum);
  }
}

#version 460
// DepthToSpace between the depth map [N][H][W][C*b*b] and the space map [N][H*b][W*b][C]
// (kernels_common/depth_to_space_shape.h): one invocation per space value, copying in
// either direction (to_space: depth -> space; else space -> depth). Space pixel
// (y, x) channel c is depth pixel (y/b, x/b) channel ((y%b)*b + x%b)*C + c (DCR) or
// c*b*b + (y%b)*b + x%b (CRD).
#include "common.glsl"

void main() {
  const int H = param(0), W = param(1), C = param(2), b = param(3), crd = param(4), to_space = param(5);
  const int SW = W * b, SH = H * b;
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int c = rest % C; rest /= C;
    const int x = rest % SW; rest /= SW;
    const int y = rest % SH;
    const int n = rest / SH;
    const int sub = (y % b) * b + x % b;
    const int dc = crd != 0 ? c * b * b + sub : sub * C + c;
    const int d = ((n * H + y / b) * W + x / b) * (C * b * b) + dc;
    if (to_space != 0) st(pc.t1, i, ld(pc.t0, d));
    else st(pc.t1, d, ld(pc.t0, i));
  }
}

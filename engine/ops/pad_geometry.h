// The pads a Pad op applies to a map of the planned size: the stored ones, with the far
// pads (bottom, right) following the size when the op asks for it (align, size_of).
// The op's validation sizes the output with it and every backend's Pad kernel takes its
// pads from it, so they cannot disagree.
#pragma once

#include <cstdint>
#include <vector>

#include "egan_generated.h"
#include "kernels_common/pad_shape.h"

namespace edgegan {

struct PadGeometry {
  kernels::PadAxis h, w;
};

// x: the input's NHWC dims; like: size_of's dims (read only when size_of >= 0).
inline PadGeometry pad_geometry(const schema::Pad& op, const std::vector<int64_t>& x, const std::vector<int64_t>& like) {
  PadGeometry g{{x[1], op.pad_top(), op.pad_bottom()}, {x[2], op.pad_left(), op.pad_right()}};
  if (op.size_of() >= 0 && like.size() == 4) {
    g.h.pad_end = like[1] * op.size_scale() - x[1] - g.h.pad_begin;
    g.w.pad_end = like[2] * op.size_scale() - x[2] - g.w.pad_begin;
  } else if (op.align() >= 2) {
    for (kernels::PadAxis* a : {&g.h, &g.w}) {
      const int64_t rest = a->out() % op.align();
      if (rest > 0) a->pad_end += op.align() - rest;
    }
  }
  return g;
}

}  // namespace edgegan

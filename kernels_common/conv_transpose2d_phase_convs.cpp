#include "kernels_common/conv_transpose2d_phase_convs.h"

#include <algorithm>

namespace edgegan::kernels {

namespace {

// One axis of one phase; false (with why) when it cannot be a correlation.
bool phase_axis(const ConvAxis& a, const AxisPhase& p, PhaseConvAxis& out, std::string* why) {
  const int64_t taps = static_cast<int64_t>(p.taps.size());
  out.taps = taps;
  out.out_count = p.q_end - p.q_begin;
  out.out_begin = p.output_of(p.q_begin, a);
  if (taps == 0) {
    if (why) *why = "a phase has outputs but no taps (its outputs are the bias alone)";
    return false;
  }
  for (int64_t j = 1; j < taps; ++j)
    if (p.offsets[static_cast<size_t>(j)] != p.offsets[0] + j) {
      if (why) *why = "the phase's taps read input offsets that are not consecutive (dilation " + std::to_string(a.dilation) + ", stride " +
                      std::to_string(a.stride) + ")";
      return false;
    }
  const int64_t base = p.q_begin - p.offsets[0] - (taps - 1);
  const int64_t last = base + (out.out_count - 1) + (taps - 1);  // the last input row read, pads included
  out.in_begin = std::max<int64_t>(base, 0);
  out.pad_before = out.in_begin - base;
  const int64_t in_end = std::min(last + 1, a.in);
  out.in_length = in_end - out.in_begin;
  out.pad_after = last + 1 - in_end;
  if (out.in_length <= 0) {
    if (why) *why = "a phase's taps all read outside the input";
    return false;
  }
  return true;
}

}  // namespace

bool conv_transpose2d_phase_convs(const ConvShape& shape, std::vector<PhaseConv>& convs, std::string* why) {
  convs.clear();
  const std::vector<AxisPhase> ph = split_conv_transpose_axis(shape.h), pw = split_conv_transpose_axis(shape.w);
  for (size_t i = 0; i < ph.size(); ++i)
    for (size_t j = 0; j < pw.size(); ++j) {
      if (ph[i].q_end <= ph[i].q_begin || pw[j].q_end <= pw[j].q_begin) continue;  // no outputs
      PhaseConv c;
      c.phase_h = static_cast<int64_t>(i), c.phase_w = static_cast<int64_t>(j);
      if (!phase_axis(shape.h, ph[i], c.h, why) || !phase_axis(shape.w, pw[j], c.w, why)) return false;
      convs.push_back(c);
    }
  return true;
}

}  // namespace edgegan::kernels

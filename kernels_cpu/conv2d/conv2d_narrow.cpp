#include "kernels_cpu/conv2d/conv2d_narrow.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/dot/dot_ukernel.h"
#include "kernels_cpu/common/thread_index.h"

namespace edgegan::cpu {
namespace {

constexpr int64_t kMaxKernelRows = 64;                 // taps handed to one dot call
constexpr int64_t kMinDepth = 32;                      // kw*Cin: shallower dots are mostly reductions
constexpr int64_t kMaxRingBytes = int64_t{4} << 20;    // per thread; past that the rows leave L2 anyway
constexpr int64_t kMaxRingRows = 256;                  // slots (a dilated kernel spans more rows than it reads)

// Input rows the kernel spans ((kh - 1) * dilation + 1): the ring's slots, one per row.
int64_t ring_rows(const ConvShape& s) { return (s.h.kernel - 1) * s.h.dilation + 1; }
// A padded row: every column any output of the row reads, from -pad_left on.
int64_t padded_width(const ConvShape& s) { return (s.w.out - 1) * s.w.stride + s.w.kernel; }
int64_t row_floats(const ConvShape& s) { return (padded_width(s) * s.in_channels + 15) / 16 * 16; }
int64_t weight_floats(const ConvShape& s) { return (s.h.kernel * s.w.kernel * s.in_channels * s.out_channels + 15) / 16 * 16; }
int64_t ring_floats(const ConvShape& s) { return saturating_product({ring_rows(s), row_floats(s)}); }

// Input row ih of image n, columns -pad_left .. padded_width - pad_left - 1, as
// consecutive pixels of Cin floats: zeros outside the input, through the map inside.
void fill_padded_row(const ConvShape& s, const float* x, const ConvInputMap* map, int64_t n, int64_t ih, float* row) {
  const int64_t cin = s.in_channels, width = padded_width(s), left = s.w.pad_begin;
  const int64_t first = std::clamp<int64_t>(left, 0, width), last = std::clamp<int64_t>(left + s.w.in, first, width);
  std::fill(row, row + first * cin, 0.f);
  if (last == first) {
  } else if (!map) {
    std::memcpy(row + first * cin, conv_input_pixel(x, nullptr, s.h.in, s.w.in, cin, n, ih, first - left),
                static_cast<size_t>((last - first) * cin) * sizeof(float));
  } else {
    for (int64_t j = first; j < last; ++j)
      std::memcpy(row + j * cin, conv_input_pixel(x, map, s.h.in, s.w.in, cin, n, ih, j - left), static_cast<size_t>(cin) * sizeof(float));
  }
  std::fill(row + last * cin, row + width * cin, 0.f);
}

}  // namespace

bool conv2d_narrow_applies(const ConvShape& s, int64_t groups) {
  return groups == 1 && dot_ukernel().run != nullptr && s.out_channels >= 1 && s.out_channels <= kDotMaxColumns && s.w.dilation == 1 &&
         s.h.kernel <= kMaxKernelRows && s.w.kernel * s.in_channels >= kMinDepth && s.h.out >= 1 && s.w.out >= 1 &&
         ring_rows(s) <= kMaxRingRows && ring_floats(s) * 4 <= kMaxRingBytes;
}

int64_t conv2d_narrow_workspace(const ConvShape& s, int threads) {
  return saturating_product({weight_floats(s)}) + saturating_product({std::max(1, threads), ring_floats(s)});
}

void conv2d_narrow(const ConvShape& s, const float* packed, const float* x, float* y, const Epilogue& ep, int threads, float* workspace,
                   const ConvInputMap* map) {
  const int64_t cin = s.in_channels, cout = s.out_channels, kh = s.h.kernel, depth = s.w.kernel * cin;
  // Kernel row r's weights as [Cout][kw * Cin], the layout the dot kernels read.
  float* transposed = workspace;
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t c = 0; c < s.w.kernel; ++c)
      for (int64_t ci = 0; ci < cin; ++ci)
        for (int64_t co = 0; co < cout; ++co)
          transposed[(r * cout + co) * depth + c * cin + ci] = packed[((r * s.w.kernel + c) * cin + ci) * cout + co];
  const DotUkernel& dot = dot_ukernel();
  const int64_t span = ring_rows(s), rf = row_floats(s), out_row = s.w.out * cout;
  // Bands of consecutive output rows share their input rows; at least two per thread.
  const int64_t per_image = std::max<int64_t>(1, std::min<int64_t>(s.h.out, 2 * threads));
  const int64_t band = (s.h.out + per_image - 1) / per_image, bands = (s.h.out + band - 1) / band, tasks = s.batch * bands;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    float* ring = workspace + weight_floats(s) + thread_index() * ring_floats(s);
    std::array<int64_t, kMaxRingRows> held;  // the input row each slot holds (-1: none yet)
    std::array<const float*, kMaxKernelRows> a, bt;
#pragma omp for schedule(dynamic, 1)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t n = task / bands, oh0 = task % bands * band, oh1 = std::min(s.h.out, oh0 + band);
      std::fill(held.begin(), held.begin() + span, int64_t{-1});
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        int taps = 0;
        for (int64_t r = 0; r < kh; ++r) {
          const int64_t ih = oh * s.h.stride - s.h.pad_begin + r * s.h.dilation;
          if (ih < 0 || ih >= s.h.in) continue;  // a kernel row over the pads: trimmed
          const size_t slot = static_cast<size_t>(ih % span);
          float* row = ring + static_cast<int64_t>(slot) * rf;
          if (held[slot] != ih) {
            fill_padded_row(s, x, map, n, ih, row);
            held[slot] = ih;
          }
          a[static_cast<size_t>(taps)] = row;
          bt[static_cast<size_t>(taps++)] = transposed + r * cout * depth;
        }
        float* out = y + (n * s.h.out + oh) * out_row;
        fill_bias(out, s.w.out, cout, cout, ep.bias);
        if (taps > 0) dot.run(depth, taps, static_cast<int>(s.w.out), static_cast<int>(cout), a.data(), s.w.stride * cin, bt.data(), out, cout);
        finish_epilogue(out, (n * s.h.out + oh) * s.w.out, s.w.out, cout, ep);
      }
    }
  }
}

}  // namespace edgegan::cpu

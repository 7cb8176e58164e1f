#include "kernels_cpu/conv2d/conv2d_thin.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels_common/half.h"

#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/common/simd_clones.h"
#include "kernels_cpu/common/task_runs.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"
#include "kernels_cpu/pixel_lanes/pixel_lanes_ukernel.h"

namespace edgegan::cpu {
namespace {

constexpr int64_t kMaxInputChannels = 4;      // thin inputs: any number of outputs
constexpr int64_t kMaxThinOutputInputs = 64;  // thin outputs (8-16 channels): inputs measured up to here
constexpr int64_t kMaxRingFloats = int64_t{1} << 20;  // 4 MiB per thread

constexpr int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// A layout for the fp32 family (uk) or, in an fp16 session at neonfp16arith, the
// half-arithmetic one (half): its planes and weights are halves, ring_floats counts
// those halves.
struct Layout {
  const PhaseLanesUkernel* uk = nullptr;
  const PhaseLanesHalfUkernel* half = nullptr;
  const int* blocks = nullptr;
  int width = 0;
  int64_t passes = 0;
  std::array<int64_t, 65> pass_begin{};  // Cout <= 64 * max_outputs in any family: at most 64 passes
  int64_t left = 0, plane_stride = 0, weight_floats = 0;
  int64_t ring_floats(const ConvShape& s) const { return s.h.kernel * s.in_channels * plane_stride; }
};

Layout layout_of(const ConvShape& s, const PhaseLanesHalfUkernel* half = nullptr) {
  Layout l;
  int max_outputs;
  if (half) {
    l.half = half, l.blocks = half->blocks, l.width = half->width, max_outputs = half->max_outputs;
  } else {
    l.uk = &phase_lanes_ukernel();
    l.blocks = l.uk->blocks, l.width = l.uk->width, max_outputs = l.uk->max_outputs;
  }
  const int64_t cout = s.out_channels;
  l.passes = (cout + max_outputs - 1) / max_outputs;
  int64_t group = 0;
  // Full passes first (16 channels go out through a 16x16 transpose), the rest last.
  for (int64_t i = 0; i <= l.passes; ++i) l.pass_begin[static_cast<size_t>(i)] = std::min<int64_t>(cout, i * max_outputs);
  for (int64_t i = 0; i < l.passes; ++i) {
    const int64_t n = l.pass_begin[static_cast<size_t>(i) + 1] - l.pass_begin[static_cast<size_t>(i)];
    group = std::max(group, int64_t{l.blocks[n - 1]} * l.width);
  }
  // Lane j of a call at output column c0 reads plane column c0 + j + (kw - 1) - u - pad_left
  // of the map, u in [0, kw): from -pad_left to the last call's end + kw - 2 - pad_left.
  l.left = std::max<int64_t>(0, s.w.pad_begin);
  const int64_t right = std::max(round_up(s.w.out, group) + s.w.kernel - 1 - s.w.pad_begin, round_up(s.w.in, 16));
  l.plane_stride = round_up(l.left + right, 16);
  l.weight_floats = s.in_channels * s.h.kernel * s.w.kernel * cout;
  return l;
}

int64_t ring_slot_floats(const Layout& l, const ConvShape& s) { return round_up(l.half ? (l.ring_floats(s) + 1) / 2 : l.ring_floats(s), 16); }

// The half-arithmetic family for this layer in an fp16 session, or nullptr: at
// neonfp16arith, for kernels whose taps fit one fp16 block (3x3, 5x5; 7x7 and 9x9 sum in
// fp32), with weights inside the half range.
const PhaseLanesHalfUkernel* half_arithmetic(const ConvShape& s, const float* w) {
  const PhaseLanesHalfUkernel* half = phase_lanes_half_ukernel();
  if (!half || s.h.kernel * s.w.kernel > kPhaseLanesHalfBlockTerms) return nullptr;
  const int64_t n = s.in_channels * s.h.kernel * s.w.kernel * s.out_channels;
  for (int64_t i = 0; i < n; ++i)
    if (!(std::fabs(w[i]) < 65504.f)) return nullptr;
  return half;
}

// [pass][ci][kh][u][o] with u = kw - 1 - (kernel column): the micro-kernel's lane j
// reads column j - u, so column tap kw lands at plane offset kw - (kw_n - 1).
template <typename P>
void pack_weights(const ConvShape& s, const Layout& l, const float* w, P* out) {
  const int64_t cin = s.in_channels, cout = s.out_channels, kh = s.h.kernel, kw = s.w.kernel;
  for (int64_t pass = 0; pass < l.passes; ++pass) {
    const int64_t o0 = l.pass_begin[static_cast<size_t>(pass)], n = l.pass_begin[static_cast<size_t>(pass) + 1] - o0;
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t u = 0; u < kw; ++u)
          for (int64_t i = 0; i < n; ++i) {
            const float v = w[((r * kw + (kw - 1 - u)) * cin + ci) * cout + o0 + i];
            if constexpr (std::is_same_v<P, float>) *out++ = v;
            else *out++ = kernels::float_to_half(v);
          }
  }
}

// Pixel (ih, iw) of image n in x as conv_input_pixel finds it, for floats or halves.
template <typename T>
const T* input_pixel(const T* x, const ConvInputMap* map, int64_t in_h, int64_t in_w, int64_t channels, int64_t n, int64_t ih, int64_t iw) {
  if (map) return x + ((n * map->src_h + map->rows[ih]) * map->src_w + map->cols[iw]) * channels;
  return x + ((n * in_h + ih) * in_w + iw) * channels;
}

// The planes of map rows one thread holds: row ih in slot ih mod kh. T: the input's
// storage, floats or an fp16 session's halves; P: the planes', floats (halves widened
// exactly into them) or, for half arithmetic, the halves as they are.
template <typename T, typename P = float>
class PlaneRing {
 public:
  // wide: halves into floats only, w.in * cin floats for a row widened whole (no map).
  PlaneRing(const ConvShape& s, const Layout& l, const T* x, const ConvInputMap* map, P* storage, float* wide = nullptr)
      : s_(s), l_(l), x_(x), map_(map), storage_(storage), wide_(wide) {
    tags_.fill(-1);
    std::fill(storage, storage + l.ring_floats(s), P{0});  // the zero columns, once
  }
  const P* row(int64_t img, int64_t ih) {
    if (ih < 0 || ih >= s_.h.in) return nullptr;
    const int64_t key = img * s_.h.in + ih, cin = s_.in_channels;
    const size_t slot = static_cast<size_t>(key % s_.h.kernel);
    P* planes = storage_ + static_cast<int64_t>(slot) * cin * l_.plane_stride + l_.left;
    if (tags_[slot] != key) {
      if constexpr (std::is_same_v<T, P>) {
        for (int64_t p = 0; p < s_.w.in; ++p) {
          const T* px = input_pixel(x_, map_, s_.h.in, s_.w.in, cin, img, ih, p);
          for (int64_t c = 0; c < cin; ++c) planes[c * l_.plane_stride + p] = px[c];
        }
      } else if (!map_) {  // the row's halves are contiguous: widened at once
        widen_halves(input_pixel(x_, map_, s_.h.in, s_.w.in, cin, img, ih, 0), wide_, s_.w.in * cin);
        for (int64_t p = 0; p < s_.w.in; ++p)
          for (int64_t c = 0; c < cin; ++c) planes[c * l_.plane_stride + p] = wide_[p * cin + c];
      } else {
        for (int64_t p = 0; p < s_.w.in; ++p) {
          float wide[kMaxThinOutputInputs];  // cin is at most this (conv2d_thin_applies)
          widen_halves(input_pixel(x_, map_, s_.h.in, s_.w.in, cin, img, ih, p), wide, cin);
          for (int64_t c = 0; c < cin; ++c) planes[c * l_.plane_stride + p] = wide[c];
        }
      }
      tags_[slot] = key;
    }
    return planes;
  }

 private:
  const ConvShape& s_;
  const Layout& l_;
  const T* x_;
  const ConvInputMap* map_;
  P* storage_;
  float* wide_;
  std::array<int64_t, kPhaseLanesMaxSpan> tags_;
};

// A call's sums (acc[i * group + j]: channel i of the pass, pixel j) stored to `valid`
// pixels of the row with their bias: out[j * cout + i] = acc[i * group + j] + bias[i].
// Built for the widest ISA, as is the bias of full blocks below: in the file's baseline
// build, storing and a separate bias pass over the row took a third of ESPCN's thin-layer
// time.
EDGEGAN_SIMD_CLONES void store_sums(const float* acc, int64_t n, int64_t group, int64_t valid, float* out, int64_t cout, const float* bias) {
  for (int64_t j = 0; j < valid; ++j) {
    float* o = out + j * cout;
    if (bias) {
EDGEGAN_NO_ALIAS_LOOP
      for (int64_t i = 0; i < n; ++i) o[i] = acc[i * group + j] + bias[i];
    } else {
EDGEGAN_NO_ALIAS_LOOP
      for (int64_t i = 0; i < n; ++i) o[i] = acc[i * group + j];
    }
  }
}

// Bias on a full 16 x 16 block's sums (acc[i * 16 + j], channel i), before the transpose.
EDGEGAN_SIMD_CLONES void add_block_bias(float* acc, const float* bias) {
  for (int64_t i = 0; i < 16; ++i) {
    const float b = bias[i];
    for (int64_t j = 0; j < 16; ++j) acc[i * 16 + j] += b;
  }
}

// Output row oh of image img into `row` (its w.out x cout floats), epilogue finished.
// With half planes (P = uint16_t) the half-arithmetic family sums them; returns whether
// a sum is not finite (an fp16 block past the half range), checked before the activation
// could hide it.
template <typename T, typename P>
bool output_row(const ConvShape& s, const Layout& l, const P* packed, PlaneRing<T, P>& ring, float* row, const Epilogue& ep, int64_t img,
                int64_t oh) {
  constexpr bool kHalf = std::is_same_v<P, uint16_t>;
  const int64_t cout = s.out_channels, cin = s.in_channels;
  std::conditional_t<kHalf, PhaseLanesHalfArgs, PhaseLanesArgs> args;
  args.cin = cin;
  args.plane_stride = l.plane_stride;
  args.span_h = static_cast<int>(s.h.kernel);
  args.span_w = static_cast<int>(s.w.kernel);
  if constexpr (kHalf) args.flush_channels = std::max<int64_t>(1, kPhaseLanesHalfBlockTerms / (s.h.kernel * s.w.kernel));
  const P* planes[kPhaseLanesMaxSpan];
  for (int64_t r = 0; r < s.h.kernel; ++r) planes[r] = ring.row(img, oh - s.h.pad_begin + r);
  alignas(64) float acc[kPhaseLanesMaxOutputs * 8 * 16];
  args.acc = acc;
  // Sums of 16 channels for 16 pixels go out through the AVX-512 16x16 transpose.
  const PixelLanesUkernel& lanes = pixel_lanes_ukernel(Isa::kAvx512);
  const PlanesFromPixelsFn transpose = l.uk && l.uk->isa == Isa::kAvx512 && l.width == 16 ? lanes.transpose : nullptr;
  const P* weights = packed;
  for (int64_t pass = 0; pass < l.passes; ++pass) {
    const int64_t o0 = l.pass_begin[static_cast<size_t>(pass)], n = l.pass_begin[static_cast<size_t>(pass) + 1] - o0;
    const int64_t group = int64_t{l.blocks[n - 1]} * l.width;
    args.weights = weights;
    for (int64_t c0 = 0; c0 < s.w.out; c0 += group) {
      // Lane j, u = kw - 1: plane column c0 + j - pad_left (the kernel's first column).
      for (int64_t r = 0; r < s.h.kernel; ++r) args.rows[r] = planes[r] ? planes[r] + c0 - s.w.pad_begin + s.w.kernel - 1 : nullptr;
      if constexpr (kHalf) l.half->run[n - 1](args);
      else l.uk->run[n - 1](args);
      const int64_t valid = std::min(group, s.w.out - c0);
      float* out = row + c0 * cout + o0;
      if (transpose && n == 16 && group == 16 && valid == 16) {
        if (ep.bias) add_block_bias(acc, ep.bias + o0);
        transpose(acc, 16, 16, out, cout, 16);  // out[j * cout + i] = acc[i * 16 + j]
      } else {
        store_sums(acc, n, group, valid, out, cout, ep.bias ? ep.bias + o0 : nullptr);
      }
    }
    weights += cin * s.h.kernel * s.w.kernel * n;
  }
  bool overflow = false;
  if constexpr (kHalf)
    for (int64_t i = 0; i < s.w.out * cout; ++i) overflow = overflow || !std::isfinite(row[i]);
  finish_epilogue(row, (img * s.h.out + oh) * s.w.out, s.w.out, cout, ep);
  return overflow;
}

// The weights packed at the workspace's first 64-byte boundary (the rings follow them,
// after weight_floats floats whichever P is).
template <typename P = float>
P* packed_weights(const ConvShape& s, const Layout& l, const float* w, float* workspace) {
  const auto misalign = reinterpret_cast<uintptr_t>(workspace) % 64;
  P* packed = reinterpret_cast<P*>(workspace + (misalign ? (64 - misalign) / sizeof(float) : 0));
  pack_weights(s, l, w, packed);
  return packed;
}

// conv2d_thin_halves' scratch for a layout: weights, a ring and a float output row per thread.
int64_t halves_workspace(const ConvShape& s, const Layout& l, int threads) {
  const int64_t rows = round_up(s.w.out * s.out_channels, 16) + round_up(s.w.in * s.in_channels, 16);
  return round_up(l.weight_floats, 16) + std::max(1, threads) * (ring_slot_floats(l, s) + rows) + 16;
}

// Half arithmetic (P = uint16_t planes and weights) or fp32 arithmetic on widened planes.
template <typename P>
bool thin_halves(const ConvShape& s, const Layout& l, const float* w, const uint16_t* x, uint16_t* y, const Epilogue& ep, int threads,
                 float* workspace, const ConvInputMap* map) {
  const P* packed = packed_weights<P>(s, l, w, workspace);
  float* rings = workspace + (reinterpret_cast<const float*>(packed) - workspace) + round_up(l.weight_floats, 16);
  const int64_t row_floats = s.w.out * s.out_channels, thread_floats = round_up(row_floats, 16) + round_up(s.w.in * s.in_channels, 16);
  float* rows = rings + std::max(1, threads) * ring_slot_floats(l, s);
  const int64_t tasks = s.batch * s.h.out;
  TaskRuns runs(tasks, std::max(1, threads));
  bool overflow = false;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(|| : overflow)
  {
    float* row = rows + thread_index() * thread_floats;
    PlaneRing<uint16_t, P> ring(s, l, x, map, reinterpret_cast<P*>(rings + thread_index() * ring_slot_floats(l, s)), row + round_up(row_floats, 16));
    for (int64_t task; (task = runs.next(thread_index())) >= 0;) {
      overflow = output_row(s, l, packed, ring, row, ep, task / s.h.out, task % s.h.out) || overflow;
      overflow = narrow_to_halves(row, y + task * row_floats, row_floats) || overflow;
    }
  }
  return overflow;
}

}  // namespace

bool conv2d_thin_applies(const ConvShape& s, int64_t groups) {
  if (groups != 1 || s.in_channels < 1 || s.out_channels < 8) return false;
  if (s.h.stride != 1 || s.w.stride != 1 || s.h.dilation != 1 || s.w.dilation != 1) return false;
  if (s.h.kernel < 3 || s.w.kernel < 3 || s.h.kernel > kPhaseLanesMaxSpan || s.w.kernel > kPhaseLanesMaxSpan) return false;
  if (s.h.out < 1 || s.w.out < 16) return false;
  // Measured against conv2d_trimmed on an AMD EPYC (Zen 5), 1 thread, interleaved
  // (bench/thin_layers_bench.cpp). Thin inputs: on AVX-512 2.4-5.8x (ESPCN's 360x640
  // 1 -> 64 k5 14.5 -> 5.3 ms, the thin style net's 256x256 3 -> 8 k9 7.9 -> 1.35 ms); on
  // AVX2, whose passes hold 12 channels and store them one float at a time, 1.15-3.0x up
  // to 32 outputs but 0.69-0.75x at 56-64. Thin outputs (8-16 channels from up to 64):
  // 1.7-4.2x on AVX-512 (ESPCN's 32 -> 9 k3 29.8 -> 9.9 ms, FSRCNN's 12 -> 12 k3 9.5 ->
  // 5.7 ms), 1.5-1.75x on AVX2. The families not measured (NEON, scalar) take AVX2's rule.
  const bool wide = phase_lanes_ukernel().isa == Isa::kAvx512;
  const bool thin_input = s.in_channels <= kMaxInputChannels && (wide || s.out_channels <= 32);
  const bool thin_output = s.in_channels <= kMaxThinOutputInputs && s.out_channels <= 16;
  if (!thin_input && !thin_output) return false;
  const Layout l = layout_of(s);
  return l.passes <= 64 && l.ring_floats(s) <= kMaxRingFloats;
}

int64_t conv2d_thin_workspace(const ConvShape& s, int threads, bool halves) {
  const Layout l = layout_of(s);
  if (!halves) return round_up(l.weight_floats, 16) + std::max(1, threads) * ring_slot_floats(l, s) + 16;  // + alignment slack
  int64_t floats = halves_workspace(s, l, threads);
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
  // Room for the half-arithmetic layout too (the family is chosen when a run starts).
  floats = std::max(floats, halves_workspace(s, layout_of(s, &phase_lanes_ukernel__neonfp16arith()), threads));
#endif
  return floats;
}

void conv2d_thin(const ConvShape& s, const float* w, const float* x, float* y, const Epilogue& ep, int threads, float* workspace,
                       const ConvInputMap* map) {
  const Layout l = layout_of(s);
  float* packed = packed_weights(s, l, w, workspace);
  float* rings = packed + round_up(l.weight_floats, 16);
  const int64_t tasks = s.batch * s.h.out;
  // Each thread walks a contiguous run of output rows, reusing its ring's planes.
  TaskRuns runs(tasks, std::max(1, threads));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    PlaneRing<float> ring(s, l, x, map, rings + thread_index() * ring_slot_floats(l, s));
    for (int64_t task; (task = runs.next(thread_index())) >= 0;)
      output_row(s, l, packed, ring, y + task * s.w.out * s.out_channels, ep, task / s.h.out, task % s.h.out);
  }
}

bool conv2d_thin_halves(const ConvShape& s, const float* w, const uint16_t* x, uint16_t* y, const Epilogue& ep, int threads, float* workspace,
                        const ConvInputMap* map) {
  if (const PhaseLanesHalfUkernel* half = half_arithmetic(s, w)) return thin_halves<uint16_t>(s, layout_of(s, half), w, x, y, ep, threads, workspace, map);
  return thin_halves<float>(s, layout_of(s), w, x, y, ep, threads, workspace, map);
}

}  // namespace edgegan::cpu

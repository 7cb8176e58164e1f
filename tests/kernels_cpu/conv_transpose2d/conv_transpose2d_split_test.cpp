// split == reference == zero-insert == col2im over many random geometries (and
// split with fp16 weights == reference on the same weights rounded to fp16):
// stride 1-4, kernel 1-7, any pads < kernel (asymmetric, occasionally negative as
// ONNX output_shape produces), output_padding < stride, dilation 1-3, odd
// channel counts, non-square maps, batch 1-3, every activation, 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/gemm/gemm_ukernel.h"
#include "kernels_cpu/common/half.h"
#include "tests/test_util.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_zero_insert.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_col2im.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "tests/kernels_cpu/fused_prelu.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

struct Case {
  ConvShape shape;
  Activation activation;
  bool bias;
};

std::string describe(const Case& c) {
  const auto& s = c.shape;
  std::ostringstream os;
  os << "N" << s.batch << " Cin" << s.in_channels << " Cout" << s.out_channels << " in " << s.h.in << "x" << s.w.in << " k" << s.h.kernel
     << "x" << s.w.kernel << " s" << s.h.stride << "x" << s.w.stride << " d" << s.h.dilation << "x" << s.w.dilation << " pads "
     << s.h.pad_begin << "," << s.w.pad_begin << "," << s.h.pad_end << "," << s.w.pad_end << " out " << s.h.out << "x" << s.w.out
     << " act " << static_cast<int>(c.activation);
  return os.str();
}

ConvAxis random_axis(std::mt19937& rng, int64_t in, bool allow_dilation) {
  ConvAxis a;
  a.in = in;
  a.kernel = uniform_int(rng, 1, 7);
  a.stride = uniform_int(rng, 1, 4);
  a.dilation = allow_dilation ? uniform_int(rng, 1, 3) : 1;
  // Pads < kernel on each side, independently; sometimes negative (output_shape asks for more).
  a.pad_begin = uniform_int(rng, uniform_int(rng, 0, 5) == 0 ? -2 : 0, static_cast<int>(a.kernel) - 1);
  a.pad_end = uniform_int(rng, uniform_int(rng, 0, 5) == 0 ? -2 : 0, static_cast<int>(a.kernel) - 1);
  const int64_t output_padding = uniform_int(rng, 0, static_cast<int>(std::max(a.stride, a.dilation)) - 1);
  a.out = conv_transpose_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end, output_padding);
  return a;
}

// Checks `cases` random geometries with up to max_cin / max_cout channels.
void check_random_geometries(uint32_t seed, int cases, int max_cin, int max_cout) {
  std::mt19937 rng(seed);
  int checked = 0;
  for (int attempt = 0; checked < cases; ++attempt) {
    ASSERT_LT(attempt, 20 * cases);
    Case c;
    auto& s = c.shape;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, max_cin);
    s.out_channels = uniform_int(rng, 1, max_cout);
    const bool dilated = uniform_int(rng, 0, 4) == 0;
    s.h = random_axis(rng, uniform_int(rng, 1, 7), dilated);
    s.w = random_axis(rng, uniform_int(rng, 1, 7), dilated);
    if (s.h.out < 1 || s.w.out < 1) continue;  // pads ate the whole output
    Epilogue ep;
    std::vector<float> slopes;
    draw_epilogue_activation(rng, ep, slopes, s.out_channels);
    c.activation = ep.activation;
    c.bias = uniform_int(rng, 0, 1) == 1;
    SCOPED_TRACE(describe(c));

    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    ep.bias = c.bias ? bias.data() : nullptr;
    const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);

    std::vector<float> ref(out_size);
    conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
    // Both sides round in float; the error grows about linearly with the terms per
    // output (thousands on wide channels). A lost or doubled term is ~0.1 or more.
    const float terms = static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel);
    const float tol = std::max(1e-5f, 1e-7f * terms);

    // split: the converter's packing, then the kernel. Weights in column panels of the
    // converter's width, of a random width (splitting micro-kernel tiles), or plain
    // (files written before panels).
    ConvTranspose2DWeights split;
    split.phases_h = split_conv_transpose_axis(s.h);
    split.phases_w = split_conv_transpose_axis(s.w);
    const int panel_choice = uniform_int(rng, 0, 2);
    split.panel_columns = panel_choice == 0 ? kWeightPanelColumns : panel_choice == 1 ? uniform_int(rng, 1, static_cast<int>(s.out_channels)) : 0;
    SCOPED_TRACE("weight panels of " + std::to_string(split.panel_columns) + " columns");
    const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data(), split.panel_columns);
    for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    // The MAC count the memory report uses: (input, tap) pairs landing inside the output.
    for (const ConvAxis* a : {&s.h, &s.w}) {
      uint64_t brute = 0;
      for (int64_t i = 0; i < a->in; ++i)
        for (int64_t k = 0; k < a->kernel; ++k) {
          const int64_t o = i * a->stride - a->pad_begin + k * a->dilation;
          brute += (o >= 0 && o < a->out) ? 1 : 0;
        }
      ASSERT_EQ(conv_transpose_useful_pairs(*a), brute);
    }
    // Every kernel tap lands in exactly one phase: nothing lost, nothing duplicated.
    size_t taps = 0;
    for (const auto& p : packed) taps += p.size();
    ASSERT_EQ(taps, w.size());

    for (int threads : {1, 2}) {
      std::vector<float> y(out_size, NAN);
      conv_transpose2d_split(s, split, x.data(), y.data(), ep, threads);
      ASSERT_LE(max_abs_diff(y, ref), tol) << "split, threads " << threads;
    }

    // fp16 weights: the split kernel widening halves in registers computes exactly
    // what the reference computes with the weights rounded to fp16.
    {
      std::vector<float> w_rounded(w.size());
      for (size_t i = 0; i < w.size(); ++i) w_rounded[i] = half_to_float(float_to_half(w[i]));
      std::vector<float> ref16(out_size);
      conv_transpose2d_reference(s, x.data(), w_rounded.data(), ref16.data(), ep);
      const auto packed16 = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w_rounded.data(), split.panel_columns);
      std::vector<std::vector<uint16_t>> halves;
      for (const auto& p : packed16) {
        halves.emplace_back(p.size());
        for (size_t i = 0; i < p.size(); ++i) halves.back()[i] = float_to_half(p[i]);
      }
      ConvTranspose2DWeights split16;
      split16.phases_h = split.phases_h;
      split16.phases_w = split.phases_w;
      split16.panel_columns = split.panel_columns;
      for (const auto& h : halves) split16.sub_kernels_f16.push_back(h.empty() ? nullptr : h.data());
      // Half-precision arithmetic (neonfp16arith) rounds the activations and the
      // partial sums of 8 to 11 bits: errors grow like sqrt(terms).
      const float tol16 = gemm_ukernel().f16w_half_arithmetic ? 2e-3f * std::sqrt(terms) : tol;
      for (int threads : {1, 2}) {
        std::vector<float> y(out_size, NAN);
        conv_transpose2d_split(s, split16, x.data(), y.data(), ep, threads);
        ASSERT_LE(max_abs_diff(y, ref16), tol16) << "split, fp16 weights, threads " << threads;
      }
    }

    std::vector<float> full(w.size(), NAN), col(w.size(), NAN);
    assemble_conv_transpose2d_full_kernel(s, split, FullKernelLayout::kTapsFirst, full.data());
    assemble_conv_transpose2d_full_kernel(s, split, FullKernelLayout::kChannelsFirst, col.data());
    {
      std::vector<float> y(out_size, NAN), ws(static_cast<size_t>(conv_transpose2d_zero_insert_workspace(s)));
      conv_transpose2d_zero_insert(s, full.data(), x.data(), y.data(), ws.data(), ep, 2);
      ASSERT_LE(max_abs_diff(y, ref), tol) << "zero-insert";
    }
    {
      std::vector<float> y(out_size, NAN), ws(static_cast<size_t>(conv_transpose2d_col2im_workspace(s)));
      conv_transpose2d_col2im(s, col.data(), x.data(), y.data(), ws.data(), ep, 2);
      ASSERT_LE(max_abs_diff(y, ref), tol) << "col2im";
    }
    ++checked;
  }
}

TEST(ConvTransposeProperty, AllAlgorithmsMatchReferenceOnRandomGeometries) {
  check_random_geometries(20261121, 600, 9, 9);
}

// Channel counts past one register tile (up to 2 x NR output columns plus a
// remainder, K past a cache block) on every kernel family this CPU can run, so
// full tiles, partial tiles and masks are all exercised per family.
TEST(ConvTransposeProperty, WideChannelsOnEveryKernelFamily) {
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(isa_name(isa));
    ScopedIsa forced(isa);
    check_random_geometries(7 + static_cast<uint32_t>(isa), 30, 300, 75);
  }
}

TEST(ConvTransposeSplit, PhasesSkipEveryZeroAndCoverEveryOutput) {
  // Per axis: phases partition the kernel taps and the output positions.
  for (int64_t stride = 1; stride <= 4; ++stride)
    for (int64_t kernel = 1; kernel <= 7; ++kernel)
      for (int64_t pb = 0; pb < kernel; ++pb)
        for (int64_t op = 0; op < stride; ++op) {
          ConvAxis a{5, kernel, stride, 1, pb, kernel - 1 - pb, 0};
          a.out = conv_transpose_output_length(a.in, a.kernel, a.stride, 1, a.pad_begin, a.pad_end, op);
          const auto phases = split_conv_transpose_axis(a);
          ASSERT_EQ(static_cast<int64_t>(phases.size()), stride);
          std::vector<int> tap_seen(static_cast<size_t>(kernel), 0), out_seen(static_cast<size_t>(a.out), 0);
          for (const auto& p : phases) {
            // T_r = ceil((k - r)/s) taps, offsets 0..T_r-1 (docs/phase-split.md).
            ASSERT_EQ(static_cast<int64_t>(p.taps.size()), std::max<int64_t>(0, (kernel - p.residue + stride - 1) / stride));
            for (size_t t = 0; t < p.taps.size(); ++t) {
              EXPECT_EQ(p.taps[t], p.residue + stride * static_cast<int64_t>(t));
              EXPECT_EQ(p.offsets[t], static_cast<int64_t>(t));
              tap_seen[static_cast<size_t>(p.taps[t])]++;
            }
            for (int64_t q = p.q_begin; q < p.q_end; ++q) out_seen[static_cast<size_t>(p.output_of(q, a))]++;
          }
          for (int v : tap_seen) EXPECT_EQ(v, 1);
          for (int v : out_seen) EXPECT_EQ(v, 1);
        }
}

// The converter's column panels: every (row, column) has its own slot, a panel's
// columns are contiguous [rows][width] blocks one after the other, and repanelling
// is exact both ways.
TEST(ConvTransposeSplit, WeightPanelsAreAPermutationAndRepanelRoundTrips) {
  for (int64_t rows : {1, 3, 17})
    for (int64_t cols : {1, 5, 32, 33, 75, 96})
      for (int64_t panel : {0, 1, 7, 32, 200}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " panels of " + std::to_string(panel));
        const PanelLayout layout(rows, cols, panel);
        std::vector<int> seen(static_cast<size_t>(rows * cols), 0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            const int64_t i = layout.index(r, c);
            ASSERT_GE(i, 0);
            ASSERT_LT(i, rows * cols);
            ++seen[static_cast<size_t>(i)];
            // Within a panel, a row's columns are adjacent and the next row follows.
            EXPECT_EQ(i, layout.index(0, c) + r * layout.width(c));
          }
        for (int v : seen) ASSERT_EQ(v, 1);
        if (panel <= 0 || panel >= cols) {
          EXPECT_EQ(layout.index(rows - 1, cols - 1), rows * cols - 1);  // plain row-major
        }

        std::mt19937 rng(static_cast<uint32_t>(rows * 1000 + cols * 10 + panel));
        const auto plain = random_floats(rng, static_cast<size_t>(2 * rows * cols));
        std::vector<float> panelled(plain.size()), back(plain.size());
        repanel_matrices(2, rows, cols, 0, panel, plain.data(), panelled.data());
        repanel_matrices(2, rows, cols, panel, 0, panelled.data(), back.data());
        EXPECT_EQ(back, plain);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            ASSERT_EQ(panelled[static_cast<size_t>(rows * cols + layout.index(r, c))], plain[static_cast<size_t>(rows * cols + r * cols + c)]);
      }
}

TEST(ConvTransposeSplit, BatchAndThreadCountGiveBitIdenticalResults) {
  std::mt19937 rng(7);
  ConvShape s;
  s.batch = 3;
  s.in_channels = 16;
  s.out_channels = 8;
  s.h = {4, 4, 2, 1, 1, 1, 8};
  s.w = {4, 4, 2, 1, 1, 1, 8};
  const auto x = random_floats(rng, static_cast<size_t>(3 * 4 * 4 * 16));
  const auto w = random_floats(rng, static_cast<size_t>(16 * 8 * 16));
  ConvTranspose2DWeights split;
  split.phases_h = split_conv_transpose_axis(s.h);
  split.phases_w = split_conv_transpose_axis(s.w);
  const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data());
  for (const auto& p : packed) split.sub_kernels.push_back(p.data());
  std::vector<float> y1(3 * 8 * 8 * 8), y2(y1.size());
  conv_transpose2d_split(s, split, x.data(), y1.data(), {}, 1);
  conv_transpose2d_split(s, split, x.data(), y2.data(), {}, 2);
  EXPECT_EQ(y1, y2);
  // Image 1 computed alone equals image 1 of the batch.
  ConvShape one = s;
  one.batch = 1;
  std::vector<float> y_one(8 * 8 * 8);
  conv_transpose2d_split(one, split, x.data() + 4 * 4 * 16, y_one.data(), {}, 1);
  EXPECT_TRUE(std::equal(y_one.begin(), y_one.end(), y1.begin() + 8 * 8 * 8));
}

}  // namespace
}  // namespace edgegan::cpu

// The memory report against the plan it describes and the allocations the
// session really makes, on the shipped models and the HUGE² benchmark shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

#include <filesystem>

#include "edgegan/edgegan.h"
#include "edgegan/image_io.h"
#include "edgegan/report.h"
#include "engine/session_plan.h"
#include "kernels_cpu/dot/dot_ukernel.h"
#include "kernels_cpu/gemm/gemm_ukernel.h"
#include "kernels_cpu/pixel_lanes/pixel_lanes_ukernel.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::read_file;
using testing::source_dir;

struct NamedModel {
  std::string name;
  std::shared_ptr<const Model> model;
};

const std::vector<NamedModel>& models() {
  static const std::vector<NamedModel> all = [] {
    std::vector<NamedModel> v;
    for (const char* m : {"dcgan_digits/generator", "dcgan_digits/discriminator", "cgan_digits/generator", "cgan_digits/discriminator"})
      v.push_back({m, Model::load((source_dir() / "models" / (std::string(m) + ".egan")).string())});
    v.push_back({"huge2_dcgan", testing::test_model("built/huge2_dcgan")});
    v.push_back({"huge2_cgan", testing::test_model("built/huge2_cgan")});
    return v;
  }();
  return all;
}

TEST(MemoryReport, ArenaIsWithinTenPercentOfTheLowerBoundAndWorkspaceOnlyWhereAKernelNeedsIt) {
  for (const auto& [name, model] : models())
    for (int batch : {1, 16})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(name + " batch " + std::to_string(batch) + " threads " + std::to_string(threads));
        const MemoryReport r = memory_report(model, {.threads = threads, .batch = batch});
        EXPECT_EQ(r.threads, threads);
        ASSERT_EQ(r.algorithms.size(), 3u);
        for (const AlgorithmTotals& a : r.algorithms) {
          SCOPED_TRACE(a.algorithm);
          EXPECT_GE(a.arena_bytes, a.arena_lower_bound_bytes);
          EXPECT_LE(static_cast<double>(a.arena_bytes), 1.10 * static_cast<double>(a.arena_lower_bound_bytes));
          EXPECT_LE(a.arena_bytes, a.no_reuse_bytes);
        }
        // Split layers write straight to their outputs; only the RGB/grey heads and the
        // Winograd form have scratch (and, below, convolutions over an image). On the pixel-lanes path: each thread's ring of
        // transposed input rows (at most 128 KiB and a cache line); on the dot path: the
        // transposed sub-kernels (Cin x Cout x kh x kw floats); in the Winograd form, each
        // thread's 16 transformed windows (9 x Cin floats each) and their products (9 x 64
        // output channels), and a row of zeros. The only session-owned weights: each
        // pixel-lanes head's weights once more, in that kernel's order (the same count of
        // floats), and each Winograd layer's transformed filters: 9 matrices per phase
        // where the sub-kernels have 4 (kernel = 2 * stride), so 9/4 of the kernel.
        const bool lanes = cpu::pixel_lanes_ukernel().run != nullptr, dot = cpu::dot_ukernel().run != nullptr;
        uint64_t session_weight_bytes = 0, peak = 0;
        for (const LayerMemory& l : r.layers)
          if (l.kind == "ConvTranspose2D") {
            SCOPED_TRACE("layer " + std::to_string(l.index));
            const int64_t cout = l.output_shape.back();  // NHWC
            const int64_t in_w = l.input_shapes[0][2], out_pixels = l.output_shape[1] * l.output_shape[2];
            // zero insertion multiplies every tap at every output pixel
            const uint64_t kernel_bytes = 4 * l.macs_zero_insert / static_cast<uint64_t>(batch * out_pixels);
            const int64_t cin = l.input_shapes[0][3];
            if (l.kernel == "conv_transpose2d_split_winograd") {
              session_weight_bytes += kernel_bytes / 4 * 9;
              const uint64_t per_thread = 4 * static_cast<uint64_t>(9 * 16 * cin + 9 * 16 * 64 + std::max<int64_t>(cin, 64) + 16);
              EXPECT_GT(l.workspace_bytes, 0u);
              EXPECT_LE(l.workspace_bytes, static_cast<uint64_t>(threads) * per_thread);
            } else if (l.kernel == "conv_transpose2d_split_phase_lanes") {
              // Thin layers on the phase-lanes path (where the ISA family has no pixel-lanes
              // or dot kernels for them): their weights packed once more with the taps a phase
              // lacks as zeros (every phase spans ceil(k / stride) taps per axis), and per
              // thread a ring of span transposed input rows, each Cin planes a little wider
              // than the row (zero columns around it, the last block of positions past it).
              const int64_t stride = l.output_shape[1] / l.input_shapes[0][1];
              const int64_t k = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(kernel_bytes / 4 / static_cast<uint64_t>(cin * cout)))));
              const int64_t span = (k + stride - 1) / stride;
              session_weight_bytes += 4 * static_cast<uint64_t>(cin * cout * stride * stride * span * span);
              EXPECT_GT(l.workspace_bytes, 0u);
              EXPECT_LE(l.workspace_bytes, static_cast<uint64_t>(threads) * 4 * static_cast<uint64_t>(span * cin * (in_w + span + 160)) + 128);
            } else if (lanes && cout <= 3 && in_w >= 16) {
              session_weight_bytes += kernel_bytes;
              EXPECT_GT(l.workspace_bytes, 0u);
              EXPECT_LE(l.workspace_bytes, static_cast<uint64_t>(threads) * (128 * 1024 + 64) + 64);
            } else if (dot && cout <= 4) {
              EXPECT_EQ(l.workspace_bytes, kernel_bytes);
            } else {
              EXPECT_EQ(l.workspace_bytes, 0u);
            }
            peak = std::max(peak, l.workspace_bytes);
          } else if (l.kind == "Conv2D") {
            // Convolutions over few channels (an image) gather each output pixel's taps
            // into rows: per thread, a panel of at most 1024 rows of taps x Cin floats.
            SCOPED_TRACE("layer " + std::to_string(l.index));
            const int64_t cin = l.input_shapes[0][3];
            const uint64_t taps_cin = l.macs / static_cast<uint64_t>(l.output_shape[0] * l.output_shape[1] * l.output_shape[2] * l.output_shape[3]);
            // Heads of at most 4 outputs on the dot path: the weights transposed per
            // kernel row, and per thread a ring of padded input rows (at most 4 MiB).
            const int64_t cout = l.output_shape.back();
            if (l.kernel == "conv2d_narrow") {
              EXPECT_TRUE(dot && cout <= 4);
              EXPECT_GT(l.workspace_bytes, 0u);
              EXPECT_LE(l.workspace_bytes, 4 * (taps_cin * static_cast<uint64_t>(cout) + 16) + static_cast<uint64_t>(threads) * (4u << 20));
            } else if (l.kernel == "conv2d_winograd_s2") {
              // 4x4 stride 2 in the Winograd form: every window's input transform (9 x 4
              // Cin floats per 2x2 block of outputs), and per thread a filter slice (9 x 4
              // Cin x 64 floats), a chunk's products (9 x 256 x 64) and a row of zeros.
              const uint64_t windows = static_cast<uint64_t>(batch * ((l.output_shape[1] + 1) / 2) * ((l.output_shape[2] + 1) / 2));
              const uint64_t per_thread = 4 * static_cast<uint64_t>(9 * 4 * cin * 64 + 9 * 256 * 64 + std::max<int64_t>(cin, 64) + 16);
              EXPECT_GT(l.workspace_bytes, 0u);
              EXPECT_LE(l.workspace_bytes, 4 * (9 * windows * 4 * static_cast<uint64_t>(cin) + 16) + static_cast<uint64_t>(threads) * per_thread);
            } else if (cin < 16) {
              EXPECT_GT(l.workspace_bytes, 0u);
              EXPECT_LE(l.workspace_bytes, static_cast<uint64_t>(threads) * 1024 * 4 * std::max<uint64_t>(taps_cin, static_cast<uint64_t>(cin) * 64));
            } else {
              EXPECT_EQ(l.workspace_bytes, 0u);
            }
            peak = std::max(peak, l.workspace_bytes);
          }
        EXPECT_EQ(r.totals.workspace_peak_bytes, peak);
        EXPECT_EQ(r.totals.session_weight_bytes, session_weight_bytes);
      }
}

TEST(MemoryReport, PlansNeverOverlapLiveBuffers) {
  // Inference plans for every algorithm, and the training plan (values kept for
  // backward, gradients and backward scratch in the same arena).
  const ComputeBackend& cpu = compute_backend(Backend::kCpu, "test");
  for (const auto& [name, model] : models())
    for (ConvTranspose2DAlgo algo : {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert, ConvTranspose2DAlgo::kCol2im})
      for (bool training : {false, true})
        for (int batch : {1, 3, 16}) {
          if (training && algo != ConvTranspose2DAlgo::kSplit) continue;
          PlanOptions options;
          options.batch = batch;
          options.threads = 2;
          options.conv_transpose2d_algo = algo;
          options.training = training;
          const SessionPlan plan = build_session_plan(model->impl(), cpu, options, model->impl(), nullptr);
          EXPECT_FALSE(any_live_buffers_overlap(plan.buffers)) << name << " " << to_string(algo) << " batch " << batch << " training " << training;
          EXPECT_GE(plan.arena_bytes, arena_lower_bound(plan.buffers));
        }
}

TEST(MemoryReport, SessionAllocatesExactlyWhatTheReportSays) {
  for (const auto& [name, model] : models())
    for (ConvTranspose2DAlgo algo : {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert, ConvTranspose2DAlgo::kCol2im})
      for (int batch : {1, 16}) {
        SCOPED_TRACE(name + " " + to_string(algo) + " batch " + std::to_string(batch));
        const SessionOptions options{.threads = 1, .batch = batch, .conv_transpose2d_algo = algo};
        const MemoryReport r = memory_report(model, options);
        Session s(model, options);
        EXPECT_EQ(s.measured_allocation_bytes(), r.totals.session_bytes);
        EXPECT_EQ(s.arena_bytes(), r.totals.arena_bytes);
        EXPECT_EQ(r.totals.total_bytes, r.totals.session_bytes + model->file_bytes());
      }
}

TEST(MemoryReport, LayersAddUpAndShowTheSplitSaving) {
  const auto& model = models()[4].model;  // huge2_dcgan
  const MemoryReport r = memory_report(model, {.batch = 2});
  uint64_t macs = 0, traffic = 0;
  for (const LayerMemory& l : r.layers) {
    macs += l.macs;
    traffic += l.traffic_bytes;
    ASSERT_EQ(l.by_algorithm.size(), 3u);
    EXPECT_EQ(l.by_algorithm[0].macs, l.macs);
    EXPECT_EQ(l.macs_zero_insert, l.by_algorithm[1].macs);
    if (l.kind == "ConvTranspose2D") {
      // Stride 2: zero insertion multiplies about 4x as much; col2im needs a workspace.
      EXPECT_GT(static_cast<double>(l.macs_zero_insert), 3.5 * static_cast<double>(l.macs));
      EXPECT_GT(l.by_algorithm[2].workspace_bytes, 0u);
      EXPECT_LT(l.by_algorithm[0].traffic_bytes, l.by_algorithm[1].traffic_bytes);
    }
  }
  EXPECT_EQ(macs, r.totals.macs);
  EXPECT_EQ(traffic, r.totals.traffic_bytes);
  // 2 * sum over layers of in*in*k*k*Cin*Cout (each input pixel meets every tap, minus the border trims).
  EXPECT_LT(r.totals.macs, 2ull * (16 * 25 * 1024 * 512 + 64 * 25 * 512 * 256 + 256 * 25 * 256 * 128 + 1024 * 25 * 128 * 3));
  EXPECT_LT(r.algorithms[0].arena_bytes, r.algorithms[1].arena_bytes);
  EXPECT_LT(r.algorithms[0].arena_bytes, r.algorithms[2].arena_bytes);
}

TEST(MemoryReport, JsonIsValidAndRoundTrips) {
  for (const auto& [name, model] : models()) {
    const MemoryReport r = memory_report(model, {.batch = 4, .conv_transpose2d_algo = ConvTranspose2DAlgo::kCol2im}, name);
    const std::string json = r.to_json();
    const MemoryReport back = MemoryReport::from_json(json);
    EXPECT_TRUE(back == r) << name;
    EXPECT_EQ(back.to_json(), json);
  }
  EXPECT_THROW(MemoryReport::from_json("{not json"), Error);
  EXPECT_THROW(MemoryReport::from_json("{\"model\": 3}"), Error);
}

TEST(MemoryReport, ChartsAreWritten) {
  const MemoryReport r = memory_report(models()[0].model, {.batch = 1}, "dcgan");
  const auto dir = std::filesystem::temp_directory_path();
  // Per-process names: ctest runs this suite in several processes at once (one per kernel family).
  const std::string stem = "edgegan_chart_test_" + std::to_string(::getpid());
  const std::string svg = (dir / (stem + ".svg")).string(), png = (dir / (stem + ".png")).string();
  write_report_chart(r, svg);
  write_report_chart(r, png);
  const std::string svg_text = read_file(svg), png_bytes = read_file(png);
  EXPECT_NE(svg_text.find("<svg"), std::string::npos);
  EXPECT_NE(svg_text.find("ConvTranspose2D"), std::string::npos);
  ASSERT_GT(png_bytes.size(), 1000u);
  EXPECT_EQ(png_bytes.substr(1, 3), "PNG");
  EXPECT_THROW(write_report_chart(r, (dir / "chart.gif").string()), Error);
  std::filesystem::remove(svg);
  std::filesystem::remove(png);
}

TEST(MemoryReport, RejectsWhatItCannotPlan) {
  EXPECT_THROW(memory_report(models()[0].model, {.backend = Backend::kCuda}), Error);
  EXPECT_THROW(memory_report(models()[0].model, {.batch = 0}), Error);
}

}  // namespace
}  // namespace edgegan

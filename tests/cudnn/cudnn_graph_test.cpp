// Every convolution of every shipped model (models/) and every test model (the golden
// cases and the built ones, converted by the test_models fixture) as the CUDA backend's
// cuDNN graphs, in fp32, tf32 and fp16 at batch 1 and 8: each graph is built and
// cudnn-frontend's validate() accepts it. No device is needed; cuDNN is loaded (the
// toolkit's libcudnn.so.9, or $EDGEGAN_CUDNN_LIBRARY), and without one the suite skips
// with the reason. Layers the cuDNN path leaves to the project's kernels are counted
// with their reasons, not failed.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "engine/backend/cuda/cudnn/conv_graph.h"
#include "engine/backend/cuda/cudnn/cudnn_library.h"
#include "engine/model_impl.h"
#include "tests/test_models/test_models.h"

namespace edgegan::cuda::cudnn {
namespace {

std::vector<std::filesystem::path> every_model() {
  std::vector<std::filesystem::path> files;
  for (const auto& root : {testing::source_dir() / "models", testing::test_models_dir()})
    for (const auto& e : std::filesystem::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() == ".egan") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CudnnGraphs, EveryConvolutionOfEveryModelValidatesInEveryPrecision) {
  const CudnnLibrary& lib = cudnn_library();
  if (!lib.loaded) GTEST_SKIP() << lib.why_not;
  std::cout << "cuDNN: " << cudnn_summary() << "\n";
  const auto files = every_model();
  ASSERT_GT(files.size(), 60u) << "the test models were not converted (the test_models fixture)";
  int graphs = 0, layers = 0;
  std::map<std::string, int> refused;
  for (const auto& file : files) {
    const auto model = Model::load(file.string());
    const Model::Impl& m = model->impl();
    for (Precision precision : {Precision::kFp32, Precision::kTf32, Precision::kFp16})
      for (int64_t batch : {1, 8}) {
        for (const schema::Op* op : *m.root->ops()) {
          if (op->kind_type() != schema::OpKind_Conv2D && op->kind_type() != schema::OpKind_ConvTranspose2D) continue;
          const KernelArgs args{.model = m, .op = *op, .weights = m, .batch = batch, .threads = 1, .precision = precision};
          const ConvGraphLayer layer = conv_graph_layer(args);
          if (!layer.refusal.empty()) {
            ++refused[layer.refusal];
            continue;
          }
          ++layers;
          ASSERT_FALSE(layer.convs.empty()) << file;
          for (const ConvGraphSpec& spec : layer.convs) {
            // fp16 pads every channel count to a multiple of 8 (RGB in and out included).
            if (precision == Precision::kFp16) {
              EXPECT_EQ(spec.in_channels_padded % 8, 0);
              EXPECT_EQ(spec.out_channels_padded % 8, 0);
            }
            const ConvGraph graph(spec);
            EXPECT_TRUE(graph.valid()) << file.filename() << ": " << spec.describe() << ": " << graph.error();
            ++graphs;
          }
        }
      }
  }
  std::cout << files.size() << " models: " << layers << " layers (of 3 precisions x 2 batches) as " << graphs << " validated cuDNN graphs\n";
  for (const auto& [why, count] : refused) std::cout << "  left to the project's kernels, " << count << "x: " << why << "\n";
  EXPECT_GT(graphs, 500);
}

// A transposed convolution's phases: each writes every stride-th row and column of
// the layer's output (strided output tensors), and together they cover it once.
TEST(CudnnGraphs, TransposedConvolutionPhasesCoverTheOutputOnce) {
  const auto model = testing::test_model("golden/dcgan_digits_generator");
  const Model::Impl& m = model->impl();
  int checked = 0;
  for (const schema::Op* op : *m.root->ops()) {
    const auto* t = op->kind_as_ConvTranspose2D();
    if (!t) continue;
    const KernelArgs args{.model = m, .op = *op, .weights = m, .batch = 2, .threads = 1, .precision = Precision::kFp16};
    const ConvGraphLayer layer = conv_graph_layer(args);
    if (!layer.refusal.empty()) continue;
    const TensorDesc& y = m.tensors[static_cast<size_t>(t->output())];
    std::vector<int> hits(static_cast<size_t>(y.dims[1] * y.dims[2]), 0);
    for (const ConvGraphSpec& c : layer.convs) {
      EXPECT_EQ(c.out_row_step, t->stride_h());
      for (int64_t r = 0; r < c.out_h; ++r)
        for (int64_t q = 0; q < c.out_w; ++q) ++hits[static_cast<size_t>(c.out_offset_pixels + r * c.out_row_step * c.out_row_pixels + q * c.out_col_step)];
    }
    for (int h : hits) ASSERT_EQ(h, 1);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// validate() is a real check: a graph whose output does not match its convolution, or
// without the padding its channels need, is refused with cudnn-frontend's reason.
TEST(CudnnGraphs, AnInconsistentGraphFailsValidation) {
  if (!cudnn_library().loaded) GTEST_SKIP() << cudnn_library().why_not;
  ConvGraphSpec c;
  c.batch = 2, c.in_h = c.in_w = 16, c.in_channels = c.in_channels_padded = 8, c.out_channels = c.out_channels_padded = 16;
  c.in_image_pixels = 256, c.in_row_pixels = 16;
  c.kernel_h = c.kernel_w = 3, c.pad_top = c.pad_bottom = c.pad_left = c.pad_right = 1;
  c.out_h = c.out_w = 16, c.out_image_pixels = 256, c.out_row_pixels = 16;
  c.bias = true, c.activation = Pointwise::kLeakyRelu, c.alpha = 0.2f;
  const ConvGraph good(c);
  EXPECT_TRUE(good.valid()) << good.error();
  ConvGraphSpec wrong = c;
  wrong.out_h = 17;
  const ConvGraph bad(wrong);
  EXPECT_FALSE(bad.valid());
  EXPECT_FALSE(bad.error().empty());
}

TEST(CudnnGraphs, AMissingLibraryIsOneLineNamingIt) {
  // The process's library is already settled; what a missing one says is checked by
  // the CLI test (EDGEGAN_CUDNN_LIBRARY=/nonexistent). Here: the summary is one line.
  const std::string s = cudnn_summary();
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_TRUE(s.rfind("cuDNN 9.", 0) == 0 || s.rfind("not used: ", 0) == 0) << s;
}

}  // namespace
}  // namespace edgegan::cuda::cudnn

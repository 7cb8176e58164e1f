// Model::at_input_size: a model converted at one input size, re-shaped to another,
// runs exactly as the same ONNX graph converted at that other size. The reference
// is the converter's own shape inference on an ONNX file whose input dims were
// edited, so every op's rule for deriving its output shape (conv, transposed conv
// with output_padding, pads, resizes, pixel shuffles, concatenations, norms,
// residuals, fused input maps) is checked against an independent path.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

// The golden case's ONNX with its first input's spatial dims replaced (NCHW: dims 2, 3;
// a 1-D model's NCL: dim 2 is the length, which the engine holds as the width).
std::string with_input_dims(const std::string& onnx_bytes, int64_t height, int64_t width) {
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(onnx_bytes));
  auto* shape = proto.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (shape->dim_size() == 4) {
    shape->mutable_dim(2)->set_dim_value(height);
    shape->mutable_dim(3)->set_dim_value(width);
  } else {
    shape->mutable_dim(2)->set_dim_value(width);
  }
  return proto.SerializeAsString();
}

std::shared_ptr<const Model> convert(const std::string& onnx_bytes) {
  const auto result = converter::convert_onnx(onnx_bytes, "model.onnx");
  return Model::from_bytes(result.egan);
}

std::vector<float> run(const std::shared_ptr<const Model>& model, const std::vector<float>& values, int threads) {
  SessionOptions options;
  options.threads = threads;
  Session session(model, options);
  const InputInfo& in = model->inputs()[0];
  Tensor x;
  x.name = in.name;
  x.layout = in.layout;
  x.shape = in.dims;
  x.shape[0] = 1;
  x.f32 = values;
  return session.run({x})[0].f32;
}

struct SizeCase {
  const char* name;
  int64_t height, width;  // the size to re-shape to
};

class AtInputSize : public ::testing::TestWithParam<SizeCase> {};

TEST_P(AtInputSize, RunsAsTheGraphConvertedAtThatSize) {
  const SizeCase& c = GetParam();
  const std::string onnx_bytes = testing::read_file(testing::golden_dir() / c.name / "model.onnx");
  const auto as_converted = convert(onnx_bytes);
  const auto reshaped = Model::at_input_size(as_converted, c.height, c.width);
  const auto reference = convert(with_input_dims(onnx_bytes, c.height, c.width));

  ASSERT_EQ(reshaped->inputs()[0].dims, reference->inputs()[0].dims);
  ASSERT_EQ(reshaped->outputs()[0].dims, reference->outputs()[0].dims);
  ASSERT_NE(reshaped->outputs()[0].dims, as_converted->outputs()[0].dims) << "the case does not change the output's size";
  const auto ops = reshaped->ops(), reference_ops = reference->ops();
  ASSERT_EQ(ops.size(), reference_ops.size());
  for (size_t k = 0; k < ops.size(); ++k) EXPECT_EQ(ops[k].output_dims, reference_ops[k].output_dims) << "op " << k << " " << ops[k].kind;

  std::mt19937 rng(7);
  int64_t n = 1;
  for (size_t k = 1; k < reference->inputs()[0].dims.size(); ++k) n *= reference->inputs()[0].dims[k];
  const std::vector<float> x = testing::random_floats(rng, static_cast<size_t>(n));
  for (int threads : {1, 2}) {
    const std::vector<float> want = run(reference, x, threads), got = run(reshaped, x, threads);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(testing::max_abs_diff(got, want), 0.f) << "threads " << threads;
  }
  // The re-shaped model reads the weights of the model it came from.
  EXPECT_EQ(reshaped->weight_bytes(), as_converted->weight_bytes());
}

// Larger and smaller than the exported size, square and not; U-Net sizes stay
// multiples of its 2^depth.
INSTANTIATE_TEST_SUITE_P(Cases, AtInputSize,
                         ::testing::Values(SizeCase{"zoo_cyclegan_resnet", 44, 28}, SizeCase{"zoo_fast_style", 20, 36},
                                           SizeCase{"zoo_srgan", 9, 13}, SizeCase{"zoo_realesrgan_compact", 11, 6},
                                           SizeCase{"zoo_esrgan_rrdb", 7, 10}, SizeCase{"zoo_animeganv2", 24, 40},
                                           SizeCase{"zoo_pix2pix_unet", 64, 32}, SizeCase{"zoo_patchgan", 40, 48},
                                           SizeCase{"resize_nearest_upsample_conv", 5, 9}, SizeCase{"pad_reflect_zero_edge", 13, 12}),
                         [](const auto& info) { return std::string(info.param.name); });

std::string reshape_error(const std::shared_ptr<const Model>& model, int64_t height, int64_t width) {
  try {
    Model::at_input_size(model, height, width);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AtInputSizeRefusal, OpsWhoseShapeTheFileFixesAreNamed) {
  const auto golden = [](const char* name) { return convert(testing::read_file(testing::golden_dir() / name / "model.onnx")); };
  // A discriminator's Dense head reads a fixed number of features.
  std::string e = reshape_error(golden("d_conv_dilated_flatten"), 40, 40);
  EXPECT_NE(e.find("cannot run at input size 40x40"), std::string::npos) << e;
  EXPECT_NE(e.find("(Reshape): its target shape -1x16 is fixed in the file"), std::string::npos) << e;
  // A global pool's window is written as the map's size.
  e = reshape_error(golden("patchgan_gap_head"), 40, 40);
  EXPECT_NE(e.find("global pool"), std::string::npos) << e;
  EXPECT_NE(e.find("Pool"), std::string::npos) << e;
  // A noise-to-image generator has no image input.
  e = reshape_error(golden("g_k3s2_outpad_nonsquare"), 32, 32);
  EXPECT_NE(e.find("no image input"), std::string::npos) << e;
  // Sizes out of range.
  const auto cyclegan = golden("zoo_cyclegan_resnet");
  EXPECT_NE(reshape_error(cyclegan, 0, 16).find("must be positive"), std::string::npos);
  EXPECT_NE(reshape_error(cyclegan, 16, -3).find("must be positive"), std::string::npos);
  EXPECT_NE(reshape_error(cyclegan, int64_t{1} << 40, 16).find("at most"), std::string::npos);
  // A map too small for a kernel: the op that cannot take it is named.
  e = reshape_error(golden("zoo_patchgan"), 2, 2);
  EXPECT_NE(e.find("cannot run at input size 2x2: op "), std::string::npos) << e;
  // The exported size gives the model itself.
  const auto& dims = cyclegan->inputs()[0].dims;
  EXPECT_EQ(Model::at_input_size(cyclegan, dims[1], dims[2]), cyclegan);
}

TEST(AtInputSizeRefusal, AResizeToAFixedSizeFollowsOnlyAnIntegerRatio) {
  // The case resizes its 10x10 map to a fixed 13x13 (torch's size= argument).
  const auto model = convert(testing::read_file(testing::golden_dir() / "resize_bilinear" / "model.onnx"));
  const std::string e = reshape_error(model, 10, 14);
  EXPECT_NE(e.find("(Resize): resizes 10 to a fixed 13, not by an integer factor"), std::string::npos) << e;
}

}  // namespace
}  // namespace edgegan

// --alpha model: a transparent picture's alpha plane through the network, as
// Real-ESRGAN's inference script does by default. tests/checkpoint/alpha holds a compact
// x4 checkpoint, an RGBA picture and that script's result on it, re-implemented in
// PyTorch by make_checkpoints.py (float32 .npy of 8-bit levels, (H, W, 4)).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "converter/checkpoint/checkpoint_reader.h"
#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "edgegan/image.h"
#include "edgegan/image_to_image.h"
#include "edgegan/io.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;

fs::path alpha_dir() { return testing::source_dir() / "tests" / "checkpoint" / "alpha"; }

Image picture(const Tensor& levels) {
  Image img;
  img.height = levels.shape[0];
  img.width = levels.shape[1];
  img.channels = static_cast<int>(levels.shape[2]);
  img.pixels.reserve(levels.f32.size());
  for (float v : levels.f32) img.pixels.push_back(static_cast<uint8_t>(v));
  return img;
}

// The largest difference, in levels, between the channels [first, last) of two pictures.
int max_level_diff(const Image& got, const Image& want, int first, int last) {
  int worst = 0;
  for (size_t i = 0; i < got.pixels.size(); ++i) {
    const int c = static_cast<int>(i % static_cast<size_t>(got.channels));
    if (c >= first && c < last) worst = std::max(worst, std::abs(int{got.pixels[i]} - int{want.pixels[i]}));
  }
  return worst;
}

class CheckpointAlpha : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto egan = converter::convert_checkpoint(testing::read_file(alpha_dir() / "model.pth"), "model.pth").egan;
    model_ = Model::from_bytes(egan);
    input_ = picture(read_npy((alpha_dir() / "input.npy").string()));
    reference_ = picture(read_npy((alpha_dir() / "reference.npy").string()));
  }
  Image run(AlphaMode mode) const {
    return ImageToImage(model_, {.threads = 1, .alpha = mode}).run(input_);
  }
  std::shared_ptr<const Model> model_;
  Image input_, reference_;
};

TEST_F(CheckpointAlpha, ModelModeMatchesRealEsrganWithinOneLevel) {
  const Image got = run(AlphaMode::kModel);
  ASSERT_EQ(got.width, reference_.width);
  ASSERT_EQ(got.height, reference_.height);
  ASSERT_EQ(got.channels, 4);
  EXPECT_LE(max_level_diff(got, reference_, 0, 3), 1);
  EXPECT_LE(max_level_diff(got, reference_, 3, 4), 1);
}

// The alpha plane really went through the model: Lanczos gives another alpha (and the
// same colours).
TEST_F(CheckpointAlpha, LanczosModeResizesAlphaOnItsOwn) {
  const Image lanczos = run(AlphaMode::kLanczos), model = run(AlphaMode::kModel);
  EXPECT_EQ(max_level_diff(lanczos, model, 0, 3), 0);
  EXPECT_GT(max_level_diff(lanczos, reference_, 3, 4), 8);
}

// Tiles: the alpha plane is cut and blended as a colour picture is, so a tiled run's
// alpha is the luma of the tiled run of the plane as an RGB picture.
TEST_F(CheckpointAlpha, ModelModeTiledIsTheTiledRunOfThePlane) {
  const ImageToImageOptions o{.threads = 1, .tile = 6, .overlap = 2, .alpha = AlphaMode::kModel};
  const Image tiled = ImageToImage(model_, o).run(input_);
  Image plane;
  plane.width = input_.width;
  plane.height = input_.height;
  plane.channels = 3;
  for (size_t i = 0; i < input_.pixels.size(); i += 4) plane.pixels.insert(plane.pixels.end(), 3, input_.pixels[i + 3]);
  const Image rgb = ImageToImage(model_, o).run(plane);
  float worst = 0;  // the luma rounded: at most half a level off
  for (size_t p = 0; p < rgb.pixels.size() / 3; ++p) {
    const float luma = 0.299f * rgb.pixels[p * 3] + 0.587f * rgb.pixels[p * 3 + 1] + 0.114f * rgb.pixels[p * 3 + 2];
    worst = std::max(worst, std::fabs(luma - tiled.pixels[p * 4 + 3]));
  }
  EXPECT_LE(worst, 0.5f + 1e-3f);
}

// A grey + alpha picture: both planes widened to RGB for the model.
TEST_F(CheckpointAlpha, GreyPlusAlphaGoesThroughTheModelToo) {
  Image grey;
  grey.width = input_.width;
  grey.height = input_.height;
  grey.channels = 2;
  for (size_t i = 0; i < input_.pixels.size(); i += 4) {
    grey.pixels.push_back(input_.pixels[i]);
    grey.pixels.push_back(input_.pixels[i + 3]);
  }
  const Image got = ImageToImage(model_, {.threads = 1, .alpha = AlphaMode::kModel}).run(grey);
  ASSERT_EQ(got.channels, 4);  // the model's RGB, plus alpha
  EXPECT_LE(max_level_diff(got, reference_, 3, 4), 1);
}

}  // namespace
}  // namespace edgegan

// The U-Net generator, Real-CUGAN and RealPLKSR beyond their cases' outputs
// (CheckpointCase runs those against PyTorch): unet_256's eight levels from shapes
// alone, the sizes the image tools align to (2^levels; Real-CUGAN's 2 and 4, as its
// release pads to), odd sizes refused in one line, and layouts missing one tensor
// named with their closest architecture and that tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "edgegan/image.h"
#include "edgegan/image_to_image.h"
#include "edgegan/io.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;
using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// A safetensors file of the given tensors, each filled with 0.01 (zeros would leave the
// norms' variances 0).
std::string safetensors(const Shapes& tensors) {
  std::ostringstream header;
  std::string data;
  header << "{";
  for (size_t t = 0; t < tensors.size(); ++t) {
    const auto& [name, shape] = tensors[t];
    size_t n = 1;
    header << (t ? "," : "") << "\"" << name << "\":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t k = 0; k < shape.size(); ++k) {
      header << (k ? "," : "") << shape[k];
      n *= static_cast<size_t>(shape[k]);
    }
    header << "],\"data_offsets\":[" << data.size() << "," << data.size() + n * 4 << "]}";
    const float v = 0.01f;
    for (size_t k = 0; k < n; ++k) data.append(reinterpret_cast<const char*>(&v), 4);
  }
  header << "}";
  std::string length(8, '\0');
  const std::string h = header.str();
  for (int k = 0; k < 8; ++k) length[static_cast<size_t>(k)] = static_cast<char>((h.size() >> (8 * k)) & 0xff);
  return length + h + data;
}

std::string architecture(const std::vector<uint8_t>& egan) {
  const auto model = Model::from_bytes(egan);
  for (const auto& [k, v] : model->metadata())
    if (k == "architecture") return std::string(v);
  return "";
}

// The refusal of `bytes`, "" if it converts.
std::string refusal(const std::string& bytes) {
  try {
    converter::convert_checkpoint(bytes, "m.safetensors");
  } catch (const converter::ConvertError& e) {
    return e.what();
  }
  return "";
}

// pix2pix's U-Net with batch norm: `levels` downs, widths ngf, 2ngf, 4ngf, 8ngf...
Shapes unet(int levels, int64_t ngf) {
  Shapes t = {{"model.model.0.weight", {ngf, 3, 4, 4}}};
  auto bn = [&](const std::string& at, int64_t c) {
    for (const char* s : {".weight", ".bias", ".running_mean", ".running_var"}) t.push_back({at + s, {c}});
  };
  std::vector<int64_t> width = {ngf};
  for (int l = 1; l < levels; ++l) width.push_back(ngf * (int64_t{1} << std::min(l, 3)));
  std::string p = "model.model.1.model.";
  std::vector<std::pair<std::string, int>> ups;  // after the recursion, outside in
  for (int l = 1; l < levels; ++l) {
    t.push_back({p + "1.weight", {width[l], width[l - 1], 4, 4}});
    if (l == levels - 1) {
      t.push_back({p + "3.weight", {width[l], width[l - 1], 4, 4}});
      bn(p + "4", width[l - 1]);
    } else {
      bn(p + "2", width[l]);
      ups.push_back({p, l});
      p += "3.model.";
    }
  }
  for (auto it = ups.rbegin(); it != ups.rend(); ++it) {
    t.push_back({it->first + "5.weight", {2 * width[it->second], width[it->second - 1], 4, 4}});
    bn(it->first + "6", width[it->second - 1]);
  }
  t.push_back({"model.model.3.weight", {2 * ngf, 3, 4, 4}});
  t.push_back({"model.model.3.bias", {3}});
  return t;
}

TEST(CheckpointUnet, Unet256FromShapesAlignsTo256) {
  const auto egan = converter::convert_checkpoint(safetensors(unet(8, 2)), "unet256.safetensors").egan;
  EXPECT_EQ(architecture(egan), "UnetGenerator: in 3, out 3, ngf 2, downs 8, norm batch");
  const ImageToImage runner(Model::from_bytes(egan), {.threads = 1});
  EXPECT_EQ(runner.alignment(), 256);
  EXPECT_EQ(runner.scale(), 1);
  EXPECT_EQ(runner.input_normalisation().mean[0], 0.5f);  // [-1, 1]
}

TEST(CheckpointUnet, MissingTensorNamesUnetAndTheKey) {
  Shapes t = unet(5, 2);
  const std::string innermost_up = "model.model.1.model.3.model.3.model.3.model.3.weight";
  std::erase_if(t, [&](const auto& e) { return e.first == innermost_up; });
  const std::string m = refusal(safetensors(t));
  EXPECT_NE(m.find("closest known architecture is UnetGenerator"), std::string::npos) << m;
  EXPECT_NE(m.find("model.model.1.model.3.model.3.model."), std::string::npos) << m;
}

fs::path case_file(const std::string& name) {
  const fs::path dir = testing::source_dir() / "tests" / "checkpoint" / "cases" / name;
  return fs::exists(dir / "model.pth") ? dir / "model.pth" : dir / "model.safetensors";
}

// The graph pads and crops by the planned size as the release does, so any size plans,
// to scale x the input, and the image tools feed the picture as it is (alignment 1).
TEST(CheckpointRealCugan, AnySizePlansToScaleTimesTheInput) {
  for (const auto& [name, scale] : {std::pair{"realcugan_x2_zip", 2}, std::pair{"realcugan_x3_fp16_zip", 3},
                                    std::pair{"realcugan_x4_safetensors", 4}, std::pair{"realcugan_fast_x2_bf16_zip", 2}}) {
    const auto egan = converter::convert_checkpoint(testing::read_file(case_file(name)), "m.pth").egan;
    const auto model = Model::from_bytes(egan);
    const ImageToImage runner(model, {.threads = 1});
    EXPECT_EQ(runner.scale(), scale) << name;
    EXPECT_EQ(runner.alignment(), 1) << name;
    EXPECT_EQ(Model::at_input_size(model, 31, 45)->outputs()[0].dims, (std::vector<int64_t>{-1, 31 * scale, 45 * scale, 3})) << name;
  }
}

Image picture(const Tensor& levels) {
  Image img;
  img.height = levels.shape[0];
  img.width = levels.shape[1];
  img.channels = static_cast<int>(levels.shape[2]);
  for (float v : levels.f32) img.pixels.push_back(static_cast<uint8_t>(v));
  return img;
}

// `upscale` with no flags: the release's inference (pixels / 255, x 255 rounded) on a
// 26x22 picture, within one level (0 apart when measured).
TEST(CheckpointRealCugan, UpscaleGivesTheReleasesPicture) {
  const fs::path dir = testing::source_dir() / "tests" / "checkpoint" / "pictures";
  const auto egan = converter::convert_checkpoint(testing::read_file(case_file("realcugan_x2_zip")), "m.pth").egan;
  const Image got = ImageToImage(Model::from_bytes(egan), {.threads = 1}).run(picture(read_npy((dir / "realcugan_x2_input.npy").string())));
  const Image want = picture(read_npy((dir / "realcugan_x2_reference.npy").string()));
  ASSERT_EQ(got.width, want.width);
  ASSERT_EQ(got.height, want.height);
  ASSERT_EQ(got.pixels.size(), want.pixels.size());
  int worst = 0;
  for (size_t i = 0; i < got.pixels.size(); ++i) worst = std::max(worst, std::abs(int{got.pixels[i]} - int{want.pixels[i]}));
  EXPECT_LE(worst, 1);
}

// ... and of a 31x25 picture, whose sides the release pads up to even inside its
// reflection and crops back: within one level on 99.9% of values.
TEST(CheckpointRealCugan, UpscaleOfAnOddSizedPictureGivesTheReleasesPicture) {
  const fs::path dir = testing::source_dir() / "tests" / "checkpoint" / "pictures";
  const auto egan = converter::convert_checkpoint(testing::read_file(case_file("realcugan_x2_zip")), "m.pth").egan;
  const Image got = ImageToImage(Model::from_bytes(egan), {.threads = 1}).run(picture(read_npy((dir / "realcugan_x2_odd_input.npy").string())));
  const Image want = picture(read_npy((dir / "realcugan_x2_odd_reference.npy").string()));
  ASSERT_EQ(got.width, want.width);
  ASSERT_EQ(got.height, want.height);
  ASSERT_EQ(got.pixels.size(), want.pixels.size());
  size_t off = 0;
  int worst = 0;
  for (size_t i = 0; i < got.pixels.size(); ++i) {
    const int d = std::abs(int{got.pixels[i]} - int{want.pixels[i]});
    worst = std::max(worst, d);
    off += d > 1;
  }
  EXPECT_LE(off * 1000, got.pixels.size()) << "worst " << worst;
}

TEST(CheckpointRealCugan, MissingSeBlockNamesRealCuganAndTheKey) {
  // The x2 layout at base width 4, without unet2.conv3's SE block's first conv.
  const auto conv = [](Shapes& t, const std::string& p, int64_t out, int64_t in, int64_t k) {
    t.push_back({p + ".weight", {out, in, k, k}});
    t.push_back({p + ".bias", {out}});
  };
  const auto unet_conv = [&](Shapes& t, const std::string& p, int64_t in, int64_t mid, int64_t out, bool se) {
    conv(t, p + ".conv.0", mid, in, 3);
    conv(t, p + ".conv.2", out, mid, 3);
    if (se) {
      conv(t, p + ".seblock.conv1", out / 8, out, 1);
      conv(t, p + ".seblock.conv2", out, out / 8, 1);
    }
  };
  Shapes t;
  unet_conv(t, "unet1.conv1", 3, 4, 8, false);
  conv(t, "unet1.conv1_down", 8, 8, 2);
  unet_conv(t, "unet1.conv2", 8, 16, 8, true);
  conv(t, "unet1.conv2_up", 8, 8, 2);
  conv(t, "unet1.conv3", 8, 8, 3);
  t.push_back({"unet1.conv_bottom.weight", {8, 3, 4, 4}});
  t.push_back({"unet1.conv_bottom.bias", {3}});
  unet_conv(t, "unet2.conv1", 3, 4, 8, false);
  conv(t, "unet2.conv1_down", 8, 8, 2);
  unet_conv(t, "unet2.conv2", 8, 8, 16, true);
  conv(t, "unet2.conv2_down", 16, 16, 2);
  unet_conv(t, "unet2.conv3", 16, 32, 16, true);
  conv(t, "unet2.conv3_up", 16, 16, 2);
  unet_conv(t, "unet2.conv4", 16, 8, 8, true);
  conv(t, "unet2.conv4_up", 8, 8, 2);
  conv(t, "unet2.conv5", 8, 8, 3);
  conv(t, "unet2.conv_bottom", 3, 8, 3);
  EXPECT_EQ(architecture(converter::convert_checkpoint(safetensors(t), "cugan.safetensors").egan), "RealCUGAN: in 3, out 3, features 4, scale 2");
  std::erase_if(t, [](const auto& e) { return e.first == "unet2.conv3.seblock.conv1.weight"; });
  const std::string m = refusal(safetensors(t));
  EXPECT_NE(m.find("closest known architecture is RealCUGAN"), std::string::npos) << m;
  EXPECT_NE(m.find("unet2.conv3.seblock.conv1.weight"), std::string::npos) << m;
}

// RealPLKSR x1 (no shuffle: the input added as it is) from shapes; a block without its
// norm names RealPLKSR and the key.
TEST(CheckpointRealPlksr, ScaleOneFromShapesAndAMissingNorm) {
  Shapes t = {{"feats.0.weight", {4, 3, 3, 3}}, {"feats.0.bias", {4}}};
  for (const std::string b : {"feats.1.", "feats.2."}) {
    t.push_back({b + "channel_mixer.0.weight", {8, 4, 3, 3}});
    t.push_back({b + "channel_mixer.2.weight", {4, 8, 3, 3}});
    t.push_back({b + "lk.conv.weight", {1, 1, 5, 5}});
    t.push_back({b + "refine.weight", {4, 4, 1, 1}});
    t.push_back({b + "norm.weight", {4}});
    t.push_back({b + "norm.bias", {4}});
  }
  t.push_back({"feats.4.weight", {3, 4, 3, 3}});
  const auto egan = converter::convert_checkpoint(safetensors(t), "plksr.safetensors").egan;
  EXPECT_EQ(architecture(egan), "RealPLKSR: in 3, out 3, features 4, blocks 2, kernel 5, large-kernel channels 1, scale 1, attention no");
  EXPECT_EQ(ImageToImage(Model::from_bytes(egan), {.threads = 1}).scale(), 1);
  std::erase_if(t, [](const auto& e) { return e.first == "feats.2.norm.weight"; });
  const std::string m = refusal(safetensors(t));
  EXPECT_NE(m.find("closest known architecture is RealPLKSR"), std::string::npos) << m;
  EXPECT_NE(m.find("feats.2.norm.weight"), std::string::npos) << m;
}

// RealPLKSR (features 4, blocks 2) with DySample at `scale` (12 channels at x2), from
// shapes: the parameters read from `to_img.*`; a scope conv with a bias, groups that do
// not divide the channels and DySample at scale 1 each refused naming RealPLKSR and why.
Shapes realplksr_dysample(int64_t scale, int64_t groups) {
  Shapes t = {{"feats.0.weight", {4, 3, 3, 3}}, {"feats.0.bias", {4}}};
  for (const std::string b : {"feats.1.", "feats.2."}) {
    t.push_back({b + "channel_mixer.0.weight", {8, 4, 3, 3}});
    t.push_back({b + "channel_mixer.2.weight", {4, 8, 3, 3}});
    t.push_back({b + "lk.conv.weight", {1, 1, 5, 5}});
    t.push_back({b + "refine.weight", {4, 4, 1, 1}});
    t.push_back({b + "norm.weight", {4}});
    t.push_back({b + "norm.bias", {4}});
  }
  const int64_t c = 3 * scale * scale, offsets = 2 * groups * scale * scale;
  t.push_back({"feats.4.weight", {c, 4, 3, 3}});
  t.push_back({"to_img.init_pos", {1, offsets, 1, 1}});
  t.push_back({"to_img.end_conv.weight", {3, c, 1, 1}});
  t.push_back({"to_img.end_conv.bias", {3}});
  t.push_back({"to_img.offset.weight", {offsets, c, 1, 1}});
  t.push_back({"to_img.offset.bias", {offsets}});
  t.push_back({"to_img.scope.weight", {offsets, c, 1, 1}});
  return t;
}

TEST(CheckpointRealPlksr, DySampleFromShapesAndItsVariantsRefused) {
  const auto egan = converter::convert_checkpoint(safetensors(realplksr_dysample(2, 4)), "plksr.safetensors").egan;
  EXPECT_EQ(architecture(egan),
            "RealPLKSR: in 3, out 3, features 4, blocks 2, kernel 5, large-kernel channels 1, scale 2, dysample groups 4, dysample end kernel 1, "
            "attention no, dysample with scope");
  const auto model = Model::from_bytes(egan);
  EXPECT_EQ(ImageToImage(model, {.threads = 1}).scale(), 2);
  bool sampled = false;
  for (const OpInfo& op : model->ops()) sampled = sampled || (op.kind == "GridSample" && op.attributes.find("groups 4 offsets") != std::string::npos);
  EXPECT_TRUE(sampled) << "no GridSample op with 4 groups in offset form";

  Shapes bias = realplksr_dysample(2, 4);
  bias.push_back({"to_img.scope.bias", {32}});
  std::string m = refusal(safetensors(bias));
  EXPECT_NE(m.find("closest known architecture is RealPLKSR"), std::string::npos) << m;
  EXPECT_NE(m.find("to_img.scope.bias"), std::string::npos) << m;
  m = refusal(safetensors(realplksr_dysample(2, 5)));  // 5 groups of 12 channels
  EXPECT_NE(m.find("closest known architecture is RealPLKSR"), std::string::npos) << m;
  EXPECT_NE(m.find("do not divide 12 channels"), std::string::npos) << m;
  m = refusal(safetensors(realplksr_dysample(1, 4)));
  EXPECT_NE(m.find("the scale is 1"), std::string::npos) << m;
}

}  // namespace
}  // namespace edgegan

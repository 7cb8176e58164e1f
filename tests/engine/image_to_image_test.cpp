// ImageToImage (translate/upscale): the model's scale and stride found by probing,
// tiled runs against the whole-image run, memory-limited tile choice, the pixel
// normalisations, grey widening, the alpha plane and --outscale.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"
#include "edgegan/image_to_image.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const Model> golden(const std::string& name) { return Model::load(testing::test_model_path("golden/" + name)); }

Image random_image(int64_t width, int64_t height, int channels, uint32_t seed) {
  std::mt19937 rng(seed);
  Image im;
  im.width = width;
  im.height = height;
  im.channels = channels;
  im.pixels.resize(static_cast<size_t>(width * height * channels));
  // Smooth content plus noise, so no pixel sits at a clamp by accident.
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c)
        im.pixels[static_cast<size_t>((y * width + x) * channels + c)] =
            static_cast<uint8_t>(60 + (x * 3 + y * 2 + c * 40) % 120 + testing::uniform_int(rng, 0, 40));
  return im;
}

// Content whose statistics change across the picture (brightness rising to the right,
// texture growing downwards), so tiles differ from each other and from the whole.
Image uneven_image(int64_t width, int64_t height, uint32_t seed) {
  std::mt19937 rng(seed);
  Image im;
  im.width = width;
  im.height = height;
  im.channels = 3;
  im.pixels.resize(static_cast<size_t>(width * height * 3));
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        const double base = 20.0 + 190.0 * static_cast<double>(x) / static_cast<double>(width) + 10.0 * c;
        const double texture = (10.0 + 40.0 * static_cast<double>(y) / static_cast<double>(height)) * std::sin(0.37 * static_cast<double>(x + 2 * y + 5 * c));
        im.pixels[static_cast<size_t>((y * width + x) * 3 + c)] =
            static_cast<uint8_t>(std::clamp(base + texture + testing::uniform_int(rng, 0, 12), 0.0, 255.0));
      }
  return im;
}

struct Difference {
  int max = 0;
  int64_t differing = 0;
};

Difference compare(const Image& a, const Image& b) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  Difference d;
  for (size_t i = 0; i < std::min(a.pixels.size(), b.pixels.size()); ++i) {
    const int e = std::abs(int{a.pixels[i]} - int{b.pixels[i]});
    d.max = std::max(d.max, e);
    d.differing += e != 0;
  }
  return d;
}

TEST(ImageToImage, FindsTheScaleAndTheStride) {
  const ImageToImage sr(golden("zoo_realesrgan_compact"));
  EXPECT_EQ(sr.scale(), 4);
  EXPECT_EQ(sr.alignment(), 1);
  const ImageToImage cyclegan(golden("zoo_cyclegan_resnet"));  // two stride-2 downsamplings
  EXPECT_EQ(cyclegan.scale(), 1);
  EXPECT_EQ(cyclegan.alignment(), 4);
  const ImageToImage srgan(golden("zoo_srgan"));
  EXPECT_GE(srgan.scale(), 2);
  const ImageToImage unet(golden("zoo_pix2pix_unet"));
  EXPECT_EQ(unet.scale(), 1);
  EXPECT_GE(unet.alignment(), 8);
}

// Squeeze-and-excitation (a Reduce over the map) and attention mix the whole picture, as
// norms do: the runner names the first such op (the CLI warns when tiling); a
// per-pixel Reduce (pixel norm over channels) is not one.
// With statistics gathered over the whole picture (the default on the CPU) the norms and
// SE are no longer named; attention still is.
TEST(ImageToImage, NamesWholePictureOps) {
  const ImageToImage cugan(golden("family_realcugan_2x"), {.tile_statistics = TileStatistics::kPerTile});
  EXPECT_EQ(cugan.scale(), 2);
  EXPECT_NE(cugan.whole_image_op().find("Reduce"), std::string::npos) << cugan.whole_image_op();
  EXPECT_TRUE(ImageToImage(golden("family_realcugan_2x")).whole_image_op().empty());
  EXPECT_TRUE(ImageToImage(golden("zoo_realesrgan_compact")).whole_image_op().empty());
  EXPECT_NE(ImageToImage(golden("zoo_cyclegan_resnet"), {.tile_statistics = TileStatistics::kPerTile}).whole_image_op().find("GroupNorm"),
            std::string::npos);
  EXPECT_TRUE(ImageToImage(golden("zoo_cyclegan_resnet")).whole_image_op().empty());
}

TEST(ImageToImage, RefusesModelsThatAreNotImageToImage) {
  for (const char* name : {"dcgan_digits_generator", "d_conv_dilated_flatten", "patchgan_gap_head"}) {
    const fs::path path = testing::test_model_path("golden/" + std::string(name));
    if (!fs::exists(path)) continue;  // dcgan_digits ships under models/, not the goldens
    try {
      ImageToImage runner(Model::load(path.string()));
      ADD_FAILURE() << name << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not image-to-image"), std::string::npos) << name << ": " << e.what();
    }
  }
}

// With an overlap whose blended quarters cover the receptive field, a tiled run is
// the whole-image run (the same float values, so the same 8-bit pixels but for a
// rare rounding tie); with a small overlap the seams stay within a few levels.
TEST(ImageToImage, TiledRunsMatchTheWholeImage) {
  struct Case {
    const char* model;
    int64_t width, height, tile, overlap;
  };
  // realesrgan_compact: six 3x3 convolutions, a receptive field of 6 pixels each way.
  // Models with norms: TiledStatisticsEqualTheWholePicture below.
  for (const Case& c : {Case{"zoo_realesrgan_compact", 150, 97, 72, 32}, Case{"zoo_realesrgan_compact", 70, 33, 24, 8}}) {
    SCOPED_TRACE(c.model);
    const auto model = golden(c.model);
    const ImageToImage whole(model, {.threads = 2});
    const Image in = random_image(c.width, c.height, whole.input_channels(), 3);
    const Image reference = whole.run(in);
    EXPECT_EQ(reference.width, c.width * whole.scale());
    EXPECT_EQ(reference.height, c.height * whole.scale());
    ImageToImageOptions tiled_options{.threads = 2, .tile = c.tile, .overlap = c.overlap};
    const ImageToImage tiled(model, tiled_options);
    const TilePlan plan = tiled.plan(c.width, c.height);
    EXPECT_GT(plan.tiles(), 1);
    int64_t progress_calls = 0;
    const Image out = tiled.run(in, [&](int64_t done, int64_t total) {
      EXPECT_EQ(done, ++progress_calls);
      EXPECT_EQ(total, plan.tiles());
    });
    EXPECT_EQ(progress_calls, plan.tiles());
    const Difference d = compare(out, reference);
    if (c.overlap >= 24) {  // a quarter of the overlap covers the receptive field
      EXPECT_LE(d.max, 1);
      EXPECT_LE(d.differing, static_cast<int64_t>(out.pixels.size() / 1000));
    } else {
      EXPECT_LE(d.max, 24) << "seams differ too much";
    }
  }
}

// Instance norms (CycleGAN), group norms and squeeze-and-excitation (a Reduce over H and
// W) take statistics of the whole map. Gathered over the whole picture, the tiled result
// is the untiled one within the tiling tolerance above (1 level, in under 0.1% of the
// values, where a quarter of the overlap covers the receptive field); each tile taking
// its own (kPerTile) is far off everywhere. Odd picture sizes (mirrored out to the
// model's stride), two pictures of different content in one job, and tiles in batches.
TEST(ImageToImage, TiledStatisticsEqualTheWholePicture) {
  struct Case {
    const char* model;
    int64_t width, height, tile, overlap;
    int batch;
    bool per_tile_far_off;  // whether the model's 8-bit output shows the statistics of a tile
  };
  // norm_se_translator: GroupNorm (4 groups), stride 2, GroupNorm (2 groups), SE: 3 passes.
  // cyclegan_resnet: 9 instance norms in a chain (9 passes), a receptive field of about 31
  // pixels. realcugan_2x: SE blocks on maps cropped by unpadded convolutions (its random
  // weights' 8-bit output does not show a tile's own SE means).
  for (const Case& c : {Case{"family_norm_se_translator", 101, 75, 56, 24, 1, true}, Case{"family_norm_se_translator", 90, 61, 56, 24, 3, true},
                        Case{"zoo_cyclegan_resnet", 301, 283, 264, 128, 2, true}, Case{"family_realcugan_2x", 83, 69, 52, 24, 1, false}}) {
    SCOPED_TRACE(std::string(c.model) + " batch " + std::to_string(c.batch));
    const auto model = golden(c.model);
    const ImageToImage whole(model, {.threads = 2});
    const std::vector<Image> in{uneven_image(c.width, c.height, 7), random_image(c.width, c.height, 3, 8)};
    std::vector<Image> reference;
    for (const Image& picture : in) reference.push_back(whole.run(picture));
    const ImageToImage exact(model, {.threads = 2, .tile = c.tile, .overlap = c.overlap, .batch = c.batch});
    const ImageToImage approx(model, {.threads = 2, .tile = c.tile, .overlap = c.overlap, .batch = c.batch, .tile_statistics = TileStatistics::kPerTile});
    const TilePlan plan = exact.plan(c.width, c.height);
    EXPECT_GT(plan.tiles(), 1);
    EXPECT_GT(plan.statistics_passes, 0);
    EXPECT_EQ(approx.plan(c.width, c.height).statistics_passes, 0);
    EXPECT_GT(plan.buffer_bytes, approx.plan(c.width, c.height).buffer_bytes);  // the statistics' buffers are planned
    EXPECT_TRUE(exact.whole_image_op().empty()) << exact.whole_image_op();
    int64_t last_done = 0, last_total = 0;
    const std::vector<Image> tiled = exact.run_batch(in, [&](int64_t done, int64_t total) { last_done = done, last_total = total; });
    const std::vector<Image> per_tile = approx.run_batch(in);
    EXPECT_EQ(last_total, plan.tiles() * 2 * (1 + plan.statistics_passes));  // every pass's tiles of both pictures
    EXPECT_EQ(last_done, last_total);
    for (size_t n = 0; n < in.size(); ++n) {
      const Difference d = compare(tiled[n], reference[n]);
      EXPECT_LE(d.max, 1) << "picture " << n;
      EXPECT_LE(d.differing, static_cast<int64_t>(tiled[n].pixels.size() / 1000)) << "picture " << n;
      if (n == 0 && c.per_tile_far_off) {  // the uneven picture: tiles with their own statistics are far off
        EXPECT_GE(compare(per_tile[n], reference[n]).max, 8);
      }
    }
  }
}

// fp16 storage (the CPU's half route): the frozen layers run through the same adapter;
// the tiled picture stays within the fp16 run's own rounding of the untiled one.
TEST(ImageToImage, TiledStatisticsAtFp16) {
  const auto model = golden("family_norm_se_translator");
  const Image in = uneven_image(101, 75, 9);
  const Image reference = ImageToImage(model, {.threads = 2, .precision = Precision::kFp16}).run(in);
  const Image tiled = ImageToImage(model, {.threads = 2, .precision = Precision::kFp16, .tile = 56, .overlap = 24}).run(in);
  const Difference d = compare(tiled, reference);
  EXPECT_LE(d.max, 2);
  EXPECT_LE(d.differing, static_cast<int64_t>(tiled.pixels.size() / 100));
}

TEST(ImageToImage, MemoryLimitPicksTheLargestTileThatFits) {
  const auto model = golden("zoo_realesrgan_compact");
  const ImageToImage unlimited(model);
  const TilePlan whole = unlimited.plan(300, 200);
  EXPECT_EQ(whole.tiles(), 1);
  const uint64_t limit = whole.total_bytes() / 3;
  const ImageToImage limited(model, {.overlap = 8, .memory_limit_bytes = limit});
  const TilePlan p = limited.plan(300, 200);
  EXPECT_GT(p.tiles(), 1);
  EXPECT_LE(p.total_bytes(), limit);
  // One pixel larger would not fit.
  const ImageToImage larger(model, {.tile = p.tile_width + 1, .overlap = 8});
  if (p.tile_width < 300) {
    EXPECT_GT(larger.plan(300, 200).total_bytes(), limit);
  }
  // The tiled run under the limit gives the image.
  const Image in = random_image(300, 200, 3, 9);
  const Image out = limited.run(in);
  EXPECT_EQ(out.width, 1200);
  EXPECT_EQ(out.height, 800);
  // A limit no tile fits is an error that says so.
  const ImageToImage impossible(model, {.memory_limit_bytes = 1 << 16});
  try {
    impossible.plan(300, 200);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than the memory limit"), std::string::npos) << e.what();
  }
}

TEST(ImageToImage, NormalisationsFromOptionsAndRanges) {
  const PixelNormalisation r = PixelNormalisation::range(-1.f, 1.f);
  EXPECT_FLOAT_EQ((0.f / 255.f - r.mean[0]) / r.std[0], -1.f);
  EXPECT_FLOAT_EQ((255.f / 255.f - r.mean[2]) / r.std[2], 1.f);
  EXPECT_EQ(PixelNormalisation::parse_range("-1,1"), r);
  const PixelNormalisation m = PixelNormalisation::mean_std("0.485,0.456,0.406", "0.229,0.224,0.225");
  EXPECT_FLOAT_EQ(m.mean[1], 0.456f);
  EXPECT_FLOAT_EQ(m.std[2], 0.225f);
  for (auto [mean, std] : {std::pair{"1,2", "1"}, std::pair{"a", "1"}, std::pair{"0.5", "0"}, std::pair{"", "1"}}) {
    EXPECT_THROW(PixelNormalisation::mean_std(mean, std), Error) << mean << " / " << std;
  }
  EXPECT_THROW(PixelNormalisation::parse_range("1,1"), Error);
  EXPECT_THROW(PixelNormalisation::parse_range("0,1,2"), Error);
  // A tanh generator without metadata: [-1, 1] both ways; the option overrides the input side.
  const auto cyclegan = golden("zoo_cyclegan_resnet");
  const ImageToImage by_range(cyclegan);
  EXPECT_EQ(by_range.input_normalisation(), r);
  EXPECT_EQ(by_range.output_normalisation(), r);
  const ImageToImage given(cyclegan, {.input = PixelNormalisation::range(0.f, 1.f)});
  EXPECT_EQ(given.input_normalisation(), PixelNormalisation::range(0.f, 1.f));
  EXPECT_EQ(given.output_normalisation(), r);
  EXPECT_EQ(given.normalisation_source(), "given");
}

// ------------------------------------------------------------------ channels, alpha, outscale

// Grey pictures are widened for an RGB model; a colour picture for a grey model is refused.
TEST(ImageToImage, WidensGreyAndRefusesColourForAGreyModel) {
  const ImageToImage sr(golden("zoo_realesrgan_compact"));
  const Image grey = random_image(12, 9, 1, 5);
  Image rgb = grey;
  rgb.channels = 3;
  rgb.pixels.clear();
  for (uint8_t v : grey.pixels) rgb.pixels.insert(rgb.pixels.end(), {v, v, v});
  EXPECT_EQ(sr.run(grey).pixels, sr.run(rgb).pixels);
  EXPECT_EQ(sr.run(grey).channels, 3);
}

// RGBA in, RGBA out: the colour planes are the model's output for the RGB part, the
// alpha plane is the input's, Lanczos-resized to the output size (here x4).
TEST(ImageToImage, KeepsTheAlphaPlane) {
  const ImageToImage sr(golden("zoo_realesrgan_compact"));
  const Image rgb = random_image(10, 7, 3, 6);
  Image alpha = random_image(10, 7, 1, 7);
  const Image rgba = with_alpha(rgb, alpha);
  const Image out = sr.run(rgba);
  ASSERT_EQ(out.channels, 4);
  EXPECT_EQ(out.width, 40);
  EXPECT_EQ(out.height, 28);
  EXPECT_EQ(colour_planes(out).pixels, sr.run(rgb).pixels);
  EXPECT_EQ(alpha_plane(out).pixels, resize_lanczos(alpha, 40, 28).pixels);
  EXPECT_TRUE(has_transparency(out));
  // Grey + alpha through an RGB model: RGB + alpha.
  Image grey_alpha = with_alpha(random_image(10, 7, 1, 8), alpha);
  EXPECT_EQ(sr.run(grey_alpha).channels, 4);
}

// --outscale: the model's x4, then a Lanczos resize to int(side x outscale).
TEST(ImageToImage, OutscaleResizesTheModelsOutput) {
  ImageToImageOptions options;
  options.outscale = 2;
  const ImageToImage native(golden("zoo_realesrgan_compact")), half(golden("zoo_realesrgan_compact"), options);
  const Image in = random_image(11, 7, 3, 9);
  const Image x4 = native.run(in), x2 = half.run(in);
  EXPECT_EQ(x2.width, 22);
  EXPECT_EQ(x2.height, 14);
  EXPECT_EQ(x2.pixels, resize_lanczos(x4, 22, 14).pixels);
  EXPECT_EQ(half.output_size(11, 7), (std::pair<int64_t, int64_t>{22, 14}));
  options.outscale = 0.3;
  EXPECT_EQ(ImageToImage(golden("zoo_realesrgan_compact"), options).output_size(10, 7), (std::pair<int64_t, int64_t>{3, 2}));
  options.outscale = -1;
  EXPECT_THROW(ImageToImage(golden("zoo_realesrgan_compact"), options), Error);
}

// --batch: frames of a video (run_batch) and the tiles of one picture go through the
// model together; every picture comes out as it does alone. The kernels may pick
// another path for a larger batch, so floats can differ in the last bits: a rare
// rounding tie moves a pixel by one level.
TEST(ImageToImage, BatchedRunsEqualRunsAlone) {
  for (const char* name : {"zoo_realesrgan_compact", "zoo_cyclegan_resnet"}) {
    SCOPED_TRACE(name);
    const auto model = golden(name);
    const ImageToImage alone(model, {.threads = 2});
    std::vector<Image> frames;
    for (uint32_t seed = 0; seed < 5; ++seed) frames.push_back(random_image(36, 28, alone.input_channels(), 20 + seed));
    // 5 frames in runs of 2: the last run is filled up with a copy.
    const ImageToImage batched(model, {.threads = 2, .batch = 2});
    int64_t calls = 0;
    const std::vector<Image> outs = batched.run_batch(frames, [&](int64_t done, int64_t total) {
      EXPECT_EQ(done, ++calls);
      EXPECT_EQ(total, 5);
    });
    ASSERT_EQ(outs.size(), frames.size());
    EXPECT_EQ(calls, 5);
    for (size_t n = 0; n < frames.size(); ++n) {
      const Difference d = compare(outs[n], alone.run(frames[n]));
      EXPECT_LE(d.max, 1) << "frame " << n;
      EXPECT_LE(d.differing, static_cast<int64_t>(outs[n].pixels.size() / 1000)) << "frame " << n;
    }
    // The tiles of one picture, 3 per run (4 columns: a short run per tile row).
    const ImageToImage tiles_alone(model, {.threads = 2, .tile = 24, .overlap = 8});
    const ImageToImage tiles_batched(model, {.threads = 2, .tile = 24, .overlap = 8, .batch = 3});
    const Image wide = random_image(72, 40, alone.input_channels(), 30);
    const TilePlan plan = tiles_batched.plan(wide.width, wide.height);
    EXPECT_EQ(plan.batch, 3);
    EXPECT_GE(plan.tiles_x, 4);
    const Difference d = compare(tiles_batched.run(wide), tiles_alone.run(wide));
    EXPECT_LE(d.max, 1);
    EXPECT_LE(d.differing, static_cast<int64_t>(wide.pixels.size() * 4 * 4 / 1000));
    // The plan counts the batch's memory.
    EXPECT_GT(plan.total_bytes(), tiles_alone.plan(wide.width, wide.height).total_bytes());
  }
}

// The tile Session is kept for the next run of the same size: the second run of a
// picture is the first, bit for bit, also after a run at another size came between.
TEST(ImageToImage, KeptSessionGivesTheSameResults) {
  const ImageToImage sr(golden("zoo_realesrgan_compact"), {.threads = 2, .batch = 2});
  const Image a = random_image(20, 12, 3, 40), b = random_image(9, 14, 3, 41);
  const Image first = sr.run(a);
  EXPECT_EQ(sr.run(a).pixels, first.pixels);
  const std::vector<Image> pair = sr.run_batch({a, a});
  sr.run(b);
  EXPECT_EQ(sr.run(a).pixels, first.pixels);
  EXPECT_EQ(sr.run_batch({a, a})[1].pixels, pair[1].pixels);
  sr.release_session();
  EXPECT_EQ(sr.run(a).pixels, first.pixels);
  // A copy shares the kept Session, and runs from two threads each get one of their own.
  const ImageToImage copy = sr;
  std::vector<Image> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) threads.emplace_back([&, t] { results[t] = (t % 2 ? copy : sr).run(a); });
  for (std::thread& t : threads) t.join();
  for (const Image& r : results) EXPECT_EQ(r.pixels, first.pixels);
}

TEST(ImageToImage, BatchRefusesPicturesOfDifferentSizesAndBadBatches) {
  const ImageToImage sr(golden("zoo_realesrgan_compact"), {.batch = 2});
  try {
    sr.run_batch({random_image(10, 8, 3, 1), random_image(8, 10, 3, 2)});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one size and channel count"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sr.run_batch({}).empty());
  EXPECT_THROW(ImageToImage(golden("zoo_realesrgan_compact"), {.batch = 0}), Error);
  EXPECT_THROW(ImageToImage(golden("zoo_realesrgan_compact"), {.batch = 1025}), Error);
}

}  // namespace
}  // namespace edgegan

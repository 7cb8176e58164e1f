// Image in, image out: runs an image-to-image or super-resolution generator on an
// 8-bit picture of any size, whole or in overlapping tiles whose seams are blended.
// `edgegan translate` and `edgegan upscale` are this class and a file loop.
//
//   auto model = edgegan::Model::load("esrgan_x4.egan");
//   edgegan::ImageToImage upscaler(model, {.memory_limit_bytes = 256 << 20});
//   edgegan::write_png("big.png", upscaler.run(edgegan::read_image("small.jpg")));  // edgegan/image_io.h
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"

namespace edgegan {

// How 8-bit pixels map to the model's values: value = (pixel / 255 - mean[c]) / std[c],
// per channel (a grey image uses channel 0). Default: pixel / 255, the range [0, 1].
struct PixelNormalisation {
  std::array<float, 3> mean{0.f, 0.f, 0.f};
  std::array<float, 3> std{1.f, 1.f, 1.f};
  // Pixel 0 becomes `lo`, pixel 255 becomes `hi` (e.g. -1, 1 for tanh generators).
  static PixelNormalisation range(float lo, float hi);
  // "0.5,0.5,0.5"-style mean and std (one value, or one per channel). Throws Error.
  static PixelNormalisation mean_std(const std::string& mean, const std::string& std);
  // "-1,1". Throws Error.
  static PixelNormalisation parse_range(const std::string& text);
  // The model's metadata entries "<side>_mean" and "<side>_std" (side: "input" or
  // "output", written by `edgegan-convert --input-range/--mean/--std`), if present.
  static std::optional<PixelNormalisation> from_metadata(const Model& model, const std::string& side);
  std::string to_string() const;  // "[-1, 1]" (the values of pixels 0 and 255), or "mean 0.485,... std 0.229,..."
  bool operator==(const PixelNormalisation&) const = default;
};

// What becomes of a picture's alpha plane (RGBA, grey + alpha).
enum class AlphaMode {
  kLanczos,  // resized on its own, Lanczos (a = 3), straight to the output size
  // Run through the model too, as Real-ESRGAN's inference script does: the plane
  // replicated to the model's input channels, the output's luma (0.299 R + 0.587 G +
  // 0.114 B; a grey output as it is) the new alpha. Costs a second pass of the model.
  kModel,
};

// How tiles treat layers that take statistics of the whole map (instance and group
// norms, squeeze-and-excitation's mean over H and W).
enum class TileStatistics {
  // Gathered over the whole picture, tile by tile, in one extra pass over the tiles per
  // layer that depends on another's (a CycleGAN ResNet generator: one per norm), then
  // used by every tile: the tiled picture equals the untiled one as for a model without
  // such layers. CPU backend only; on the others, kPerTile.
  kWholePicture,
  kPerTile,  // each tile its own (faster, one pass; differs from the untiled picture everywhere)
};

struct ImageToImageOptions {
  int threads = 0;                   // 0: all cores
  // Where the tiles run. The constructor throws Error, with the reason, for a backend
  // that cannot run here. On CUDA, a plan's session_bytes are the session's device
  // memory (arena and weights), counted with the host's buffers against
  // memory_limit_bytes; the CUDA runtime's own memory (its context) is not counted.
  Backend backend = Backend::kCpu;
  Precision precision = Precision::kFp32;  // SessionOptions::precision of the tiles' sessions
  int device = 0;                    // Vulkan: the physical device's index
  int64_t tile = 0;                  // tile side in input pixels; 0: the whole image (unless memory_limit_bytes)
  int64_t overlap = 16;              // input pixels neighbouring tiles share, blended in their middle half
  // Tiles run through the model together, as one batch: tiles of one picture, or of the
  // pictures given to run_batch (a video's frames). The plan counts the memory of
  // `batch` pictures at once. At most 1024.
  int batch = 1;
  uint64_t memory_limit_bytes = 0;   // > 0: the largest tile whose plan fits this (tile is then a ceiling, if set)
  // > 0: after the model's own scale, a Lanczos (a = 3) resize to int(side x outscale)
  // rounded down, at least 1; 0: the model's scale as it is. At most 64.
  double outscale = 0;
  // Overrides of the model's recorded normalisations (see from_metadata; without
  // either, the output's known value range, else [0, 1], is used for both).
  std::optional<PixelNormalisation> input = std::nullopt, output = std::nullopt;
  AlphaMode alpha = AlphaMode::kLanczos;
  TileStatistics tile_statistics = TileStatistics::kWholePicture;
};

// How an image of a given size is cut and what running it takes.
struct TilePlan {
  int64_t width = 0, height = 0;             // the image
  int64_t tile_width = 0, tile_height = 0;   // input pixels per tile (every tile is this size)
  int64_t tiles_x = 1, tiles_y = 1;
  int64_t overlap = 0;                       // input pixels, after rounding to the alignment
  uint64_t session_bytes = 0;                // the tile's Session: arena + weight copies (MemoryReport)
  uint64_t arena_bytes = 0;                  // of which the activation arena
  int batch = 1;                             // tiles per model run (ImageToImageOptions::batch)
  uint64_t buffer_bytes = 0;                 // images, tile tensors and the blending bands, for `batch` pictures
  uint64_t mapped_bytes = 0;                 // the model file, mapped
  // Passes over the tiles before the one that blends, gathering whole-picture statistics
  // (TileStatistics::kWholePicture on a tiled model with such layers); 0: none. Their
  // buffers (a copy of one layer's input per tile of a batch, each picture's sums) are in
  // buffer_bytes.
  int statistics_passes = 0;
  uint64_t total_bytes() const { return session_bytes + buffer_bytes + mapped_bytes; }
  int64_t tiles() const { return tiles_x * tiles_y; }
};

// Holds the model (shared, read-only) and the tile Session of its last run, which the
// next run of the same tile size reuses: pictures or video frames of one size in a
// row make the Session (its arena, its prepared weights) once. Runs may come from
// several threads at once; each then works in a Session of its own.
class ImageToImage {
 public:
  // Throws Error when the model is not image-to-image: one float NHWC input and one
  // NHWC output of 1 or 3 channels, the output an integer multiple of the input's
  // size at every size it runs at.
  ImageToImage(std::shared_ptr<const Model> model, const ImageToImageOptions& options = {});

  int input_channels() const { return input_channels_; }
  int output_channels() const { return output_channels_; }
  int64_t scale() const { return scale_; }          // output pixels per input pixel (1: translation)
  int64_t alignment() const { return alignment_; }  // tiles are multiples of this (the model's total stride)
  const PixelNormalisation& input_normalisation() const { return input_norm_; }
  const PixelNormalisation& output_normalisation() const { return output_norm_; }
  std::string normalisation_source() const { return norm_source_; }  // "model metadata", "option", ...
  // The first op whose output depends on the whole image in a way tiles do not
  // reproduce, as "GroupNorm 'name'"; "" when none. With TileStatistics::kWholePicture on
  // the CPU that is attention (a MatMul of run-time tensors) or a Reduce over only H or
  // W; norms and squeeze-and-excitation are gathered over the whole picture. Otherwise
  // also a GroupNorm/InstanceNorm or a Reduce over the map, each tile then normalised
  // on its own. A tiled result of such a model differs from the whole-image one
  // everywhere, not only at the seams.
  const std::string& whole_image_op() const { return whole_image_op_; }

  // The tiles for a width x height image (Error if no tile fits memory_limit_bytes).
  TilePlan plan(int64_t width, int64_t height) const;
  // The same under another memory limit (0: none), e.g. what a process has left.
  TilePlan plan(int64_t width, int64_t height, uint64_t memory_limit_bytes) const;
  // The size run() returns for a width x height picture (model scale, then outscale).
  std::pair<int64_t, int64_t> output_size(int64_t width, int64_t height) const;
  // Runs `image`: grey, grey + alpha, RGB or RGBA. Grey is widened for an RGB model (a
  // colour picture for a grey model is an Error); the model's output comes back in its
  // own channels, with the input's alpha plane appended: Lanczos-resized to the output
  // size, or through the model (options.alpha). `progress(done, total)` after each tile
  // (of every pass: tiles() x (1 + statistics_passes)).
  Image run(const Image& image, const std::function<void(int64_t, int64_t)>& progress = {}) const;
  // ... as `plan` (made for this image's size) cuts it, so a caller that showed the plan
  // does not have it worked out twice.
  Image run(const Image& image, const TilePlan& plan, const std::function<void(int64_t, int64_t)>& progress = {}) const;
  // Pictures of one size and channel count (a video's frames) as one job: the same tile
  // of up to options.batch pictures goes through the model in one run. Each result equals
  // run() of that picture alone. `progress(done, total)` counts tiles of all pictures.
  std::vector<Image> run_batch(const std::vector<Image>& images, const std::function<void(int64_t, int64_t)>& progress = {}) const;
  std::vector<Image> run_batch(const std::vector<Image>& images, const TilePlan& plan,
                               const std::function<void(int64_t, int64_t)>& progress = {}) const;
  // Frees the tile Session kept from the last run (the next run makes a new one): for a
  // caller about to measure what the process holds.
  void release_session() const;

 private:
  class SessionCache;
  TilePlan plan_for_tile(int64_t width, int64_t height, int64_t tile) const;
  // The model over `images` (input_channels() channels each, all of the plan's size) as
  // `plan` cuts them.
  std::vector<Image> run_model(const std::vector<Image>& images, const TilePlan& plan, const std::function<void(int64_t, int64_t)>& progress) const;

  std::shared_ptr<const Model> model_;
  ImageToImageOptions options_;
  int input_channels_ = 0, output_channels_ = 0;
  int64_t scale_ = 1, alignment_ = 1;
  PixelNormalisation input_norm_, output_norm_;
  std::string norm_source_;
  std::string whole_image_op_;
  // Ops whose whole-map statistics tiled runs gather (empty unless kWholePicture on the
  // CPU), in op order, and each one's pass: 1 + the most passes among those upstream.
  std::vector<int> statistic_ops_, statistic_pass_;
  int statistics_passes_ = 0;
  std::shared_ptr<SessionCache> sessions_;  // shared by copies of this object
};

}  // namespace edgegan

// ImageToImage: an 8-bit image through a fully convolutional generator, whole or in
// tiles. Every tile has the same size, so one re-shaped model and one Session serve
// the whole image; tile origins are multiples of the model's total stride, so a
// tile computes exactly what the whole-image run computes wherever its receptive
// field stays inside the tile. Neighbours overlap; across the middle half of each
// overlap their outputs are cross-faded (linear weights summing to one), and the
// outer quarters, where a tile's own border is closest, take the neighbour's pixels.
// Output rows are finished band by band, so the float accumulator holds one tile row
// of the output, never the whole image. The same tile of several pictures (or several
// tiles of one row) run as one batch; the Session is kept for the next run.
#include "edgegan/image_to_image.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>

#include "edgegan/image.h"
#include "edgegan/report.h"
#include "engine/backend/backend.h"
#include "engine/image/tile_statistics.h"
#include "engine/session_core.h"
#include "engine/session_plan.h"

namespace edgegan {
namespace {

constexpr int64_t kMaxAlignment = 1024;

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

std::string mib(uint64_t bytes) {
  std::ostringstream s;
  s.precision(bytes < (uint64_t{1} << 20) ? 2 : 1);
  s << std::fixed << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return s.str();
}

std::vector<float> parse_floats(const std::string& text, const char* what) {
  std::vector<float> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    float v = 0.f;
    try {
      v = std::stof(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(v)) throw Error(std::string(what) + " '" + text + "' is not a list of numbers");
    values.push_back(v);
  }
  if (values.empty()) throw Error(std::string(what) + " is empty");
  return values;
}

std::array<float, 3> per_channel(const std::vector<float>& v, const std::string& text, const char* what) {
  if (v.size() == 1) return {v[0], v[0], v[0]};
  if (v.size() == 3) return {v[0], v[1], v[2]};
  throw Error(std::string(what) + " '" + text + "' must hold 1 or 3 values");
}

// The one float NHWC input and the NHWC output of an image-to-image model.
const InputInfo& image_input(const Model& m) {
  if (m.inputs().size() != 1 || m.inputs()[0].layout != Layout::kNHWC || m.inputs()[0].dtype != DType::kFloat32)
    throw Error("the model is not image-to-image: it must have one input, a float image (it has " + std::to_string(m.inputs().size()) +
                " inputs" + (m.noise_size() > 0 ? ", a noise vector among them" : "") + ")");
  return m.inputs()[0];
}

// Origins along one axis of `length` (a multiple of the alignment) for tiles of `tile`
// stepping by tile - overlap; the last tile ends at the far edge.
std::vector<int64_t> tile_origins(int64_t length, int64_t tile, int64_t overlap) {
  std::vector<int64_t> origins{0};
  while (origins.back() + tile < length) origins.push_back(std::min(origins.back() + tile - overlap, length - tile));
  return origins;
}

// Blending weights of tile `i` along one axis, per output pixel of the tile: a ramp
// across the middle half of the overlap with each neighbour.
std::vector<float> axis_weights(const std::vector<int64_t>& origins, size_t i, int64_t tile, int64_t scale) {
  const int64_t n = tile * scale;
  std::vector<float> w(static_cast<size_t>(n), 1.f);
  auto ramp = [](double distance, double overlap) {  // distance from the tile's edge, in output pixels
    return static_cast<float>(std::clamp((distance - overlap / 4) / (overlap / 2), 0.0, 1.0));
  };
  if (i > 0) {
    const double overlap = static_cast<double>((origins[i - 1] + tile - origins[i]) * scale);
    if (overlap > 0)
      for (int64_t u = 0; u < n; ++u) w[static_cast<size_t>(u)] *= ramp(static_cast<double>(u) + 0.5, overlap);
  }
  if (i + 1 < origins.size()) {
    const double overlap = static_cast<double>((origins[i] + tile - origins[i + 1]) * scale);
    if (overlap > 0)
      for (int64_t u = 0; u < n; ++u) w[static_cast<size_t>(u)] *= ramp(static_cast<double>(n - u) - 0.5, overlap);
  }
  return w;
}

// Sum of every tile's weight at each output pixel of one axis.
std::vector<float> axis_norms(const std::vector<int64_t>& origins, const std::vector<std::vector<float>>& weights, int64_t length, int64_t scale) {
  std::vector<float> sum(static_cast<size_t>(length * scale), 0.f);
  for (size_t i = 0; i < origins.size(); ++i)
    for (size_t u = 0; u < weights[i].size(); ++u) sum[static_cast<size_t>(origins[i] * scale) + u] += weights[i][u];
  for (float s : sum)
    if (!(s > 0.f)) throw Error("internal: a tiled output pixel has no weight");
  return sum;
}

// Source row/column of padded position p: mirrored past the far edge (p < 2 * length - 1),
// else the edge itself.
int64_t source_index(int64_t p, int64_t length) {
  if (p < length) return p;
  const int64_t mirrored = 2 * (length - 1) - p;
  return mirrored >= 0 ? mirrored : 0;
}

// A model value as an 8-bit level: clamped (NaN to 0), then rounded half away from zero
// as std::lround does, here exactly in double (a float + 0.5 can round up past a tie),
// without lround's call per value.
inline uint8_t to_level(float pixel) {
  const float clamped = std::clamp(std::isnan(pixel) ? 0.f : pixel, 0.f, 255.f);
  return static_cast<uint8_t>(static_cast<int>(static_cast<double>(clamped) + 0.5));
}

// A one-plane image with its plane copied into `channels` channels (1 or 3).
Image replicated(const Image& plane, int channels) {
  Image out;
  out.width = plane.width;
  out.height = plane.height;
  out.channels = channels;
  out.pixels.resize(plane.pixels.size() * static_cast<size_t>(channels));
  for (size_t i = 0; i < plane.pixels.size(); ++i)
    for (int c = 0; c < channels; ++c) out.pixels[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] = plane.pixels[i];
  return out;
}

// The model's output for an alpha plane as one plane: RGB to luma with the weights of
// OpenCV's BGR2GRAY, which Real-ESRGAN's script applies (from 8-bit levels here, so
// within one level of its float computation); grey as it is.
Image luma(const Image& image) {
  if (image.channels == 1) return image;
  Image out;
  out.width = image.width;
  out.height = image.height;
  out.channels = 1;
  out.pixels.resize(static_cast<size_t>(image.width * image.height));
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const uint8_t* px = image.pixels.data() + i * 3;
    out.pixels[i] = to_level(0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2]);
  }
  return out;
}

}  // namespace

// One idle tile Session: a run takes it when its tile size and batch match (else a new
// one is made, the idle one freed first so that two never coexist), and leaves its own
// behind when done.
class ImageToImage::SessionCache {
 public:
  struct Entry {
    int64_t tile_height = 0, tile_width = 0;
    int batch = 0;
    std::unique_ptr<SessionCore> session;
  };
  Entry take(int64_t tile_height, int64_t tile_width, int batch) {
    std::lock_guard lock(mutex_);
    Entry e = std::move(idle_);
    idle_ = {};
    if (e.session && (e.tile_height != tile_height || e.tile_width != tile_width || e.batch != batch)) e = {};
    return e;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    idle_ = {};
  }
  void give_back(Entry e) {
    std::lock_guard lock(mutex_);
    idle_ = std::move(e);
  }

 private:
  std::mutex mutex_;
  Entry idle_;
};

PixelNormalisation PixelNormalisation::range(float lo, float hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi != lo)) throw Error("a value range needs two different finite ends");
  PixelNormalisation n;
  const float span = hi - lo;
  n.mean = {-lo / span, -lo / span, -lo / span};
  n.std = {1.f / span, 1.f / span, 1.f / span};
  return n;
}

PixelNormalisation PixelNormalisation::parse_range(const std::string& text) {
  const std::vector<float> v = parse_floats(text, "value range");
  if (v.size() != 2) throw Error("value range '" + text + "' must be LO,HI");
  return range(v[0], v[1]);
}

PixelNormalisation PixelNormalisation::mean_std(const std::string& mean, const std::string& std) {
  PixelNormalisation n;
  n.mean = per_channel(parse_floats(mean, "mean"), mean, "mean");
  n.std = per_channel(parse_floats(std, "std"), std, "std");
  for (float s : n.std)
    if (!(s != 0.f)) throw Error("std '" + std + "' holds a zero");
  return n;
}

std::optional<PixelNormalisation> PixelNormalisation::from_metadata(const Model& model, const std::string& side) {
  std::string mean, std;
  for (const auto& [k, v] : model.metadata()) {
    if (k == side + "_mean") mean = v;
    if (k == side + "_std") std = v;
  }
  if (mean.empty() && std.empty()) return std::nullopt;
  if (mean.empty() || std.empty()) throw Error("the model's metadata has only one of " + side + "_mean and " + side + "_std");
  try {
    return mean_std(mean, std);
  } catch (const Error& e) {
    throw Error(std::string("the model's metadata ") + side + " normalisation: " + e.what());
  }
}

std::string PixelNormalisation::to_string() const {
  std::ostringstream s;
  if (mean[0] == mean[1] && mean[1] == mean[2] && std[0] == std[1] && std[1] == std[2]) {
    s << "[" << -mean[0] / std[0] + 0.f << ", " << (1.f - mean[0]) / std[0] + 0.f << "]";  // + 0: no "-0"
  } else {
    s << "mean " << mean[0] << "," << mean[1] << "," << mean[2] << " std " << std[0] << "," << std[1] << "," << std[2];
  }
  return s.str();
}

ImageToImage::ImageToImage(std::shared_ptr<const Model> model, const ImageToImageOptions& options)
    : model_(std::move(model)), options_(options), sessions_(std::make_shared<SessionCache>()) {
  if (!model_) throw Error("ImageToImage: no model");
  // A backend that cannot run here (no CUDA device, or a build without CUDA) is refused
  // now, with its reason, rather than at the first picture's plan.
  check_precision(compute_backend(options_.backend, "image-to-image", options_.device), options_.precision, /*planning=*/false, "image-to-image");
  if (options_.tile < 0 || options_.overlap < 0) throw Error("tile and overlap must not be negative");
  if (options_.batch < 1 || options_.batch > 1024) throw Error("batch must be 1 to 1024");
  if (!(options_.outscale >= 0 && options_.outscale <= 64)) throw Error("outscale must be above 0 and at most 64 (0: the model's own scale)");
  const InputInfo& in = image_input(*model_);
  input_channels_ = static_cast<int>(in.dims[3]);
  if (input_channels_ != 1 && input_channels_ != 3)
    throw Error("the model is not image-to-image: its input has " + std::to_string(input_channels_) + " channels, an image 1 or 3");
  if (model_->outputs().empty() || model_->outputs()[0].layout != Layout::kNHWC) throw Error("the model is not image-to-image: its output is not an image");
  const OutputInfo& out = model_->outputs()[0];
  output_channels_ = static_cast<int>(out.dims[3]);
  if (output_channels_ != 1 && output_channels_ != 3)
    throw Error("the model is not image-to-image: its output has " + std::to_string(output_channels_) + " channels, an image 1 or 3");

  // The model's total stride: the smallest power of two at whose multiples the output
  // is a whole multiple of the input, at two non-square sizes.
  std::string why;
  for (int64_t a = 1; a <= kMaxAlignment; a *= 2) {
    const int64_t k = std::max<int64_t>(2, (64 + a - 1) / a);
    int64_t scale = 0;
    bool ok = true;
    for (auto [h, w] : {std::pair{a * k, a * (k + 1)}, std::pair{a * (k + 1), a * k}}) {
      try {
        const auto m = Model::at_input_size(model_, h, w);
        const auto& od = m->outputs()[0].dims;
        const int64_t sh = od[1] / h, sw = od[2] / w;
        if (sh < 1 || sh != sw || od[1] != sh * h || od[2] != sw * w || (scale && sh != scale)) {
          ok = false;
          why = "at " + std::to_string(h) + "x" + std::to_string(w) + " the output is " + std::to_string(od[1]) + "x" + std::to_string(od[2]);
          break;
        }
        scale = sh;
      } catch (const Error& e) {
        ok = false;
        why = e.what();
        break;
      }
    }
    if (ok) {
      alignment_ = a;
      scale_ = scale;
      break;
    }
    if (a == kMaxAlignment) throw Error("the model is not image-to-image: its output is not a whole multiple of its input (" + why + ")");
  }

  // Ops whose result at a pixel depends on the whole map: norms, reductions over H or W
  // (squeeze-and-excitation), products of run-time tensors (attention over positions).
  // Tiles gather the first two kinds' statistics over the whole picture (on the CPU,
  // unless told not to); each such op's pass follows every such op upstream of it.
  const bool gather = options_.tile_statistics == TileStatistics::kWholePicture && options_.backend == Backend::kCpu;
  const Model::Impl& m = model_->impl();
  const auto& schema_ops = *m.root->ops();
  std::vector<int> tensor_pass(m.tensors.size(), 0);  // the latest pass any statistic upstream of the tensor needs
  const std::vector<OpInfo> infos = model_->ops();
  for (size_t i = 0; i < infos.size(); ++i) {
    const OpInfo& op = infos[i];
    const schema::Op& schema_op = *schema_ops.Get(static_cast<uint32_t>(i));
    const OpDef& def = op_def(schema_op);
    int pass = 0;
    for (int t : def.inputs(schema_op)) pass = std::max(pass, tensor_pass[static_cast<size_t>(t)]);
    const bool map_reduce = op.kind == "Reduce" && !op.input_dims.empty() && op.input_dims[0].size() == 4 && !op.output_dims.empty() &&
                            (op.input_dims[0][1] != op.output_dims[0][1] || op.input_dims[0][2] != op.output_dims[0][2]);
    const bool statistic = (op.kind == "GroupNorm" || map_reduce) && statistic_layer(m, static_cast<int>(i)).has_value();
    if (gather && statistic) {
      statistic_ops_.push_back(static_cast<int>(i));
      statistic_pass_.push_back(++pass);
      statistics_passes_ = std::max(statistics_passes_, pass);
    } else if ((op.kind == "GroupNorm" || op.kind == "MatMul" || map_reduce) && whole_image_op_.empty()) {
      whole_image_op_ = op.kind + " '" + op.name + "'";
    }
    tensor_pass[static_cast<size_t>(def.output(schema_op))] = pass;
  }

  // Normalisations: the caller's, else the model's metadata, else the output's value range.
  const float vmin = out.value_min, vmax = out.value_max;
  const bool known_range = std::isfinite(vmin) && std::isfinite(vmax) && vmax > vmin;
  const auto meta_in = PixelNormalisation::from_metadata(*model_, "input");
  const auto meta_out = PixelNormalisation::from_metadata(*model_, "output");
  const PixelNormalisation fallback = known_range ? PixelNormalisation::range(vmin, vmax) : PixelNormalisation::range(0.f, 1.f);
  input_norm_ = options_.input ? *options_.input : meta_in ? *meta_in : fallback;
  output_norm_ = options_.output ? *options_.output : meta_out ? *meta_out : known_range ? fallback : input_norm_;
  norm_source_ = options_.input || options_.output ? "given"
                 : meta_in || meta_out           ? "model metadata"
                 : known_range                   ? "the output's value range"
                                                 : "default [0, 1] (the model records none)";
}

TilePlan ImageToImage::plan_for_tile(int64_t width, int64_t height, int64_t tile) const {
  TilePlan p;
  p.width = width;
  p.height = height;
  const int64_t a = alignment_;
  const int64_t hp = round_up(height, a), wp = round_up(width, a);
  p.overlap = round_up(options_.overlap, a);
  p.tile_height = std::min(tile, hp);
  p.tile_width = std::min(tile, wp);
  for (auto [t, length] : {std::pair{p.tile_height, hp}, std::pair{p.tile_width, wp}})
    if (t < length && t < 2 * p.overlap + a)
      throw Error("a tile of " + std::to_string(t) + " pixels is too small for an overlap of " + std::to_string(p.overlap) +
                  " (tiles must be at least 2 x overlap + " + std::to_string(a) + ")");
  p.tiles_y = static_cast<int64_t>(tile_origins(hp, p.tile_height, p.overlap).size());
  p.tiles_x = static_cast<int64_t>(tile_origins(wp, p.tile_width, p.overlap).size());
  p.batch = options_.batch;
  SessionOptions so;
  so.threads = options_.threads;
  so.backend = options_.backend;
  so.precision = options_.precision;
  so.device = options_.device;
  so.batch = p.batch;
  const std::shared_ptr<const Model> tile_model = Model::at_input_size(model_, p.tile_height, p.tile_width);
  const MemoryReport r = memory_report(tile_model, so);
  p.session_bytes = r.totals.session_bytes;
  p.arena_bytes = r.totals.arena_bytes;
  p.mapped_bytes = r.file_bytes;
  const uint64_t s = static_cast<uint64_t>(scale_), cin = static_cast<uint64_t>(input_channels_), cout = static_cast<uint64_t>(output_channels_);
  const uint64_t th = static_cast<uint64_t>(p.tile_height), tw = static_cast<uint64_t>(p.tile_width);
  const uint64_t b = static_cast<uint64_t>(p.batch);
  p.buffer_bytes = b * static_cast<uint64_t>(width * height) * cin                      // the input images
                   + b * static_cast<uint64_t>(width * height) * s * s * cout             // the output images
                   + b * (th * tw * cin * 4 + th * tw * s * s * cout * 4)                // the batch's input and output tensors
                   + b * s * th * s * static_cast<uint64_t>(wp) * cout * 4               // the blending bands
                   + (static_cast<uint64_t>(hp + wp) * s) * 4 * 2;                       // per-axis weights and sums
  if (p.tiles() > 1 && !statistic_ops_.empty()) {
    // A copy of one layer's input for the batch, and per picture and layer its sums
    // (3 doubles per value, kept for the blending pass) and its frozen values.
    p.statistics_passes = statistics_passes_;
    uint64_t largest_input = 0, values = 0;
    for (int op : statistic_ops_) {
      const StatisticLayer layer = *statistic_layer(tile_model->impl(), op);
      largest_input = std::max(largest_input, static_cast<uint64_t>(tile_model->impl().tensors[static_cast<size_t>(layer.input)].per_sample));
      values += static_cast<uint64_t>(layer.floats_per_sample());
    }
    p.buffer_bytes += b * largest_input * 4 + b * values * (3 * 8 + 4) + b * values * 4;
  }
  return p;
}

TilePlan ImageToImage::plan(int64_t width, int64_t height) const { return plan(width, height, options_.memory_limit_bytes); }

TilePlan ImageToImage::plan(int64_t width, int64_t height, uint64_t memory_limit_bytes) const {
  if (width < 1 || height < 1) throw Error("the image has no pixels");
  const int64_t a = alignment_;
  const int64_t whole = std::max(round_up(height, a), round_up(width, a));
  int64_t largest = whole;
  if (options_.tile > 0) largest = std::min(whole, std::max(a, options_.tile / a * a));
  if (memory_limit_bytes == 0) return plan_for_tile(width, height, largest);
  // The largest tile whose plan fits: memory grows with the tile, so bisect over its multiples of a.
  const int64_t smallest = std::min(largest, 2 * round_up(options_.overlap, a) + a);
  auto fits = [&](int64_t tile, TilePlan* out) {
    const TilePlan p = plan_for_tile(width, height, tile);
    if (out) *out = p;
    return p.total_bytes() <= memory_limit_bytes;
  };
  TilePlan best;
  if (!fits(smallest, &best))
    throw Error("even " + std::to_string(best.tile_width) + "x" + std::to_string(best.tile_height) + " tiles need " + mib(best.total_bytes()) +
                ", more than the memory limit of " + mib(memory_limit_bytes));
  int64_t lo = smallest / a, hi = largest / a;  // lo fits
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (fits(mid * a, nullptr)) lo = mid;
    else hi = mid - 1;
  }
  return plan_for_tile(width, height, lo * a);
}

Image ImageToImage::run(const Image& image, const std::function<void(int64_t, int64_t)>& progress) const {
  if (image.width < 1 || image.height < 1) throw Error("the image has no pixels");
  return run(image, plan(image.width, image.height), progress);
}

std::pair<int64_t, int64_t> ImageToImage::output_size(int64_t width, int64_t height) const {
  if (!(options_.outscale > 0)) return {width * scale_, height * scale_};
  // Each side x outscale, rounded down (the convention upscaler users expect); the
  // epsilon keeps 0.3 x 10 at 3.
  auto side = [&](int64_t n) { return std::max<int64_t>(1, static_cast<int64_t>(std::floor(static_cast<double>(n) * options_.outscale + 1e-9))); };
  return {side(width), side(height)};
}

Image ImageToImage::run(const Image& image, const TilePlan& p, const std::function<void(int64_t, int64_t)>& progress) const {
  return std::move(run_batch(std::vector<Image>{image}, p, progress)[0]);
}

void ImageToImage::release_session() const { sessions_->clear(); }

std::vector<Image> ImageToImage::run_batch(const std::vector<Image>& images, const std::function<void(int64_t, int64_t)>& progress) const {
  if (images.empty()) return {};
  if (images[0].width < 1 || images[0].height < 1) throw Error("the image has no pixels");
  return run_batch(images, plan(images[0].width, images[0].height), progress);
}

std::vector<Image> ImageToImage::run_batch(const std::vector<Image>& images, const TilePlan& p,
                                           const std::function<void(int64_t, int64_t)>& progress) const {
  // The model sees the colour planes (grey widened to RGB for an RGB model; colour is
  // never turned grey). Alpha is resized on its own (Lanczos, straight to the output
  // size) or, with AlphaMode::kModel, run as extra pictures in the same job (so the
  // tiles and progress cover both), and put back, so RGBA stays RGBA.
  std::vector<Image> colours;
  colours.reserve(images.size());
  for (const Image& image : images) {
    if (image.channels < 1 || image.channels > 4) throw Error("the image has " + std::to_string(image.channels) + " channels, not 1 to 4");
    if (image.pixels.size() != static_cast<size_t>(image.width * image.height * image.channels)) throw Error("the image's size and its pixels disagree");
    if (image.width != images[0].width || image.height != images[0].height || image.channels != images[0].channels)
      throw Error("pictures run together must have one size and channel count: " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                  "x" + std::to_string(image.channels) + " after " + std::to_string(images[0].width) + "x" + std::to_string(images[0].height) + "x" +
                  std::to_string(images[0].channels));
    Image colour = colour_planes(image);
    if (colour.channels == 3 && input_channels_ == 1) throw Error("it is a colour image; the model takes grey images");
    if (colour.channels == 1 && input_channels_ == 3) colour = replicated(colour, 3);
    colours.push_back(std::move(colour));
  }
  const bool has_alpha = images[0].channels == 2 || images[0].channels == 4;
  const bool alpha_through_model = has_alpha && options_.alpha == AlphaMode::kModel;
  if (alpha_through_model)
    for (const Image& image : images) colours.push_back(replicated(alpha_plane(image), input_channels_));
  std::vector<Image> results = run_model(colours, p, progress);
  colours.clear();
  for (size_t n = 0; n < images.size(); ++n) {
    const Image& image = images[n];
    const auto [width, height] = output_size(image.width, image.height);
    if (width != results[n].width || height != results[n].height) results[n] = resize_lanczos(results[n], width, height);
    if (!has_alpha) continue;
    Image alpha;
    if (alpha_through_model) {
      alpha = luma(results[images.size() + n]);
      if (width != alpha.width || height != alpha.height) alpha = resize_lanczos(alpha, width, height);
    } else {
      alpha = resize_lanczos(alpha_plane(image), width, height);
    }
    results[n] = with_alpha(results[n], alpha);
  }
  results.resize(images.size());
  return results;
}

std::vector<Image> ImageToImage::run_model(const std::vector<Image>& images, const TilePlan& p,
                                           const std::function<void(int64_t, int64_t)>& progress) const {
  if (images.empty()) return {};
  const int64_t width = images[0].width, height = images[0].height;
  if (p.width != width || p.height != height)
    throw Error("the tile plan is for a " + std::to_string(p.width) + "x" + std::to_string(p.height) + " image, not " + std::to_string(width) + "x" +
                std::to_string(height));
  const int64_t s = scale_, a = alignment_, th = p.tile_height, tw = p.tile_width;
  const int64_t hp = round_up(height, a), wp = round_up(width, a);
  const int cin = input_channels_, cout = output_channels_;
  const std::vector<int64_t> ys = tile_origins(hp, th, p.overlap), xs = tile_origins(wp, tw, p.overlap);
  std::vector<std::vector<float>> wy, wx;
  for (size_t i = 0; i < ys.size(); ++i) wy.push_back(axis_weights(ys, i, th, s));
  for (size_t j = 0; j < xs.size(); ++j) wx.push_back(axis_weights(xs, j, tw, s));
  const std::vector<float> ny = axis_norms(ys, wy, hp, s), nx = axis_norms(xs, wx, wp, s);

  // A tile row's work: every picture's tile in every column, cut into runs of `batch`;
  // a short last run is filled up with copies of its last tile (their outputs dropped),
  // so one Session serves the whole job.
  const int64_t row_items = static_cast<int64_t>(images.size() * xs.size());
  const int batch = static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(p.batch, options_.batch), 1, row_items));
  SessionCache::Entry lease = sessions_->take(th, tw, batch);
  if (!lease.session) {
    SessionOptions so;
    so.threads = options_.threads;
    so.backend = options_.backend;
    so.precision = options_.precision;
    so.device = options_.device;
    so.batch = batch;
    lease = {th, tw, batch, std::make_unique<SessionCore>(Model::at_input_size(model_, th, tw), so)};
  }
  SessionCore& session = *lease.session;
  Tensor x;
  x.name = model_->inputs()[0].name;
  x.layout = Layout::kNHWC;
  x.shape = {batch, th, tw, cin};
  const int64_t tile_in = th * tw * cin, tile_out = th * s * tw * s * cout;
  x.f32.resize(static_cast<size_t>(batch * tile_in));
  // The batch of items first .. first + count - 1 of tile row i into x (item: picture
  // item / columns, column item % columns; slots past count repeat the last item).
  auto item_of = [&](int64_t first, int64_t count, int64_t k) { return first + std::min(k, count - 1); };
  auto fill = [&](size_t i, int64_t first, int64_t count) {
    for (int64_t k = 0; k < batch; ++k) {
      const int64_t item = item_of(first, count, k);
      const Image& image = images[static_cast<size_t>(item) / xs.size()];
      const int64_t x0 = xs[static_cast<size_t>(item) % xs.size()];
      for (int64_t r = 0; r < th; ++r) {
        const int64_t sy = source_index(ys[i] + r, height);
        for (int64_t c = 0; c < tw; ++c) {
          const int64_t sx = source_index(x0 + c, width);
          const uint8_t* px = image.pixels.data() + (sy * width + sx) * cin;
          float* dst = x.f32.data() + k * tile_in + (r * tw + c) * cin;
          for (int ch = 0; ch < cin; ++ch) dst[ch] = (static_cast<float>(px[ch]) / 255.f - input_norm_.mean[ch]) / input_norm_.std[ch];
        }
      }
    }
  };
  const bool whole = ys.size() == 1 && xs.size() == 1;
  // Whole-picture statistics, pass by pass: each runs every tile as far as its layers,
  // the layers of earlier passes frozen at the whole picture's values, and sums the
  // positions each tile owns; the blending pass below then runs with all of them frozen.
  const size_t n_layers = whole ? 0 : statistic_ops_.size();
  std::vector<std::vector<std::vector<float>>> frozen(n_layers);  // per layer and picture
  std::vector<float> slot_values;
  auto freeze_for_batch = [&](int64_t first, int64_t count) {
    for (size_t l = 0; l < n_layers; ++l) {
      if (frozen[l].empty()) continue;
      const size_t per_sample = frozen[l][0].size();
      slot_values.resize(static_cast<size_t>(batch) * per_sample);
      for (int64_t k = 0; k < batch; ++k) {
        const std::vector<float>& v = frozen[l][static_cast<size_t>(item_of(first, count, k)) / xs.size()];
        std::copy(v.begin(), v.end(), slot_values.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(k) * per_sample));
      }
      session.freeze_statistics(statistic_ops_[l], slot_values);
    }
  };
  // Progress counts the tiles of every pass, the statistics' passes first.
  const int64_t total = p.tiles() * static_cast<int64_t>(images.size()) * (1 + (n_layers > 0 ? statistics_passes_ : 0));
  int64_t done = 0;
  if (n_layers > 0) {
    const Model::Impl& tile_model = session.m();
    const std::shared_ptr<const Model> whole_model = Model::at_input_size(model_, hp, wp);
    std::vector<StatisticLayer> layers;
    std::vector<std::vector<AxisShare>> rows(n_layers), columns(n_layers);
    for (size_t l = 0; l < n_layers; ++l) {
      layers.push_back(*statistic_layer(tile_model, statistic_ops_[l]));
      const std::vector<int64_t>& map_tile = tile_model.tensors[static_cast<size_t>(layers[l].input)].dims;
      const std::vector<int64_t>& map_whole = whole_model->impl().tensors[static_cast<size_t>(layers[l].input)].dims;
      rows[l] = map_shares(ys, th, hp, map_tile[1], map_whole[1]);
      columns[l] = map_shares(xs, tw, wp, map_tile[2], map_whole[2]);
    }
    Tensor observed;
    for (int pass = 1; pass <= statistics_passes_; ++pass) {
      std::vector<std::vector<StatisticSums>> sums(n_layers);  // this pass's layers, per picture
      size_t last = 0;
      for (size_t l = 0; l < n_layers; ++l)
        if (statistic_pass_[l] == pass) {
          sums[l].assign(images.size(), StatisticSums(layers[l]));
          last = static_cast<size_t>(statistic_ops_[l]);
        }
      for (size_t i = 0; i < ys.size(); ++i)
        for (int64_t first = 0; first < row_items; first += batch) {
          const int64_t count = std::min<int64_t>(batch, row_items - first);
          fill(i, first, count);
          freeze_for_batch(first, count);
          // Only as far as this pass's last layer (which runs: its input is read first).
          // A pass run again (fp16: a layer newly kept as fp32) starts again from op 0:
          // what the first try added is dropped.
          const std::vector<std::vector<StatisticSums>> before_run = sums;
          size_t next_op = 0;
          session.forward({x}, nullptr, "run", last + 1, [&](size_t op) {
            if (op < next_op) sums = before_run;
            next_op = op + 1;
            const auto it = std::find(statistic_ops_.begin(), statistic_ops_.end(), static_cast<int>(op));
            if (it == statistic_ops_.end() || statistic_pass_[static_cast<size_t>(it - statistic_ops_.begin())] != pass) return;
            const size_t l = static_cast<size_t>(it - statistic_ops_.begin());
            session.read_tensor(layers[l].input, observed);
            const int64_t per_sample = static_cast<int64_t>(observed.f32.size()) / batch, map_width = observed.shape[2];
            for (int64_t k = 0; k < count; ++k) {
              const size_t item = static_cast<size_t>(first + k), j = item % xs.size();
              const AxisShare& r = rows[l][i];
              const AxisShare& c = columns[l][j];
              sums[l][item / xs.size()].add(observed.f32.data() + k * per_sample, map_width, r.begin, r.end, c.begin, c.end);
            }
          });
          for (int64_t k = 0; k < count; ++k)
            if (progress) progress(++done, total);
        }
      for (size_t l = 0; l < n_layers; ++l)
        if (statistic_pass_[l] == pass)
          for (const StatisticSums& picture : sums[l]) frozen[l].push_back(picture.values());
    }
  }

  std::vector<Image> outs(images.size());
  for (Image& out : outs) {
    out.width = width * s;
    out.height = height * s;
    out.channels = cout;
    out.pixels.resize(static_cast<size_t>(out.width * out.height * cout));
  }
  // One tile per picture (the common case): its output goes straight to 8 bits. Else
  // each picture's tile row is blended in a float band.
  const int64_t band_w = wp * s, band_rows = th * s, band_size = whole ? 0 : band_rows * band_w * cout;
  std::vector<float> bands(static_cast<size_t>(band_size) * images.size(), 0.f);  // one per picture
  int64_t band_top = 0;  // output row of band row 0
  for (size_t i = 0; i < ys.size(); ++i) {
    for (int64_t first = 0; first < row_items; first += batch) {
      const int64_t count = std::min<int64_t>(batch, row_items - first);
      fill(i, first, count);
      freeze_for_batch(first, count);
      session.forward({x}, nullptr, "run");
      const std::vector<Tensor> y = session.outputs();
      for (int64_t k = 0; k < count; ++k) {
        const int64_t item = first + k;
        const size_t picture = static_cast<size_t>(item) / xs.size(), j = static_cast<size_t>(item) % xs.size();
        const float* v = y[0].f32.data() + k * tile_out;
        if (whole) {  // one tile: its weights are 1, so the blend is the value itself
          Image& out = outs[picture];
          for (int64_t r = 0; r < out.height; ++r) {
            const float* src = v + r * tw * s * cout;
            uint8_t* dst = out.pixels.data() + r * out.width * cout;
            for (int64_t c = 0; c < out.width; ++c)
              for (int ch = 0; ch < cout; ++ch)
                dst[c * cout + ch] = to_level((src[c * cout + ch] * output_norm_.std[ch] + output_norm_.mean[ch]) * 255.f);
          }
          if (progress) progress(++done, total);
          continue;
        }
        float* band = bands.data() + static_cast<int64_t>(picture) * band_size;
        for (int64_t r = 0; r < th * s; ++r) {
          const float row_w = wy[i][static_cast<size_t>(r)];
          if (row_w == 0.f) continue;
          float* acc = band + ((ys[i] * s + r - band_top) * band_w + xs[j] * s) * cout;
          const float* src = v + r * tw * s * cout;
          for (int64_t c = 0; c < tw * s; ++c) {
            const float w = row_w * wx[j][static_cast<size_t>(c)];
            for (int ch = 0; ch < cout; ++ch) acc[c * cout + ch] += w * src[c * cout + ch];
          }
        }
        if (progress) progress(++done, total);
      }
    }
    if (whole) break;
    // Rows above the next tile row's first are final: normalise, convert, drop from the bands.
    const int64_t next_top = i + 1 < ys.size() ? ys[i + 1] * s : hp * s;
    const int64_t kept = std::max<int64_t>(0, band_top + band_rows - next_top);
    for (size_t picture = 0; picture < images.size(); ++picture) {
      Image& out = outs[picture];
      float* band = bands.data() + static_cast<int64_t>(picture) * band_size;
      for (int64_t row = band_top; row < next_top; ++row) {
        if (row >= out.height) continue;
        const float* acc = band + (row - band_top) * band_w * cout;
        uint8_t* dst = out.pixels.data() + row * out.width * cout;
        for (int64_t c = 0; c < out.width; ++c) {
          const float norm = ny[static_cast<size_t>(row)] * nx[static_cast<size_t>(c)];
          for (int ch = 0; ch < cout; ++ch) {
            const float value = acc[c * cout + ch] / norm;
            dst[c * cout + ch] = to_level((value * output_norm_.std[ch] + output_norm_.mean[ch]) * 255.f);
          }
        }
      }
      if (kept > 0) std::memmove(band, band + (next_top - band_top) * band_w * cout, static_cast<size_t>(kept * band_w * cout) * sizeof(float));
      std::fill(band + kept * band_w * cout, band + band_size, 0.f);
    }
    band_top = next_top;
  }
  for (size_t l = 0; l < n_layers; ++l) session.freeze_statistics(statistic_ops_[l], {});  // the kept Session computes its own again
  sessions_->give_back(std::move(lease));
  return outs;
}

}  // namespace edgegan

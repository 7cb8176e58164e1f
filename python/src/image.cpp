// Pictures for Python: read_image, write_image and ImageToImage over NumPy uint8
// arrays of shape (H, W, C), C = 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA. The calls are
// the engine's own (edgegan/image.h, edgegan/image_to_image.h), the ones `edgegan
// translate`/`upscale` make, so a picture run here equals the CLI's file.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <filesystem>
#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "edgegan/image.h"
#include "edgegan/image_io.h"
#include "edgegan/image_to_image.h"

namespace edgegan_python {
namespace {

// A uint8 array (H, W) or (H, W, C) with C 1-4, any strides, copied into an Image.
edgegan::Image to_image(nb::handle value) {
  const AnyArray a = as_array(value, "'image'");
  if (a.dtype() != nb::dtype<uint8_t>())
    throw nb::value_error("'image' must be uint8 (8-bit pixels 0-255); convert with .clip(0, 255).astype(numpy.uint8)");
  if (a.ndim() != 2 && a.ndim() != 3) throw nb::value_error(("'image' must have shape (H, W) or (H, W, C), got " + std::to_string(a.ndim()) + " dimensions").c_str());
  edgegan::Image image;
  image.height = static_cast<int64_t>(a.shape(0));
  image.width = static_cast<int64_t>(a.shape(1));
  image.channels = a.ndim() == 3 ? static_cast<int>(a.shape(2)) : 1;
  if (image.channels < 1 || image.channels > 4)
    throw nb::value_error(("'image' must have 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA) channels, got " + std::to_string(image.channels)).c_str());
  if (image.width < 1 || image.height < 1) throw nb::value_error("'image' has no pixels");
  image.pixels.resize(static_cast<size_t>(image.width * image.height * image.channels));
  const auto* base = static_cast<const uint8_t*>(a.data());
  const int64_t sy = a.stride(0), sx = a.stride(1), sc = a.ndim() == 3 ? a.stride(2) : 0;  // in elements
  size_t at = 0;
  for (int64_t y = 0; y < image.height; ++y)
    for (int64_t x = 0; x < image.width; ++x)
      for (int64_t c = 0; c < image.channels; ++c) image.pixels[at++] = base[y * sy + x * sx + c * sc];
  return image;
}

// The Image's pixels become the array's (no copy), shape (H, W, C).
nb::object to_array(edgegan::Image&& image) {
  auto owned = std::make_unique<std::vector<uint8_t>>(std::move(image.pixels));
  const size_t shape[3] = {static_cast<size_t>(image.height), static_cast<size_t>(image.width), static_cast<size_t>(image.channels)};
  uint8_t* data = owned->data();
  nb::capsule owner(owned.get(), [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
  owned.release();  // the capsule deletes it with the array
  return nb::ndarray<nb::numpy, uint8_t>(data, 3, shape, owner).cast();
}

nb::object read_image(const std::filesystem::path& path) {
  edgegan::Image image;
  {
    nb::gil_scoped_release unlocked;
    image = edgegan::read_image(path.string());
  }
  return to_array(std::move(image));
}

void write_image(const std::filesystem::path& path, nb::handle image, std::optional<std::string> format, std::optional<int> quality) {
  edgegan::EncodeOptions options;
  if (format) {
    try {
      options.format = edgegan::parse_image_format(*format);
    } catch (const edgegan::Error& e) {
      throw nb::value_error(e.what());
    }
  } else if (!edgegan::image_format_of_path(path.filename().string(), &options.format)) {
    throw nb::value_error(("write_image: '" + path.string() + "' does not end in .png, .jpg, .jpeg or .webp; pass format=").c_str());
  }
  if (quality) {
    if (*quality < 1 || *quality > 100) throw nb::value_error(("quality must be 1 to 100, got " + std::to_string(*quality)).c_str());
    if (options.format == edgegan::ImageFormat::kPng) throw nb::value_error("quality applies to jpg and webp; png is always lossless");
    options.quality = *quality;
  }
  const edgegan::Image pixels = to_image(image);
  nb::gil_scoped_release unlocked;
  edgegan::write_image(path.string(), pixels, options);
}

// Python's ImageToImage. The lock keeps two Python threads from running it at once
// while the GIL is released: the runner keeps one tile Session between runs, and one
// run at a time keeps the memory a run plans for true.
struct PyImageToImage {
  std::shared_ptr<const edgegan::Model> model;
  std::unique_ptr<edgegan::ImageToImage> runner;
  edgegan::ImageToImageOptions options;
  std::mutex busy;
};

std::shared_ptr<const edgegan::Model> model_of(nb::handle model) {
  PyModel* loaded = nullptr;
  if (nb::try_cast(model, loaded) && loaded) return loaded->model;
  std::filesystem::path path;
  if (!nb::try_cast(model, path)) throw nb::value_error("'model' must be an edgegan.Model or the path of a .egan file");
  nb::gil_scoped_release unlocked;
  return edgegan::Model::load(path.string());
}

}  // namespace

void bind_image(nb::module_& m) {
  using namespace nb::literals;
  m.def("read_image", &read_image, "path"_a,
        "Reads a PNG, JPEG or WebP (recognised by its bytes) as a uint8 array (H, W, C) with the file's own channels: "
        "1 grey, 2 grey + alpha, 3 RGB, 4 RGBA. A damaged, truncated or oversized file raises edgegan.Error naming it.");
  m.def("write_image", &write_image, "path"_a, "image"_a.none(), nb::kw_only(), "format"_a = nb::none(), "quality"_a = nb::none(),
        "Writes a uint8 array (H, W) or (H, W, C), C 1-4, atomically. format: 'png', 'jpg' or 'webp' (default: the path's "
        "extension). quality: 1-100 for jpg and webp (default 95; webp at 100 is lossless). JPEG refuses transparent pixels.");

  nb::class_<PyImageToImage>(m, "ImageToImage",
                             "Runs an image-to-image or super-resolution model on 8-bit pictures of any size, whole or in blended tiles: "
                             "what `edgegan translate` and `edgegan upscale` do for each file.")
      .def(
          "__init__",
          [](PyImageToImage* self, nb::handle model, const std::string& backend, int threads, int64_t tile, int64_t overlap, int batch,
             std::optional<uint64_t> memory_limit, std::optional<double> outscale, const std::string& alpha, const std::string& tile_stats) {
            edgegan::ImageToImageOptions o;
            if (threads < 0) throw nb::value_error(("threads must be 0 (all cores) or more, got " + std::to_string(threads)).c_str());
            if (tile < 0) throw nb::value_error(("tile must be 0 (the whole picture) or more, got " + std::to_string(tile)).c_str());
            if (overlap < 0) throw nb::value_error(("overlap must be 0 or more, got " + std::to_string(overlap)).c_str());
            if (batch < 1 || batch > 1024) throw nb::value_error(("batch must be 1 to 1024, got " + std::to_string(batch)).c_str());
            if (backend != "cpu" && backend != "cuda" && backend != "vulkan")
              throw nb::value_error(("backend must be 'cpu', 'cuda' or 'vulkan', got '" + backend + "'").c_str());
            o.backend = edgegan::backend_from_string(backend);
            if (outscale && !(*outscale > 0 && *outscale <= 64)) throw nb::value_error("outscale must be above 0 and at most 64");
            if (alpha == "model") o.alpha = edgegan::AlphaMode::kModel;
            else if (alpha != "lanczos") throw nb::value_error(("alpha must be 'lanczos' or 'model', got '" + alpha + "'").c_str());
            if (tile_stats == "approx") o.tile_statistics = edgegan::TileStatistics::kPerTile;
            else if (tile_stats != "exact") throw nb::value_error(("tile_stats must be 'exact' or 'approx', got '" + tile_stats + "'").c_str());
            o.threads = threads;
            o.tile = tile;
            o.overlap = overlap;
            o.batch = batch;
            if (memory_limit) o.memory_limit_bytes = *memory_limit;
            if (outscale) o.outscale = *outscale;
            std::shared_ptr<const edgegan::Model> loaded = model_of(model);
            std::unique_ptr<edgegan::ImageToImage> runner;
            {
              nb::gil_scoped_release unlocked;
              runner = std::make_unique<edgegan::ImageToImage>(loaded, o);
            }
            new (self) PyImageToImage{std::move(loaded), std::move(runner), o, {}};
          },
          "model"_a, nb::kw_only(), "backend"_a = "cpu", "threads"_a = 0, "tile"_a = 0, "overlap"_a = 16, "batch"_a = 1, "memory_limit"_a = nb::none(),
          "outscale"_a = nb::none(), "alpha"_a = "lanczos", "tile_stats"_a = "exact",
          "model: an edgegan.Model or a .egan path. backend: 'cpu', 'cuda' or 'vulkan' (where it cannot run, an edgegan.Error with its reason). threads: CPU threads (0: all cores). tile: tile side in "
          "input pixels (0: the whole picture unless memory_limit). overlap: input pixels neighbouring tiles share, blended. batch: "
          "tiles run through the model together (of the pictures given to run_batch, or of one picture's tile row). "
          "memory_limit: bytes the tiles' plan may take (the largest tile that fits; on CUDA the session's device memory and the host's "
          "buffers together, not the CUDA runtime's own). outscale: final size = input size x outscale, "
          "by a Lanczos resize after the model's own scale (default: the model's scale). alpha: a transparent picture's alpha plane, "
          "'lanczos' (resized on its own) or 'model' (run through the model as a grey picture, its output's luma the new alpha, as "
          "Real-ESRGAN's script does). tile_stats: tiles of a model with instance/group norms or squeeze-and-excitation, 'exact' "
          "(their statistics gathered over the whole picture first, in extra passes; the tiled picture equals the untiled one; CPU) "
          "or 'approx' (each tile its own: one pass, different everywhere).")
      .def(
          "run",
          [](PyImageToImage& s, nb::handle image) {
            const edgegan::Image in = to_image(image);
            edgegan::Image out;
            {
              nb::gil_scoped_release unlocked;
              std::lock_guard lock(s.busy);
              out = s.runner->run(in);
            }
            return to_array(std::move(out));
          },
          "image"_a.none(),
          "Runs a uint8 picture (H, W) or (H, W, C): grey, grey + alpha, RGB or RGBA. Returns uint8 (H', W', C'): the model's "
          "channels, plus the input's alpha plane (Lanczos-resized, or through the model) when it had one. Grey is widened for an RGB model; a colour "
          "picture for a grey model raises edgegan.Error.")
      .def(
          "run_batch",
          [](PyImageToImage& s, nb::sequence images) {
            std::vector<edgegan::Image> in;
            in.reserve(nb::len(images));
            for (nb::handle image : images) in.push_back(to_image(image));
            std::vector<edgegan::Image> out;
            {
              nb::gil_scoped_release unlocked;
              std::lock_guard lock(s.busy);
              out = s.runner->run_batch(in);
            }
            nb::list arrays;
            for (edgegan::Image& image : out) arrays.append(to_array(std::move(image)));
            return arrays;
          },
          "images"_a,
          "Runs a list of uint8 pictures of one size and channel count (a video's frames) as one job: the same tile of up to "
          "`batch` pictures goes through the model per run. Returns a list of arrays, each as run() returns it for that picture "
          "(equal but for a rare one-level rounding tie: a larger batch may take another kernel path).")
      .def("output_size",
           [](PyImageToImage& s, int64_t width, int64_t height) {
             if (width < 1 || height < 1) throw nb::value_error("width and height must be at least 1");
             return s.runner->output_size(width, height);
           },
           "width"_a, "height"_a, "The (width, height) run() returns for a width x height picture.")
      .def_prop_ro("scale", [](PyImageToImage& s) { return s.runner->scale(); }, "Output pixels per input pixel of the model (1: translation).")
      .def_prop_ro("alignment", [](PyImageToImage& s) { return s.runner->alignment(); }, "Tiles are multiples of this (the model's total stride).")
      .def_prop_ro("input_channels", [](PyImageToImage& s) { return s.runner->input_channels(); })
      .def_prop_ro("output_channels", [](PyImageToImage& s) { return s.runner->output_channels(); })
      .def_prop_ro("model", [](PyImageToImage& s) { return PyModel{s.model}; })
      .def("__repr__", [](PyImageToImage& s) {
        return "<edgegan.ImageToImage x" + std::to_string(s.runner->scale()) + ", " + (s.runner->input_channels() == 1 ? "grey" : "RGB") + " in, " +
               edgegan::to_string(s.options.backend) + ">";
      });
}

}  // namespace edgegan_python

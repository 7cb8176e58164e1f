// Module functions: convert (ONNX -> .egan), normal_noise, write_png_grid.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "converter/converter.h"
#include "edgegan/image_io.h"
#include "edgegan/io.h"

namespace edgegan_python {
namespace {

std::string convert(const std::filesystem::path& onnx_path, const std::filesystem::path& egan_path, const std::string& weights,
                    const std::optional<std::pair<std::filesystem::path, float>>& blend) {
  if (weights != "fp32" && weights != "fp16") throw nb::value_error(("weights must be 'fp32' or 'fp16', got '" + weights + "'").c_str());
  edgegan::converter::ConvertOptions options;
  options.weights = edgegan::converter::weight_precision_from_string(weights);
  if (blend) {  // --blend B:T
    if (blend->first.empty()) throw nb::value_error("blend's path is empty");
    options.blend_path = blend->first.string();
    options.blend_t = blend->second;
  }
  nb::gil_scoped_release unlocked;
  try {
    return edgegan::converter::convert_file(onnx_path.string(), egan_path.string(), options).summary;
  } catch (const edgegan::converter::ConvertError& e) {
    throw edgegan::Error(e.what());  // one exception type for every edgegan failure
  }
}

nb::object normal_noise(nb::handle shape, uint64_t seed) {
  std::vector<int64_t> dims;
  int64_t single = 0;
  if (nb::isinstance<nb::int_>(shape)) {
    // An int beyond int64 (2**64) must be a ValueError, not nanobind's bad_cast.
    if (!nb::try_cast(shape, single)) throw nb::value_error("normal_noise: bad dimension (outside the 64-bit range)");
    dims.push_back(single);
  } else if (!nb::try_cast(shape, dims)) throw nb::type_error("normal_noise: shape must be an int or a sequence of ints");
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > (int64_t{1} << 32)) throw nb::value_error(("normal_noise: bad dimension " + std::to_string(d)).c_str());
    count *= d;
    if (count > (int64_t{1} << 32)) throw nb::value_error("normal_noise: more than 2^32 values");
  }
  edgegan::Tensor t;
  t.shape = dims;
  {
    nb::gil_scoped_release unlocked;
    t.f32 = edgegan::normal_noise(static_cast<size_t>(count), seed);
  }
  return to_numpy(std::move(t), ArrayLayout::kNhwc);
}

void write_png_grid(const std::filesystem::path& path, nb::handle images, int columns, int scale,
                    std::optional<std::pair<float, float>> value_range, const std::string& layout_name) {
  const ArrayLayout layout = parse_layout(layout_name);
  if (columns < 0) throw nb::value_error("write_png_grid: columns must be 0 (near-square) or more");
  if (scale < 1 || scale > 64) throw nb::value_error("write_png_grid: scale must be 1..64");
  const AnyArray array = as_array(images, "'images'");
  if (array.ndim() != 4)
    throw nb::value_error(("write_png_grid: 'images' must be rank 4, " + std::string(layout == ArrayLayout::kNchw ? "(N, C, H, W)" : "(N, H, W, C)") +
                           ", got rank " + std::to_string(array.ndim()))
                              .c_str());
  const auto dim = [&](size_t i) { return static_cast<int64_t>(array.shape(i)); };
  const std::vector<int64_t> storage = layout == ArrayLayout::kNchw ? std::vector<int64_t>{-1, dim(2), dim(3), dim(1)}
                                                                    : std::vector<int64_t>{-1, dim(1), dim(2), dim(3)};
  if (storage[3] != 1 && storage[3] != 3) throw nb::value_error(("write_png_grid: images need 1 or 3 channels, got " + std::to_string(storage[3])).c_str());
  const edgegan::Tensor tensor = to_tensor(array, {"images", edgegan::DType::kFloat32, edgegan::Layout::kNHWC, storage}, dim(0), layout);
  const float lo = value_range ? value_range->first : NAN, hi = value_range ? value_range->second : NAN;
  nb::gil_scoped_release unlocked;
  edgegan::write_png_grid(path.string(), tensor, columns, scale, lo, hi);
}

}  // namespace

void bind_functions(nb::module_& m) {
  using namespace nb::literals;
  m.def("convert", &convert, "onnx_path"_a, "egan_path"_a, "weights"_a = "fp32", nb::kw_only(), "blend"_a = nb::none(),
        "Converts an ONNX generator or discriminator (as torch.onnx.export writes it) into a .egan file, written "
        "atomically, as edgegan-convert does. weights: 'fp32', or 'fp16' for the transposed-convolution weights (half "
        "the file; computed in fp32). Returns the summary edgegan-convert prints. Raises edgegan.Error naming the node, "
        "op and attribute it cannot convert. blend=(path_b, t): checkpoints only, (1 - t)·input + t·path_b for two "
        "checkpoints of one architecture (edgegan-convert --blend path_b:t).");
  m.def("normal_noise", &normal_noise, "shape"_a, "seed"_a,
        "Standard-normal float32 noise of the given shape, the same numbers on every platform for the same seed (the "
        "noise `edgegan generate --seed` uses).");
  m.def("write_png_grid", &write_png_grid, "path"_a, "images"_a.none(), nb::kw_only(), "columns"_a = 0, "scale"_a = 4,
        "value_range"_a = nb::none(), "layout"_a = "nchw",
        "Tiles float32 images (1 or 3 channels) into one PNG, `columns` per row (0: near-square), each pixel scaled "
        "`scale` times, values mapped from value_range=(min, max) to 0..255 (None: the data's own range). With the "
        "model's output range and the CLI's columns and scale, the file equals what `edgegan generate` writes.");
}

}  // namespace edgegan_python

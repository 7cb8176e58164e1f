// edgegan-convert in.onnx|model.pth|model.safetensors -o out.egan [--blend B.pth:T] [--weights fp16] [--input-range -1,1 | --mean M --std S] [--output-range LO,HI]
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "edgegan/image_to_image.h"

int main(int argc, char** argv) {
  CLI::App app{"edgegan-convert: ONNX GAN generator/discriminator -> .egan model (transposed convolutions stored pre-split)"};
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("edgegan-convert: error: ") + e.what() + " (see edgegan-convert --help)\n";
  });
  app.set_version_flag("--version", std::string("edgegan-convert ") + edgegan::version() + " (writes .egan schema " +
                                        std::to_string(edgegan::file_format_version()) + ")");
  std::string input, output, weights = "fp32";
  bool quiet = false;
  app.add_option("input", input,
                 "ONNX model exported by torch.onnx.export, or a PyTorch checkpoint (.pth/.pt/.ckpt, zip or legacy) or .safetensors "
                 "of a detected architecture (read without running its pickle)")
      ->required()
      ->check(CLI::ExistingFile);
  std::string blend;
  app.add_option("--blend", blend, "checkpoints: B.pth:T writes (1-T)*input + T*B, two checkpoints of one architecture (T in [0, 1])");
  app.add_option("-o,--output", output, "the .egan file to write")->required();
  app.add_option("--weights", weights,
                 "precision of the transposed-convolution weights: fp32, or fp16 (half the file and the weight traffic; "
                 "computed in fp32)")
      ->check(CLI::IsMember({"fp32", "fp16"}));
  app.add_flag("-q,--quiet", quiet, "print nothing on success");
  // The pixel normalisation an image-to-image model expects, recorded for edgegan translate/upscale.
  std::string input_range, mean, stddev, output_range;
  auto* range_opt = app.add_option("--input-range", input_range, "image models: the input's value range, e.g. -1,1 (pixel 0 -> -1, 255 -> 1)");
  auto* mean_opt = app.add_option("--mean", mean, "image models: per-channel mean of pixel/255, e.g. 0.485,0.456,0.406 (with --std)");
  auto* std_opt = app.add_option("--std", stddev, "image models: per-channel std of pixel/255 (with --mean)");
  app.add_option("--output-range", output_range, "image models: the output's value range (default: the input's, or the final activation's)");
  range_opt->excludes(mean_opt)->excludes(std_opt);
  mean_opt->needs(std_opt);
  std_opt->needs(mean_opt);
  CLI11_PARSE(app, argc, argv);
  try {
    edgegan::converter::ConvertOptions options;
    options.weights = edgegan::converter::weight_precision_from_string(weights);
    if (!blend.empty()) {
      const size_t colon = blend.find_last_of(':');
      std::istringstream t(colon == std::string::npos ? "" : blend.substr(colon + 1));
      if (colon == std::string::npos || colon == 0 || !(t >> options.blend_t) || !t.eof())
        throw std::runtime_error("--blend '" + blend + "' is not PATH:T (T a number in [0, 1])");
      options.blend_path = blend.substr(0, colon);
    }
    auto record = [&](const std::string& side, const edgegan::PixelNormalisation& n) {
      auto list = [](const std::array<float, 3>& v) {
        std::ostringstream s;
        s.precision(9);
        s << v[0] << "," << v[1] << "," << v[2];
        return s.str();
      };
      options.metadata.emplace_back(side + "_mean", list(n.mean));
      options.metadata.emplace_back(side + "_std", list(n.std));
    };
    if (!input_range.empty()) record("input", edgegan::PixelNormalisation::parse_range(input_range));
    if (!mean.empty()) record("input", edgegan::PixelNormalisation::mean_std(mean, stddev));
    if (!output_range.empty()) record("output", edgegan::PixelNormalisation::parse_range(output_range));
    const auto result = edgegan::converter::convert_file(input, output, options);
    if (!quiet) std::cout << result.summary << "wrote " << output << "\n";
  } catch (const std::exception& e) {
    std::cerr << "edgegan-convert: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

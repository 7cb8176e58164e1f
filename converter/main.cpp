// edgegan-convert in.onnx -o out.egan [--weights fp16]
#include <CLI/CLI.hpp>
#include <iostream>

#include "converter/converter.h"
#include "edgegan/edgegan.h"

int main(int argc, char** argv) {
  CLI::App app{"edgegan-convert: ONNX GAN generator/discriminator -> .egan model (transposed convolutions stored pre-split)"};
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("edgegan-convert: error: ") + e.what() + " (see edgegan-convert --help)\n";
  });
  app.set_version_flag("--version", std::string("edgegan-convert ") + edgegan::version() + " (writes .egan schema " +
                                        std::to_string(edgegan::file_format_version()) + ")");
  std::string input, output, weights = "fp32";
  bool quiet = false;
  app.add_option("input", input, "ONNX model exported by torch.onnx.export")->required()->check(CLI::ExistingFile);
  app.add_option("-o,--output", output, "the .egan file to write")->required();
  app.add_option("--weights", weights,
                 "precision of the transposed-convolution weights: fp32, or fp16 (half the file and the weight traffic; "
                 "computed in fp32)")
      ->check(CLI::IsMember({"fp32", "fp16"}));
  app.add_flag("-q,--quiet", quiet, "print nothing on success");
  CLI11_PARSE(app, argc, argv);
  try {
    edgegan::converter::ConvertOptions options;
    options.weights = edgegan::converter::weight_precision_from_string(weights);
    const auto result = edgegan::converter::convert_file(input, output, options);
    if (!quiet) std::cout << result.summary << "wrote " << output << "\n";
  } catch (const std::exception& e) {
    std::cerr << "edgegan-convert: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

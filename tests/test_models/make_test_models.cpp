// Converts every model the engine tests load into .egan files under one folder, so
// the engine suites read model files and do not link the converter. CTest runs it
// first (the test_models fixture); to run an engine suite by hand, run it once:
//
//   build/tests/make_test_models build/tests/test_models
//
// What it writes (paths relative to the folder, each NAME.egan):
//   golden/CASE, golden/CASE.fp16     tests/golden/cases/CASE (fp32 and fp16 weights)
//   training/STEP/NAME                tests/golden/training/STEP/NAME.onnx
//   shipped/MODEL/NAME                models/MODEL/NAME.onnx, converted by this converter
//   built/NAME                        the ONNX models of tests/test_models/onnx_models.h
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include "converter/converter.h"
#include "tests/test_models/onnx_models.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using namespace edgegan;

namespace {

void write(const fs::path& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void convert(const std::string& onnx, const std::string& source_name, const fs::path& out, bool fp16 = false) {
  converter::ConvertOptions options;
  if (fp16) options.weights = converter::WeightPrecision::kFp16;
  write(out, converter::convert_onnx(onnx, source_name, options).egan);
}

// A golden case's model: its model.onnx, or the file model_path.txt names.
fs::path golden_model(const fs::path& dir) {
  if (fs::exists(dir / "model.onnx")) return dir / "model.onnx";
  std::string rel = testing::read_file(dir / "model_path.txt");
  rel.erase(rel.find_last_not_of(" \n\r\t") + 1);
  return testing::source_dir() / rel;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " OUT_DIR\n";
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path golden = testing::golden_dir();
  int written = 0;
  for (const auto& e : fs::directory_iterator(golden)) {
    if (!e.is_directory()) continue;
    const std::string name = e.path().filename().string();
    const std::string onnx = testing::read_file(golden_model(e.path()));
    convert(onnx, name, out / "golden" / (name + ".egan"));
    convert(onnx, name, out / "golden" / (name + ".fp16.egan"), /*fp16=*/true);
    written += 2;
  }
  for (const auto& step : fs::directory_iterator(golden.parent_path() / "training")) {
    if (!step.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(step.path()))
      if (f.path().extension() == ".onnx") {
        convert(testing::read_file(f.path()), f.path().filename().string(),
                out / "training" / step.path().filename() / (f.path().stem().string() + ".egan"));
        ++written;
      }
  }
  for (const auto& model : fs::directory_iterator(testing::source_dir() / "models")) {
    if (!model.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(model.path()))
      if (f.path().extension() == ".onnx") {
        convert(testing::read_file(f.path()), f.path().filename().string(),
                out / "shipped" / model.path().filename() / (f.path().stem().string() + ".egan"));
        ++written;
      }
  }
  const std::pair<const char*, std::function<std::string()>> built[] = {
      {"huge2_dcgan", testing::huge2_dcgan_onnx},
      {"huge2_cgan", testing::huge2_cgan_onnx},
      {"dcgan64_generator", testing::dcgan64_generator_onnx},
      {"dcgan64_discriminator", testing::dcgan64_discriminator_onnx},
      {"two_outputs", testing::two_outputs_onnx},
      {"winograd_block", testing::winograd_block_onnx},
      {"winograd_wide", testing::winograd_wide_onnx},
      {"winograd_transposed_wide", testing::winograd_transposed_wide_onnx},
      {"winograd_budget", testing::winograd_budget_onnx},
  };
  for (const auto& [name, make] : built) {
    convert(make(), std::string(name) + ".onnx", out / "built" / (std::string(name) + ".egan"));
    ++written;
  }
  std::cout << "make_test_models: " << written << " models in " << out.string() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "make_test_models: " << e.what() << "\n";
  return 1;
}

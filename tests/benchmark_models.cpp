#include "tests/benchmark_models.h"

#include <random>
#include <vector>

#include "tests/converter/onnx_builder.h"

namespace edgegan::testing {
namespace {

struct ConvTransposeLayer {
  int cin, cout, kernel, pad, output_padding;
};

std::string stride2_generator(int in_channels, int in_size, const std::vector<ConvTransposeLayer>& layers, unsigned seed) {
  OnnxBuilder b;
  b.input("x", {-1, in_channels, in_size, in_size}).output("image");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-0.05f, 0.05f);
  std::string x = "x";
  for (size_t i = 0; i < layers.size(); ++i) {
    const ConvTransposeLayer& l = layers[i];
    std::vector<float> w(static_cast<size_t>(l.cin) * l.cout * l.kernel * l.kernel), bias(static_cast<size_t>(l.cout));
    for (auto& v : w) v = d(rng);
    for (auto& v : bias) v = d(rng);
    const std::string id = std::to_string(i);
    b.floats("W" + id, {l.cin, l.cout, l.kernel, l.kernel}, w).floats("B" + id, {l.cout}, bias);
    auto& n = b.node("ConvTranspose", "deconv" + id, {x, "W" + id, "B" + id}, {"d" + id});
    OnnxBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
    OnnxBuilder::attr(n, "pads", std::vector<int64_t>{l.pad, l.pad, l.pad, l.pad});
    OnnxBuilder::attr(n, "output_padding", std::vector<int64_t>{l.output_padding, l.output_padding});
    const bool last = i + 1 == layers.size();
    x = last ? "image" : "a" + id;
    b.node(last ? "Tanh" : "Relu", "act" + id, {"d" + id}, {x});
  }
  return b.bytes();
}

}  // namespace

std::string huge2_dcgan_onnx() {
  return stride2_generator(1024, 4, {{1024, 512, 5, 2, 1}, {512, 256, 5, 2, 1}, {256, 128, 5, 2, 1}, {128, 3, 5, 2, 1}}, 1);
}

std::string huge2_cgan_onnx() { return stride2_generator(256, 8, {{256, 128, 4, 1, 0}, {128, 3, 4, 1, 0}}, 2); }

}  // namespace edgegan::testing

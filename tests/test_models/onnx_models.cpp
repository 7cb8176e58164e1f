#include "tests/test_models/onnx_models.h"

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

// A BatchNormalization with random statistics after `x`, its output `y`.
void batch_norm(OnnxBuilder& b, const std::string& id, int channels, const std::string& x, const std::string& y, std::mt19937& rng) {
  std::uniform_real_distribution<float> scale(0.5f, 1.5f), shift(-0.1f, 0.1f);
  std::vector<float> gamma(static_cast<size_t>(channels)), beta(gamma.size()), mean(gamma.size()), var(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) gamma[c] = scale(rng), beta[c] = shift(rng), mean[c] = shift(rng), var[c] = scale(rng);
  b.floats("bn_g" + id, {channels}, gamma).floats("bn_b" + id, {channels}, beta).floats("bn_m" + id, {channels}, mean).floats("bn_v" + id, {channels}, var);
  b.node("BatchNormalization", "bn" + id, {x, "bn_g" + id, "bn_b" + id, "bn_m" + id, "bn_v" + id}, {y});
}

// DCGAN's init: weights N(0, 0.02).
std::vector<float> dcgan_weights(size_t count, std::mt19937& rng) {
  std::normal_distribution<float> d(0.f, 0.02f);
  std::vector<float> w(count);
  for (auto& v : w) v = d(rng);
  return w;
}

}  // namespace

std::string dcgan64_generator_onnx() {
  OnnxBuilder b;
  b.input("z", {-1, 100, 1, 1}).output("image");
  std::mt19937 rng(64);
  const int channels[] = {100, 512, 256, 128, 64, 3};
  std::string x = "z";
  for (int i = 0; i < 5; ++i) {
    const std::string id = std::to_string(i);
    const int cin = channels[i], cout = channels[i + 1];
    b.floats("W" + id, {cin, cout, 4, 4}, dcgan_weights(static_cast<size_t>(cin) * cout * 16, rng));
    auto& n = b.node("ConvTranspose", "conv_transpose" + id, {x, "W" + id}, {"t" + id});
    OnnxBuilder::attr(n, "kernel_shape", std::vector<int64_t>{4, 4});
    OnnxBuilder::attr(n, "strides", std::vector<int64_t>{i == 0 ? 1 : 2, i == 0 ? 1 : 2});
    OnnxBuilder::attr(n, "pads", std::vector<int64_t>(4, i == 0 ? 0 : 1));
    if (i == 4) {
      b.node("Tanh", "tanh", {"t" + id}, {"image"});
    } else {
      batch_norm(b, id, cout, "t" + id, "n" + id, rng);
      x = "a" + id;
      b.node("Relu", "relu" + id, {"n" + id}, {x});
    }
  }
  return b.bytes();
}

std::string dcgan64_discriminator_onnx() {
  OnnxBuilder b;
  b.input("image", {-1, 3, 64, 64}).output("logit");
  std::mt19937 rng(65);
  const int channels[] = {3, 64, 128, 256, 512, 1};
  std::string x = "image";
  for (int i = 0; i < 5; ++i) {
    const std::string id = std::to_string(i);
    const int cin = channels[i], cout = channels[i + 1];
    const bool last = i == 4;
    b.floats("W" + id, {cout, cin, 4, 4}, dcgan_weights(static_cast<size_t>(cin) * cout * 16, rng));
    auto& n = b.node("Conv", "conv" + id, {x, "W" + id}, {last ? "logit" : "c" + id});
    OnnxBuilder::attr(n, "kernel_shape", std::vector<int64_t>{4, 4});
    OnnxBuilder::attr(n, "strides", std::vector<int64_t>{last ? 1 : 2, last ? 1 : 2});
    OnnxBuilder::attr(n, "pads", std::vector<int64_t>(4, last ? 0 : 1));
    if (last) break;
    std::string pre = "c" + id;
    if (i > 0) {
      batch_norm(b, id, cout, pre, "n" + id, rng);
      pre = "n" + id;
    }
    x = "a" + id;
    auto& act = b.node("LeakyRelu", "lrelu" + id, {pre}, {x});
    OnnxBuilder::attr(act, "alpha", 0.2f);
  }
  return b.bytes();
}

std::string two_outputs_onnx() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> w(54);
  for (auto& v : w) v = d(rng);
  OnnxBuilder b;
  b.input("x", {-1, 2, 5, 4}).output("c").output("y").floats("W", {3, 2, 3, 3}, w);
  OnnxBuilder::attr(b.node("Conv", "conv", {"x", "W"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.floats("g", {3}, {1.2f, 0.8f, 1.5f}).floats("be", {3}, {0.1f, -0.2f, 0.3f}).floats("m", {3}, {0.05f, 0.f, -0.1f}).floats("v", {3}, {1.f, 0.5f, 2.f});
  b.node("BatchNormalization", "bn", {"c", "g", "be", "m", "v"}, {"n"});
  b.node("Tanh", "act", {"n"}, {"y"});
  return b.bytes();
}

std::string winograd_block_onnx() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-0.1f, 0.1f);
  auto values = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  OnnxBuilder b;
  b.input("x", {-1, 16, 20, 20}).output("y");
  b.floats("W1", {24, 16, 3, 3}, values(24 * 16 * 9)).floats("B1", {24}, values(24)).floats("W2", {16, 24, 3, 3}, values(16 * 24 * 9));
  OnnxBuilder::attr(b.node("Conv", "conv1", {"x", "W1", "B1"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  OnnxBuilder::attr(b.node("LeakyRelu", "act1", {"c1"}, {"a1"}), "alpha", 0.2f);
  b.ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  OnnxBuilder::attr(b.node("Pad", "reflect", {"a1", "pads"}, {"p1"}), "mode", std::string("reflect"));
  b.node("Conv", "conv2", {"p1", "W2"}, {"c2"});
  b.node("Add", "residual", {"c2", "x"}, {"y"});
  return b.bytes();
}

std::string winograd_wide_onnx() {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> d(-0.05f, 0.05f);
  std::vector<float> w(148 * 148 * 9), bias(148);
  for (auto& v : w) v = d(rng);
  for (auto& v : bias) v = d(rng);
  OnnxBuilder b;
  b.input("x", {-1, 148, 12, 12}).output("y");
  b.floats("W", {148, 148, 3, 3}, w).floats("B", {148}, bias);
  OnnxBuilder::attr(b.node("Conv", "conv", {"x", "W", "B"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", "act", {"c"}, {"y"});
  return b.bytes();
}

std::string winograd_transposed_wide_onnx() { return stride2_generator(128, 16, {{128, 120, 4, 1, 0}}, 3); }

std::string winograd_budget_onnx() {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> d(-0.02f, 0.02f);
  OnnxBuilder b;
  b.input("x", {-1, 141, 32, 32}).output("y");
  std::string x = "x";
  for (int i = 0; i < 12; ++i) {
    std::vector<float> w(141 * 141 * 9);
    for (auto& v : w) v = d(rng);
    const std::string id = std::to_string(i), y = i == 11 ? "y" : "c" + id;
    b.floats("W" + id, {141, 141, 3, 3}, w);
    OnnxBuilder::attr(b.node("Conv", "conv" + id, {x, "W" + id}, {y}), "pads", std::vector<int64_t>{1, 1, 1, 1});
    x = y;
  }
  return b.bytes();
}

std::string huge2_dcgan_onnx() {
  return stride2_generator(1024, 4, {{1024, 512, 5, 2, 1}, {512, 256, 5, 2, 1}, {256, 128, 5, 2, 1}, {128, 3, 5, 2, 1}}, 1);
}

std::string huge2_cgan_onnx() { return stride2_generator(256, 8, {{256, 128, 4, 1, 0}, {128, 3, 4, 1, 0}}, 2); }

}  // namespace edgegan::testing

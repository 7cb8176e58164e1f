// One harness for every backend's ops: each case is a small ONNX graph around one op
// (with what fuses into it: bias, every activation, a per-channel PRelu, a residual)
// whose shapes, attributes and weights
// are drawn from a fixed seed, converted in memory and run on the CPU (the reference)
// and on every other backend that runs here; outputs agree within
// 1e-4 x max(1, max|y|), and in an fp16 session (half storage of activations and
// weights, float arithmetic) within 2e-2 x max(1, max|y|). A backend that lists an op kind among those it has no kernel
// for yet must refuse a case holding it, naming it (so the list only shrinks); any
// other refusal fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "engine/backend/backend.h"
#include "engine/backend/cpu_half_storage.h"
#include "engine/session_plan.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"
#include "tests/vulkan_test_env.h"

namespace edgegan {
namespace {

using edgegan::testing::OnnxBuilder;

// The op kinds each backend has no kernel for yet (none today: every backend runs every
// kind; a new kind or backend lists here what it lacks until its kernel is written).
std::set<std::string> unwritten_kinds(Backend) { return {}; }

struct Rng {
  std::mt19937 gen;
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); }
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen); }
  std::vector<float> values(size_t n, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = uniform(-scale, scale);
    return v;
  }
};

// The activations an epilogue takes, as ONNX nodes after `x` writing `y`.
const char* const kActivations[] = {"Relu", "LeakyRelu", "Tanh", "Sigmoid", "Elu", "Selu", "Clip", "HardSigmoid", "HardSwish", "Softplus", "Mish", "PRelu", ""};

void activation(OnnxBuilder& b, Rng& r, const std::string& act, int channels, const std::string& x, const std::string& y) {
  if (act == "PRelu") {
    std::vector<float> slope(static_cast<size_t>(channels));
    for (float& s : slope) s = r.uniform(0.05f, 0.5f);
    b.floats("slope", {channels, 1, 1}, slope);
    b.node("PRelu", "prelu", {x, "slope"}, {y});
    return;
  }
  if (act == "Clip") {
    b.floats("clip_min", {}, {-0.3f}).floats("clip_max", {}, {0.4f});
    b.node("Clip", "clip", {x, "clip_min", "clip_max"}, {y});
    return;
  }
  auto& n = b.node(act, "act", {x}, {y});
  if (act == "LeakyRelu") OnnxBuilder::attr(n, "alpha", r.uniform(0.01f, 0.3f));
  if (act == "Elu") OnnxBuilder::attr(n, "alpha", r.uniform(0.5f, 1.5f));
  if (act == "HardSigmoid") OnnxBuilder::attr(n, "alpha", 0.25f), OnnxBuilder::attr(n, "beta", 0.4f);
}

// A case: its ONNX model.
using CaseMaker = std::function<std::string(Rng&, int variant)>;

std::string conv_case(Rng& r, int v) {
  const int groups = v % 3 == 2 ? r.pick(2, 3) : 1;
  const int cin = groups * r.pick(1, 5), cout = groups * r.pick(1, 6);
  const int k = r.pick(1, 4), stride = r.pick(1, 2), dilation = r.pick(1, 2);
  const int h = r.pick(k * dilation, 11), w = r.pick(k * dilation, 11);
  const std::string act = kActivations[static_cast<size_t>(v) % std::size(kActivations)];
  const bool residual = act.empty() && v % 2 == 0;
  OnnxBuilder b;
  b.input("x", {-1, cin, h, w}).output("y");
  b.floats("W", {cout, cin / groups, k, k}, r.values(static_cast<size_t>(cout * cin / groups * k * k), 0.5f));
  b.floats("B", {cout}, r.values(static_cast<size_t>(cout), 0.3f));
  auto& n = b.node("Conv", "conv", {"x", "W", "B"}, {act.empty() && !residual ? "y" : "c"});
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{stride, stride});
  OnnxBuilder::attr(n, "dilations", std::vector<int64_t>{dilation, dilation});
  OnnxBuilder::attr(n, "pads", std::vector<int64_t>{r.pick(0, k - 1), r.pick(0, k - 1), r.pick(0, k - 1), r.pick(0, k - 1)});
  OnnxBuilder::attr(n, "group", static_cast<int64_t>(groups));
  if (!act.empty()) activation(b, r, act, cout, "c", "y");
  if (residual) {
    // A second input of the output's shape added after the convolution.
    b.input("skip", {-1, cout, (h - 1) / stride + 1, (w - 1) / stride + 1});
    auto& c = n;
    OnnxBuilder::attr(c, "pads", std::vector<int64_t>{(k - 1) * dilation / 2, (k - 1) * dilation / 2, (k - 1) * dilation - (k - 1) * dilation / 2,
                                                      (k - 1) * dilation - (k - 1) * dilation / 2});
    b.node("Add", "add", {"c", "skip"}, {"y"});
  }
  return b.bytes();
}

std::string conv_transpose_case(Rng& r, int v) {
  const int groups = v % 4 == 3 ? 2 : 1;
  const int cin = groups * r.pick(1, 4), cout = groups * r.pick(1, 5);
  const int stride = r.pick(1, 4), k = r.pick(1, 5), dilation = v % 5 == 4 ? 2 : 1;
  const int pad = r.pick(0, std::max(0, (k - 1) * dilation / 2));
  const int out_pad = stride > 1 ? r.pick(0, std::min(stride, dilation) - 1) : 0;
  const std::string act = kActivations[static_cast<size_t>(v * 5) % std::size(kActivations)];
  OnnxBuilder b;
  b.input("x", {-1, cin, r.pick(1, 7), r.pick(1, 7)}).output("y");
  b.floats("W", {cin, cout / groups, k, k}, r.values(static_cast<size_t>(cin * cout / groups * k * k), 0.5f));
  b.floats("B", {cout}, r.values(static_cast<size_t>(cout), 0.3f));
  auto& n = b.node("ConvTranspose", "deconv", {"x", "W", "B"}, {act.empty() ? "y" : "c"});
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{stride, stride});
  OnnxBuilder::attr(n, "dilations", std::vector<int64_t>{dilation, dilation});
  OnnxBuilder::attr(n, "pads", std::vector<int64_t>{pad, r.pick(0, pad), pad, r.pick(0, pad)});
  OnnxBuilder::attr(n, "output_padding", std::vector<int64_t>{out_pad, out_pad});
  OnnxBuilder::attr(n, "group", static_cast<int64_t>(groups));
  if (!act.empty()) activation(b, r, act, cout, "c", "y");
  return b.bytes();
}

std::string gemm_case(Rng& r, int v) {
  const int in = r.pick(1, 40), out = r.pick(1, 40);
  const std::string act = kActivations[static_cast<size_t>(v * 3) % (std::size(kActivations) - 2)];  // no PRelu, or none
  OnnxBuilder b;
  b.input("x", {-1, in}).output("y");
  b.floats("W", {in, out}, r.values(static_cast<size_t>(in * out), 0.5f)).floats("B", {out}, r.values(static_cast<size_t>(out), 0.3f));
  b.node("Gemm", "gemm", {"x", "W", "B"}, {"g"});
  activation(b, r, act, out, "g", "y");
  return b.bytes();
}

// An activation with no producer to fuse into (an Elementwise op).
std::string activation_case(Rng& r, int v) {
  const std::string act = kActivations[static_cast<size_t>(v) % (std::size(kActivations) - 2)];
  OnnxBuilder b;
  b.input("x", {-1, r.pick(1, 6), r.pick(1, 9), r.pick(1, 9)}).output("y");
  activation(b, r, act, 0, "x", "y");
  return b.bytes();
}

// GELU (erf and tanh forms) and SiLU as torch exports them, and ONNX's Gelu: each one
// Elementwise op of the activation (converter/activation_patterns.cpp).
std::string gelu_silu_case(Rng& r, int v) {
  OnnxBuilder b(v % 4 == 3 ? 20 : 17);
  b.input("x", {-1, r.pick(1, 6), r.pick(1, 9), r.pick(1, 9)}).output("y");
  b.floats("one", {}, {1.f}).floats("half", {}, {0.5f});
  switch (v % 4) {
    case 0:
      b.floats("sqrt2", {}, {1.4142135f});
      b.node("Div", "div", {"x", "sqrt2"}, {"d"});
      b.node("Erf", "erf", {"d"}, {"e"});
      b.node("Add", "add", {"e", "one"}, {"a"});
      b.node("Mul", "mul", {"x", "a"}, {"m"});
      b.node("Mul", "mul_half", {"m", "half"}, {"y"});
      break;
    case 1:
      b.floats("cubic", {}, {0.044715f}).floats("c", {}, {0.7978846f});
      b.node("Mul", "x2", {"x", "x"}, {"x2"});
      b.node("Mul", "x3", {"x", "x2"}, {"x3"});
      b.node("Mul", "cx3", {"cubic", "x3"}, {"cx3"});
      b.node("Add", "inner", {"x", "cx3"}, {"u"});
      b.node("Mul", "scaled", {"c", "u"}, {"q"});
      b.node("Tanh", "tanh", {"q"}, {"t"});
      b.node("Add", "add", {"one", "t"}, {"a"});
      b.node("Mul", "mul", {"x", "a"}, {"m"});
      b.node("Mul", "mul_half", {"half", "m"}, {"y"});
      break;
    case 2:
      b.node("Sigmoid", "sig", {"x"}, {"s"});
      b.node("Mul", "mul", {"x", "s"}, {"y"});
      break;
    default: OnnxBuilder::attr(b.node("Gelu", "gelu", {"x"}, {"y"}), "approximate", std::string("tanh"));
  }
  return b.bytes();
}

// LayerNormalization (opset 17) over tokens [N, L, C] or a map's trailing axes: the
// run-time math it expands to (onnx_graph.cpp), Reduce first.
std::string layer_norm_case(Rng& r, int v) {
  OnnxBuilder b(17);
  std::vector<int64_t> dims = v % 3 == 0 ? std::vector<int64_t>{-1, r.pick(1, 20), r.pick(2, 24)}
                                         : std::vector<int64_t>{-1, r.pick(1, 6), r.pick(1, 7), r.pick(2, 7)};
  const int64_t axis = v % 3 == 1 ? 1 : -1;
  const size_t first = axis < 0 ? dims.size() - 1 : 1;
  const std::vector<int64_t> norm(dims.begin() + static_cast<std::ptrdiff_t>(first), dims.end());
  int64_t count = 1;
  for (int64_t d : norm) count *= d;
  b.input("x", dims).output("y").floats("scale", norm, r.values(static_cast<size_t>(count), 1.f));
  std::vector<std::string> inputs{"x", "scale"};
  if (v % 2 == 0) {
    b.floats("bias", norm, r.values(static_cast<size_t>(count), 0.5f));
    inputs.push_back("bias");
  }
  OnnxBuilder::attr(b.node("LayerNormalization", "ln", inputs, {"y"}), "axis", axis);
  return b.bytes();
}

std::string binary_case(Rng& r, int v) {
  const char* ops[] = {"Add", "Sub", "Mul", "Div"};
  const int c = r.pick(1, 6), h = r.pick(1, 8), w = r.pick(1, 8);
  OnnxBuilder b;
  b.input("a", {-1, c, h, w}).output("y");
  std::vector<int64_t> bdims = {1, v % 2 ? c : 1, v % 3 ? h : 1, v % 3 == 2 ? 1 : w};
  if (v % 4 == 3) {
    // A constant operand, kept positive away from zero for Div.
    std::vector<float> k(static_cast<size_t>(bdims[1] * bdims[2] * bdims[3]));
    for (float& x : k) x = r.uniform(0.5f, 2.f);
    b.floats("k", bdims, k);
    b.node(ops[v % 4], "binary", {"a", "k"}, {"y"});
  } else {
    bdims[0] = -1;
    b.input("b", bdims);
    b.node(ops[v % 4], "binary", {"a", "b"}, {"y"});
  }
  return b.bytes();
}

std::string concat_case(Rng& r, int) {
  const int h = r.pick(1, 8), w = r.pick(1, 8);
  OnnxBuilder b;
  b.input("a", {-1, r.pick(1, 5), h, w}).input("b", {-1, r.pick(1, 5), h, w}).input("c", {-1, r.pick(1, 3), h, w}).output("y");
  auto& n = b.node("Concat", "concat", {"a", "b", "c"}, {"y"});
  OnnxBuilder::attr(n, "axis", int64_t{1});
  return b.bytes();
}

std::string batch_norm_case(Rng& r, int) {
  const int c = r.pick(1, 8);
  OnnxBuilder b;
  b.input("x", {-1, c, r.pick(1, 8), r.pick(1, 8)}).output("y");
  std::vector<float> var(static_cast<size_t>(c));
  for (float& x : var) x = r.uniform(0.5f, 2.f);
  b.floats("g", {c}, r.values(static_cast<size_t>(c), 1.f)).floats("s", {c}, r.values(static_cast<size_t>(c), 1.f));
  b.floats("m", {c}, r.values(static_cast<size_t>(c), 1.f)).floats("v", {c}, var);
  b.node("BatchNormalization", "bn", {"x", "g", "s", "m", "v"}, {"y"});
  return b.bytes();
}

std::string prelu_case(Rng& r, int) {
  const int c = r.pick(1, 8);
  OnnxBuilder b;
  b.input("x", {-1, c, r.pick(1, 8), r.pick(1, 8)}).output("y");
  activation(b, r, "PRelu", c, "x", "y");
  return b.bytes();
}

// A map flattened (NHWC storage to ONNX's NCHW order) into a dense layer.
std::string flatten_case(Rng& r, int) {
  const int c = r.pick(1, 5), h = r.pick(1, 5), w = r.pick(1, 5), out = r.pick(1, 12);
  OnnxBuilder b;
  b.input("x", {-1, c, h, w}).output("y");
  b.node("Flatten", "flatten", {"x"}, {"f"});
  b.floats("W", {c * h * w, out}, r.values(static_cast<size_t>(c * h * w * out), 0.5f));
  b.node("MatMul", "matmul", {"f", "W"}, {"y"});
  return b.bytes();
}

// A Pad on its own (a graph input has no convolution to fold into), every mode; from
// variant 8 its far pads grown to a multiple (align), then a second Pad cropping the
// far sides back to 2 x the input's size (size_of) after a nearest x2 upsampling.
std::string pad_case(Rng& r, int v) {
  const char* modes[] = {"constant", "reflect", "edge", "wrap"};
  const int h = r.pick(3, 7), w = r.pick(3, 7);
  OnnxBuilder b;
  b.input("x", {-1, r.pick(1, 4), h, w}).output("y");
  b.ints("pads", {8}, {0, 0, r.pick(-1, 2), r.pick(0, 2), 0, 0, r.pick(0, 2), r.pick(-1, 2)});
  b.floats("value", {}, {r.uniform(-1.f, 1.f)});
  auto& n = b.node("Pad", "pad", {"x", "pads", "value"}, {"p"});
  OnnxBuilder::attr(n, "mode", std::string(modes[v % 4]));
  if (v < 8) {
    b.node("Relu", "relu", {"p"}, {"y"});
    return b.bytes();
  }
  OnnxBuilder::attr(n, "edgegan_align", int64_t{r.pick(2, 5)});
  b.floats("scales", {4}, {1.f, 1.f, 2.f, 2.f}).ints("crop", {8}, {0, 0, -1, 0, 0, 0, 0, 0});
  OnnxBuilder::attr(b.node("Resize", "up", {"p", "", "scales"}, {"u"}), "mode", std::string("nearest"));
  OnnxBuilder::attr(b.node("Pad", "crop", {"u", "crop", "", "", "x"}, {"c"}), "edgegan_size_scale", int64_t{2});
  b.node("Relu", "relu", {"c"}, {"y"});
  return b.bytes();
}

// A reflect pad and a nearest upsampling folded into the convolution after them.
std::string conv_input_map_case(Rng& r, int v) {
  const int c = r.pick(1, 4), cout = r.pick(1, 5), h = r.pick(3, 6), w = r.pick(3, 6);
  OnnxBuilder b;
  b.input("x", {-1, c, h, w}).output("y");
  std::string x = "x";
  if (v % 2) {
    b.floats("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    auto& up = b.node("Resize", "up", {"x", "", "scales"}, {"u"});
    OnnxBuilder::attr(up, "mode", std::string("nearest"));
    x = "u";
  }
  b.ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  auto& pad = b.node("Pad", "pad", {x, "pads"}, {"p"});
  OnnxBuilder::attr(pad, "mode", std::string(v % 3 ? "reflect" : "edge"));
  b.floats("W", {cout, c, 3, 3}, r.values(static_cast<size_t>(cout * c * 9), 0.5f)).floats("B", {cout}, r.values(static_cast<size_t>(cout), 0.3f));
  b.node("Conv", "conv", {"p", "W", "B"}, {"y"});
  return b.bytes();
}

std::string pool_case(Rng& r, int v) {
  OnnxBuilder b;
  const int k = r.pick(1, 3), stride = r.pick(1, 2), pad = r.pick(0, k - 1);
  b.input("x", {-1, r.pick(1, 4), r.pick(k, 8), r.pick(k, 8)}).output("y");
  auto& n = b.node(v % 2 ? "MaxPool" : "AveragePool", "pool", {"x"}, {"y"});
  OnnxBuilder::attr(n, "kernel_shape", std::vector<int64_t>{k, k});
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{stride, stride});
  OnnxBuilder::attr(n, "pads", std::vector<int64_t>{pad, pad, pad, pad});
  if (v % 2 == 0) OnnxBuilder::attr(n, "count_include_pad", int64_t{v % 4 == 2});
  if (v % 3 == 2) OnnxBuilder::attr(n, "ceil_mode", int64_t{1});
  return b.bytes();
}

std::string resize_case(Rng& r, int v) {
  const char* modes[] = {"nearest", "linear", "cubic"};
  OnnxBuilder b;
  b.input("x", {-1, r.pick(1, 4), r.pick(1, 6), r.pick(1, 6)}).output("y");
  b.floats("scales", {4}, {1.f, 1.f, static_cast<float>(r.pick(1, 3)), static_cast<float>(r.pick(1, 3))});
  auto& n = b.node("Resize", "resize", {"x", "", "scales"}, {"y"});
  OnnxBuilder::attr(n, "mode", std::string(modes[v % 3]));
  if (v % 2) OnnxBuilder::attr(n, "coordinate_transformation_mode", std::string(v % 3 == 1 ? "align_corners" : "asymmetric"));
  return b.bytes();
}

// ONNX Split along the channels: one Slice op per output.
std::string split_case(Rng& r, int) {
  const int a = r.pick(1, 4), c = r.pick(1, 4);
  OnnxBuilder b;
  b.input("x", {-1, a + c, r.pick(1, 6), r.pick(1, 6)}).output("y0").output("y1");
  b.ints("split", {2}, {a, c});
  auto& n = b.node("Split", "split", {"x", "split"}, {"y0", "y1"});
  OnnxBuilder::attr(n, "axis", int64_t{1});
  return b.bytes();
}

std::string depth_to_space_case(Rng& r, int v) {
  const int block = r.pick(2, 3), c = r.pick(1, 3);
  OnnxBuilder b;
  if (v % 3 == 2) {
    b.input("x", {-1, c, block * r.pick(1, 4), block * r.pick(1, 4)}).output("y");
    auto& n = b.node("SpaceToDepth", "s2d", {"x"}, {"y"});
    OnnxBuilder::attr(n, "blocksize", static_cast<int64_t>(block));
    return b.bytes();
  }
  b.input("x", {-1, c * block * block, r.pick(1, 5), r.pick(1, 5)}).output("y");
  auto& n = b.node("DepthToSpace", "d2s", {"x"}, {"y"});
  OnnxBuilder::attr(n, "blocksize", static_cast<int64_t>(block));
  OnnxBuilder::attr(n, "mode", std::string(v % 3 ? "CRD" : "DCR"));
  return b.bytes();
}

std::string instance_norm_case(Rng& r, int) {
  const int c = r.pick(1, 6);
  OnnxBuilder b;
  b.input("x", {-1, c, r.pick(1, 9), r.pick(1, 9)}).output("y");
  b.floats("s", {c}, r.values(static_cast<size_t>(c), 1.f)).floats("b", {c}, r.values(static_cast<size_t>(c), 1.f));
  b.node("InstanceNormalization", "norm", {"x", "s", "b"}, {"n"});
  b.node("Relu", "relu", {"n"}, {"y"});
  return b.bytes();
}

// Run-time math (UnaryMath): each function, inputs kept in its domain by an Exp or Abs
// before it where it needs one; pow with integer, fractional and negative exponents;
// x / sqrt(y) as x * rsqrt(y); erf past its fitted range.
std::string unary_math_case(Rng& r, int v) {
  OnnxBuilder b;
  b.input("x", {-1, r.pick(1, 5), r.pick(1, 6), r.pick(1, 6)}).output("y");
  auto pow = [&](const std::string& x, float e) {
    b.floats("e", {}, {e});
    b.node("Pow", "pow", {x, "e"}, {"y"});
  };
  switch (v) {
    case 0: b.node("Exp", "exp", {"x"}, {"p"}), b.node("Sqrt", "sqrt", {"p"}, {"y"}); break;
    case 1: b.node("Exp", "exp", {"x"}, {"p"}), b.node("Log", "log", {"p"}, {"y"}); break;
    case 2: b.node("Erf", "erf", {"x"}, {"y"}); break;
    case 3: pow("x", 3.f); break;
    case 4: b.node("Exp", "exp", {"x"}, {"p"}), pow("p", -1.7f); break;
    case 5: b.node("Abs", "abs", {"x"}, {"p"}), pow("p", 2.5f); break;
    case 6: b.node("Neg", "neg", {"x"}, {"y"}); break;
    case 7:
      b.input("d", {-1, 1, 1, 1});
      b.node("Exp", "exp", {"d"}, {"e"}), b.node("Sqrt", "sqrt", {"e"}, {"s"}), b.node("Div", "div", {"x", "s"}, {"y"});
      break;
    default:
      b.floats("k", {}, {3.f});
      b.node("Mul", "mul", {"x", "k"}, {"p"}), b.node("Erf", "erf", {"p"}, {"y"});
      break;
  }
  return b.bytes();
}

// ReduceSum/Mean/Max/L2 over the channels (pixel norm), the pixels (squeeze-and-excitation),
// everything but the batch, one spatial axis, and over rank-3 tensors; keepdims 0 as well.
std::string reduce_case(Rng& r, int v) {
  const char* ops[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceL2"};
  const std::vector<int64_t> axes[] = {{1}, {2, 3}, {1, 2, 3}, {3}, {1, 3}, {-1}, {1}};
  const std::vector<int64_t>& ax = axes[v % std::size(axes)];
  OnnxBuilder b;
  if (v % std::size(axes) >= 5) b.input("x", {-1, r.pick(1, 7), r.pick(1, 7)});
  else b.input("x", {-1, r.pick(1, 6), r.pick(1, 6), r.pick(1, 6)});
  b.output("y");
  const std::string op = ops[v % 4];
  std::vector<std::string> in = {"x"};
  if (op == "ReduceSum") b.ints("axes", {static_cast<int64_t>(ax.size())}, ax), in.push_back("axes");
  auto& n = b.node(op, "reduce", in, {"y"});
  if (op != "ReduceSum") OnnxBuilder::attr(n, "axes", ax);
  OnnxBuilder::attr(n, "keepdims", int64_t{v % 3 != 2});
  return b.bytes();
}

// Softmax along the channels, a spatial axis or the last axis of rank-4 and rank-3 tensors
// (attention's rows), with inputs large enough that the maximum's subtraction matters.
std::string softmax_case(Rng& r, int v) {
  const int64_t axes[] = {1, -1, 2, -1, 1};
  OnnxBuilder b;
  if (v >= 3) b.input("x", {-1, r.pick(1, 9), r.pick(1, 9)});
  else b.input("x", {-1, r.pick(1, 6), r.pick(1, 6), r.pick(1, 6)});
  b.output("y");
  b.floats("k", {}, {r.uniform(4.f, 40.f)});
  b.node("Mul", "scale", {"x", "k"}, {"s"});
  auto& n = b.node("Softmax", "softmax", {"s"}, {"y"});
  OnnxBuilder::attr(n, "axis", axes[v % std::size(axes)]);
  return b.bytes();
}

// MatMul of two run-time tensors: rank 3, rank 4 with heads, and heads broadcast from
// either side.
std::string matmul_case(Rng& r, int v) {
  const int64_t m = r.pick(1, 7), k = r.pick(1, 9), n = r.pick(1, 7), h = r.pick(2, 3);
  OnnxBuilder b;
  if (v % 4 == 0) {
    b.input("a", {-1, m, k}).input("b", {-1, k, n});
  } else {
    b.input("a", {-1, v % 4 == 2 ? 1 : h, m, k}).input("b", {-1, v % 4 == 3 ? 1 : h, k, n});
  }
  b.output("y");
  b.node("MatMul", "matmul", {"a", "b"}, {"y"});
  return b.bytes();
}

// Transpose of run-time tensors: rank 3 (k.permute(0, 2, 1)) and rank-4 permutations that
// are not a pixel shuffle.
std::string transpose_case(Rng& r, int v) {
  const std::vector<int64_t> perms[] = {{0, 2, 1}, {0, 1, 3, 2}, {0, 2, 1, 3}, {0, 3, 2, 1}, {0, 2, 3, 1}};
  const std::vector<int64_t>& perm = perms[v % std::size(perms)];
  OnnxBuilder b;
  if (perm.size() == 3) b.input("x", {-1, r.pick(1, 7), r.pick(1, 7)});
  else b.input("x", {-1, r.pick(1, 5), r.pick(1, 5), r.pick(1, 5)});
  b.output("y");
  auto& n = b.node("Transpose", "transpose", {"x"}, {"y"});
  OnnxBuilder::attr(n, "perm", perm);
  return b.bytes();
}

// GridSample over every mode x padding x align_corners, the grid a run-time input
// (ONNX's [N, Ho, Wo, 2], or the importer's grouped map [N, 2*groups, Ho, Wo], with
// offsets in input pixels); some grids times 4, reaching far outside the map.
std::string grid_sample_case(Rng& r, int v) {
  const char* modes[] = {"bilinear", "nearest", "bicubic"};
  const char* paddings[] = {"zeros", "border", "reflection"};
  const bool grouped = v % 4 == 3, offsets = grouped && v % 8 == 7;
  const int groups = grouped ? r.pick(1, 3) : 1, c = groups * r.pick(1, 3);
  const int h = r.pick(1, 7), w = r.pick(1, 7), scale = r.pick(1, 3);
  const int ho = offsets ? h * scale : r.pick(1, 7), wo = offsets ? w * scale : r.pick(1, 7);
  OnnxBuilder b;
  b.input("x", {-1, c, h, w}).output("y");
  b.input("grid", grouped ? std::vector<int64_t>{-1, 2 * groups, ho, wo} : std::vector<int64_t>{-1, ho, wo, 2});
  std::string grid = "grid";
  if (v % 5 >= 3) {
    b.floats("far", {}, {4.f});
    b.node("Mul", "far", {"grid", "far"}, {"g4"});
    grid = "g4";
  }
  auto& n = b.node("GridSample", "sample", {"x", grid}, {"y"});
  OnnxBuilder::attr(n, "mode", std::string(modes[v % 3]));
  OnnxBuilder::attr(n, "padding_mode", std::string(paddings[(v / 3) % 3]));
  OnnxBuilder::attr(n, "align_corners", int64_t{(v / 9) % 2});
  if (grouped) OnnxBuilder::attr(n, "edgegan_groups", int64_t{groups});
  if (offsets) OnnxBuilder::attr(n, "edgegan_offsets", int64_t{1});
  return b.bytes();
}

struct Family {
  const char* name;
  CaseMaker make;
  int variants;
  const char* kind;  // the op kind every case of the family must hold (the converter may fuse the rest)
};

const Family kFamilies[] = {
    {"conv", conv_case, 26, "Conv2D"},
    {"conv_transpose", conv_transpose_case, 26, "ConvTranspose2D"},
    {"gemm", gemm_case, 11, "Dense"},
    {"activation", activation_case, 11, "Elementwise"},
    {"binary", binary_case, 8, "Binary"},
    {"concat", concat_case, 3, "Concat"},
    {"batch_norm", batch_norm_case, 3, "ChannelAffine"},
    {"prelu", prelu_case, 3, "PRelu"},
    {"flatten", flatten_case, 3, "Dense"},
    {"pad", pad_case, 12, "Pad"},
    {"conv_input_map", conv_input_map_case, 6, "Conv2D"},
    {"pool", pool_case, 8, "Pool"},
    {"resize", resize_case, 6, "Resize"},
    {"split", split_case, 3, "Slice"},
    {"depth_to_space", depth_to_space_case, 6, "DepthToSpace"},
    {"instance_norm", instance_norm_case, 3, "GroupNorm"},
    {"unary_math", unary_math_case, 9, "UnaryMath"},
    {"reduce", reduce_case, 8, "Reduce"},
    {"softmax", softmax_case, 5, "Softmax"},
    {"matmul", matmul_case, 4, "MatMul"},
    {"transpose", transpose_case, 5, "Transpose"},
    {"gelu_silu", gelu_silu_case, 4, "Elementwise"},
    {"layer_norm", layer_norm_case, 4, "Reduce"},
    {"grid_sample", grid_sample_case, 18, "GridSample"},
};

std::vector<Tensor> random_inputs(const Model& model, int batch, Rng& r) {
  std::vector<Tensor> inputs;
  for (const InputInfo& info : model.inputs()) {
    Tensor t;
    t.name = info.name, t.dtype = info.dtype, t.layout = info.layout, t.shape = info.dims;
    t.shape[0] = batch;
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    t.f32 = r.values(static_cast<size_t>(count), 1.5f);
    // Nearest sampling jumps with the coordinate: a grid exact in half precision picks the
    // same pixels in an fp16 session as in fp32.
    if (t.name == "grid")
      for (float& x : t.f32) x = std::round(x * 256.f) / 256.f;
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// The tolerance of a precision against the CPU's fp32, relative to max(1, max|y|): fp16
// rounds every stored activation and weight to 11 significant bits (2^-11 relative),
// and a layer's error grows with the values summed into it.
float tolerance(Precision p) { return p == Precision::kFp16 ? 2e-2f : 1e-4f; }

class BackendOps : public ::testing::TestWithParam<std::tuple<Backend, Precision, int>> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::kVulkanTestEnvironment);  // set before main() (see the header)
    std::string why;
    if (!backend_available(backend(), &why)) GTEST_SKIP() << why;
    if (!backend_runs_precision(backend(), precision(), &why)) GTEST_SKIP() << why;
  }
  void TearDown() override {
    if (backend() == Backend::kVulkan) {
      EXPECT_EQ(vulkan_validation_messages(), 0) << "the Vulkan validation layer reported the messages above";
    }
  }
  Backend backend() const { return std::get<0>(GetParam()); }
  Precision precision() const { return std::get<1>(GetParam()); }
  int family_index() const { return std::get<2>(GetParam()); }
  const Family& family() const { return kFamilies[family_index()]; }
};

TEST_P(BackendOps, AgreesWithTheCpu) {
  const Family& f = family();
  int compared = 0, refused = 0;
  for (int v = 0; v < f.variants; ++v) {
    Rng r{std::mt19937(static_cast<unsigned>(1000 * family_index() + v))};
    const std::string onnx = f.make(r, v);
    const std::vector<uint8_t> egan = converter::convert_onnx(onnx, std::string(f.name) + ".onnx").egan;
    const auto model = Model::from_bytes(egan);
    std::string kinds;
    bool unwritten = false, has_kind = false;
    for (const OpInfo& op : model->ops()) {
      kinds += " " + op.kind;
      unwritten = unwritten || unwritten_kinds(backend()).count(op.kind);
      has_kind = has_kind || op.kind == f.kind;
    }
    SCOPED_TRACE(std::string(f.name) + " variant " + std::to_string(v) + ", ops:" + kinds);
    EXPECT_TRUE(has_kind) << "the case holds no " << f.kind;
    for (int batch : {1, 2}) {
      SessionOptions o;
      o.backend = backend();
      o.precision = precision();
      o.batch = batch;
      o.threads = 2;
      if (unwritten) {
        try {
          Session s(model, o);
          FAIL() << "a case with an op listed as unwritten ran; take it off unwritten_kinds()";
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find(std::string("the ") + to_string(backend()) + " backend cannot run op"), std::string::npos) << e.what();
        }
        ++refused;
        break;
      }
      const auto inputs = random_inputs(*model, batch, r);
      SessionOptions cpu = o;
      cpu.backend = Backend::kCpu;
      cpu.precision = Precision::kFp32;
      const auto want = Session(model, cpu).run(inputs);
      const auto got = Session(model, o).run(inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].shape, want[i].shape);
        float scale = 1.f;
        for (float y : want[i].f32) scale = std::max(scale, std::fabs(y));
        EXPECT_LE(edgegan::testing::max_abs_diff(got[i].f32, want[i].f32), tolerance(precision()) * scale) << got[i].name << ", batch " << batch;
      }
      ++compared;
    }
  }
  // Every case ran at both batches, or was refused as listed.
  EXPECT_EQ(compared + refused * 2, 2 * f.variants);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<Backend, Precision, int>>& info) {
  const Precision p = std::get<1>(info.param);
  return std::string(to_string(std::get<0>(info.param))) + (p == Precision::kFp32 ? "" : std::string("_") + to_string(p)) + "_" +
         kFamilies[std::get<2>(info.param)].name;
}

INSTANTIATE_TEST_SUITE_P(Ops, BackendOps,
                         ::testing::Combine(::testing::Values(Backend::kCpu, Backend::kCuda, Backend::kVulkan), ::testing::Values(Precision::kFp32),
                                            ::testing::Range(0, static_cast<int>(std::size(kFamilies)))),
                         case_name);
// Half storage, on the backends that have it (the others skip, saying why); the CPU's
// through its adapter around the fp32 kernels, against its own fp32.
INSTANTIATE_TEST_SUITE_P(Fp16, BackendOps,
                         ::testing::Combine(::testing::Values(Backend::kCpu, Backend::kCuda, Backend::kVulkan), ::testing::Values(Precision::kFp16),
                                            ::testing::Range(0, static_cast<int>(std::size(kFamilies)))),
                         case_name);

// The CPU's native half-storage routes (kernels that read and write an fp16 session's
// halves themselves) against the adapter around the fp32 kernels, over every family's
// shapes (other seeds than above) at 1 and 3 threads: a route widens exactly, computes
// in fp32 as the fp32 kernel and narrows as the adapter does, so the outputs are the
// same bits. A family without a native route compares the adapter with itself.
// The native routes' storage against the adapter's: at neonfp16arith the convolutions
// compute in halves (kernels_test's Conv2DHalfArithmetic measures them), so these
// comparisons run the routes' fp32 arithmetic there (plain NEON).
cpu::Isa fp32_arithmetic_isa() { return cpu::active_isa() == cpu::Isa::kNeonFp16Arith ? cpu::Isa::kNeon : cpu::active_isa(); }

class HalfRoutes : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override { set_half_storage_native_routes(true); }
};

TEST_P(HalfRoutes, MatchTheAdapterBitForBit) {
  const cpu::ScopedIsa isa(fp32_arithmetic_isa());
  const Family& f = kFamilies[GetParam()];
  for (int v = 0; v < f.variants; ++v) {
    Rng r{std::mt19937(static_cast<unsigned>(500000 + 1000 * GetParam() + v))};
    const auto model = Model::from_bytes(converter::convert_onnx(f.make(r, v), std::string(f.name) + ".onnx").egan);
    SCOPED_TRACE(std::string(f.name) + " variant " + std::to_string(v));
    SessionOptions o;
    o.backend = Backend::kCpu;
    o.precision = Precision::kFp16;
    o.threads = 1 + 2 * (v % 2);
    const auto inputs = random_inputs(*model, 1, r);
    set_half_storage_native_routes(false);
    Session adapter(model, o);
    set_half_storage_native_routes(true);
    Session native(model, o);
    const auto want = adapter.run(inputs);
    const auto got = native.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].f32.size(), want[i].f32.size());
      size_t differ = 0;
      for (size_t k = 0; k < got[i].f32.size(); ++k) differ += std::memcmp(&got[i].f32[k], &want[i].f32[k], sizeof(float)) != 0;
      EXPECT_EQ(differ, 0u) << got[i].name << ": values that differ from the adapter's";
    }
  }
}

// Layers conv2d_thin takes (k3-7 stride 1, rows of 16 or more; 1-4 inputs to 8-24
// outputs, or 5-40 inputs to 8-16), with every activation, sometimes a reflect pad
// fused as its input map or a residual (which leaves the layer to the adapter): the
// families' maps are too small for it.
std::string thin_conv_case(Rng& r, int v) {
  const bool thin_input = v % 2 == 0;
  const int cin = thin_input ? r.pick(1, 4) : r.pick(5, 40), cout = thin_input ? r.pick(8, 24) : r.pick(8, 16);
  const int k = 3 + 2 * r.pick(0, 2), h = r.pick(1, 6), w = r.pick(16, 40);
  const std::string act = kActivations[static_cast<size_t>(v) % std::size(kActivations)];
  const bool residual = act.empty(), reflect = v % 3 == 1;
  OnnxBuilder b;
  b.input("x", {-1, cin, h, w}).output("y");
  b.floats("W", {cout, cin, k, k}, r.values(static_cast<size_t>(cout * cin * k * k), 0.5f));
  b.floats("B", {cout}, r.values(static_cast<size_t>(cout), 0.3f));
  std::string in = "x";
  std::vector<int64_t> pads = {k / 2, k / 2, k / 2, k / 2};
  if (reflect && h > k / 2) {  // a reflect Pad the converter fuses into the convolution
    b.ints("pads", {8}, {0, 0, k / 2, k / 2, 0, 0, k / 2, k / 2});
    auto& p = b.node("Pad", "pad", {"x", "pads"}, {"p"});
    OnnxBuilder::attr(p, "mode", std::string("reflect"));
    in = "p";
    pads = {0, 0, 0, 0};
  }
  auto& n = b.node("Conv", "conv", {in, "W", "B"}, {act.empty() && !residual ? "y" : "c"});
  OnnxBuilder::attr(n, "pads", pads);
  if (!act.empty()) activation(b, r, act, cout, "c", "y");
  if (residual) {
    b.input("skip", {-1, cout, h, w});
    b.node("Add", "add", {"c", "skip"}, {"y"});
  }
  return b.bytes();
}

// Layers conv2d_trimmed takes (or Winograd, which stays adapted): 1-15 input channels
// (its gathered taps) and 16-40 (its GEMM over pixel blocks); kernels 1-3, strides 1-2,
// every activation, residuals (adapted).
std::string trimmed_conv_case(Rng& r, int v) {
  const int cin = v % 2 ? r.pick(16, 40) : r.pick(1, 15), cout = r.pick(4, 40), k = r.pick(1, 3), stride = r.pick(1, 2);
  const int h = r.pick(k, 12), w = r.pick(k, 12);
  const std::string act = kActivations[static_cast<size_t>(v) % std::size(kActivations)];
  const bool residual = act.empty() && stride == 1 && k % 2 == 1;
  OnnxBuilder b;
  b.input("x", {-1, cin, h, w}).output("y");
  b.floats("W", {cout, cin, k, k}, r.values(static_cast<size_t>(cout * cin * k * k), 0.3f));
  b.floats("B", {cout}, r.values(static_cast<size_t>(cout), 0.3f));
  auto& n = b.node("Conv", "conv", {"x", "W", "B"}, {act.empty() && !residual ? "y" : "c"});
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{stride, stride});
  OnnxBuilder::attr(n, "pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  if (!act.empty()) activation(b, r, act, cout, "c", "y");
  if (residual) {
    b.input("skip", {-1, cout, h, w});
    b.node("Add", "add", {"c", "skip"}, {"y"});
  }
  return b.bytes();
}

// Layers conv2d_winograd takes (3x3 stride 1, 16-40 channels, 64 or more 4x4 windows),
// every activation, a reflect pad fused as its input map on every third, a residual
// (left to the adapter) on every fourth.
std::string winograd_conv_case(Rng& r, int v) {
  const int cin = r.pick(16, 40), cout = r.pick(16, 40), h = r.pick(29, 36), w = r.pick(29, 36);
  const std::string act = kActivations[static_cast<size_t>(v) % std::size(kActivations)];
  const bool residual = v % 4 == 3, reflect = v % 3 == 1;
  OnnxBuilder b;
  b.input("x", {-1, cin, h, w}).output("y");
  b.floats("W", {cout, cin, 3, 3}, r.values(static_cast<size_t>(cout * cin * 9), 0.3f));
  b.floats("B", {cout}, r.values(static_cast<size_t>(cout), 0.3f));
  std::string in = "x";
  std::vector<int64_t> pads = {1, 1, 1, 1};
  if (reflect) {  // a reflect Pad the converter fuses into the convolution
    b.ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
    auto& p = b.node("Pad", "pad", {"x", "pads"}, {"p"});
    OnnxBuilder::attr(p, "mode", std::string("reflect"));
    in = "p";
    pads = {0, 0, 0, 0};
  }
  const bool last = act.empty() && !residual;
  OnnxBuilder::attr(b.node("Conv", "conv", {in, "W", "B"}, {last ? "y" : "c"}), "pads", pads);
  if (!act.empty()) activation(b, r, act, cout, "c", residual ? "a" : "y");
  if (residual) {
    b.input("skip", {-1, cout, h, w});
    b.node("Add", "add", {act.empty() ? "c" : "a", "skip"}, {"y"});
  }
  return b.bytes();
}

// One ConvTranspose layer with bias and variant v's activation, the model of both
// transposed-convolution families below.
std::string transposed_conv_model(Rng& r, int v, const char* name, int cin, int cout, int k, int stride, int pad, int h, int w) {
  const std::string act = kActivations[static_cast<size_t>(v) % std::size(kActivations)];
  OnnxBuilder b;
  b.input("x", {-1, cin, h, w}).output("y");
  b.floats("W", {cin, cout, k, k}, r.values(static_cast<size_t>(cin * cout * k * k), 0.3f));
  b.floats("B", {cout}, r.values(static_cast<size_t>(cout), 0.3f));
  auto& n = b.node("ConvTranspose", name, {"x", "W", "B"}, {act.empty() ? "y" : "c"});
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{stride, stride});
  OnnxBuilder::attr(n, "pads", std::vector<int64_t>{pad, pad, pad, pad});
  if (!act.empty()) activation(b, r, act, cout, "c", "y");
  return b.bytes();
}

// Layers the split ConvTranspose2D's GEMM path takes (fewer than 9 outputs are heads
// and thin layers, left to the adapter): kernels 1-5 at strides 1-3 with pads, every
// activation; and (winograd) k4 s2 layers on maps large enough for the Winograd form,
// whole filters at 16-32 channels and, every third, sliced at 128.
std::string transposed_conv_layer(Rng& r, int v, bool winograd) {
  const bool sliced = winograd && v % 3 == 2;
  const int stride = winograd ? 2 : r.pick(1, 3), k = winograd ? 4 : r.pick(1, 5), pad = winograd ? 1 : r.pick(0, (k - 1) / 2);
  const int cin = sliced ? 128 : winograd ? r.pick(16, 32) : r.pick(3, 40), cout = sliced ? 128 : winograd ? r.pick(16, 32) : r.pick(9, 40);
  const int h = sliced ? 16 : winograd ? r.pick(32, 34) : r.pick(1, 8), w = sliced ? 16 : winograd ? r.pick(32, 34) : r.pick(1, 8);
  return transposed_conv_model(r, v, "deconv", cin, cout, k, stride, pad, h, w);
}
std::string transposed_conv_case(Rng& r, int v) { return transposed_conv_layer(r, v, false); }
std::string winograd_transposed_conv_case(Rng& r, int v) { return transposed_conv_layer(r, v, true); }

// Heads (1-4 outputs) on the split kernel's dot path: kernels 2-5, strides 1-3, pads,
// every activation.
std::string transposed_conv_head_case(Rng& r, int v) {
  const int stride = r.pick(1, 3), k = r.pick(2, 5), pad = r.pick(0, (k - 1) / 2), cin = r.pick(3, 64), cout = r.pick(1, 4);
  const int h = r.pick(1, 10), w = r.pick(1, 10);
  return transposed_conv_model(r, v, "head", cin, cout, k, stride, pad, h, w);
}

// Dense layers of 1-300 outputs (several column blocks), every fused activation.
std::string dense_case(Rng& r, int v) {
  const int in = r.pick(1, 100), out = r.pick(1, 300);
  const std::string act = kActivations[static_cast<size_t>(v) % (std::size(kActivations) - 2)];  // no PRelu, or none
  OnnxBuilder b;
  b.input("x", {-1, in}).output("y");
  b.floats("W", {in, out}, r.values(static_cast<size_t>(in * out), 0.5f)).floats("B", {out}, r.values(static_cast<size_t>(out), 0.3f));
  b.node("Gemm", "gemm", {"x", "W", "B"}, {"g"});
  activation(b, r, act, out, "g", "y");
  return b.bytes();
}

// `cases` layers from `make`, each at fp16 with native routes and through the adapter
// alone: the same bits; at least `min_native` of them ran `kernel`.
void expect_native_matches_adapter(std::string (*make)(Rng&, int), unsigned seed, int cases, const std::string& kernel, int min_native) {
  const cpu::ScopedIsa isa(fp32_arithmetic_isa());
  int native = 0;
  for (int v = 0; v < cases; ++v) {
    Rng r{std::mt19937(seed + static_cast<unsigned>(v))};
    const auto model = Model::from_bytes(converter::convert_onnx(make(r, v), "case.onnx").egan);
    SCOPED_TRACE(kernel + " case " + std::to_string(v));
    SessionOptions o;
    o.precision = Precision::kFp16;
    o.threads = 1 + 2 * (v % 2);
    o.batch = 1 + v % 2;
    const auto inputs = random_inputs(*model, o.batch, r);
    set_half_storage_native_routes(false);
    Session adapter(model, o);
    set_half_storage_native_routes(true);
    Session session(model, o);
    for (const std::string& k : session.kernel_names()) native += k == kernel;
    const auto want = adapter.run(inputs);
    const auto got = session.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].f32.size(), want[i].f32.size());
      EXPECT_EQ(std::memcmp(got[i].f32.data(), want[i].f32.data(), got[i].f32.size() * sizeof(float)), 0) << got[i].name;
    }
  }
  EXPECT_GE(native, min_native) << kernel << "'s fp16 route ran too rarely to be tested";
}

TEST(HalfRoutes, ThinConvolutionsMatchTheAdapterBitForBit) { expect_native_matches_adapter(thin_conv_case, 700000, 14, "conv2d_thin_f16", 10); }

TEST(HalfRoutes, TrimmedConvolutionsMatchTheAdapterBitForBit) { expect_native_matches_adapter(trimmed_conv_case, 710000, 20, "conv2d_trimmed_f16", 10); }

TEST(HalfRoutes, WinogradConvolutionsMatchTheAdapterBitForBit) {
  expect_native_matches_adapter(winograd_conv_case, 740000, 8, "conv2d_winograd_f16", 6);
}

TEST(HalfRoutes, DenseLayersMatchTheAdapterBitForBit) { expect_native_matches_adapter(dense_case, 760000, 10, "dense_f16", 10); }

TEST(HalfRoutes, TransposedConvolutionsMatchTheAdapterBitForBit) {
  expect_native_matches_adapter(transposed_conv_case, 720000, 14, "conv_transpose2d_split_f16", 14);
  expect_native_matches_adapter(winograd_transposed_conv_case, 730000, 6, "conv_transpose2d_split_winograd_f16", 6);
  // Heads take the dot path on the families with a dot kernel and no pixel lanes (AVX2,
  // NEON); AVX-512's pixel lanes and the scalar family's phase lanes stay adapted.
  const cpu::Isa isa = cpu::active_isa();
  const bool dot_path = isa == cpu::Isa::kAvx2 || isa == cpu::Isa::kNeon || isa == cpu::Isa::kNeonFp16Arith;
  expect_native_matches_adapter(transposed_conv_head_case, 750000, 10, "conv_transpose2d_split_f16", dot_path ? 10 : 0);
}

// A middle layer whose output passes the half range (3x3 taps of weight 1 on a map of
// 20000s: 180000 in every pixel) has that tensor kept as fp32, the plan made again once
// with one line naming the layer: the next layer (scaling by 1/1024) reads the floats
// through the adapter and the output matches the fp32 session within fp16's tolerance;
// the second run re-plans nothing and allocates nothing.
TEST(HalfRoutes, AnOverflowingLayerIsKeptAsFp32) {
  OnnxBuilder b;
  b.input("x", {-1, 1, 3, 16}).output("y");
  b.floats("W", {8, 1, 3, 3}, std::vector<float>(72, 1.f));
  b.floats("S", {8, 8, 1, 1}, std::vector<float>(64, 1.f / 1024));
  OnnxBuilder::attr(b.node("Conv", "thin", {"x", "W"}, {"h"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Conv", "scale", {"h", "S"}, {"y"});
  const auto model = Model::from_bytes(converter::convert_onnx(b.bytes(), "overflow.onnx").egan);
  SessionOptions o;
  o.precision = Precision::kFp16;
  Session session(model, o);
  ASSERT_EQ(session.kernel_names().front(), "conv2d_thin_f16");
  Rng r{std::mt19937(7)};
  auto inputs = random_inputs(*model, 1, r);
  for (float& x : inputs[0].f32) x = 20000.f;
  const uint64_t arena = session.arena_bytes();
  ::testing::internal::CaptureStderr();
  const auto got = session.run(inputs);
  const std::string notice = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(notice, "edgegan: op 'thin' (Conv2D): its output is past the half range at fp16; kept as fp32 from now on\n");
  EXPECT_EQ(session.kernel_names().front(), "conv2d_thin+f16") << "the layer writing fp32 runs through the adapter";
  // The session's arena is the plan with that tensor at 4 bytes a value (and no native
  // route's blocks for the two layers: smaller here).
  const Model::Impl& m = model->impl();
  PlanOptions kept;
  kept.threads = session.threads();
  kept.precision = Precision::kFp16;
  kept.fp32_tensors.assign(m.tensors.size(), 0);
  const auto h = std::find_if(m.tensors.begin(), m.tensors.end(), [](const TensorDesc& t) { return t.name == "h"; });
  ASSERT_NE(h, m.tensors.end());
  kept.fp32_tensors[static_cast<size_t>(h - m.tensors.begin())] = 1;
  const SessionPlan plan = build_session_plan(m, compute_backend(Backend::kCpu, "test"), kept, m, nullptr);
  EXPECT_EQ(tensor_bytes(m, plan, static_cast<int>(h - m.tensors.begin())), 3u * 16 * 8 * 4);
  EXPECT_EQ(session.arena_bytes(), plan.arena_bytes);
  EXPECT_NE(session.arena_bytes(), arena);
  const uint64_t allocated = session.measured_allocation_bytes();
  ::testing::internal::CaptureStderr();
  const auto again = session.run(inputs);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(session.measured_allocation_bytes(), allocated) << "the second run allocated";
  SessionOptions full;
  const auto want = Session(model, full).run(inputs);
  ASSERT_EQ(got.size(), 1u);
  float scale = 1.f;
  for (float y : want[0].f32) scale = std::max(scale, std::fabs(y));
  EXPECT_LE(edgegan::testing::max_abs_diff(got[0].f32, want[0].f32), 2e-2f * scale);
  EXPECT_EQ(std::memcmp(again[0].f32.data(), got[0].f32.data(), got[0].f32.size() * sizeof(float)), 0);
  for (float y : got[0].f32) ASSERT_TRUE(std::isfinite(y));
}

INSTANTIATE_TEST_SUITE_P(Cpu, HalfRoutes, ::testing::Range(0, static_cast<int>(std::size(kFamilies))),
                         [](const ::testing::TestParamInfo<int>& info) { return std::string(kFamilies[info.param].name); });

}  // namespace
}  // namespace edgegan

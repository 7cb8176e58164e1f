// Run-time math (UnaryMath, Reduce, Softmax, MatMul, Transpose): what small graphs
// become and that they compute what plain loops over the ONNX (NCHW) layout compute;
// the refusals name the node and what is refused. (Transposes that are not a pixel
// shuffle were refused before these ops existed.)
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/converted_model.h"
#include "tests/converter/converter_test_util.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::convert_error;
using testing::converted_model;
using testing::nhwc;
using testing::nhwc_from_nchw;
using testing::nhwc_to_nchw;
using testing::op_kinds;
using testing::OnnxBuilder;
using testing::random_floats;
using testing::torch_gelu_erf;

std::vector<float> run_map(const std::shared_ptr<const Model>& model, const std::vector<float>& x_nchw, int64_t n, int64_t c, int64_t h,
                           int64_t w, int threads) {
  Session s(model, {.threads = threads, .batch = static_cast<int>(n)});
  return s.run({nhwc_from_nchw("x", x_nchw, n, c, h, w)})[0].f32;
}

// Pixel norm as torch exports it: Pow 2, ReduceMean over channels, Add eps, Sqrt, Div.
TEST(ConverterTensorMath, PixelNormIsPowReduceRsqrtProduct) {
  const int64_t n = 2, c = 5, h = 3, w = 4;
  OnnxBuilder b;
  b.input("x", {-1, c, h, w}).output("y").floats("two", {}, {2.f}).floats("eps", {}, {1e-8f}).ints("axes", {1}, {1});
  b.node("Pow", "sq", {"x", "two"}, {"p"});
  OnnxBuilder::attr(b.node("ReduceMean", "mean", {"p"}, {"m"}), "axes", std::vector<int64_t>{1});
  b.node("Add", "addeps", {"m", "eps"}, {"a"});
  b.node("Sqrt", "root", {"a"}, {"r"});
  b.node("Div", "norm", {"x", "r"}, {"y"});
  const auto model = converted_model(b.bytes());
  EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"UnaryMath", "Reduce", "ChannelAffine", "UnaryMath", "Binary"}));
  EXPECT_EQ(model->ops()[3].attributes, "Rsqrt");
  EXPECT_EQ(model->ops()[4].attributes, "mul");
  std::mt19937 rng(61);
  const auto x = random_floats(rng, static_cast<size_t>(n * c * h * w));
  for (int threads : {1, 2}) {
    const auto y = nhwc_to_nchw(run_map(model, x, n, c, h, w, threads), n, c, h * w);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t i = 0; i < h * w; ++i) {
        double ss = 0;
        for (int64_t k = 0; k < c; ++k) ss += std::pow(x[static_cast<size_t>((a * c + k) * h * w + i)], 2);
        const double r = std::sqrt(ss / c + 1e-8);
        for (int64_t k = 0; k < c; ++k) {
          const size_t j = static_cast<size_t>((a * c + k) * h * w + i);
          ASSERT_NEAR(y[j], x[j] / r, 1e-5 * std::max(1.0, std::fabs(x[j] / r)));
        }
      }
  }
}

// keepdims = 0 over H x W: the kept-dims Reduce and a Reshape to [N, C].
TEST(ConverterTensorMath, ReduceWithoutKeepdimsAndEveryOperation) {
  const int64_t n = 2, c = 3, h = 4, w = 5;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2"}) {
    SCOPED_TRACE(op);
    OnnxBuilder b;
    b.input("x", {-1, c, h, w}).output("y");
    auto& node = b.node(op, "r", {"x"}, {"y"});
    OnnxBuilder::attr(node, "axes", std::vector<int64_t>{2, -1});
    OnnxBuilder::attr(node, "keepdims", int64_t{0});
    const auto model = converted_model(b.bytes());
    EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"Reduce", "Reshape"}));
    std::mt19937 rng(62);
    const auto x = random_floats(rng, static_cast<size_t>(n * c * h * w));
    Session s(model, {.batch = static_cast<int>(n)});
    const auto y = s.run({nhwc_from_nchw("x", x, n, c, h, w)})[0];
    ASSERT_EQ(y.shape, (std::vector<int64_t>{n, c}));
    for (int64_t a = 0; a < n * c; ++a) {
      double sum = 0, sq = 0, mx = -1e30;
      for (int64_t i = 0; i < h * w; ++i) {
        const double v = x[static_cast<size_t>(a * h * w + i)];
        sum += v, sq += v * v, mx = std::max(mx, v);
      }
      const std::string o = op;
      const double want = o == "ReduceSum" ? sum : o == "ReduceMean" ? sum / (h * w) : o == "ReduceMax" ? mx : std::sqrt(sq);
      EXPECT_NEAR(y.f32[static_cast<size_t>(a)], want, 1e-5);
    }
  }
}

// SAGAN's attention core on [N, C, L] rows: softmax(qᵀ·k)·vᵀ with two Transposes, two
// MatMuls and a Softmax, against plain loops.
TEST(ConverterTensorMath, AttentionCoreMatchesPlainLoops) {
  const int64_t n = 2, c = 3, l = 5;
  OnnxBuilder b;
  b.input("q", {-1, c, l}).input("k", {-1, c, l}).input("v", {-1, c, l}).output("y");
  OnnxBuilder::attr(b.node("Transpose", "qt", {"q"}, {"qt"}), "perm", std::vector<int64_t>{0, 2, 1});
  b.node("MatMul", "scores", {"qt", "k"}, {"s"});
  OnnxBuilder::attr(b.node("Softmax", "attn", {"s"}, {"a"}), "axis", int64_t{-1});
  OnnxBuilder::attr(b.node("Transpose", "at", {"a"}, {"at"}), "perm", std::vector<int64_t>{0, 2, 1});
  b.node("MatMul", "mix", {"v", "at"}, {"y"});
  const auto model = converted_model(b.bytes());
  EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"Transpose", "MatMul", "Softmax", "Transpose", "MatMul"}));
  std::mt19937 rng(63);
  const auto q = random_floats(rng, n * c * l), k = random_floats(rng, n * c * l), v = random_floats(rng, n * c * l);
  for (int threads : {1, 2}) {
    Session s(model, {.threads = threads, .batch = static_cast<int>(n)});
    auto row = [&](const char* name, const std::vector<float>& d) { return Tensor{name, DType::kFloat32, Layout::kRowMajor, {n, c, l}, d, {}}; };
    const auto y = s.run({row("q", q), row("k", k), row("v", v)})[0];
    ASSERT_EQ(y.shape, (std::vector<int64_t>{n, c, l}));
    for (int64_t a = 0; a < n; ++a) {
      const float *pq = q.data() + a * c * l, *pk = k.data() + a * c * l, *pv = v.data() + a * c * l;
      for (int64_t i = 0; i < l; ++i) {
        std::vector<double> e(static_cast<size_t>(l));
        double mx = -1e30, sum = 0;
        for (int64_t j = 0; j < l; ++j) {
          double d = 0;
          for (int64_t ch = 0; ch < c; ++ch) d += static_cast<double>(pq[ch * l + i]) * pk[ch * l + j];
          e[static_cast<size_t>(j)] = d, mx = std::max(mx, d);
        }
        for (double& x : e) sum += (x = std::exp(x - mx));
        for (int64_t ch = 0; ch < c; ++ch) {
          double o = 0;
          for (int64_t j = 0; j < l; ++j) o += pv[ch * l + j] * e[static_cast<size_t>(j)] / sum;
          EXPECT_NEAR(y.f32[static_cast<size_t>((a * c + ch) * l + i)], o, 1e-5);
        }
      }
    }
  }
}

// Multi-head products on NHWC-stored rank-4 tensors ([N, H, M, K] · [N, 1, K, P], the
// second operand's heads broadcast) and a Transpose of a map.
TEST(ConverterTensorMath, RankFourMatMulAndMapTranspose) {
  const int64_t n = 2, heads = 3, m = 4, kk = 5, p = 2;
  OnnxBuilder b;
  b.input("x", {-1, heads, m, kk}).input("w", {-1, 1, kk, p}).output("y");
  b.node("MatMul", "mm", {"x", "w"}, {"mmo"});
  OnnxBuilder::attr(b.node("Transpose", "tp", {"mmo"}, {"y"}), "perm", std::vector<int64_t>{0, 3, 1, 2});
  const auto model = converted_model(b.bytes());
  EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"MatMul", "Transpose"}));
  std::mt19937 rng(64);
  const auto x = random_floats(rng, n * heads * m * kk), wv = random_floats(rng, n * kk * p);
  Session s(model, {.batch = static_cast<int>(n)});
  const auto y = s.run({nhwc_from_nchw("x", x, n, heads, m, kk), nhwc("w", n, kk, p, 1, wv)})[0];
  // y: [N, P, H, M] stored NHWC [N, H, M, P].
  const auto got = nhwc_to_nchw(y.f32, n, p, heads * m);
  for (int64_t a = 0; a < n; ++a)
    for (int64_t hd = 0; hd < heads; ++hd)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < p; ++j) {
          double d = 0;
          for (int64_t q = 0; q < kk; ++q) d += static_cast<double>(x[static_cast<size_t>(((a * heads + hd) * m + i) * kk + q)]) * wv[static_cast<size_t>((a * kk + q) * p + j)];
          EXPECT_NEAR(got[static_cast<size_t>(((a * p + j) * heads + hd) * m + i)], d, 1e-5);
        }
}

// torch's decomposed GELU (erf form: x * 0.5 * (1 + erf(x / sqrt 2)); tanh form with
// Pow 3) and SiLU (x * sigmoid(x)) convert through these ops and compute the functions.
TEST(ConverterTensorMath, DecomposedGeluAndSiluMatchTheFunctions) {
  const int64_t n = 2, c = 3, l = 7;
  for (int form = 0; form < 3; ++form) {
    SCOPED_TRACE(form);
    OnnxBuilder b;
    b.input("x", {-1, c, l}).output("y");
    if (form == 0) {
      torch_gelu_erf(b, "x", "y");
    } else if (form == 1) {
      b.floats("one", {}, {1.f}).floats("half", {}, {0.5f}).floats("three", {}, {3.f}).floats("k", {}, {0.044715f}).floats("s", {}, {0.7978845608f});
      b.node("Pow", "p", {"x", "three"}, {"p"});
      b.node("Mul", "pk", {"p", "k"}, {"pk"});
      b.node("Add", "in", {"x", "pk"}, {"in"});
      b.node("Mul", "sc", {"in", "s"}, {"sc"});
      b.node("Tanh", "t", {"sc"}, {"t"});
      b.node("Add", "a", {"t", "one"}, {"a"});
      b.node("Mul", "m", {"x", "a"}, {"m"});
      b.node("Mul", "h", {"m", "half"}, {"y"});
    } else {
      b.node("Sigmoid", "sg", {"x"}, {"sg"});
      b.node("Mul", "m", {"x", "sg"}, {"y"});
    }
    const auto model = converted_model(b.bytes());
    std::mt19937 rng(65);
    const auto x = random_floats(rng, n * c * l, -4.f, 4.f);
    Session s(model, {.batch = static_cast<int>(n)});
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, {n, c, l}, x, {}}})[0];
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = form == 0   ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))
                          : form == 1 ? 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)))
                                      : v / (1 + std::exp(-v));
      EXPECT_NEAR(y.f32[i], want, 2e-6 * std::max(1.0, std::fabs(want)));
    }
  }
}

TEST(ConverterTensorMath, RefusalsNameTheNode) {
  struct Case {
    const char* name;
    std::function<void(OnnxBuilder&)> build;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"run-time exponent", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3}).input("e", {-1, 2, 3}).output("y");
         b.node("Pow", "pw", {"x", "e"}, {"y"});
       }, {"pw", "exponent must be a constant"}},
      {"vector exponent", [](OnnxBuilder& b) {
         b.input("x", {-1, 2}).output("y").floats("e", {2}, {2.f, 3.f});
         b.node("Pow", "pw", {"x", "e"}, {"y"});
       }, {"pw", "scalar"}},
      {"reduce over the batch", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3}).output("y");
         OnnxBuilder::attr(b.node("ReduceSum", "rs", {"x"}, {"y"}), "axes", std::vector<int64_t>{0});
       }, {"rs", "batch"}},
      {"softmax over the batch", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y");
         OnnxBuilder::attr(b.node("Softmax", "sm", {"x"}, {"y"}), "axis", int64_t{0});
       }, {"sm", "batch"}},
      {"transpose moving the batch", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3}).output("y");
         OnnxBuilder::attr(b.node("Transpose", "tb", {"x"}, {"y"}), "perm", std::vector<int64_t>{1, 0, 2});
       }, {"'y'", "batch"}},  // the batch-independence check names the tensor first
      {"matmul of rank 2", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).input("z", {-1, 3}).output("y");
         b.node("MatMul", "mm2", {"x", "z"}, {"y"});
       }, {"mm2", "rank 2"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxBuilder b;
    c.build(b);
    const std::string error = convert_error(b.bytes());
    ASSERT_FALSE(error.empty()) << "converted without an error";
    for (const auto& needle : c.expected) EXPECT_NE(error.find(needle), std::string::npos) << "message: " << error;
  }
}

}  // namespace
}  // namespace edgegan

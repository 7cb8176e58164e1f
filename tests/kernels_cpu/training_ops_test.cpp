// Small-op backward passes against finite differences, losses against their
// formulas and gradients, optimizers against trajectories recorded from torch.optim.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels_cpu/dense/dense.h"
#include "kernels_cpu/channel_affine/channel_affine.h"
#include "kernels_cpu/concat/concat.h"
#include "kernels_cpu/elementwise/elementwise.h"
#include "kernels_cpu/embedding/embedding.h"
#include "kernels_cpu/reshape/reshape.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/loss/loss.h"
#include "kernels_cpu/optimizer/optimizer.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using testing::random_floats;

TEST(DenseBackward, MatchesFiniteDifferences) {
  std::mt19937 rng(41);
  const int64_t rows = 3, in = 5, out = 4;
  auto x = random_floats(rng, rows * in), w = random_floats(rng, in * out), b = random_floats(rng, out);
  const auto g = random_floats(rng, rows * out);
  auto loss = [&] {
    std::vector<float> y(rows * out);
    dense_reference(rows, in, out, x.data(), w.data(), y.data(), Epilogue{b.data(), Activation::kNone, 0});
    double l = 0;
    for (size_t i = 0; i < y.size(); ++i) l += static_cast<double>(y[i]) * g[i];
    return l;
  };
  std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
  dense_backward(rows, in, out, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
  auto check = [&](std::vector<float>& v, const std::vector<float>& grad, const char* what) {
    for (size_t i = 0; i < v.size(); ++i) {
      const float saved = v[i];
      v[i] = saved + 0.1f;
      const double up = loss();
      v[i] = saved - 0.1f;
      const double down = loss();
      v[i] = saved;
      EXPECT_NEAR((up - down) / 0.2, grad[i], 1e-3) << what << "[" << i << "]";
    }
  };
  check(x, dx, "dx");
  check(w, dw, "dw");
  check(b, db, "db");
}

TEST(ActivationBackward, MatchesDerivatives) {
  for (Activation a : {Activation::kRelu, Activation::kLeakyRelu, Activation::kTanh, Activation::kSigmoid, Activation::kNone})
    for (float x : {-2.3f, -0.7f, 0.4f, 1.9f}) {  // away from ReLU's kink
      const float y = activate(x, a, 0.2f);
      const double numeric = (static_cast<double>(activate(x + 1e-3f, a, 0.2f)) - activate(x - 1e-3f, a, 0.2f)) / 2e-3;
      float grad = 1.5f;  // dy
      activation_backward(1, &y, &grad, a, 0.2f);
      EXPECT_NEAR(grad, 1.5 * numeric, 2e-3) << "activation " << static_cast<int>(a) << " at " << x;
    }
}

TEST(EmbeddingBackward, ScatterAddsRepeatedIndices) {
  const std::vector<int64_t> idx = {2, 0, 2};
  const std::vector<float> dy = {1, 2, 10, 20, 100, 200};
  std::vector<float> dtable(3 * 2, NAN);
  embedding_backward(3, idx.data(), 3, 2, dy.data(), dtable.data());
  EXPECT_EQ(dtable, (std::vector<float>{10, 20, 0, 0, 101, 202}));
}

TEST(ConcatBackward, InvertsConcat) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6};
  const std::vector<int64_t> chunks = {2, 1};
  std::vector<float> y(6);
  concat(2, {a.data(), b.data()}, chunks, y.data());
  std::vector<float> da(4), dbv(2);
  float* outs[] = {da.data(), dbv.data()};
  concat_backward(2, y.data(), 2, chunks.data(), outs);
  EXPECT_EQ(da, a);
  EXPECT_EQ(dbv, b);
}

TEST(Losses, ValuesAndGradients) {
  const std::vector<float> p = {-3.f, -0.2f, 0.f, 0.7f, 40.f}, t = {0.f, 1.f, 0.5f, 1.f, 0.f};
  std::vector<float> g(p.size());
  // BCE with logits: -(t log s(z) + (1-t) log(1-s(z))), mean; gradient (s(z) - t)/N.
  const double bce = bce_with_logits_loss(5, p.data(), t.data(), g.data());
  double expected = 0;
  for (size_t i = 0; i < 4; ++i) {
    const double s = 1 / (1 + std::exp(-static_cast<double>(p[i])));
    expected += -(t[i] * std::log(s) + (1 - t[i]) * std::log(1 - s));
  }
  expected += 40.0;  // z = 40, t = 0: log(1 + e^40) = 40 to double precision; the stable form never overflows
  EXPECT_NEAR(bce, expected / 5, 1e-9);
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(g[i], (1 / (1 + std::exp(-static_cast<double>(p[i]))) - t[i]) / 5, 1e-7);
  EXPECT_TRUE(std::isfinite(bce_with_logits_loss(1, std::vector<float>{1e30f}.data(), t.data(), g.data())));
  const double mse = mse_loss(5, p.data(), t.data(), g.data());
  EXPECT_NEAR(mse, (9 + 1.44 + 0.25 + 0.09 + 1600) / 5, 1e-5);
  EXPECT_NEAR(g[0], 2 * -3.0 / 5, 1e-7);
  const double l1 = l1_loss(5, p.data(), t.data(), g.data());
  EXPECT_NEAR(l1, (3 + 1.2 + 0.5 + 0.3 + 40) / 5, 1e-5);
  EXPECT_NEAR(g[1], -0.2, 1e-7);
}

// Expected parameters after three steps, recorded from torch 1.13:
//   grads = [[0.3,-1.2,0.05], [-0.7,0.4,0.9], [0.2,0.2,-0.3]]; p0 = [1.0,-2.0,0.5]
//   for g in grads: opt.zero_grad(); p.grad = g; opt.step()
struct OptimCase {
  const char* name;
  std::function<void(std::vector<float>&, const std::vector<float>&, std::vector<float>&, std::vector<float>&, int64_t)> step;
  std::vector<float> expected;
};

TEST(Optimizers, MatchTorchOptimTrajectories) {
  const std::vector<std::vector<float>> grads = {{0.3f, -1.2f, 0.05f}, {-0.7f, 0.4f, 0.9f}, {0.2f, 0.2f, -0.3f}};
  auto sgd = [](SgdOptions o) {
    return [o](std::vector<float>& p, const std::vector<float>& g, std::vector<float>& s1, std::vector<float>&, int64_t step) {
      sgd_step(3, p.data(), g.data(), s1.data(), step == 1, o);
    };
  };
  auto adam = [](AdamOptions o) {
    return [o](std::vector<float>& p, const std::vector<float>& g, std::vector<float>& m, std::vector<float>& v, int64_t step) {
      adam_step(3, p.data(), g.data(), m.data(), v.data(), step, o);
    };
  };
  const std::vector<OptimCase> cases = {
      // SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
      {"sgd nesterov", sgd({0.1f, 0.9f, 0.f, 0.01f, true}), {1.04055095f, -1.71874046f, 0.292263806f}},
      // SGD(lr=0.05, momentum=0.8, dampening=0.3)
      {"sgd dampening", sgd({0.05f, 0.8f, 0.3f, 0.f, false}), {1.00049996f, -1.88579988f, 0.447700024f}},
      // SGD(lr=0.2)
      {"sgd plain", sgd({0.2f, 0.f, 0.f, 0.f, false}), {1.04000008f, -1.88f, 0.370000005f}},
      // Adam(lr=0.01, betas=(0.9, 0.99), eps=1e-8)
      {"adam", adam({0.01f, 0.9f, 0.99f, 1e-8f, 0.f}), {0.99571383f, -1.98392546f, 0.478514194f}},
      // Adam(lr=2e-4, betas=(0.5, 0.999), weight_decay=0.001)  -- the DCGAN setting
      {"adam dcgan", adam({2e-4f, 0.5f, 0.999f, 1e-8f, 0.001f}), {0.999954343f, -1.99978459f, 0.499572456f}},
  };
  for (const auto& c : cases) {
    std::vector<float> p = {1.f, -2.f, 0.5f}, s1(3, 0.f), s2(3, 0.f);
    for (int64_t step = 1; step <= 3; ++step) c.step(p, grads[static_cast<size_t>(step - 1)], s1, s2, step);
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(p[i], c.expected[i], 2e-7f * (1 + std::abs(c.expected[i]))) << c.name << " [" << i << "]";
  }
}

}  // namespace
}  // namespace edgegan::cpu

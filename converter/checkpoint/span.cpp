// SPAN (swift parameter-free attention network): pixels -> (x - rgb mean) x 255,
// conv_1, six blocks block_1..block_6, conv_2 on the last block's output, conv_cat
// (1x1) over [conv_1, conv_2, block_1, block_6's first conv], upsampler.0 (3x3 to
// out*s*s) and a pixel shuffle by s. Each block: c1_r, SiLU, c2_r, SiLU, c3_r = y;
// (y + x) * (sigmoid(y) - 0.5). Every c*_r/conv_1/conv_2 is a re-parameterisable
// "Conv3XC": a 1x1 shortcut `sk` plus 1x1 -> 3x3 -> 1x1 (`conv.0/1/2`), which in
// inference PyTorch merges into one 3x3 conv from those weights on every forward; the
// stored `eval_conv` may be stale (saved during training), so it is read but not used.
#include <array>
#include <utility>

#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/graph_builder.h"

namespace edgegan::converter::checkpoint {
namespace {

constexpr int kBlocks = 6;
constexpr std::array<float, 3> kRgbMean = {0.4488f, 0.4371f, 0.4040f};

std::string dims(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + "]";
}

// One 3x3 conv equal to a Conv3XC at `prefix` with `cin` inputs (checked), computed in
// double: W = w3 . w2 . w1 (+ sk at the centre), b = w3 . (w2 . b1 + b2) + b3 + sk_b.
std::pair<TensorData, TensorData> merged_conv(KeyUse& use, const std::string& prefix, int64_t cin) {
  const TensorData& sk = use.need(prefix + ".sk.weight", 4);
  const TensorData& w1 = use.need(prefix + ".conv.0.weight", 4);
  const TensorData& w2 = use.need(prefix + ".conv.1.weight", 4);
  const TensorData& w3 = use.need(prefix + ".conv.2.weight", 4);
  const int64_t cout = sk.shape[0], m = w1.shape[0], n = w2.shape[0];
  if (sk.shape != std::vector<int64_t>{cout, cin, 1, 1} || w1.shape != std::vector<int64_t>{m, cin, 1, 1} ||
      w2.shape != std::vector<int64_t>{n, m, 3, 3} || w3.shape != std::vector<int64_t>{cout, n, 1, 1})
    throw Misfit{"'" + prefix + "' is not a re-parameterisable 3x3 conv of " + std::to_string(cin) + " inputs (sk " + dims(sk.shape) + ", conv.0 " +
                 dims(w1.shape) + ", conv.1 " + dims(w2.shape) + ", conv.2 " + dims(w3.shape) + ")"};
  auto bias = [&](const std::string& key, int64_t size) {
    const TensorData* b = use.get(prefix + key);
    if (!b) return std::vector<double>(static_cast<size_t>(size), 0.0);
    if (b->shape != std::vector<int64_t>{size}) throw Misfit{"'" + prefix + key + "' has shape " + dims(b->shape) + ", expected [" + std::to_string(size) + "]"};
    return std::vector<double>(b->values.begin(), b->values.end());
  };
  const std::vector<double> skb = bias(".sk.bias", cout), b1 = bias(".conv.0.bias", m), b2 = bias(".conv.1.bias", n), b3 = bias(".conv.2.bias", cout);
  // The stale copy: read so the layout fits, its values unused.
  if (use.has(prefix + ".eval_conv.weight")) {
    const TensorData& e = use.need(prefix + ".eval_conv.weight", 4);
    if (e.shape != std::vector<int64_t>{cout, cin, 3, 3}) throw Misfit{"'" + prefix + ".eval_conv.weight' has shape " + dims(e.shape)};
    bias(".eval_conv.bias", cout);
  }
  // t[j][i][k] = sum_m w2[j][m][k] w1[m][i]: the 1x1 then the 3x3.
  std::vector<double> t(static_cast<size_t>(n * cin * 9), 0.0), bn(static_cast<size_t>(n), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    bn[j] = b2[j];
    for (int64_t q = 0; q < m; ++q)
      for (int64_t k = 0; k < 9; ++k) {
        const double w = w2.values[static_cast<size_t>((j * m + q) * 9 + k)];
        bn[j] += w * b1[q];
        for (int64_t i = 0; i < cin; ++i) t[static_cast<size_t>((j * cin + i) * 9 + k)] += w * w1.values[static_cast<size_t>(q * cin + i)];
      }
  }
  TensorData out, b;
  out.shape = {cout, cin, 3, 3};
  out.values.assign(static_cast<size_t>(cout * cin * 9), 0.f);
  b.shape = {cout};
  for (int64_t o = 0; o < cout; ++o) {
    double bo = b3[o] + skb[o];
    std::vector<double> acc(static_cast<size_t>(cin * 9), 0.0);
    for (int64_t j = 0; j < n; ++j) {
      const double w = w3.values[static_cast<size_t>(o * n + j)];
      bo += w * bn[j];
      for (int64_t r = 0; r < cin * 9; ++r) acc[r] += w * t[static_cast<size_t>(j * cin * 9 + r)];
    }
    for (int64_t i = 0; i < cin; ++i) acc[static_cast<size_t>(i * 9 + 4)] += sk.values[static_cast<size_t>(o * cin + i)];
    for (int64_t r = 0; r < cin * 9; ++r) out.values[static_cast<size_t>(o * cin * 9 + r)] = static_cast<float>(acc[r]);
    b.values.push_back(static_cast<float>(bo));
  }
  return {std::move(out), std::move(b)};
}

// The merged conv applied to x.
std::string conv3xc(GraphBuilder& g, KeyUse& use, const std::string& prefix, const std::string& x, int64_t cin) {
  const auto [w, b] = merged_conv(use, prefix, cin);
  return g.conv(x, prefix, w, &b);
}

}  // namespace

FamilyMatch match_span(const StateDict& sd) {
  return match_family(sd, "SPAN", [&](KeyUse& use) {
    const TensorData& first = use.need("conv_1.sk.weight", 4);
    const int64_t in = first.shape[1], features = first.shape[0];
    if (in != 3) throw Misfit{"'conv_1.sk.weight' takes " + std::to_string(in) + " channels; SPAN subtracts an RGB mean, so 3"};
    if (sd.has("block_" + std::to_string(kBlocks + 1) + ".c1_r.sk.weight")) throw Misfit{"more than " + std::to_string(kBlocks) + " blocks"};
    const TensorData& up = use.need("upsampler.0.weight", 4);
    const int64_t out = in;
    int64_t scale = 1;
    while (scale * scale * out < up.shape[0]) ++scale;
    if (scale * scale * out != up.shape[0] || up.shape[1] != features || up.shape[2] != 3)
      throw Misfit{"'upsampler.0.weight' has shape " + dims(up.shape) + ", not [" + std::to_string(out) + " x scale^2, " + std::to_string(features) + ", 3, 3]"};
    const TensorData& cat = use.need("conv_cat.weight", 4);
    if (cat.shape != std::vector<int64_t>{features, 4 * features, 1, 1}) throw Misfit{"'conv_cat.weight' has shape " + dims(cat.shape)};

    GraphBuilder g;
    const std::string x = g.input("input", in, kGraphSize, kGraphSize);
    const std::string normalised = g.mul(g.add_constant(x, {-kRgbMean[0], -kRgbMean[1], -kRgbMean[2]}), 255.f);
    const std::string feature = conv3xc(g, use, "conv_1", normalised, in);
    std::string h = feature, block_1, last_first_conv;
    for (int k = 1; k <= kBlocks; ++k) {
      const std::string p = "block_" + std::to_string(k);
      const std::string c1 = conv3xc(g, use, p + ".c1_r", h, features);
      const std::string c2 = conv3xc(g, use, p + ".c2_r", g.silu(c1), features);
      const std::string c3 = conv3xc(g, use, p + ".c3_r", g.silu(c2), features);
      h = g.mul(g.add(c3, h), g.add_constant(g.sigmoid(c3), {-0.5f}));
      if (k == 1) block_1 = h;
      last_first_conv = c1;
    }
    const std::string tail = conv3xc(g, use, "conv_2", h, features);
    std::string y = g.conv(g.concat({feature, tail, block_1, last_first_conv}), "conv_cat", cat, use.get("conv_cat.bias"));
    y = g.conv(y, "upsampler.0", up, use.get("upsampler.0.bias"));
    if (scale > 1) y = g.pixel_shuffle(y, scale);
    g.output(y);
    Architecture a;
    a.name = "SPAN";
    a.parameters = {{"in", in}, {"out", out}, {"features", features}, {"blocks", kBlocks}, {"scale", scale}};
    a.scale = scale;
    a.in_channels = in;
    a.graph = g.model();
    return a;
  });
}

}  // namespace edgegan::converter::checkpoint

// ESRGAN's RRDB network in its three key layouts: Real-ESRGAN/BasicSR's (conv_first,
// body.N.rdbK.convJ, conv_body, conv_upU, conv_hr, conv_last), the ESRGAN repository's
// current one (RRDB_trunk.N.RDBK.convJ, trunk_conv, upconvU, HRconv) and its original
// one (model.0, model.1.sub.N.RDBK.convJ.0, model.1.sub.<blocks>, then the up-sampling
// convs, the HR conv and the last conv at increasing model.<i>). Each RDB: five 3x3
// convs on the growing concatenation, LeakyReLU 0.2 after the first four, x + 0.2*conv5;
// each RRDB: x + 0.2*(three RDBs). Features, growth and blocks come from the shapes; the
// scale from the up-sampling convs (x2 each) and conv_first's inputs (a pixel-unshuffle
// by 2 or 4 in front makes 4 or 16 times the image channels: scales 2 and 1).
#include <map>

#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/graph_builder.h"

namespace edgegan::converter::checkpoint {
namespace {

struct Layout {
  const char* family;
  std::string first, body_conv, hr, last;
  std::vector<std::string> ups;
  // The key prefix of RRDB n, RDB k (1..3), conv j (1..5).
  std::string (*conv)(int n, int k, int j);
};

std::string basicsr_conv(int n, int k, int j) { return "body." + std::to_string(n) + ".rdb" + std::to_string(k) + ".conv" + std::to_string(j); }
std::string esrgan_conv(int n, int k, int j) { return "RRDB_trunk." + std::to_string(n) + ".RDB" + std::to_string(k) + ".conv" + std::to_string(j); }
std::string original_conv(int n, int k, int j) { return "model.1.sub." + std::to_string(n) + ".RDB" + std::to_string(k) + ".conv" + std::to_string(j) + ".0"; }

std::vector<Layout> layouts(const StateDict& sd) {
  std::vector<Layout> l;
  Layout basicsr{"RRDBNet", "conv_first", "conv_body", "conv_hr", "conv_last", {}, basicsr_conv};
  for (int u = 1; sd.has("conv_up" + std::to_string(u) + ".weight"); ++u) basicsr.ups.push_back("conv_up" + std::to_string(u));
  l.push_back(basicsr);
  Layout esrgan{"RRDBNet", "conv_first", "trunk_conv", "HRconv", "conv_last", {}, esrgan_conv};
  for (int u = 1; sd.has("upconv" + std::to_string(u) + ".weight"); ++u) esrgan.ups.push_back("upconv" + std::to_string(u));
  l.push_back(esrgan);
  // The original: after model.1 (the trunk), model.<i> convs in order: the up-sampling ones, HR, last.
  Layout original{"RRDBNet", "model.0", "", "", "", {}, original_conv};
  int blocks = 0;
  while (sd.has(original_conv(blocks, 1, 1) + ".weight")) ++blocks;
  original.body_conv = "model.1.sub." + std::to_string(blocks);
  std::map<int, std::string> tail;
  for (const std::string& k : sd.order) {
    const std::string p = "model.";
    if (k.compare(0, p.size(), p) != 0 || k.size() < p.size() + 8 || k.compare(k.size() - 7, 7, ".weight") != 0) continue;
    const std::string mid = k.substr(p.size(), k.size() - p.size() - 7);
    if (mid.empty() || mid.size() > 3 || mid.find_first_not_of("0123456789") != std::string::npos) continue;
    const int i = std::stoi(mid);
    if (i > 1) tail[i] = "model." + mid;
  }
  std::vector<std::string> convs;
  for (const auto& [i, name] : tail) convs.push_back(name);
  if (convs.size() >= 2) {
    original.last = convs.back();
    original.hr = convs[convs.size() - 2];
    original.ups.assign(convs.begin(), convs.end() - 2);
  } else {
    original.hr = "model.8";
    original.last = "model.10";
  }
  l.push_back(original);
  return l;
}

FamilyMatch match_layout(const StateDict& sd, const Layout& lay) {
  return match_family(sd, lay.family, [&](KeyUse& use) {
    const TensorData& first = use.need(lay.first + ".weight", 4);
    const int64_t features = first.shape[0], first_in = first.shape[1];
    const TensorData& last = use.need(lay.last + ".weight", 4);
    const int64_t out = last.shape[0];
    int64_t unshuffle = 1;
    if (first_in == out * 4) unshuffle = 2;
    else if (first_in == out * 16) unshuffle = 4;
    else if (first_in != out) throw Misfit{"'" + lay.first + ".weight' has " + std::to_string(first_in) + " inputs for " + std::to_string(out) + " output channels"};
    const int64_t in = first_in / (unshuffle * unshuffle);
    if (lay.ups.empty() || lay.ups.size() > 3) throw Misfit{"expected 1 to 3 up-sampling convs (" + (lay.ups.empty() ? lay.first : lay.ups.back()) + ")"};
    const int64_t up = int64_t{1} << lay.ups.size();
    if (up < unshuffle) throw Misfit{"the pixel-unshuffle by " + std::to_string(unshuffle) + " exceeds the up-sampling by " + std::to_string(up)};
    const int64_t scale = up / unshuffle;
    const TensorData& c1 = use.need(lay.conv(0, 1, 1) + ".weight", 4);
    const int64_t growth = c1.shape[0];

    GraphBuilder g;
    const std::string x = g.input("input", in, kGraphSize, kGraphSize);
    std::string h = unshuffle > 1 ? g.pixel_unshuffle(x, in, kGraphSize, kGraphSize, unshuffle) : x;
    const std::string feat = g.conv(h, lay.first, first, use.get(lay.first + ".bias"));
    h = feat;
    int blocks = 0;
    for (; sd.has(lay.conv(blocks, 1, 1) + ".weight"); ++blocks) {
      const std::string block_in = h;
      for (int k = 1; k <= 3; ++k) {
        std::vector<std::string> cat = {h};
        for (int j = 1; j <= 5; ++j) {
          const std::string name = lay.conv(blocks, k, j);
          const TensorData& w = use.need(name + ".weight", 4);
          const int64_t want_in = features + (j - 1) * growth, want_out = j == 5 ? features : growth;
          if (w.shape[0] != want_out || w.shape[1] != want_in)
            throw Misfit{"'" + name + ".weight' is not a conv of " + std::to_string(want_in) + " to " + std::to_string(want_out) + " channels"};
          const std::string xin = cat.size() == 1 ? cat[0] : g.concat(cat);
          // conv5's output is scaled by 0.2 before the residual: folded into its weights.
          const std::string y = g.conv(xin, name, w, use.get(name + ".bias"), j == 5 ? 0.2f : 1.f);
          if (j < 5) cat.push_back(g.leaky_relu(y, 0.2f));
          else h = g.add(y, cat[0]);
        }
      }
      h = g.add(g.mul(h, 0.2f), block_in);
    }
    if (blocks == 0) throw Misfit{"expected '" + lay.conv(0, 1, 1) + ".weight', which is missing"};
    const TensorData& body = use.need(lay.body_conv + ".weight", 4);
    h = g.add(g.conv(h, lay.body_conv, body, use.get(lay.body_conv + ".bias")), feat);
    for (const std::string& u : lay.ups) h = g.leaky_relu(g.conv(g.upsample_nearest(h, 2), u, use.need(u + ".weight", 4), use.get(u + ".bias")), 0.2f);
    h = g.leaky_relu(g.conv(h, lay.hr, use.need(lay.hr + ".weight", 4), use.get(lay.hr + ".bias")), 0.2f);
    g.output(g.conv(h, lay.last, last, use.get(lay.last + ".bias")));
    Architecture a;
    a.name = "RRDBNet";
    a.parameters = {{"in", in}, {"out", out}, {"features", features}, {"blocks", blocks}, {"growth", growth}, {"scale", scale}};
    a.scale = scale;
    a.in_channels = in;
    a.graph = g.model();
    return a;
  });
}

}  // namespace

FamilyMatch match_rrdbnet(const StateDict& sd) {
  FamilyMatch best;
  for (const Layout& lay : layouts(sd)) {
    FamilyMatch m = match_layout(sd, lay);
    if (m.arch) return m;
    if (best.family.empty() || m.fitted > best.fitted) best = std::move(m);
  }
  return best;
}

}  // namespace edgegan::converter::checkpoint

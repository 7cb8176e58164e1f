// RealPLKSR and PLKSR (partial large-kernel super-resolution, as the community's
// releases lay them out): `feats.0` a 3x3 conv from the picture, feats.1..n blocks,
// (RealPLKSR: feats.<n+1> a Dropout2d without parameters), then a 3x3 conv to 3 x s^2
// channels; plus the input with each channel repeated s^2 times, then a pixel shuffle
// by s, which is the shuffled features plus the nearest x s input (a shuffle only
// permutes). A block: a channel mixer, two convs to 2 x features and back with an
// activation between (RealPLKSR: `channel_mixer`, 3x3 and 3x3, Mish; PLKSR:
// `channe_mixer`, as its code spells it, 3x3/1x1, 1x1/3x3 or 3x3/3x3, exact GELU); the
// large-kernel conv `lk.conv` on the first channels only (the rest pass unchanged);
// optionally element-wise attention, x * sigmoid(attn.f.0 (3x3) of x); `refine` (1x1);
// RealPLKSR: GroupNorm with 4 groups (the architecture's fixed default: the weights
// cannot show it); plus the block's input. PLKSR's ablation options that leave no trace
// in the weights (an identity added to the large-kernel conv) are taken at their
// defaults, as the community's loaders take them. Pixels in [0, 1].
#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/graph_builder.h"

namespace edgegan::converter::checkpoint {
namespace {

constexpr int64_t kNormGroups = 4;
constexpr int64_t kMaxBlocks = 1000;

std::string dims(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + "]";
}

FamilyMatch match_plksr_family(const StateDict& sd, bool real) {
  const std::string family = real ? "RealPLKSR" : "PLKSR", mixer = real ? "channel_mixer." : "channe_mixer.";
  const auto key = [](int64_t i, const std::string& rest) { return "feats." + std::to_string(i) + "." + rest; };
  return match_family(sd, family, [&](KeyUse& use) {
    const TensorData& first = use.need("feats.0.weight", 4);
    const int64_t in = first.shape[1], features = first.shape[0];
    if (real && features % kNormGroups != 0) throw Misfit{"'feats.0.weight' gives " + std::to_string(features) + " features, not a multiple of 4 GroupNorm groups"};
    int64_t blocks = 0;
    while (blocks < kMaxBlocks && sd.has(key(blocks + 1, mixer + "0.weight"))) ++blocks;
    if (blocks == 0) throw Misfit{"expected '" + key(1, mixer + "0.weight") + "', which is missing"};
    const TensorData& lk0 = use.need(key(1, "lk.conv.weight"), 4);
    const int64_t kernel = lk0.shape[2], split = lk0.shape[0];
    if (kernel % 2 == 0 || split > features) throw Misfit{"'feats.1.lk.conv.weight' has shape " + dims(lk0.shape) + ", not an odd kernel on at most " + std::to_string(features) + " channels"};
    const bool attention = sd.has(key(1, "attn.f.0.weight"));
    const int64_t last_at = blocks + (real ? 2 : 1);
    const TensorData& last = use.need(key(last_at, "weight"), 4);
    const int64_t out = in;
    int64_t scale = 1;
    while (scale * scale * out < last.shape[0]) ++scale;
    if (scale * scale * out != last.shape[0])
      throw Misfit{"'" + key(last_at, "weight") + "' has " + std::to_string(last.shape[0]) + " outputs, not " + std::to_string(out) + " x a square"};

    GraphBuilder g;
    const std::string x = g.input("input", in, kGraphSize, kGraphSize);
    std::string h = g.conv(x, "feats.0", first, use.get("feats.0.bias"));
    for (int64_t b = 1; b <= blocks; ++b) {
      const auto conv = [&](const std::string& y, const std::string& layer) {
        return g.conv(y, key(b, layer), use.need(key(b, layer + ".weight"), 4), use.get(key(b, layer + ".bias")));
      };
      const std::string mixed = conv(h, mixer + "0");
      std::string m = conv(real ? g.mish(mixed) : g.gelu(mixed), mixer + "2");
      const TensorData& lk = use.need(key(b, "lk.conv.weight"), 4);
      if (lk.shape != std::vector<int64_t>{split, split, kernel, kernel})
        throw Misfit{"'" + key(b, "lk.conv.weight") + "' has shape " + dims(lk.shape) + ", block 1's is " + dims(lk0.shape)};
      const std::string part = g.conv(split < features ? g.slice_channels(m, 0, split) : m, key(b, "lk.conv"), lk, use.get(key(b, "lk.conv.bias")));
      m = split < features ? g.concat({part, g.slice_channels(m, split, features)}) : part;
      if (sd.has(key(b, "attn.f.0.weight")) != attention) throw Misfit{"block " + std::to_string(b) + " differs from block 1 in having attention"};
      if (attention) m = g.mul(m, g.sigmoid(conv(m, "attn.f.0")));
      m = conv(m, "refine");
      if (real) {
        const TensorData& ns = use.need(key(b, "norm.weight"), 1);
        if (ns.shape[0] != features) throw Misfit{"'" + key(b, "norm.weight") + "' has shape " + dims(ns.shape)};
        m = g.group_norm(m, key(b, "norm"), kNormGroups, ns, use.need(key(b, "norm.bias"), 1));
      }
      h = g.add(m, h);
    }
    std::string y = g.conv(h, "feats." + std::to_string(last_at), last, use.get(key(last_at, "bias")));
    y = scale == 1 ? g.add(y, x) : g.add(g.pixel_shuffle(y, scale), g.upsample_nearest(x, scale));
    g.output(y);

    Architecture a;
    a.name = family;
    a.parameters = {{"in", in}, {"out", out}, {"features", features}, {"blocks", blocks}, {"kernel", kernel}, {"large-kernel channels", split}, {"scale", scale}};
    a.option = {"attention", attention ? "yes" : "no"};
    a.scale = scale;
    a.in_channels = in;
    a.graph = g.model();
    return a;
  });
}

}  // namespace

FamilyMatch match_realplksr(const StateDict& sd) { return match_plksr_family(sd, true); }
FamilyMatch match_plksr(const StateDict& sd) { return match_plksr_family(sd, false); }

}  // namespace edgegan::converter::checkpoint

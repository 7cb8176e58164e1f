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
//
// RealPLKSR with DySample up-sampling (`to_img.*`, scales 2 and up): the features plus
// the repeated input, [N, C = in x s^2, H, W], go to DySample instead of the pixel
// shuffle: offsets from a 1x1 conv `to_img.offset` (2 x groups x s^2 outputs), times
// sigmoid(`to_img.scope` (1x1, no bias)) x 0.5 when there is a scope, else x 0.25, plus
// `to_img.init_pos` (each sub-pixel's position in its source pixel); pixel-shuffled to
// [N, 2 x groups, sH, sW]; channel group g of the features sampled bilinearly, border
// padding, at its source pixel plus those offsets (F.grid_sample, align_corners False);
// then `to_img.end_conv` to the output channels.
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

// DySample's layers, read from `to_img.*` for features of `channels` channels.
struct DySample {
  int64_t groups = 1, out = 3, end_kernel = 1;
  bool scope = false;
  const TensorData *offset = nullptr, *offset_bias = nullptr, *scope_weight = nullptr, *end = nullptr, *end_bias = nullptr;
  std::vector<float> init_pos;  // per offset channel
};

DySample dysample_of(KeyUse& use, int64_t channels, int64_t scale) {
  DySample d;
  d.offset = &use.need("to_img.offset.weight", 4);
  const std::vector<int64_t>& o = d.offset->shape;
  const int64_t per_group = 2 * scale * scale;
  if (o[1] != channels || o[2] != 1 || o[3] != 1 || o[0] % per_group != 0)
    throw Misfit{"'to_img.offset.weight' has shape " + dims(o) + ", not a 1x1 conv from " + std::to_string(channels) + " channels to 2 x groups x " +
                 std::to_string(scale * scale)};
  d.groups = o[0] / per_group;
  if (channels % d.groups != 0)
    throw Misfit{"'to_img.offset.weight' gives " + std::to_string(d.groups) + " DySample groups, which do not divide " + std::to_string(channels) + " channels"};
  d.offset_bias = use.get("to_img.offset.bias");
  if (d.offset_bias && d.offset_bias->shape != std::vector<int64_t>{o[0]}) throw Misfit{"'to_img.offset.bias' has shape " + dims(d.offset_bias->shape)};
  d.scope = use.has("to_img.scope.weight");
  if (d.scope) {
    d.scope_weight = &use.need("to_img.scope.weight", 4);
    if (d.scope_weight->shape != o) throw Misfit{"'to_img.scope.weight' has shape " + dims(d.scope_weight->shape) + ", the offset conv's is " + dims(o)};
    if (use.has("to_img.scope.bias")) throw Misfit{"'to_img.scope.bias': DySample's scope conv has no bias"};
  }
  d.end = &use.need("to_img.end_conv.weight", 4);
  const std::vector<int64_t>& e = d.end->shape;
  if (e[1] != channels || e[2] != e[3] || e[2] % 2 == 0)
    throw Misfit{"'to_img.end_conv.weight' has shape " + dims(e) + ", not an odd square conv from " + std::to_string(channels) + " channels"};
  d.out = e[0];
  d.end_kernel = e[2];
  d.end_bias = use.get("to_img.end_conv.bias");
  // init_pos: sub-pixel (i, j) of s x s has x offset (j - (s-1)/2) / s and y offset
  // (i - (s-1)/2) / s; channel k*groups*s^2 + g*s^2 + i*s + j.
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t g = 0; g < d.groups; ++g)
      for (int64_t i = 0; i < scale; ++i)
        for (int64_t j = 0; j < scale; ++j)
          d.init_pos.push_back((static_cast<float>(k == 0 ? j : i) - static_cast<float>(scale - 1) / 2.f) / static_cast<float>(scale));
  if (const TensorData* stored = use.get("to_img.init_pos")) {
    if (stored->values.size() != d.init_pos.size() || stored->shape != std::vector<int64_t>{1, o[0], 1, 1})
      throw Misfit{"'to_img.init_pos' has shape " + dims(stored->shape) + ", expected [1, " + std::to_string(o[0]) + ", 1, 1]"};
    d.init_pos = stored->values;
  }
  return d;
}

// DySample's graph on the features f [N, C, H, W]: the offsets, the sampling, the end conv.
std::string dysample_graph(GraphBuilder& g, const DySample& d, const std::string& f, int64_t scale) {
  std::string offsets;
  if (d.scope) {
    offsets = g.mul(g.conv(f, "to_img.offset", *d.offset, d.offset_bias, 0.5f), g.sigmoid(g.conv(f, "to_img.scope", *d.scope_weight, nullptr)));
  } else {
    offsets = g.conv(f, "to_img.offset", *d.offset, d.offset_bias, 0.25f);
  }
  offsets = g.pixel_shuffle(g.add_constant(offsets, d.init_pos), scale);
  return g.conv(g.grid_sample_offsets(f, offsets, d.groups), "to_img.end_conv", *d.end, d.end_bias);
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
    const bool dysample = real && sd.has("to_img.offset.weight");
    DySample dy;
    if (dysample) {
      if (scale < 2) throw Misfit{"'to_img.offset.weight' is there but the scale is 1 (DySample up-samples by 2 or more)"};
      dy = dysample_of(use, in * scale * scale, scale);
      y = dysample_graph(g, dy, g.add(y, g.repeat_channels(x, scale)), scale);
    } else {
      y = scale == 1 ? g.add(y, x) : g.add(g.pixel_shuffle(y, scale), g.upsample_nearest(x, scale));
    }
    g.output(y);

    Architecture a;
    a.name = family;
    a.parameters = {{"in", in}, {"out", dysample ? dy.out : out}, {"features", features}, {"blocks", blocks}, {"kernel", kernel}, {"large-kernel channels", split}, {"scale", scale}};
    if (dysample) a.parameters.insert(a.parameters.end(), {{"dysample groups", dy.groups}, {"dysample end kernel", dy.end_kernel}});
    a.option = {"attention", attention ? "yes" : "no"};
    if (dysample) a.option.second += std::string(", dysample ") + (dy.scope ? "with scope" : "without scope");
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

// Real-ESRGAN's SRVGGNetCompact: body.0 conv(in -> F), body.1 PReLU(F), then num_conv
// times conv(F -> F) + PReLU, a last conv(F -> out*s*s), pixel shuffle by s, plus the
// input upsampled by s (nearest). Keys body.<2k>.weight/bias and body.<2k+1>.weight.
#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/graph_builder.h"

namespace edgegan::converter::checkpoint {

FamilyMatch match_compact(const StateDict& sd) {
  return match_family(sd, "SRVGGNetCompact", [&](KeyUse& use) {
    const TensorData& first = use.need("body.0.weight", 4);
    const int64_t in = first.shape[1], features = first.shape[0];
    int64_t last = 0;
    while (sd.has("body." + std::to_string(last + 2) + ".weight")) last += 2;
    if (last < 2) throw Misfit{"expected 'body.2.weight', which is missing"};
    const TensorData& tail = use.need("body." + std::to_string(last) + ".weight", 4);
    const int64_t out = in;  // the releases map RGB to RGB (and grey to grey)
    int64_t scale = 1;
    while (scale * scale * out < tail.shape[0]) ++scale;  // out >= 1: need() refuses empty dimensions
    if (scale * scale * out != tail.shape[0] || tail.shape[1] != features)
      throw Misfit{"'body." + std::to_string(last) + ".weight' has " + std::to_string(tail.shape[0]) + " outputs, not " + std::to_string(out) +
                   " x scale^2"};
    GraphBuilder g;
    const std::string x = g.input("input", in, kGraphSize, kGraphSize);
    std::string h = x;
    for (int64_t k = 0; k < last; k += 2) {
      const std::string conv = "body." + std::to_string(k), act = "body." + std::to_string(k + 1);
      const TensorData& w = use.need(conv + ".weight", 4);
      if (w.shape[0] != features || w.shape[1] != (k == 0 ? in : features)) throw Misfit{"'" + conv + ".weight' does not have " + std::to_string(features) + " features"};
      h = g.conv(h, conv, w, use.get(conv + ".bias"));
      const TensorData* slope = use.get(act + ".weight");
      if (!slope) throw Misfit{"expected the PReLU '" + act + ".weight' (only the released PReLU activation is read)"};
      if (slope->shape != std::vector<int64_t>{features} && slope->shape != std::vector<int64_t>{1})
        throw Misfit{"'" + act + ".weight' is not a PReLU slope of " + std::to_string(features)};
      h = g.prelu(h, act, *slope);
    }
    const std::string conv = "body." + std::to_string(last);
    h = g.conv(h, conv, tail, use.get(conv + ".bias"));
    if (scale > 1) h = g.pixel_shuffle(h, scale);
    g.output(g.add(h, scale > 1 ? g.upsample_nearest(x, scale) : x));
    Architecture a;
    a.name = "SRVGGNetCompact";
    a.parameters = {{"in", in}, {"out", out}, {"features", features}, {"convs", last / 2 - 1}, {"scale", scale}};
    a.option = {"activation", "prelu"};
    a.scale = scale;
    a.in_channels = in;
    a.graph = g.model();
    return a;
  });
}

}  // namespace edgegan::converter::checkpoint

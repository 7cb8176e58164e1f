// The ResNet generator of the CycleGAN/pix2pix reference implementation
// (latest_net_G.pth): model.1 a 7x7 conv after a reflection pad, two stride-2 3x3
// convs, n ResnetBlocks (model.<10+i>.conv_block.1 and .5, or .6 with dropout: reflect
// pad, conv, norm, ReLU, reflect pad, conv, norm, plus the input), two stride-2
// transposed convs (output padding 1), a reflection pad, a 7x7 conv to the output and
// Tanh. Each conv but the last is followed by a norm and ReLU: InstanceNorm without
// parameters (the default; convs then have biases; running statistics a file from
// PyTorch before 0.4 holds for it are ignored, as the reference ignores them) or
// BatchNorm (running statistics stored at the norm's index). Pixels in [-1, 1].
#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/graph_builder.h"

namespace edgegan::converter::checkpoint {

FamilyMatch match_resnet_generator(const StateDict& sd) {
  const auto key = [](int64_t i, const std::string& rest) { return "model." + std::to_string(i) + rest; };
  return match_family(sd, "ResnetGenerator", [&](KeyUse& use) {
    const TensorData& first = use.need("model.1.weight", 4);
    if (first.shape[2] != 7) throw Misfit{"'model.1.weight' is not a 7x7 conv"};
    const int64_t in = first.shape[1], ngf = first.shape[0];
    // The reference gives convs biases exactly with InstanceNorm; PyTorch before 0.4 also
    // saved running statistics for InstanceNorm, which the layer never used.
    const bool batch_norm = !sd.has("model.1.bias") && sd.has("model.2.running_mean");
    const auto stale = [&](const std::string& at) {
      if (!batch_norm)
        for (const char* k : {".running_mean", ".running_var", ".num_batches_tracked"}) use.get(at + k);
    };
    int64_t blocks = 0;
    while (sd.has(key(10 + blocks, ".conv_block.1.weight"))) ++blocks;
    if (blocks == 0) throw Misfit{"expected 'model.10.conv_block.1.weight', which is missing"};
    const bool dropout = sd.has(key(10, ".conv_block.6.weight"));

    GraphBuilder g;
    const std::string x = g.input("input", in, kGraphSize, kGraphSize);
    // conv (at model.<i>) + norm (at model.<i+1>) + ReLU.
    auto norm = [&](const std::string& h, int64_t at, int64_t channels) {
      const std::string n = key(at, "");
      stale(n);
      if (!batch_norm) return g.instance_norm(h, channels);
      use.get(n + ".num_batches_tracked");
      return g.batch_norm(h, n, use.need(n + ".weight", 1), use.need(n + ".bias", 1), use.need(n + ".running_mean", 1),
                          use.need(n + ".running_var", 1));
    };
    std::string h = g.conv_strided(g.reflect_pad(x, 3), "model.1", first, use.get("model.1.bias"), 1, 0);
    h = g.relu(norm(h, 2, ngf));
    for (int64_t d = 0; d < 2; ++d) {
      const int64_t at = 4 + 3 * d;
      h = g.conv_strided(h, key(at, ""), use.need(key(at, ".weight"), 4), use.get(key(at, ".bias")), 2, 1);
      h = g.relu(norm(h, at + 1, ngf << (d + 1)));
    }
    const int64_t dim = ngf * 4, second = dropout ? 6 : 5;
    for (int64_t b = 0; b < blocks; ++b) {
      const std::string blk = key(10 + b, ".conv_block.");
      std::string r = g.conv_strided(g.reflect_pad(h, 1), blk + "1", use.need(blk + "1.weight", 4), use.get(blk + "1.bias"), 1, 0);
      r = g.relu(batch_norm ? g.batch_norm(r, blk + "2", use.need(blk + "2.weight", 1), use.need(blk + "2.bias", 1),
                                           use.need(blk + "2.running_mean", 1), use.need(blk + "2.running_var", 1))
                            : g.instance_norm(r, dim));
      if (batch_norm) use.get(blk + "2.num_batches_tracked");
      stale(blk + "2");
      const std::string c2 = blk + std::to_string(second), n2 = blk + std::to_string(second + 1);
      r = g.conv_strided(g.reflect_pad(r, 1), c2, use.need(c2 + ".weight", 4), use.get(c2 + ".bias"), 1, 0);
      if (batch_norm) {
        r = g.batch_norm(r, n2, use.need(n2 + ".weight", 1), use.need(n2 + ".bias", 1), use.need(n2 + ".running_mean", 1),
                         use.need(n2 + ".running_var", 1));
        use.get(n2 + ".num_batches_tracked");
      } else {
        stale(n2);
        r = g.instance_norm(r, dim);
      }
      h = g.add(h, r);
    }
    for (int64_t u = 0; u < 2; ++u) {
      const int64_t at = 10 + blocks + 3 * u;
      h = g.conv_transpose(h, key(at, ""), use.need(key(at, ".weight"), 4), use.get(key(at, ".bias")), 2, 1, 1);
      h = g.relu(norm(h, at + 1, dim >> (u + 1)));
    }
    const int64_t last = 17 + blocks;
    const TensorData& out_w = use.need(key(last, ".weight"), 4);
    g.output(g.tanh(g.conv_strided(g.reflect_pad(h, 3), key(last, ""), out_w, use.get(key(last, ".bias")), 1, 0)));
    Architecture a;
    a.name = "ResnetGenerator";
    a.parameters = {{"in", in}, {"out", out_w.shape[0]}, {"ngf", ngf}, {"blocks", blocks}};
    a.option = {"norm", batch_norm ? "batch" : "instance"};
    a.in_channels = in;
    a.pixel_range = "-1,1";
    a.graph = g.model();
    return a;
  });
}

}  // namespace edgegan::converter::checkpoint

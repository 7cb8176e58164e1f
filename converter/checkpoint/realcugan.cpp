// Real-CUGAN (UpCunet2x/3x/4x of the Real-CUGAN release, its whole-picture path, tile
// mode 0): a reflection pad (18 for x2, 14 for x3, 19 for x4), unet1, then unet2 of
// unet1's output plus that output cropped by 20. All convs are unpadded. unet1: conv1
// (two 3x3 convs, LeakyReLU 0.1 after each), a 2x2 stride-2 conv down, conv2 (the same,
// then a squeeze-and-excitation block: x * sigmoid(conv2(relu(conv1(mean of x))))), a
// 2x2 stride-2 transposed conv up, added to conv1's output cropped by 4, a 3x3 conv and
// conv_bottom, a transposed conv (k4 s2 p3; k5 s3 p2 for x3). unet2 goes two levels
// down (crops 4 and 16) with SE blocks in conv2..conv4 and a 3x3 conv_bottom. x4 ends
// with conv_final (3x3 to 4 x out), a crop of 1, a pixel shuffle by 2, plus the
// nearest x4 of the input. UpCunet2x_fast (a conv_final and unet1 taking 4 x the
// channels) reflects by 38, pixel-unshuffles by 2, runs unet1 and unet2 as above and
// ends as x4 does, with a nearest x2. The release pads a picture whose sides are not
// multiples of 2 (x3: 4) up to them within its reflection pad (the far sides reflect
// further) and crops the result to scale x the picture (x4 and fast before the nearest
// input is added); so does the graph, at every size the engine plans: the pad aligned,
// the crop to scale x the input's size. The SE means are over the padded map, so the
// border must be the release's to the last pixel. The fast release rounds to 2 too, and
// its unet1 then fails unless the rounded sides are multiples of 4; the graph rounds to
// 4, which is the same padding wherever the release runs. The scale comes from the keys:
// conv_final means x4 (x2 for fast), unet1's 5x5 conv_bottom x3, else x2. Pixels in [0, 1].
#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/graph_builder.h"

namespace edgegan::converter::checkpoint {
namespace {

std::string dims(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + "]";
}

class CuganBuilder {
 public:
  CuganBuilder(GraphBuilder& g, KeyUse& use) : g_(g), use_(use) {}

  // A conv of `k`x`k` kernels at `layer`, stride = k for the 2x2 downs, no padding.
  std::string conv(const std::string& x, const std::string& layer, int64_t k, int64_t stride = 1) {
    const TensorData& w = use_.need(layer + ".weight", 4);
    if (w.shape[2] != k || w.shape[3] != k) throw Misfit{"'" + layer + ".weight' has shape " + dims(w.shape) + ", expected " + std::to_string(k) + "x" + std::to_string(k) + " kernels"};
    return g_.conv_strided(x, layer, w, bias(layer, w.shape[0]), stride, 0);
  }

  std::string deconv(const std::string& x, const std::string& layer, int64_t k, int64_t stride, int64_t pad) {
    const TensorData& w = use_.need(layer + ".weight", 4);
    if (w.shape[2] != k || w.shape[3] != k) throw Misfit{"'" + layer + ".weight' has shape " + dims(w.shape) + ", expected " + std::to_string(k) + "x" + std::to_string(k) + " kernels"};
    return g_.conv_transpose(x, layer, w, bias(layer, w.shape[1]), stride, pad, 0);
  }

  std::string lrelu(const std::string& x) { return g_.leaky_relu(x, 0.1f); }

  // UNetConv: two 3x3 convs with LeakyReLU, then (se) the squeeze-and-excitation block.
  std::string unet_conv(const std::string& x, const std::string& p, bool se) {
    std::string h = lrelu(conv(lrelu(conv(x, p + ".conv.0", 3)), p + ".conv.2", 3));
    if (!se) return h;
    const std::string s = p + ".seblock.conv";
    const std::string gate = g_.sigmoid(conv(g_.relu(conv(g_.mean_hw(h), s + "1", 1)), s + "2", 1));
    return g_.mul(h, gate);
  }

  std::string unet1(const std::string& x, int64_t scale) {
    const std::string x1 = unet_conv(x, "unet1.conv1", false);
    std::string x2 = unet_conv(lrelu(conv(x1, "unet1.conv1_down", 2, 2)), "unet1.conv2", true);
    x2 = lrelu(deconv(x2, "unet1.conv2_up", 2, 2, 0));
    const std::string x3 = lrelu(conv(g_.add(g_.crop(x1, 4), x2), "unet1.conv3", 3));
    return scale == 3 ? deconv(x3, "unet1.conv_bottom", 5, 3, 2) : deconv(x3, "unet1.conv_bottom", 4, 2, 3);
  }

  std::string unet2(const std::string& x) {
    const std::string x1 = unet_conv(x, "unet2.conv1", false);
    const std::string x2 = unet_conv(lrelu(conv(x1, "unet2.conv1_down", 2, 2)), "unet2.conv2", true);
    std::string x3 = unet_conv(lrelu(conv(x2, "unet2.conv2_down", 2, 2)), "unet2.conv3", true);
    x3 = lrelu(deconv(x3, "unet2.conv3_up", 2, 2, 0));
    std::string x4 = unet_conv(g_.add(g_.crop(x2, 4), x3), "unet2.conv4", true);
    x4 = lrelu(deconv(x4, "unet2.conv4_up", 2, 2, 0));
    const std::string x5 = lrelu(conv(g_.add(g_.crop(x1, 16), x4), "unet2.conv5", 3));
    return conv(x5, "unet2.conv_bottom", 3);
  }

 private:
  const TensorData* bias(const std::string& layer, int64_t size) {
    const TensorData* b = use_.get(layer + ".bias");
    if (b && b->shape != std::vector<int64_t>{size}) throw Misfit{"'" + layer + ".bias' has shape " + dims(b->shape) + ", expected [" + std::to_string(size) + "]"};
    return b;
  }

  GraphBuilder& g_;
  KeyUse& use_;
};

}  // namespace

FamilyMatch match_realcugan(const StateDict& sd) {
  return match_family(sd, "RealCUGAN", [&](KeyUse& use) {
    const TensorData& first = use.need("unet1.conv1.conv.0.weight", 4);
    const int64_t features = first.shape[0];
    const TensorData& bottom = use.need("unet1.conv_bottom.weight", 4);
    // UpCunet2x_fast: conv_final too, and unet1 takes the pixel-unshuffled picture (4 x
    // the channels conv_final gives 4 of each).
    const TensorData* final_w = sd.find("conv_final.weight");
    const bool fast = final_w && final_w->shape.size() == 4 && first.shape[1] == final_w->shape[0];
    const int64_t in = fast ? first.shape[1] / 4 : first.shape[1];
    const int64_t scale = fast ? 2 : final_w ? 4 : bottom.shape[2] == 5 ? 3 : 2;
    const int64_t pad = fast ? 38 : scale == 2 ? 18 : scale == 3 ? 14 : 19;
    if (fast && first.shape[1] % 4 != 0) throw Misfit{"'unet1.conv1.conv.0.weight' takes " + std::to_string(first.shape[1]) + " channels, not 4 x a picture's"};

    // The "pro" weights: a `pro` entry (any value); pixels mapped to x * 0.7 + 0.15 first
    // (the x4 model's nearest input too) and the result back by (y - 0.15) / 0.7.
    const bool pro = use.get("pro") != nullptr;

    GraphBuilder g;
    CuganBuilder net(g, use);
    // kGraphSize (64) is a multiple of 4, as the fast model's sides must be.
    const std::string input = g.input("input", in, kGraphSize, kGraphSize);
    const std::string x = pro ? g.add_constant(g.mul(input, 0.7f), {0.15f}) : input;
    const int64_t align = scale == 3 || fast ? 4 : 2;  // the release's ph = ((h0 - 1) // align + 1) * align (fast: above)
    std::string padded = g.reflect_pad(x, pad, align);
    if (fast) padded = g.pixel_unshuffle(padded, in, kGraphSize + 2 * pad, kGraphSize + 2 * pad, 2);
    const std::string u1 = net.unet1(padded, scale);
    std::string y = g.add(net.unet2(u1), g.crop(u1, 20));
    if (!final_w) y = g.crop_to(y, input, scale);
    int64_t out = bottom.shape[1];
    if (final_w) {
      const TensorData& w = use.need("conv_final.weight", 4);
      if (w.shape[0] % 4 != 0) throw Misfit{"'conv_final.weight' has shape " + dims(w.shape) + ": its outputs are not 4 x the picture's channels"};
      out = w.shape[0] / 4;
      if (out != in) throw Misfit{"'conv_final.weight' gives " + std::to_string(out) + " channels for an input of " + std::to_string(in)};
      y = g.crop_to(g.pixel_shuffle(g.crop(net.conv(y, "conv_final", 3), 1), 2), input, scale);
      y = g.add(y, g.upsample_nearest(x, scale));
    }
    g.output(pro ? g.mul(g.add_constant(y, {-0.15f}), 1.f / 0.7f) : y);

    Architecture a;
    a.name = "RealCUGAN";
    a.parameters = {{"in", in}, {"out", out}, {"features", features}, {"scale", scale}};
    if (pro) a.option = {"pro", "yes"};
    if (fast) a.option = {"fast", "yes"};
    a.scale = scale;
    a.in_channels = in;
    a.graph = g.model();
    return a;
  });
}

}  // namespace edgegan::converter::checkpoint

// The U-Net generator of the CycleGAN/pix2pix reference implementation
// (latest_net_G.pth, `--netG unet_256` / `unet_128`): levels nested as
// UnetSkipConnectionBlocks, each one Sequential `model`, so a level's keys sit under
// its parent's submodule index: model.model.1.model.3.model.3... Each level is a 4x4
// stride-2 conv down and a 4x4 stride-2 transposed conv up:
//   outermost [0 conv, 1 submodule, 2 ReLU, 3 transposed conv (bias), 4 Tanh];
//   middle    [0 LeakyReLU 0.2, 1 conv, 2 norm, 3 submodule, 4 ReLU, 5 transposed conv, 6 norm (, 7 Dropout)];
//   innermost [0 LeakyReLU 0.2, 1 conv, 2 ReLU, 3 transposed conv, 4 norm];
// every level but the outermost returns cat(x, model(x)). The reference's in-place
// LeakyReLU rewrites x before that concatenation, but the parent's ReLU follows at once
// and ReLU(LeakyReLU(x)) = ReLU(x), so the graph concatenates x itself. The norm is told
// by the convs' biases, as the reference sets them: biases with InstanceNorm (no
// parameters; running statistics that PyTorch before 0.4 saved for it are ignored, as the
// reference does), none with BatchNorm (its running statistics) or with no norm. Dropout
// is the identity at inference. Pixels in [-1, 1]; sizes multiples of 2^levels.
#include <algorithm>

#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/graph_builder.h"

namespace edgegan::converter::checkpoint {
namespace {

constexpr int64_t kMaxLevels = 10;  // 2^10: the largest stride the image tools align tiles to

enum class Norm { kBatch, kInstance, kNone };

std::string dims(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + "]";
}

// A 4x4 kernel [a, b, 4, 4] (conv: [out, in]; transposed conv: [in, out]).
const TensorData& kernel4(KeyUse& use, const std::string& key, int64_t a, int64_t b) {
  const TensorData& w = use.need(key, 4);
  if (w.shape != std::vector<int64_t>{a, b, 4, 4})
    throw Misfit{"'" + key + "' has shape " + dims(w.shape) + ", expected " + dims({a, b, 4, 4})};
  return w;
}

class UnetBuilder {
 public:
  UnetBuilder(GraphBuilder& g, KeyUse& use, Norm norm) : g_(g), use_(use), norm_(norm) {}

  // The level whose Sequential is at `p` ("model.model.1.model."), on x of `outer` channels:
  // cat(x, up(sub(down(x)))).
  std::string level(const std::string& p, const std::string& x, int64_t outer, int64_t depth) {
    if (depth > kMaxLevels) throw Misfit{"more than " + std::to_string(kMaxLevels) + " levels"};
    levels_ = std::max(levels_, depth);
    const bool innermost = use_.has(p + "3.weight");
    const TensorData& down_w = use_.need(p + "1.weight", 4);
    const int64_t inner = down_w.shape[0];
    kernel4(use_, p + "1.weight", inner, outer);
    std::string h = g_.conv_strided(g_.leaky_relu(x, 0.2f), p + "1", down_w, bias(p + "1", inner), 2, 1);
    std::string up;
    if (innermost) {
      up = g_.conv_transpose(g_.relu(h), p + "3", kernel4(use_, p + "3.weight", inner, outer), bias(p + "3", outer), 2, 1, 0);
      up = norm(up, p + "4", outer);
    } else {
      h = norm(h, p + "2", inner);
      const std::string sub = level(p + "3.model.", h, inner, depth + 1);
      up = g_.conv_transpose(g_.relu(sub), p + "5", kernel4(use_, p + "5.weight", 2 * inner, outer), bias(p + "5", outer), 2, 1, 0);
      up = norm(up, p + "6", outer);
    }
    return g_.concat({x, up});
  }

  int64_t levels() const { return levels_; }

 private:
  // A conv's bias: present exactly with InstanceNorm.
  const TensorData* bias(const std::string& layer, int64_t size) {
    const TensorData* b = use_.get(layer + ".bias");
    if ((b != nullptr) != (norm_ == Norm::kInstance))
      throw Misfit{std::string(b ? "unexpected" : "expected") + " '" + layer + ".bias' (the first conv's bias says the norm is " +
                   (norm_ == Norm::kInstance ? "instance" : "batch or none") + ")"};
    if (b && b->shape != std::vector<int64_t>{size}) throw Misfit{"'" + layer + ".bias' has shape " + dims(b->shape)};
    return b;
  }

  std::string norm(const std::string& h, const std::string& at, int64_t channels) {
    if (norm_ == Norm::kNone) return h;
    if (norm_ == Norm::kInstance) {
      for (const char* stale : {".running_mean", ".running_var", ".num_batches_tracked"}) use_.get(at + stale);
      return g_.instance_norm(h, channels);
    }
    use_.get(at + ".num_batches_tracked");
    const TensorData& w = use_.need(at + ".weight", 1);
    if (w.shape[0] != channels) throw Misfit{"'" + at + ".weight' has shape " + dims(w.shape) + ", expected [" + std::to_string(channels) + "]"};
    return g_.batch_norm(h, at, w, use_.need(at + ".bias", 1), use_.need(at + ".running_mean", 1), use_.need(at + ".running_var", 1));
  }

  GraphBuilder& g_;
  KeyUse& use_;
  Norm norm_;
  int64_t levels_ = 0;
};

// How many levels the nesting holds (the keys alone; for the graph's size).
int64_t count_levels(const StateDict& sd) {
  std::string p = "model.model.1.model.";
  int64_t n = 1;
  while (n <= kMaxLevels && sd.has(p + "1.weight")) {
    ++n;
    p += "3.model.";
  }
  return n;
}

}  // namespace

FamilyMatch match_unet_generator(const StateDict& sd) {
  return match_family(sd, "UnetGenerator", [&](KeyUse& use) {
    const std::string root = "model.model.";
    const TensorData& first = use.need(root + "0.weight", 4);
    const int64_t ngf = first.shape[0], in = first.shape[1];
    kernel4(use, root + "0.weight", ngf, in);
    const Norm norm = sd.has(root + "0.bias")                     ? Norm::kInstance
                      : sd.has(root + "1.model.2.running_mean") ? Norm::kBatch
                                                                  : Norm::kNone;
    const int64_t levels = count_levels(sd);
    if (levels > kMaxLevels) throw Misfit{"more than " + std::to_string(kMaxLevels) + " levels"};
    if (levels < 2) throw Misfit{"expected '" + root + "1.model.1.weight', which is missing"};
    const int64_t size = std::max<int64_t>(kGraphSize, int64_t{1} << levels);

    GraphBuilder g;
    UnetBuilder unet(g, use, norm);
    const std::string x = g.input("input", in, size, size);
    const TensorData* first_bias = use.get(root + "0.bias");
    std::string h = g.conv_strided(x, root + "0", first, first_bias, 2, 1);
    h = unet.level(root + "1.model.", h, ngf, 2);
    const TensorData& last = use.need(root + "3.weight", 4);
    if (last.shape[0] != 2 * ngf || last.shape[2] != 4 || last.shape[3] != 4)
      throw Misfit{"'" + root + "3.weight' has shape " + dims(last.shape) + ", expected [" + std::to_string(2 * ngf) + ", out, 4, 4]"};
    h = g.conv_transpose(g.relu(h), root + "3", last, &use.need(root + "3.bias", 1), 2, 1, 0);
    g.output(g.tanh(h));

    Architecture a;
    a.name = "UnetGenerator";
    a.parameters = {{"in", in}, {"out", last.shape[1]}, {"ngf", ngf}, {"downs", unet.levels()}};
    a.option = {"norm", norm == Norm::kBatch ? "batch" : norm == Norm::kInstance ? "instance" : "none"};
    a.in_channels = in;
    a.pixel_range = "-1,1";
    a.graph = g.model();
    return a;
  });
}

}  // namespace edgegan::converter::checkpoint

// convert_checkpoint: read the tensors, blend if asked, detect the architecture, and
// convert the graph it computes like any ONNX model; the file records the architecture
// and the [0, 1] pixel range of super-resolution models, so `upscale` needs no flags.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/blend.h"
#include "converter/checkpoint/checkpoint_reader.h"
#include "converter/convert_proto.h"
#include "edgegan/image_to_image.h"

namespace edgegan::converter {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConvertError("cannot open '" + path + "': " + std::strerror(errno));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string list3(const std::array<float, 3>& v) {
  std::ostringstream s;
  s.precision(9);
  s << v[0] + 0.f << "," << v[1] + 0.f << "," << v[2] + 0.f;  // + 0: no "-0" for the range 0,1
  return s.str();
}

// The element type most of the tensors are stored in.
std::string main_dtype(const checkpoint::StateDict& sd) {
  std::map<std::string, size_t> count;
  for (const auto& [k, t] : sd.tensors) count[checkpoint::dtype_name(t.stored)] += t.values.size();
  std::string best;
  size_t most = 0;
  for (const auto& [name, n] : count)
    if (n > most) most = n, best = name;
  return best;
}

}  // namespace

ConvertResult convert_checkpoint(const std::string& bytes, const std::string& source_name, const ConvertOptions& options) {
  try {
    checkpoint::StateDict sd = checkpoint::read_checkpoint(bytes, source_name);
    std::vector<std::pair<std::string, std::string>> metadata = {{"source_file", source_name}, {"checkpoint_format", sd.format},
                                                                 {"checkpoint_dtype", main_dtype(sd)}};
    if (!options.blend_path.empty()) {
      const size_t slash = options.blend_path.find_last_of('/');
      const std::string other_name = slash == std::string::npos ? options.blend_path : options.blend_path.substr(slash + 1);
      const checkpoint::StateDict other = checkpoint::read_checkpoint(read_all(options.blend_path), other_name);
      checkpoint::blend_into(sd, other, options.blend_t, source_name, other_name);
      std::ostringstream t;
      t.precision(9);
      t << other_name << ":" << options.blend_t;
      metadata.emplace_back("blend", t.str());
    }
    checkpoint::Architecture arch;
    try {
      arch = checkpoint::detect_architecture(sd);
    } catch (const ConvertError& e) {
      throw ConvertError("'" + source_name + "': " + e.what());
    }
    metadata.emplace_back("architecture", arch.line());
    // The pixel range the architecture was trained on: super-resolution networks take and
    // give pixels / 255, CycleGAN's generators [-1, 1] (unless the command line says otherwise).
    const PixelNormalisation unit = PixelNormalisation::parse_range(arch.pixel_range);
    for (const std::string side : {"input", "output"}) {
      const bool given = std::any_of(options.metadata.begin(), options.metadata.end(), [&](const auto& kv) { return kv.first == side + "_mean"; });
      if (given) continue;
      metadata.emplace_back(std::string(side) + "_mean", list3(unit.mean));
      metadata.emplace_back(std::string(side) + "_std", list3(unit.std));
    }
    ConvertResult r;
    try {
      r = convert_proto(arch.graph, sha256_of(bytes), std::move(metadata), options);
    } catch (const ConvertError& e) {  // a tensor of the right rank but an impossible shape
      throw ConvertError("'" + source_name + "': as " + arch.name + ": " + e.what());
    }
    r.summary = "checkpoint " + source_name + " (" + sd.format + ", " + std::to_string(sd.order.size()) + " tensors): " + arch.line() + "\n" + r.summary;
    return r;
  } catch (const std::bad_alloc&) {
    throw ConvertError("'" + source_name + "': out of memory while converting");
  }
}

}  // namespace edgegan::converter

#include "converter/checkpoint/checkpoint_reader.h"

#include <cstring>
#include <new>

#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

bool is_zip(std::string_view b) { return b.size() >= 4 && b.substr(0, 4) == std::string_view("PK\x03\x04", 4); }
// torch's legacy format starts with a protocol-2 pickle of its magic number.
bool is_legacy(std::string_view b) { return b.size() >= 3 && static_cast<uint8_t>(b[0]) == 0x80 && static_cast<uint8_t>(b[1]) <= 5 && b[2] == '\x8a'; }
// safetensors: an 8-byte header length, then the JSON header's '{' (the length itself is
// checked by the reader, so a wrong one is reported as such).
bool is_safetensors(std::string_view b) { return b.size() >= 10 && b[8] == '{' && (b[9] == '"' || b[9] == '}' || b[9] == ' ' || b[9] == '\n'); }

}  // namespace

bool looks_like_checkpoint(std::string_view b) { return is_zip(b) || is_legacy(b) || is_safetensors(b); }

StateDict read_checkpoint(std::string_view bytes, const std::string& name) {
  try {
    StateDict sd;
    if (is_zip(bytes)) {
      sd = read_torch_zip(bytes);
      sd.format = "torch zip";
    } else if (is_legacy(bytes)) {
      sd = read_torch_legacy(bytes);
      sd.format = "torch legacy";
    } else if (is_safetensors(bytes)) {
      sd = read_safetensors(bytes);
      sd.format = "safetensors";
    } else {
      throw ConvertError("not a PyTorch checkpoint (zip or legacy) or a safetensors file");
    }
    // DataParallel saves every name under "module.".
    const std::string dp = "module.";
    bool all = true;
    for (const std::string& k : sd.order) all = all && k.compare(0, dp.size(), dp) == 0 && k.size() > dp.size();
    if (all) {
      StateDict plain;
      plain.format = sd.format;
      for (const std::string& k : sd.order) {
        plain.order.push_back(k.substr(dp.size()));
        if (!plain.tensors.emplace(plain.order.back(), std::move(sd.tensors.at(k))).second) throw ConvertError("tensor '" + k + "' appears twice");
      }
      sd = std::move(plain);
    }
    return sd;
  } catch (const ConvertError& e) {
    throw ConvertError("'" + name + "': " + e.what());
  } catch (const std::bad_alloc&) {
    throw ConvertError("'" + name + "': out of memory while reading the checkpoint");
  }
}

}  // namespace edgegan::converter::checkpoint

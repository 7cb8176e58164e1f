// .safetensors: an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and [begin, end) byte range in the data that follows.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "converter/checkpoint/checkpoint_reader.h"
#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

DType safetensors_dtype(const std::string& name, const std::string& tensor) {
  static const std::pair<const char*, DType> types[] = {{"F32", DType::kF32}, {"F16", DType::kF16}, {"BF16", DType::kBF16},
                                                        {"F64", DType::kF64}, {"I64", DType::kI64}, {"I32", DType::kI32},
                                                        {"I16", DType::kI16}, {"I8", DType::kI8},   {"U8", DType::kU8},
                                                        {"BOOL", DType::kBool}};
  for (const auto& [n, t] : types)
    if (name == n) return t;
  throw ConvertError("tensor '" + tensor + "' has dtype '" + name + "' (F32, F16, BF16 and integer types are read)");
}

}  // namespace

StateDict read_safetensors(std::string_view bytes) {
  if (bytes.size() < 8) throw ConvertError("safetensors file truncated (no header length)");
  uint64_t n = 0;
  for (int k = 8; k-- > 0;) n = (n << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(k)]);
  if (n > bytes.size() - 8) throw ConvertError("safetensors header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, static_cast<size_t>(n)));
  } catch (const nlohmann::json::exception& e) {
    throw ConvertError(std::string("safetensors header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw ConvertError("safetensors header is not a JSON object");
  const std::string_view data = bytes.substr(static_cast<size_t>(8 + n));
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  StateDict sd;
  for (const auto& [name, t] : header.items()) {
    if (name == "__metadata__") continue;
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets") || !t["dtype"].is_string() ||
        !t["shape"].is_array() || !t["data_offsets"].is_array() || t["data_offsets"].size() != 2)
      throw ConvertError("tensor '" + name + "' lacks a dtype, shape or two data_offsets");
    const DType dtype = safetensors_dtype(t["dtype"].get<std::string>(), name);
    std::vector<int64_t> shape;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_integer()) throw ConvertError("tensor '" + name + "' has a shape that is not integers");
      shape.push_back(d.get<int64_t>());
    }
    const int64_t numel = checked_numel(shape, "tensor '" + name + "'");
    const auto& off = t["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) throw ConvertError("tensor '" + name + "' has offsets that are not unsigned integers");
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end || end > data.size())
      throw ConvertError("tensor '" + name + "' has data offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                         ") outside the " + std::to_string(data.size()) + " data bytes");
    if (end - begin != static_cast<uint64_t>(numel) * dtype_size(dtype))
      throw ConvertError("tensor '" + name + "' has " + std::to_string(end - begin) + " bytes for " + std::to_string(numel) + " " + dtype_name(dtype) + " values");
    ranges.push_back({begin, end, name});
    TensorData td;
    td.shape = shape;
    td.stored = dtype;
    std::vector<int64_t> stride(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
    gather_to_float(reinterpret_cast<const uint8_t*>(data.data() + begin), dtype, 0, shape, stride, td.values);
    sd.order.push_back(name);
    sd.tensors.emplace(name, std::move(td));
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t k = 1; k < ranges.size(); ++k)
    if (ranges[k].begin < ranges[k - 1].end && ranges[k].begin != ranges[k].end)
      throw ConvertError("tensors '" + ranges[k - 1].name + "' and '" + ranges[k].name + "' overlap in the data");
  sd.order.clear();  // the file's order: by position in the data (the JSON object is sorted by name)
  for (const Range& r : ranges) sd.order.push_back(r.name);
  return sd;
}

}  // namespace edgegan::converter::checkpoint

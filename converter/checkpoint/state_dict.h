// A checkpoint's tensors, read from a PyTorch zip or legacy archive or a safetensors
// file, widened to float in row-major order; the stored element type is kept for
// `inspect` and the blend's checks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace edgegan::converter::checkpoint {

enum class DType { kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kBool };
const char* dtype_name(DType t);
size_t dtype_size(DType t);

struct TensorData {
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major, product(shape) values
  DType stored = DType::kF32;
};

// Names in the file's order; the map holds each once.
struct StateDict {
  std::string format;  // "torch zip", "torch legacy", "safetensors"
  std::vector<std::string> order;
  std::map<std::string, TensorData> tensors;

  const TensorData* find(const std::string& name) const {
    const auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
  }
  bool has(const std::string& name) const { return tensors.count(name) != 0; }
};

// Elements of `shape` (each dim in [0, 2^31)), at most 2^31; throws ConvertError naming `what` otherwise.
int64_t checked_numel(const std::vector<int64_t>& shape, const std::string& what);

// Reads `count` elements of type `t` at `bytes` spaced by `stride` elements into floats.
// A strided gather: element k of the row-major result is at storage index
// offset + sum(index_d * stride_d); the caller has checked every index is in range.
void gather_to_float(const uint8_t* storage, DType t, int64_t offset, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& stride, std::vector<float>& out);

}  // namespace edgegan::converter::checkpoint

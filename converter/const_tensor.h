// Constant tensors of an ONNX graph (initializers, Constant nodes, and the
// results of folding shape arithmetic), held as float32 or int64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace edgegan::converter {

struct ConstTensor {
  bool is_int = false;             // int64 (shapes, indices) or float32 (weights)
  std::vector<int64_t> dims;
  std::vector<float> f;
  std::vector<int64_t> i;

  int64_t numel() const;
  double at(int64_t k) const { return is_int ? static_cast<double>(i[static_cast<size_t>(k)]) : f[static_cast<size_t>(k)]; }
  static ConstTensor ints(std::vector<int64_t> values, std::vector<int64_t> dims);
  static ConstTensor floats(std::vector<float> values, std::vector<int64_t> dims);
};

// Largest constant the converter folds (elements): torch's shape arithmetic is tiny.
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

// Product of dims with every factor in [0, 2^31] and the result at most `limit`;
// otherwise a ConvertError naming `what`. Never overflows.
int64_t checked_numel(const std::vector<int64_t>& dims, int64_t limit, const std::string& what);

// Decodes an ONNX TensorProto (raw_data or typed fields). `what` names it in errors.
ConstTensor decode_tensor(const onnx::TensorProto& t, const std::string& what);

// NumPy-style broadcasting binary op: "Add", "Sub", "Mul", "Div", "Equal" (int64 0/1 result),
// "Mod" (ONNX Mod with fmod = 0: the remainder takes the divisor's sign; integers only) or
// "FMod" (fmod = 1: the dividend's sign, as C's fmod).
ConstTensor broadcast_binary(const std::string& op, const ConstTensor& a, const ConstTensor& b, const std::string& what);

// ONNX Gather along `axis` with constant data and indices.
ConstTensor gather(const ConstTensor& data, const ConstTensor& indices, int64_t axis, const std::string& what);

// ONNX Slice (starts/ends/axes/steps already read).
// ONNX's axis in [-rank, rank) as a non-negative axis (ConvertError naming `what` outside it).
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);

// One axis of an ONNX Slice of length `len`: the first index, the step and the count,
// with ONNX's clamping of negative and out-of-range starts and ends.
struct SliceRange {
  int64_t start = 0, step = 1, count = 0;
};
SliceRange slice_range(int64_t len, int64_t start, int64_t end, int64_t step, const std::string& what);

ConstTensor slice(const ConstTensor& data, std::vector<int64_t> starts, std::vector<int64_t> ends,
                  std::vector<int64_t> axes, std::vector<int64_t> steps, const std::string& what);

ConstTensor concat(const std::vector<const ConstTensor*>& parts, int64_t axis, const std::string& what);
ConstTensor transpose(const ConstTensor& t, std::vector<int64_t> perm, const std::string& what);
ConstTensor cast(const ConstTensor& t, bool to_int);

}  // namespace edgegan::converter

#include "converter/checkpoint/state_dict.h"

#include <cstring>

#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // little-endian archives only (checked by the readers)
  return v;
}

float element(const uint8_t* p, DType t) {
  switch (t) {
    case DType::kF32: return load<float>(p);
    case DType::kF16: return half_to_float(load<uint16_t>(p));
    case DType::kBF16: {
      const uint32_t bits = static_cast<uint32_t>(load<uint16_t>(p)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::kF64: return static_cast<float>(load<double>(p));
    case DType::kI64: return static_cast<float>(load<int64_t>(p));
    case DType::kI32: return static_cast<float>(load<int32_t>(p));
    case DType::kI16: return static_cast<float>(load<int16_t>(p));
    case DType::kI8: return static_cast<float>(load<int8_t>(p));
    case DType::kU8: return static_cast<float>(*p);
    case DType::kBool: return *p ? 1.f : 0.f;
  }
  return 0.f;
}

}  // namespace

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "float32";
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    case DType::kF64: return "float64";
    case DType::kI64: return "int64";
    case DType::kI32: return "int32";
    case DType::kI16: return "int16";
    case DType::kI8: return "int8";
    case DType::kU8: return "uint8";
    case DType::kBool: return "bool";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF64: case DType::kI64: return 8;
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: return 2;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
  }
  return 1;
}

int64_t checked_numel(const std::vector<int64_t>& shape, const std::string& what) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  if (shape.size() > 8) throw ConvertError(what + " has rank " + std::to_string(shape.size()) + " (at most 8)");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d >= kLimit) throw ConvertError(what + " has a dimension of " + std::to_string(d));
    if (d != 0 && n > kLimit / d) throw ConvertError(what + " has more than 2^31 elements");
    n *= d;
  }
  return n;
}

void gather_to_float(const uint8_t* storage, DType t, int64_t offset, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& stride, std::vector<float>& out) {
  const int64_t n = checked_numel(shape, "tensor");
  out.resize(static_cast<size_t>(n));
  if (n == 0) return;
  const size_t rank = shape.size(), es = dtype_size(t);
  std::vector<int64_t> index(rank, 0);
  int64_t at = offset;
  for (int64_t k = 0; k < n; ++k) {
    out[static_cast<size_t>(k)] = element(storage + static_cast<size_t>(at) * es, t);
    for (size_t d = rank; d-- > 0;) {  // odometer over the row-major index
      if (++index[d] < shape[d]) {
        at += stride[d];
        break;
      }
      at -= (shape[d] - 1) * stride[d];
      index[d] = 0;
    }
  }
}

}  // namespace edgegan::converter::checkpoint

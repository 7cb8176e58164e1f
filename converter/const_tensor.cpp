#include "converter/const_tensor.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <cstring>
#include <numeric>

#include "converter/errors.h"

namespace edgegan::converter {

int64_t ConstTensor::numel() const {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

int64_t checked_numel(const std::vector<int64_t>& dims, int64_t limit, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > (int64_t{1} << 31)) throw ConvertError(what + ": dimension " + std::to_string(d) + " is out of range");
    if (d != 0 && n > limit / d) throw ConvertError(what + ": tensor is too large (over " + std::to_string(limit) + " elements)");
    n *= d;
  }
  return n;
}

ConstTensor ConstTensor::ints(std::vector<int64_t> values, std::vector<int64_t> d) {
  ConstTensor t;
  t.is_int = true;
  t.i = std::move(values);
  t.dims = std::move(d);
  return t;
}

ConstTensor ConstTensor::floats(std::vector<float> values, std::vector<int64_t> d) {
  ConstTensor t;
  t.f = std::move(values);
  t.dims = std::move(d);
  return t;
}

namespace {

template <typename T>
std::vector<T> from_raw(const std::string& raw, size_t count, const std::string& what) {
  if (raw.size() != count * sizeof(T))
    throw ConvertError(what + ": raw_data holds " + std::to_string(raw.size()) + " bytes, its shape needs " + std::to_string(count * sizeof(T)));
  std::vector<T> v(count);
  if (count) std::memcpy(v.data(), raw.data(), raw.size());  // ONNX raw_data is little-endian, as is every target
  return v;
}

// Row-major strides of `dims`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 2; k >= 0; --k) s[static_cast<size_t>(k)] = s[static_cast<size_t>(k + 1)] * dims[static_cast<size_t>(k + 1)];
  return s;
}

}  // namespace

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) throw ConvertError(what + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

ConstTensor decode_tensor(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw ConvertError(what + ": weights stored in external data files are not supported; export with the weights inside the .onnx file");
  ConstTensor c;
  c.dims.assign(t.dims().begin(), t.dims().end());
  const int64_t count = checked_numel(c.dims, int64_t{1} << 31, what);
  const size_t n = static_cast<size_t>(count);
  const bool raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      c.f = raw ? from_raw<float>(t.raw_data(), n, what) : std::vector<float>(t.float_data().begin(), t.float_data().end());
      break;
    case onnx::TensorProto::DOUBLE: {
      const std::vector<double> d = raw ? from_raw<double>(t.raw_data(), n, what) : std::vector<double>(t.double_data().begin(), t.double_data().end());
      c.f.assign(d.begin(), d.end());
      break;
    }
    case onnx::TensorProto::INT64:
      c.is_int = true;
      c.i = raw ? from_raw<int64_t>(t.raw_data(), n, what) : std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end());
      break;
    case onnx::TensorProto::INT32: {
      c.is_int = true;
      const std::vector<int32_t> d = raw ? from_raw<int32_t>(t.raw_data(), n, what) : std::vector<int32_t>(t.int32_data().begin(), t.int32_data().end());
      c.i.assign(d.begin(), d.end());
      break;
    }
    case onnx::TensorProto::BOOL: {
      c.is_int = true;
      if (raw) {
        const std::vector<uint8_t> d = from_raw<uint8_t>(t.raw_data(), n, what);
        c.i.assign(d.begin(), d.end());
      } else {
        c.i.assign(t.int32_data().begin(), t.int32_data().end());
      }
      break;
    }
    default:
      throw ConvertError(what + ": tensor data type " + std::to_string(t.data_type()) + " is not supported (float, double, int64, int32, bool are)");
  }
  const size_t have = c.is_int ? c.i.size() : c.f.size();
  if (have != n) throw ConvertError(what + ": holds " + std::to_string(have) + " values, its shape needs " + std::to_string(n));
  return c;
}

ConstTensor broadcast_binary(const std::string& op, const ConstTensor& a, const ConstTensor& b, const std::string& what) {
  // A hostile file's constant may claim a shape its values do not fill.
  for (const ConstTensor* t : {&a, &b})
    if (static_cast<size_t>(checked_numel(t->dims, kMaxFoldedElements, what)) != (t->is_int ? t->i.size() : t->f.size()))
      throw ConvertError(what + ": a constant's values do not fill its shape");
  const size_t rank = std::max(a.dims.size(), b.dims.size());
  std::vector<int64_t> ad(rank, 1), bd(rank, 1), od(rank);
  std::copy(a.dims.begin(), a.dims.end(), ad.begin() + static_cast<long>(rank - a.dims.size()));
  std::copy(b.dims.begin(), b.dims.end(), bd.begin() + static_cast<long>(rank - b.dims.size()));
  for (size_t k = 0; k < rank; ++k) {
    if (ad[k] != bd[k] && ad[k] != 1 && bd[k] != 1) throw ConvertError(what + ": shapes do not broadcast");
    od[k] = ad[k] == 1 ? bd[k] : ad[k];  // 1 against 0 is 0: an empty result, not max's 1
  }
  const auto as = strides_of(ad), bs = strides_of(bd), os = strides_of(od);
  const bool to_int = (a.is_int && b.is_int) || op == "Equal";
  ConstTensor out;
  out.is_int = to_int;
  out.dims = od;
  const int64_t n = checked_numel(od, kMaxFoldedElements, what);
  for (int64_t k = 0; k < n; ++k) {
    int64_t ai = 0, bi = 0, rem = k;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t idx = rem / os[d];
      rem %= os[d];
      if (ad[d] != 1) ai += idx * as[d];
      if (bd[d] != 1) bi += idx * bs[d];
    }
    if (to_int) {
      const int64_t x = a.i[static_cast<size_t>(ai)], y = b.i[static_cast<size_t>(bi)];
      int64_t r = 0;
      bool overflow = false;  // shape arithmetic never overflows; a hostile file's might
      if (op == "Add") overflow = __builtin_add_overflow(x, y, &r);
      else if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r);
      else if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r);
      else if (op == "Equal") r = x == y;
      else if (op == "Mod" || op == "FMod") {  // ONNX Mod: the divisor's sign (fmod = 0) or the dividend's (fmod = 1)
        if (y == 0) throw ConvertError(what + ": integer modulo by zero");
        r = y == -1 ? 0 : x % y;
        if (op == "Mod" && r != 0 && ((r < 0) != (y < 0))) r += y;
      } else {
        if (y == 0) throw ConvertError(what + ": integer division by zero");
        overflow = x == INT64_MIN && y == -1;
        if (!overflow) r = x / y;
      }
      if (overflow) throw ConvertError(what + ": " + op + " of " + std::to_string(x) + " and " + std::to_string(y) + " overflows int64");
      out.i.push_back(r);
    } else if (op == "Equal") {
      out.i.push_back(a.at(ai) == b.at(bi));
    } else {
      const double x = a.at(ai), y = b.at(bi);
      double r = 0;
      if (op == "Add") r = x + y;
      else if (op == "Sub") r = x - y;
      else if (op == "Mul") r = x * y;
      else if (op == "FMod") r = std::fmod(x, y);
      else if (op == "Mod") throw ConvertError(what + ": Mod of floating-point values needs attribute 'fmod' = 1");
      else r = x / y;
      out.f.push_back(static_cast<float>(r));
    }
  }
  return out;
}

ConstTensor gather(const ConstTensor& data, const ConstTensor& indices, int64_t axis, const std::string& what) {
  if (!indices.is_int) throw ConvertError(what + ": Gather indices must be integers");
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0) throw ConvertError(what + ": Gather on a scalar");
  axis = normalize_axis(axis, rank, what);
  const int64_t len = data.dims[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= data.dims[static_cast<size_t>(k)];
  for (int64_t k = axis + 1; k < rank; ++k) inner *= data.dims[static_cast<size_t>(k)];
  ConstTensor out;
  out.is_int = data.is_int;
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), indices.dims.begin(), indices.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  checked_numel(out.dims, kMaxFoldedElements, what);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : indices.i) {
      if (idx < -len || idx >= len) throw ConvertError(what + ": Gather index " + std::to_string(idx) + " is out of range");
      if (idx < 0) idx += len;
      for (int64_t in = 0; in < inner; ++in) {
        const int64_t src = (o * len + idx) * inner + in;
        if (data.is_int) out.i.push_back(data.i[static_cast<size_t>(src)]);
        else out.f.push_back(data.f[static_cast<size_t>(src)]);
      }
    }
  return out;
}

SliceRange slice_range(int64_t len, int64_t start, int64_t end, int64_t step, const std::string& what) {
  if (step == 0) throw ConvertError(what + ": Slice step 0");
  if (step == std::numeric_limits<int64_t>::min()) throw ConvertError(what + ": Slice step out of range");
  auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); };
  // Clamp before adding len, so INT64_MIN/MAX ("to the end") cannot overflow.
  int64_t s = start < 0 ? clampi(start, -len, -1) + len : start;
  int64_t e = end < 0 ? clampi(end, -len - 1, -1) + len : end;
  SliceRange r;
  r.step = step;
  if (step > 0) {
    s = clampi(s, 0, len);
    e = clampi(e, 0, len);
    r.count = e > s ? (e - s - 1) / step + 1 : 0;
  } else {
    s = clampi(s, 0, len - 1);
    e = clampi(e, -1, len - 1);
    r.count = s > e ? (s - e - 1) / (-step) + 1 : 0;
  }
  r.start = s;
  return r;
}

ConstTensor slice(const ConstTensor& data, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                  std::vector<int64_t> steps, const std::string& what) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (axes.empty())
    for (int64_t k = 0; k < static_cast<int64_t>(starts.size()); ++k) axes.push_back(k);
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw ConvertError(what + ": Slice starts/ends/axes/steps differ in length");
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1), count(data.dims);
  for (size_t j = 0; j < starts.size(); ++j) {
    const int64_t a = normalize_axis(axes[j], rank, what);
    const int64_t len = data.dims[static_cast<size_t>(a)];
    const SliceRange r = slice_range(len, starts[j], ends[j], steps[j], what);
    count[static_cast<size_t>(a)] = r.count;
    begin[static_cast<size_t>(a)] = r.start;
    step[static_cast<size_t>(a)] = r.step;
  }
  ConstTensor out;
  out.is_int = data.is_int;
  out.dims = count;
  const auto ins = strides_of(data.dims), outs = strides_of(count);
  const int64_t n = out.numel();
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0, rem = k;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t idx = rem / outs[static_cast<size_t>(d)];
      rem %= outs[static_cast<size_t>(d)];
      src += (begin[static_cast<size_t>(d)] + idx * step[static_cast<size_t>(d)]) * ins[static_cast<size_t>(d)];
    }
    if (data.is_int) out.i.push_back(data.i[static_cast<size_t>(src)]);
    else out.f.push_back(data.f[static_cast<size_t>(src)]);
  }
  return out;
}

ConstTensor concat(const std::vector<const ConstTensor*>& parts, int64_t axis, const std::string& what) {
  if (parts.empty()) throw ConvertError(what + ": Concat of nothing");
  const int64_t rank = static_cast<int64_t>(parts[0]->dims.size());
  axis = normalize_axis(axis, rank, what);
  ConstTensor out;
  out.is_int = parts[0]->is_int;
  out.dims = parts[0]->dims;
  out.dims[static_cast<size_t>(axis)] = 0;
  for (const ConstTensor* p : parts) {
    if (static_cast<int64_t>(p->dims.size()) != rank || p->is_int != out.is_int) throw ConvertError(what + ": Concat inputs differ in rank or type");
    out.dims[static_cast<size_t>(axis)] += p->dims[static_cast<size_t>(axis)];
  }
  checked_numel(out.dims, kMaxFoldedElements, what);
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= out.dims[static_cast<size_t>(k)];
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstTensor* p : parts) {
      const int64_t chunk = outer ? p->numel() / outer : 0;
      for (int64_t k = 0; k < chunk; ++k) {
        if (out.is_int) out.i.push_back(p->i[static_cast<size_t>(o * chunk + k)]);
        else out.f.push_back(p->f[static_cast<size_t>(o * chunk + k)]);
      }
    }
  return out;
}

ConstTensor transpose(const ConstTensor& t, std::vector<int64_t> perm, const std::string& what) {
  const int64_t rank = static_cast<int64_t>(t.dims.size());
  if (perm.empty())
    for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int64_t>(perm.size()) != rank) throw ConvertError(what + ": Transpose perm has the wrong length");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (auto& p : perm) {
    p = normalize_axis(p, rank, what);
    if (seen[static_cast<size_t>(p)]) throw ConvertError(what + ": Transpose perm is not a permutation");
    seen[static_cast<size_t>(p)] = true;
  }
  std::vector<int64_t> od(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) od[static_cast<size_t>(k)] = t.dims[static_cast<size_t>(perm[static_cast<size_t>(k)])];
  const auto ins = strides_of(t.dims), outs = strides_of(od);
  ConstTensor out;
  out.is_int = t.is_int;
  out.dims = od;
  const int64_t n = out.numel();
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0, rem = k;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t idx = rem / outs[static_cast<size_t>(d)];
      rem %= outs[static_cast<size_t>(d)];
      src += idx * ins[static_cast<size_t>(perm[static_cast<size_t>(d)])];
    }
    if (t.is_int) out.i.push_back(t.i[static_cast<size_t>(src)]);
    else out.f.push_back(t.f[static_cast<size_t>(src)]);
  }
  return out;
}

ConstTensor cast(const ConstTensor& t, bool to_int) {
  if (t.is_int == to_int) return t;
  ConstTensor out;
  out.is_int = to_int;
  out.dims = t.dims;
  if (to_int) for (float v : t.f) out.i.push_back(static_cast<int64_t>(std::trunc(v)));
  else for (int64_t v : t.i) out.f.push_back(static_cast<float>(v));
  return out;
}

}  // namespace edgegan::converter

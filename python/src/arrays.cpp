#include "arrays.h"

#include <memory>

namespace edgegan_python {
namespace {

std::string dtype_name(nb::dlpack::dtype dtype) {
  const char* kind = "unknown";
  switch (static_cast<nb::dlpack::dtype_code>(dtype.code)) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: kind = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    case nb::dlpack::dtype_code::Bool: return "bool";
    default: break;
  }
  return kind + std::to_string(dtype.bits);
}

// Copies a strided array into `dst` in row-major order of `shape`; `strides` (in
// elements) say where each index lives in `src`, so a permutation of the axes is a
// permutation of the strides.
template <typename Src, typename Dst>
void gather(const Src* src, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, Dst* dst) {
  const size_t rank = shape.size();
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return;
  const int64_t inner = shape[rank - 1], inner_stride = strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;  // of the current row: index[0 .. rank-2]
  for (int64_t done = 0; done < total; done += inner) {
    const Src* row = src + offset;
    for (int64_t i = 0; i < inner; ++i) *dst++ = static_cast<Dst>(row[i * inner_stride]);
    for (int axis = static_cast<int>(rank) - 2; axis >= 0; --axis) {
      offset += strides[axis];
      if (++index[axis] < shape[axis]) break;
      offset -= strides[axis] * shape[axis];
      index[axis] = 0;
    }
  }
}

template <typename Src, typename Dst>
void copy_permuted(const AnyArray& array, const std::vector<int>& axes, const std::vector<int64_t>& storage_shape, std::vector<Dst>& out) {
  std::vector<int64_t> strides(axes.size());
  for (size_t k = 0; k < axes.size(); ++k) strides[k] = array.stride(static_cast<size_t>(axes[k]));
  out.resize(static_cast<size_t>(array.size()));
  gather(static_cast<const Src*>(array.data()), storage_shape, strides, out.data());
}

template <typename T>
nb::object numpy_owning(std::vector<T>&& values, const std::vector<int64_t>& dims) {
  auto owned = std::make_unique<std::vector<T>>(std::move(values));
  std::vector<size_t> shape(dims.begin(), dims.end());
  T* data = owned->data();
  nb::capsule owner(owned.get(), [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  owned.release();  // the capsule deletes it with the array
  return nb::ndarray<nb::numpy, T>(data, shape.size(), shape.data(), owner).cast();
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

ArrayLayout parse_layout(const std::string& layout) {
  if (layout == "nchw") return ArrayLayout::kNchw;
  if (layout == "nhwc") return ArrayLayout::kNhwc;
  throw nb::value_error(("layout must be 'nchw' or 'nhwc', got '" + layout + "'").c_str());
}

AnyArray as_array(nb::handle value, const std::string& what) {
  nb::object array = nb::module_::import_("numpy").attr("asarray")(value);
  AnyArray result;
  if (!nb::try_cast(array, result, /*convert=*/false))
    throw nb::value_error((what + " must be a numeric array, got one of dtype " + nb::cast<std::string>(array.attr("dtype").attr("name"))).c_str());
  return result;
}

TensorSpec spec_of(const edgegan::InputInfo& input) { return {input.name, input.dtype, input.layout, input.dims}; }
TensorSpec spec_of(const edgegan::OutputInfo& output) { return {output.name, edgegan::DType::kFloat32, output.layout, output.dims}; }

std::vector<int64_t> caller_shape(const TensorSpec& spec, int64_t batch, ArrayLayout layout) {
  std::vector<int64_t> shape = spec.dims;
  shape[0] = batch;
  if (spec.layout == edgegan::Layout::kNHWC && layout == ArrayLayout::kNchw) shape = {batch, spec.dims[3], spec.dims[1], spec.dims[2]};
  return shape;
}

edgegan::Tensor to_tensor(const AnyArray& array, const TensorSpec& spec, int64_t batch, ArrayLayout layout) {
  const nb::dlpack::dtype dtype = array.dtype();
  const bool is_f32 = dtype == nb::dtype<float>(), is_i64 = dtype == nb::dtype<int64_t>(), is_i32 = dtype == nb::dtype<int32_t>();
  const bool integers = spec.dtype == edgegan::DType::kInt64;
  if (!integers && !is_f32)
    throw nb::value_error(("'" + spec.name + "' must be float32, got " + dtype_name(dtype) + " (convert with .astype(numpy.float32))").c_str());
  if (integers && !is_i64 && !is_i32)
    throw nb::value_error(("'" + spec.name + "' must hold integers (int64 or int32), got " + dtype_name(dtype)).c_str());

  const std::vector<int64_t> want = caller_shape(spec, batch, layout);
  std::vector<int64_t> got(array.ndim());
  for (size_t i = 0; i < got.size(); ++i) got[i] = static_cast<int64_t>(array.shape(i));
  if (got != want) {
    const bool nchw = spec.layout == edgegan::Layout::kNHWC && layout == ArrayLayout::kNchw;
    const std::string order = spec.layout != edgegan::Layout::kNHWC ? "" : nchw ? " (N, C, H, W)" : " (N, H, W, C)";
    throw nb::value_error(("'" + spec.name + "' has shape " + shape_text(got) + ", the model needs " + shape_text(want) + order).c_str());
  }

  edgegan::Tensor tensor;
  tensor.name = spec.name;
  tensor.dtype = spec.dtype;
  tensor.layout = spec.layout;
  tensor.shape = spec.dims;
  tensor.shape[0] = batch;
  // Storage axis k reads the caller's axis axes[k]: NCHW -> NHWC reads N, H, W, C.
  std::vector<int> axes(want.size());
  for (size_t k = 0; k < axes.size(); ++k) axes[k] = static_cast<int>(k);
  if (spec.layout == edgegan::Layout::kNHWC && layout == ArrayLayout::kNchw) axes = {0, 2, 3, 1};
  if (!integers) copy_permuted<float>(array, axes, tensor.shape, tensor.f32);
  else if (is_i64) copy_permuted<int64_t>(array, axes, tensor.shape, tensor.i64);
  else copy_permuted<int32_t>(array, axes, tensor.shape, tensor.i64);
  return tensor;
}

edgegan::Tensor to_flat_tensor(const AnyArray& array, const std::string& name, edgegan::DType dtype) {
  std::vector<int64_t> dims(array.ndim());
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(array.shape(i));
  if (dims.empty()) throw nb::value_error(("'" + name + "' must be an array, got a scalar").c_str());
  return to_tensor(array, {name, dtype, edgegan::Layout::kRowMajor, dims}, dims[0], ArrayLayout::kNhwc);
}

nb::object to_numpy(edgegan::Tensor&& tensor, ArrayLayout layout) {
  if (tensor.layout == edgegan::Layout::kNHWC && layout == ArrayLayout::kNchw) tensor = edgegan::to_nchw(tensor);
  if (tensor.dtype == edgegan::DType::kInt64) return numpy_owning(std::move(tensor.i64), tensor.shape);
  return numpy_owning(std::move(tensor.f32), tensor.shape);
}

std::vector<edgegan::Tensor> to_tensors(const nb::dict& arrays, const std::vector<TensorSpec>& specs, int64_t batch, ArrayLayout layout,
                                        const std::string& what) {
  std::string names;
  for (const TensorSpec& s : specs) names += (names.empty() ? "'" : ", '") + s.name + "'";
  for (auto [key, value] : arrays) {
    if (!nb::isinstance<nb::str>(key)) throw nb::type_error((what + " must be a dict from names (str) to arrays").c_str());
    std::string name;
    if (!nb::try_cast(key, name)) throw nb::value_error((what + " names must be valid UTF-8 text").c_str());
    bool known = false;
    for (const TensorSpec& s : specs) known = known || s.name == name;
    if (!known) throw nb::value_error(("the model has no " + what + " named '" + name + "' (it has " + names + ")").c_str());
  }
  std::vector<edgegan::Tensor> tensors;
  for (const TensorSpec& s : specs) {
    if (!arrays.contains(s.name.c_str())) throw nb::value_error((what + " '" + s.name + "' is missing (give " + names + ")").c_str());
    tensors.push_back(to_tensor(as_array(arrays[s.name.c_str()], "'" + s.name + "'"), s, batch, layout));
  }
  return tensors;
}

}  // namespace edgegan_python

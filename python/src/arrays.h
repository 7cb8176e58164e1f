// NumPy arrays <-> edgegan::Tensor, and the checks that turn a wrong array into a
// ValueError naming the input, the dtype or the shape the model needs.
//
// Layouts: the engine stores rank-4 activations NHWC. Python callers see them NCHW
// (as PyTorch does) unless they pass layout="nhwc"; other ranks are the same in both.
//   in:  every array is copied once into the engine's tensor (its API owns its
//        inputs); the NCHW -> NHWC transposition happens in that copy, and any
//        strides are accepted, so a sliced or transposed array needs no extra copy.
//   out: the engine's output buffer becomes the NumPy array without a copy when no
//        transposition is needed (layout="nhwc", or not rank 4); NCHW is one copy.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "edgegan/edgegan.h"

namespace edgegan_python {

namespace nb = nanobind;

// A CPU array of any dtype and strides, read-only ones included.
using AnyArray = nb::ndarray<nb::ro, nb::device::cpu>;

enum class ArrayLayout { kNchw, kNhwc };
ArrayLayout parse_layout(const std::string& layout);  // "nchw" | "nhwc", else ValueError

// numpy.asarray(value): lists and other array-likes become arrays; ValueError if that
// gives no numeric array. `what` names the argument in messages.
AnyArray as_array(nb::handle value, const std::string& what);

// What an array must be to become a tensor of the model: the engine's dtype, layout and
// storage dims (dims[0], the batch, is replaced by `batch`).
struct TensorSpec {
  std::string name;
  edgegan::DType dtype = edgegan::DType::kFloat32;
  edgegan::Layout layout = edgegan::Layout::kRowMajor;
  std::vector<int64_t> dims;
};
TensorSpec spec_of(const edgegan::InputInfo& input);
TensorSpec spec_of(const edgegan::OutputInfo& output);

// The shape a caller passes in `layout` for a tensor of `spec` at `batch`.
std::vector<int64_t> caller_shape(const TensorSpec& spec, int64_t batch, ArrayLayout layout);

// Checks dtype (float32; int32 or int64 for integer tensors, widened) and shape, then
// copies into the engine's storage layout. Throws nb::value_error.
edgegan::Tensor to_tensor(const AnyArray& array, const TensorSpec& spec, int64_t batch, ArrayLayout layout);

// The array as one row-major tensor of its own shape (no model spec): dtype checked
// as above, any strides copied.
edgegan::Tensor to_flat_tensor(const AnyArray& array, const std::string& name, edgegan::DType dtype);

// Moves the tensor's values into a new NumPy array in `layout` (see the top of this file).
nb::object to_numpy(edgegan::Tensor&& tensor, ArrayLayout layout);

// A dict {name: array} as the named tensors of `specs`: every name known, none missing.
std::vector<edgegan::Tensor> to_tensors(const nb::dict& arrays, const std::vector<TensorSpec>& specs, int64_t batch, ArrayLayout layout,
                                        const std::string& what);

std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace edgegan_python

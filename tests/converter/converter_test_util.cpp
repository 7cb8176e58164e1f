#include "tests/converter/converter_test_util.h"

#include <utility>

namespace edgegan::testing {

namespace {

// Each of the n samples, a rows x cols matrix, transposed.
std::vector<float> transpose_samples(const std::vector<float>& v, int64_t n, int64_t rows, int64_t cols) {
  std::vector<float> o(v.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k) o[static_cast<size_t>((a * cols + k) * rows + r)] = v[static_cast<size_t>((a * rows + r) * cols + k)];
  return o;
}

}  // namespace

std::vector<float> nchw_to_nhwc(const std::vector<float>& v, int64_t n, int64_t c, int64_t pixels) { return transpose_samples(v, n, c, pixels); }
std::vector<float> nhwc_to_nchw(const std::vector<float>& v, int64_t n, int64_t c, int64_t pixels) { return transpose_samples(v, n, pixels, c); }

Tensor nhwc(const std::string& name, int64_t n, int64_t h, int64_t w, int64_t c, std::vector<float> v) {
  return Tensor{name, DType::kFloat32, Layout::kNHWC, {n, h, w, c}, std::move(v), {}};
}

Tensor nhwc_from_nchw(const std::string& name, const std::vector<float>& v, int64_t n, int64_t c, int64_t h, int64_t w) {
  return nhwc(name, n, h, w, c, nchw_to_nhwc(v, n, c, h * w));
}

void torch_gelu_erf(OnnxBuilder& b, const std::string& x, const std::string& y, float half) {
  b.floats("sqrt2", {}, {1.4142135f}).floats("one", {}, {1.f}).floats("half", {}, {half});
  b.node("Div", "div", {x, "sqrt2"}, {"d"});
  b.node("Erf", "erf", {"d"}, {"e"});
  b.node("Add", "add", {"e", "one"}, {"a"});
  b.node("Mul", "mul", {x, "a"}, {"m"});
  b.node("Mul", "mul_half", {"m", "half"}, {y});
}

}  // namespace edgegan::testing

// What several converter suites build or feed alike: ONNX-layout values reordered to the
// engine's NHWC and back, NHWC input tensors, and torch's decomposed GELU as an ONNX graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"
#include "tests/converter/onnx_builder.h"

namespace edgegan::testing {

// [n, c, pixels] values (ONNX's NCHW) in [n, pixels, c] order (NHWC), and back.
std::vector<float> nchw_to_nhwc(const std::vector<float>& v, int64_t n, int64_t c, int64_t pixels);
std::vector<float> nhwc_to_nchw(const std::vector<float>& v, int64_t n, int64_t c, int64_t pixels);

// A float input of NHWC values [n, h, w, c].
Tensor nhwc(const std::string& name, int64_t n, int64_t h, int64_t w, int64_t c, std::vector<float> v);
// A float input of ONNX-layout values [n, c, h, w], handed to the session in NHWC.
Tensor nhwc_from_nchw(const std::string& name, const std::vector<float>& v, int64_t n, int64_t c, int64_t h, int64_t w);

// torch's erf-form GELU from x to y as it exports it: x * (1 + erf(x / sqrt 2)) * half,
// its constants named sqrt2, one and half, its nodes div, erf, add, mul and mul_half.
void torch_gelu_erf(OnnxBuilder& b, const std::string& x, const std::string& y, float half = 0.5f);

}  // namespace edgegan::testing

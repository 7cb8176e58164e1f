// The names of the activations that activation_patterns.cpp recognises in decomposed
// form and no ONNX op of the opsets taken spells (ONNX's Gelu takes only the erf form by
// default; SiLU has no op). They never come from a file: the lowering of the pattern
// hands a node of that name to the Elementwise lowering.
#pragma once

namespace edgegan::converter {

inline constexpr const char* kGeluTanhPattern = "edgegan.GeluTanh";
inline constexpr const char* kSiluPattern = "edgegan.Silu";

}  // namespace edgegan::converter

// Kernels take their scratch from the caller (the engine plans it into the arena, so
// a planned call allocates nothing); called without one large enough, as tests and
// benchmarks may, they allocate their own.
#pragma once

#include <cstdint>
#include <vector>

namespace edgegan::cpu {

// `workspace` if it holds `need` floats (workspace_floats of them), else `own` resized to `need`.
inline float* workspace_or_own(float* workspace, int64_t workspace_floats, int64_t need, std::vector<float>& own) {
  if (workspace != nullptr && workspace_floats >= need) return workspace;
  own.resize(static_cast<size_t>(need));
  return own.data();
}

// The same for callers whose workspace, when given, is sized by the kernel's *_workspace() function.
inline float* workspace_or_own(float* workspace, int64_t need, std::vector<float>& own) {
  return workspace_or_own(workspace, workspace ? need : 0, need, own);
}

}  // namespace edgegan::cpu

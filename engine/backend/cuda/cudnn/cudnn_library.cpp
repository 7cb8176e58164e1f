#include "engine/backend/cuda/cudnn/cudnn_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

// The handle cudnn-frontend's dynamic loading resolves every cuDNN symbol through
// (declared extern by its cudnn_frontend_shim.h; defined once, here).
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace edgegan::cuda::cudnn {

namespace {

CudnnLibrary open_cudnn() {
  CudnnLibrary lib;
  if (const char* off = std::getenv("EDGEGAN_CUDNN"); off && std::strcmp(off, "0") == 0) {
    lib.why_not = "EDGEGAN_CUDNN=0";
    return lib;
  }
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("EDGEGAN_CUDNN_LIBRARY"); path && *path) {
    candidates.push_back(path);
  } else {
    candidates = {"libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9"};
  }
  std::string errors;
  for (const std::string& name : candidates) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(e ? e : name + ": not found");
      continue;
    }
    using GetVersion = size_t (*)();
    auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "cudnnGetVersion"));
    if (!get_version) {
      errors += (errors.empty() ? "" : "; ") + name + " has no cudnnGetVersion";
      dlclose(handle);
      continue;
    }
    lib.version = get_version();
    if (lib.version < 90000) {  // the graph API this backend builds needs cuDNN 9
      errors += (errors.empty() ? "" : "; ") + name + " is cuDNN " + std::to_string(lib.version) + ", older than 9";
      dlclose(handle);
      continue;
    }
    lib.loaded = true;
    lib.path = name;
    cudnn_frontend::cudnn_dlhandle = handle;
    return lib;
  }
  lib.why_not = "cuDNN 9 (libcudnn.so.9) could not be loaded: " + errors;
  return lib;
}

}  // namespace

const CudnnLibrary& cudnn_library() {
  static const CudnnLibrary library = open_cudnn();
  return library;
}

std::string cudnn_summary() {
  const CudnnLibrary& lib = cudnn_library();
  if (!lib.loaded) return "not used: " + lib.why_not;
  const size_t v = lib.version;
  return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100) + " (" + lib.path + ")";
}

}  // namespace edgegan::cuda::cudnn

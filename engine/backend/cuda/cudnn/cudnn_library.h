// cuDNN, loaded at run time: libedgegan links neither cuDNN nor anything that needs it,
// runs on the CPU without it, and on a GPU without it falls back to the project's own
// kernels, saying so once in one line. cudnn-frontend's dynamic loading finds every
// cuDNN call through the handle opened here.
#pragma once

#include <cstddef>
#include <string>

namespace edgegan::cuda::cudnn {

struct CudnnLibrary {
  bool loaded = false;
  std::string path;     // what was opened
  size_t version = 0;   // cudnnGetVersion(), e.g. 91900
  std::string why_not;  // when not loaded: one line naming what is missing
};

// Opened once per process: $EDGEGAN_CUDNN_LIBRARY if set, else libcudnn.so.9 from the
// library path, else the CUDA toolkit's /usr/local/cuda/lib64/libcudnn.so.9.
// EDGEGAN_CUDNN=0 leaves it unloaded (the project's kernels only).
const CudnnLibrary& cudnn_library();

// "cuDNN 9.19.0 (/usr/local/cuda/lib64/libcudnn.so.9)" or "not used: <why_not>".
std::string cudnn_summary();

}  // namespace edgegan::cuda::cudnn

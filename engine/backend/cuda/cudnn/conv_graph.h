// One convolution (ConvGraphSpec) as a cudnn-frontend graph: the forward convolution
// over NHWC tensors with the bias, activation and residual fused after it as pointwise
// nodes. The only place that includes cudnn-frontend's headers is conv_graph.cpp (they
// are large: one translation unit keeps the build's time down).
//
// Built and validated without a device (what CI checks for every model); on a GPU,
// build_plans() turns cuDNN's heuristics into deterministic engine configurations and
// execute() runs one of them.
#pragma once

#include <memory>
#include <string>

#include "engine/backend/cuda/cudnn/conv_graph_spec.h"

namespace edgegan::cuda::cudnn {

// Device addresses of one run: x and y point at the spec's window and first output
// (the offsets already applied); bias/slope/residual only where the spec has them.
struct ConvGraphPointers {
  const void* x = nullptr;
  const void* filter = nullptr;  // repacked [Cout][kh][kw][Cin], padded, in the precision's type
  const void* bias = nullptr;    // float32 [Cout padded]
  const void* slope = nullptr;   // PRelu: float32 [Cout padded]
  const void* residual = nullptr;
  void* y = nullptr;
};

// A cuDNN handle (a session's: cuDNN's handles are not shared between threads), made
// through the loaded library. error() is non-empty when cuDNN could not make one.
class CudnnHandle {
 public:
  CudnnHandle();
  ~CudnnHandle();
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  void* get() const { return handle_; }  // a cudnnHandle_t
  const std::string& error() const { return error_; }
  bool set_stream(void* stream);  // a cudaStream_t: what execute() runs on

 private:
  void* handle_ = nullptr;
  std::string error_;
};

class ConvGraph {
 public:
  // Builds the graph and validates it (cudnn-frontend's checks of shapes, strides and
  // types); needs cuDNN loaded (cudnn_library()), no device. error() says what failed.
  explicit ConvGraph(const ConvGraphSpec& spec);
  ~ConvGraph();
  ConvGraph(const ConvGraph&) = delete;
  ConvGraph& operator=(const ConvGraph&) = delete;

  bool valid() const;
  const std::string& error() const;

  // On a device, `handle` a cudnnHandle_t: the heuristics' engine configurations (modes
  // A then fallback), the non-deterministic ones and those that would round FP32 to
  // TF32 (fp32 only) left out, each built into a plan. Returns how many were built.
  int build_plans(void* handle);
  int plan_count() const;
  std::string plan_name(int plan) const;
  int64_t workspace_bytes(int plan) const;
  // Runs plan `plan` on the handle's stream; false (and `why`) when cuDNN refuses.
  bool execute(void* handle, int plan, const ConvGraphPointers& p, void* workspace, std::string* why) const;

  struct Impl;  // the graph and its tensors (conv_graph.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgegan::cuda::cudnn

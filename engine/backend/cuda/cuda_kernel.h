// What the CUDA backend's op kernels share: device memory accounted to the session,
// the upload of what a kernel reads from the model (weights copied to the device
// once, or mapped where the GPU shares the host's memory), and the factory each op
// file in ops/ defines.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/ops/op_def.h"
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/gemm/conv_gemm.h"

namespace edgegan::cuda {

// How kernels reach the weights: copied into device memory (discrete GPUs), or read
// through the host mapping of the model file (integrated GPUs such as Jetson, where
// device and host memory are the same DRAM). EDGEGAN_CUDA_WEIGHTS=copy|map overrides.
enum class WeightPlacement { kCopy, kMap };
WeightPlacement weight_placement();

// cudaMalloc'd bytes, counted in the tracker's device bytes while they live.
class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  DeviceAllocation(MemoryTracker& tracker, uint64_t bytes);
  ~DeviceAllocation();
  DeviceAllocation(DeviceAllocation&& o) noexcept;
  DeviceAllocation& operator=(DeviceAllocation&& o) noexcept;
  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  MemoryTracker* tracker_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// Everything one kernel reads besides the arena, gathered while the kernel is built
// and placed in one device allocation by commit(): the model's weight buffers (or
// their mapped addresses) and host-made tables. Planning builds (no tracker) only
// count the bytes. After commit(), at(slot) is the device address of each piece.
class KernelUpload {
 public:
  explicit KernelUpload(const KernelArgs& args);
  int weights(uint32_t buffer);                 // a model buffer (0: none -> nullptr)
  int bytes(const void* host, uint64_t count);  // host data, copied
  // Bytes from piece `from` to piece `to` in device memory (both copied, or both in the
  // mapped file), known before commit().
  int64_t offset_between(int from, int to) const;
  void commit();
  const void* at(int slot) const { return slot < 0 ? nullptr : device_[static_cast<size_t>(slot)]; }
  template <typename T>
  const T* as(int slot) const { return static_cast<const T*>(at(slot)); }
  uint64_t device_bytes() const { return total_; }  // what commit() allocates

 private:
  struct Piece {
    const void* host;
    uint64_t bytes;
    uint64_t offset;  // in the allocation; UINT64_MAX: mapped, not copied
  };
  const Model::Impl& model_;
  const WeightSource& weights_;
  MemoryTracker* tracker_;
  bool map_weights_;  // weight_placement(), read once for the whole kernel
  std::shared_ptr<void> mapping_;  // the model file's host registration, while mapped
  std::vector<Piece> pieces_;
  std::vector<const void*> device_;
  uint64_t total_ = 0;
  DeviceAllocation memory_;
};

// An implicit GEMM prepared for one op (kernels_cuda/gemm/conv_gemm.h): its task
// table goes up with the kernel's weights, its launch is planned for this device.
struct PreparedGemm {
  ConvGemmShape shape;
  ConvGemmLaunch launch;
  int tasks = -1;  // slot of the task table
  // Checks the problem fits the GEMM (an Error naming the op otherwise), plans the
  // launch, and queues the task table for upload.
  void prepare(const KernelArgs& args, KernelUpload& upload);
  void run(const KernelUpload& upload, const float* x, float* y, const void* weights, bool weights_f16, const float* bias, ActivationParams activation,
           const float* residual, void* workspace, cudaStream_t stream) const;
};

// A layer the kernels cannot run as the model has it (a shape past their limits; the
// message says which): thrown by a kernel's constructor, planning builds included, so
// that CudaBackend::supports() finds it before the session allocates anything.
struct KernelRefusal : Error {
  using Error::Error;
};

// A kernel that has no backward pass on this backend.
[[noreturn]] void no_backward(const char* kernel);

// The activation enum is every backend's (kernels_common/activation.h), numbered as the
// model file's (engine/ops/op_def.h asserts it): a file's value is handed to the kernels as it is.

// An activation as the file states it (an op's epilogue; none when absent). A fused
// PRelu is none here: FusedPRelu applies it after the op's kernel.
inline ActivationParams activation_params(const schema::Epilogue* ep) {
  if (!ep || ep->activation() == schema::Activation_PRelu) return {};
  return ActivationParams{to_activation(ep->activation()), ep->alpha(), ep->beta()};
}
inline ActivationParams activation_params(schema::Activation a, float alpha, float beta) { return {to_activation(a), alpha, beta}; }

// A PRelu fused into a convolution's epilogue (activation PRelu, a slope per output
// channel). The device epilogues take no per-channel parameters, so the op's kernel
// runs without it (activation_params) and run() then applies the PRelu kernel
// (kernels_cuda/prelu, the standalone op's) in place over the output: the values of the
// unfused model, one pass more on the device.
class FusedPRelu {
 public:
  FusedPRelu() = default;  // none
  // Queues the slopes on `upload` (before its commit()); none unless `ep` holds a PRelu.
  FusedPRelu(const KernelArgs& args, KernelUpload& upload, const schema::Epilogue* ep, int output);
  // After the op's kernel, on its stream; nothing without a PRelu.
  void run(const RunContext& ctx, const KernelUpload& upload) const;

 private:
  int slope_ = -1, output_ = -1;
  int64_t channels_ = 0, pixels_ = 0;
};

// An op whose whole run is one implicit GEMM with a bias, activation and residual
// epilogue (Conv2D, Dense): weights and bias uploaded once, the problem planned once.
class GemmOpKernel : public OpKernel {
 public:
  uint64_t workspace_bytes() const override { return gemm_.launch.workspace_bytes; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override;
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 protected:
  // residual: a tensor added after the activation (-1: none).
  GemmOpKernel(const KernelArgs& args, int input, int output, uint32_t weights, const schema::Epilogue* epilogue, ConvGemmShape shape,
               int residual = -1);
  // The GEMM from `x` (a convolution whose input map was materialised reads its scratch).
  void run_gemm(const RunContext& ctx, const float* x) const;
  int input() const { return input_; }

 private:
  KernelUpload upload_;
  PreparedGemm gemm_;
  int input_, output_, residual_;
  int weights_ = -1, bias_ = -1;
  ActivationParams activation_;
  FusedPRelu prelu_;
  bool f16_ = false;
};


inline cudaStream_t stream_of(const RunContext& ctx) { return static_cast<cudaStream_t>(ctx.stream); }

// The kernel factory of an op kind, defined in ops/<op>.cpp. cuda_backend.cpp's table
// takes it for every kind of the schema, so a kind without one fails the link.
template <schema::OpKind Kind>
std::unique_ptr<OpKernel> create_kernel(const KernelArgs& args);

}  // namespace edgegan::cuda

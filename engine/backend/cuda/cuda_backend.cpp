// The CUDA backend: device memory for the arena and the kernels' weights (allocated
// when a session is created, never per run), one stream per executor with pinned
// staging for inputs and outputs, and the forward pass recorded once as a CUDA graph
// and replayed. Every op kind's kernel is in ops/<op>.cpp; the table of them
// (kFactories below) is built from the schema's kinds.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "engine/backend/backend.h"
#include "engine/format/op_kind_table.h"
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/prelu/prelu.h"
#ifdef EDGEGAN_WITH_CUDNN
#include "engine/backend/cuda/cudnn/cudnn_conv_kernel.h"
#include "engine/backend/cuda/cudnn/cudnn_library.h"
#endif

namespace edgegan {
namespace cuda {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA backend: ") + what + ": " + cudaGetErrorString(e));
}

constexpr uint64_t kPieceAlignment = 256;
uint64_t align_up(uint64_t v) { return (v + kPieceAlignment - 1) / kPieceAlignment * kPieceAlignment; }

// A model file's pages registered with the driver once per process while any session
// reads weights through them.
class FileRegistry {
 public:
  std::shared_ptr<void> acquire(const uint8_t* file, size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto held = registered_[file].lock()) return held;
    unsigned flags = cudaHostRegisterMapped;
    int device = 0, read_only = 0;
    check(cudaGetDevice(&device), "get device");
    if (cudaDeviceGetAttribute(&read_only, cudaDevAttrHostRegisterReadOnlySupported, device) == cudaSuccess && read_only)
      flags |= cudaHostRegisterReadOnly;  // the mapping is read-only
    void* base = const_cast<uint8_t*>(file);
    check(cudaHostRegister(base, size, flags), "map the model file into the device's address space");
    std::shared_ptr<void> handle(base, [](void* p) { cudaHostUnregister(p); });
    registered_[file] = handle;
    return handle;
  }

 private:
  std::mutex mutex_;
  std::map<const uint8_t*, std::weak_ptr<void>> registered_;
};

FileRegistry& file_registry() {
  static FileRegistry registry;
  return registry;
}

class CudaBuffer final : public DeviceBuffer {
 public:
  CudaBuffer(MemoryTracker& tracker, uint64_t bytes) : memory_(tracker, bytes) {}
  uint8_t* data() override { return memory_.data(); }
  uint64_t size() const override { return memory_.size(); }

 private:
  DeviceAllocation memory_;
};

class CudaStream final : public BackendStream {
 public:
  CudaStream() {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "create a stream");
    const char* graphs = std::getenv("EDGEGAN_CUDA_GRAPHS");
    use_graph_ = !(graphs && std::strcmp(graphs, "0") == 0);
  }
  ~CudaStream() override {
    if (graph_) cudaGraphExecDestroy(graph_);
    if (staging_) cudaFreeHost(staging_);
    cudaStreamDestroy(stream_);
  }
  void* native() const override { return stream_; }

  void reserve_staging(uint64_t bytes) override {
    if (bytes <= staging_bytes_) return;
    if (staging_) check(cudaFreeHost(staging_), "free pinned staging");
    staging_ = nullptr;
    check(cudaHostAlloc(reinterpret_cast<void**>(&staging_), std::max<uint64_t>(bytes, 64), cudaHostAllocDefault), "allocate pinned staging");
    staging_bytes_ = std::max<uint64_t>(bytes, 64);
  }

  // Copies that fit the staging left are queued without waiting; the staging is
  // reused after the next synchronisation.
  void copy_to_device(uint8_t* device, const void* host, size_t bytes) override {
    const auto* src = static_cast<const uint8_t*>(host);
    while (bytes > 0) {
      if (cursor_ >= staging_bytes_) synchronize();
      const size_t n = std::min<uint64_t>(bytes, staging_bytes_ - cursor_);
      std::memcpy(staging_ + cursor_, src, n);
      check(cudaMemcpyAsync(device, staging_ + cursor_, n, cudaMemcpyHostToDevice, stream_), "copy to the device");
      cursor_ = align_up(cursor_ + n);
      device += n, src += n, bytes -= n;
    }
  }
  void copy_to_host(void* host, const uint8_t* device, size_t bytes) override {
    auto* dst = static_cast<uint8_t*>(host);
    synchronize();
    while (bytes > 0) {
      const size_t n = std::min<uint64_t>(bytes, staging_bytes_);
      check(cudaMemcpyAsync(staging_, device, n, cudaMemcpyDeviceToHost, stream_), "copy to the host");
      synchronize();
      std::memcpy(dst, staging_, n);
      device += n, dst += n, bytes -= n;
    }
  }
  void fill_zero(uint8_t* device, size_t bytes) override {
    if (bytes) check(cudaMemsetAsync(device, 0, bytes, stream_), "fill with zeros");
  }
  void synchronize() override {
    check(cudaStreamSynchronize(stream_), "run");
    cursor_ = 0;
  }

  void run_recorded(const std::function<void()>& work) override {
    if (!use_graph_) return issue(work);
    if (!graph_) {
      check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "begin recording the graph");
      cudaGraph_t graph = nullptr;
      try {
        issue(work);
      } catch (...) {
        cudaStreamEndCapture(stream_, &graph);
        if (graph) cudaGraphDestroy(graph);
        throw;
      }
      check(cudaStreamEndCapture(stream_, &graph), "end recording the graph");
      const cudaError_t e = cudaGraphInstantiate(&graph_, graph, 0);
      cudaGraphDestroy(graph);
      check(e, "instantiate the graph");
    }
    check(cudaGraphLaunch(graph_, stream_), "launch the graph");
  }

 private:
  static void issue(const std::function<void()>& work) {
    try {
      work();
    } catch (const CudaError& e) {
      throw Error(std::string("CUDA backend: ") + e.what());
    }
  }

  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t graph_ = nullptr;
  bool use_graph_ = true;
  uint8_t* staging_ = nullptr;
  uint64_t staging_bytes_ = 0, cursor_ = 0;
};

using KernelFactory = std::unique_ptr<OpKernel> (*)(const KernelArgs&);

struct Factories {
  template <schema::OpKind K>
  static constexpr KernelFactory at = &create_kernel<K>;
};

// Every op kind's kernel factory, indexed by kind - 1, built from the schema's list of
// kinds as the CPU's op_registry.cpp is: a kind whose ops/<op>.cpp does not define
// create_kernel<Kind> fails the link of every CUDA build, naming the kind. No list of
// ops is kept by hand and nothing is looked up by name.
constexpr auto kFactories = op_kind_table<Factories>();

KernelFactory factory_of(schema::OpKind kind) {
  const int i = op_kind_index(kind);
  if (i < 0) throw Error("CUDA backend: unknown op kind " + std::to_string(static_cast<int>(kind)));
  return kFactories[static_cast<size_t>(i)];
}

class CudaBackend final : public ComputeBackend {
 public:
  Backend kind() const override { return Backend::kCuda; }
  const char* name() const override { return "cuda"; }
  // Every kind has a kernel (the table above); what a kernel cannot run is a shape past
  // its limits, which its constructor refuses with KernelRefusal. A planning build (no
  // tracker: nothing allocated or uploaded) asks it before the session's real build.
  bool supports(const KernelArgs& args, std::string* why) const override {
    KernelArgs planning = args;
    planning.tracker = nullptr;
    try {
      factory_of(args.op.kind_type())(planning);
      return true;
    } catch (const KernelRefusal& e) {
      if (why) *why = e.what();
      return false;
    } catch (const CudaError& e) {
      throw Error(std::string("CUDA backend: ") + e.what());
    }
  }
  std::unique_ptr<OpKernel> create_kernel(const OpDef&, const KernelArgs& args) const override {
    try {
      return factory_of(args.op.kind_type())(args);
    } catch (const CudaError& e) {
      throw Error(std::string("CUDA backend: ") + e.what());
    }
  }
  std::unique_ptr<DeviceBuffer> allocate(uint64_t bytes, MemoryTracker& tracker) const override {
    return std::make_unique<CudaBuffer>(tracker, bytes);
  }
  std::unique_ptr<BackendStream> open_stream() const override { return std::make_unique<CudaStream>(); }
  bool device_memory() const override { return true; }
  void check_usable(const char* caller) const override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
      throw Error(std::string(caller) + ": the CUDA backend has no usable device: " +
                  (e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device is present"));
  }
  // fp16 sessions need half-precision kernels for every op between the convolutions;
  // until they exist a session refuses fp16, while a memory report plans its arena.
  std::string precision_refusal(Precision precision, bool planning) const override {
    if (precision != Precision::kFp16 || planning) return "";
    return "the cuda backend does not run fp16 sessions yet (its half-precision activation kernels are not built); use fp32 or tf32";
  }
  std::string convolution_tactics() const override {
#ifdef EDGEGAN_WITH_CUDNN
    if (!cudnn::cudnn_tactics_requested()) return "the project's kernels (EDGEGAN_CUDNN=1 times cuDNN's graphs against them)";
    const cudnn::CudnnLibrary& lib = cudnn::cudnn_library();
    if (!lib.loaded) return "the project's kernels; cuDNN not used: " + lib.why_not;
    return "the project's kernels or " + cudnn::cudnn_summary() + ", the faster per layer";
#else
    return "the project's kernels (built without cuDNN graphs)";
#endif
  }
  std::string weight_placement() const override {
    return cuda::weight_placement() == WeightPlacement::kMap ? "mapped from the model file" : "copied to the device";
  }
};

}  // namespace

WeightPlacement weight_placement() {
  // Read when each session is built (cheap), so one process can try both.
  const WeightPlacement placement = [] {
    if (const char* env = std::getenv("EDGEGAN_CUDA_WEIGHTS")) {
      if (std::strcmp(env, "map") == 0) return WeightPlacement::kMap;
      if (std::strcmp(env, "copy") == 0) return WeightPlacement::kCopy;
      throw Error(std::string("EDGEGAN_CUDA_WEIGHTS: '") + env + "' is neither 'copy' nor 'map'");
    }
    int device = 0, integrated = 0;
    check(cudaGetDevice(&device), "get device");
    check(cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, device), "query integrated memory");
    return integrated ? WeightPlacement::kMap : WeightPlacement::kCopy;
  }();
  return placement;
}

DeviceAllocation::DeviceAllocation(MemoryTracker& tracker, uint64_t bytes) : tracker_(&tracker), size_(bytes) {
  if (bytes == 0) return;
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state of an allocation failure
    throw Error("CUDA backend: allocating " + std::to_string(bytes) + " bytes of device memory: " + cudaGetErrorString(e));
  }
  data_ = static_cast<uint8_t*>(p);
  tracker.note_device_allocation(bytes);
}

DeviceAllocation::~DeviceAllocation() {
  if (!data_) return;
  cudaFree(data_);
  tracker_->note_device_release(size_);
}

DeviceAllocation::DeviceAllocation(DeviceAllocation&& o) noexcept
    : tracker_(std::exchange(o.tracker_, nullptr)), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& o) noexcept {
  if (this != &o) {
    this->~DeviceAllocation();
    new (this) DeviceAllocation(std::move(o));
  }
  return *this;
}

KernelUpload::KernelUpload(const KernelArgs& args)
    : model_(args.model), weights_(args.weights), tracker_(args.tracker), map_weights_(weight_placement() == WeightPlacement::kMap) {}

int KernelUpload::weights(uint32_t buffer) {
  if (buffer == 0) return -1;
  const void* host = weights_.is_f16(buffer) ? static_cast<const void*>(weights_.f16(buffer))
                                                  : static_cast<const void*>(weights_.f32(buffer));
  const uint64_t bytes = model_.buffer_bytes(buffer);
  const auto* p = static_cast<const uint8_t*>(host);
  const bool in_file = model_.file && p >= model_.file && p + bytes <= model_.file + model_.file_size;
  if (in_file && map_weights_) {
    pieces_.push_back({host, bytes, UINT64_MAX});
    return static_cast<int>(pieces_.size()) - 1;
  }
  return this->bytes(host, bytes);
}

int KernelUpload::bytes(const void* host, uint64_t count) {
  pieces_.push_back({host, count, total_});
  total_ = align_up(total_ + count);
  return static_cast<int>(pieces_.size()) - 1;
}

int64_t KernelUpload::offset_between(int from, int to) const {
  const Piece& a = pieces_[static_cast<size_t>(from)];
  const Piece& b = pieces_[static_cast<size_t>(to)];
  if ((a.offset == UINT64_MAX) != (b.offset == UINT64_MAX)) throw Error("CUDA backend: an op's weights are partly mapped, partly copied");
  if (a.offset == UINT64_MAX) return static_cast<const uint8_t*>(b.host) - static_cast<const uint8_t*>(a.host);
  return static_cast<int64_t>(b.offset) - static_cast<int64_t>(a.offset);
}

void KernelUpload::commit() {
  if (!tracker_) return;  // a planning build: sizes only
  memory_ = DeviceAllocation(*tracker_, total_);
  uint8_t* mapped_base = nullptr;
  for (const Piece& piece : pieces_) {
    if (piece.offset != UINT64_MAX) {
      if (piece.bytes) check(cudaMemcpy(memory_.data() + piece.offset, piece.host, piece.bytes, cudaMemcpyHostToDevice), "upload weights");
      device_.push_back(memory_.data() + piece.offset);
      continue;
    }
    if (!mapping_) {
      mapping_ = file_registry().acquire(model_.file, model_.file_size);
      check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_base), const_cast<uint8_t*>(model_.file), 0),
            "device address of the mapped model file");
    }
    device_.push_back(mapped_base + (static_cast<const uint8_t*>(piece.host) - model_.file));
  }
}

void PreparedGemm::prepare(const KernelArgs& args, KernelUpload& upload) {
  std::string why;
  if (!conv_gemm_supports(shape, &why)) throw KernelRefusal("its implicit GEMM takes no problem with " + why);
  launch = plan_conv_gemm(shape, multiprocessor_count(), args.precision == Precision::kTf32 ? GemmMath::kTf32 : GemmMath::kFp32);
  tasks = upload.bytes(shape.tasks.data(), shape.tasks.size() * sizeof(ConvGemmTask));
}

void PreparedGemm::run(const KernelUpload& upload, const float* x, float* y, const void* weights, bool weights_f16, const float* bias,
                       ActivationParams activation, const float* residual, void* workspace, cudaStream_t stream) const {
  ConvGemmArgs a;
  a.x = x, a.y = y, a.weights = weights, a.weights_f16 = weights_f16, a.bias = bias, a.activation = activation, a.residual = residual;
  a.tasks = upload.as<ConvGemmTask>(tasks);
  a.workspace = workspace;
  conv_gemm(shape, launch, a, stream);
}

GemmOpKernel::GemmOpKernel(const KernelArgs& a, int input, int output, uint32_t weights, const schema::Epilogue* ep, ConvGemmShape shape,
                           int residual)
    : upload_(a), input_(input), output_(output), residual_(residual) {
  weights_ = upload_.weights(weights);
  f16_ = a.weights.is_f16(weights);
  bias_ = upload_.weights(ep ? ep->bias() : 0);
  activation_ = activation_params(ep);
  prelu_ = FusedPRelu(a, upload_, ep, output);
  gemm_.shape = std::move(shape);
  gemm_.prepare(a, upload_);
  upload_.commit();
}

void GemmOpKernel::run(const RunContext& ctx) { run_gemm(ctx, ctx.f32(input_)); }

void GemmOpKernel::run_gemm(const RunContext& ctx, const float* x) const {
  gemm_.run(upload_, x, ctx.f32(output_), upload_.at(weights_), f16_, upload_.as<float>(bias_), activation_,
            residual_ >= 0 ? ctx.f32(residual_) : nullptr, ctx.workspace, static_cast<cudaStream_t>(ctx.stream));
  prelu_.run(ctx, upload_);
}

FusedPRelu::FusedPRelu(const KernelArgs& a, KernelUpload& upload, const schema::Epilogue* ep, int output) {
  if (!ep || ep->activation() != schema::Activation_PRelu) return;
  output_ = output;
  channels_ = a.tensor(output).dims.back();  // NHWC: the output channels, as the slopes (validated)
  pixels_ = a.batch * a.tensor(output).per_sample / channels_;
  slope_ = upload.weights(ep->slope());
}

void FusedPRelu::run(const RunContext& ctx, const KernelUpload& upload) const {
  if (slope_ < 0) return;
  prelu(pixels_, channels_, upload.as<float>(slope_), ctx.f32(output_), ctx.f32(output_), stream_of(ctx));
}

void no_backward(const char* kernel) {
  throw Error(std::string(kernel) + ": the CUDA backend has no backward kernels yet; train on the CPU backend");
}

}  // namespace cuda

const ComputeBackend* cuda_backend() {
  static const cuda::CudaBackend backend;
  return &backend;
}

}  // namespace edgegan

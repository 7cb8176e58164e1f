#include "engine/backend/cuda/cudnn/cudnn_conv_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>

#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/backend/cuda/cudnn/conv_graph.h"
#include "engine/backend/cuda/cudnn/cudnn_library.h"
#include "engine/tactic_cache.h"

namespace edgegan::cuda::cudnn {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA backend (cuDNN tactics): ") + what + ": " + cudaGetErrorString(e));
}

// Said once per process when cuDNN was asked for and cannot be used.
void say_once_not_used(const std::string& why) {
  static std::once_flag said;
  std::call_once(said, [&] { std::cerr << "edgegan: cuDNN not used (" << why << "); the CUDA backend runs its own kernels\n"; });
}

// Scratch device memory for timing, not counted to the session (freed on return).
struct Scratch {
  void* p = nullptr;
  explicit Scratch(uint64_t bytes) {
    if (bytes) check(cudaMalloc(&p, bytes), "allocate timing scratch");
    if (bytes) check(cudaMemset(p, 0, bytes), "clear timing scratch");
  }
  ~Scratch() {
    if (p) cudaFree(p);
  }
  uint8_t* bytes() const { return static_cast<uint8_t*>(p); }
};

// Median milliseconds of `run` on `stream` (after two untimed runs).
template <typename Run>
float median_ms(cudaStream_t stream, Run&& run) {
  for (int i = 0; i < 2; ++i) run();
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "create an event");
  check(cudaEventCreate(&stop), "create an event");
  std::vector<float> times;
  for (int i = 0; i < 7; ++i) {
    cudaEventRecord(start, stream);
    run();
    cudaEventRecord(stop, stream);
    check(cudaEventSynchronize(stop), "time a tactic");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// One graph's addresses: the layer's tensors offset to the spec's window and first output.
ConvGraphPointers pointers(const ConvGraphSpec& c, const float* x, float* y, const float* residual, const void* filter, const void* bias,
                           const void* slope) {
  ConvGraphPointers p;
  p.x = x + c.in_offset_pixels * c.in_channels_padded;
  p.y = y + c.out_offset_pixels * c.out_channels_padded;
  p.residual = residual ? residual + c.out_offset_pixels * c.out_channels_padded : nullptr;
  p.filter = filter, p.bias = bias, p.slope = slope;
  return p;
}

// The layer on cuDNN: one graph per spec, each with its chosen plan; the filters
// repacked once ([Cout][kh][kw][Cin]) with bias and PRelu slopes beside them in one
// device allocation counted to the session.
class CudnnConvKernel final : public OpKernel {
 public:
  CudnnConvKernel(const KernelArgs& a, std::unique_ptr<OpKernel> own, std::vector<ConvGraphSpec> specs, std::vector<std::unique_ptr<ConvGraph>> graphs,
                  std::vector<int> plans, std::shared_ptr<CudnnHandle> handle, uint64_t workspace)
      : macs_(own->macs()), specs_(std::move(specs)), graphs_(std::move(graphs)), plans_(std::move(plans)), handle_(std::move(handle)),
        workspace_(workspace) {
    const schema::Op& op = a.op;
    const OpDef& def = op_def(op);
    input_ = def.inputs(op)[0];
    output_ = def.output(op);
    if (const auto* c = op.kind_as_Conv2D()) residual_ = c->residual();
    name_ = "cudnn:" + graphs_[0]->plan_name(plans_[0]);
    own.reset();  // its device copy of the weights is not kept beside the repacked one
    upload_weights(a);
  }
  const char* kernel_name() const override { return name_.c_str(); }
  // "cudnn:" and each graph's engine, ';' between (the tactic cache's entry).
  std::string tactic() const {
    std::string t = "cudnn:";
    for (size_t i = 0; i < graphs_.size(); ++i) t += (i ? ";" : "") + graphs_[i]->plan_name(plans_[i]);
    return t;
  }
  uint64_t workspace_bytes() const override { return workspace_; }
  uint64_t repacked_weight_bytes() const override { return memory_.size(); }
  uint64_t macs() const override { return macs_; }
  void run(const RunContext& ctx) override {
    handle_->set_stream(ctx.stream);
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    const float* r = residual_ >= 0 ? ctx.f32(residual_) : nullptr;
    for (size_t i = 0; i < graphs_.size(); ++i) {
      const ConvGraphSpec& c = specs_[i];
      const uint8_t* m = memory_.data();
      const ConvGraphPointers p = pointers(c, x, y, r, m + filter_offset_[i], bias_offset_ >= 0 ? m + bias_offset_ : nullptr,
                                           slope_offset_ >= 0 ? m + slope_offset_ : nullptr);
      std::string why;
      if (!graphs_[i]->execute(handle_->get(), plans_[i], p, ctx.workspace, &why)) throw Error("cuDNN convolution " + c.describe() + ": " + why);
    }
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  void upload_weights(const KernelArgs& a) {
    std::vector<uint8_t> host;
    auto append = [&](const void* data, size_t bytes) {
      const size_t at = (host.size() + 255) / 256 * 256;
      host.resize(at + bytes);
      std::memcpy(host.data() + at, data, bytes);
      return static_cast<int64_t>(at);
    };
    for (const ConvGraphSpec& c : specs_) {
      const size_t n = static_cast<size_t>(c.out_channels_padded * c.kernel_h * c.kernel_w * c.in_channels_padded);
      std::vector<float> f(n);  // fp32 and tf32 sessions (fp16 sessions are refused before kernels are built)
      kernels::repack_filter_krsc(c.filter, c.in_channels_padded, c.out_channels_padded, f.data());
      filter_offset_.push_back(append(f.data(), n * sizeof(float)));
    }
    const ConvGraphSpec& c = specs_[0];
    const schema::Epilogue* ep = a.op.kind_as_Conv2D() ? a.op.kind_as_Conv2D()->epilogue() : a.op.kind_as_ConvTranspose2D()->epilogue();
    auto channel_vector = [&](uint32_t buffer) {
      std::vector<float> v(static_cast<size_t>(c.out_channels_padded), 0.f);
      const float* src = a.weights.f32(buffer);
      std::copy(src, src + c.out_channels, v.begin());
      return append(v.data(), v.size() * sizeof(float));
    };
    if (c.bias) bias_offset_ = channel_vector(ep->bias());
    if (c.activation == Pointwise::kPRelu) slope_offset_ = channel_vector(ep->slope());
    memory_ = DeviceAllocation(*a.tracker, host.size());
    check(cudaMemcpy(memory_.data(), host.data(), host.size(), cudaMemcpyHostToDevice), "upload repacked filters");
  }

  uint64_t macs_ = 0;
  std::vector<ConvGraphSpec> specs_;
  std::vector<std::unique_ptr<ConvGraph>> graphs_;
  std::vector<int> plans_;
  std::shared_ptr<CudnnHandle> handle_;
  uint64_t workspace_ = 0;
  int input_ = -1, output_ = -1, residual_ = -1;
  std::string name_;
  DeviceAllocation memory_;
  std::vector<int64_t> filter_offset_;
  int64_t bias_offset_ = -1, slope_offset_ = -1;
};

// One handle per thread that builds sessions (cuDNN handles are per thread of use; a
// session runs on one thread at a time and sets the handle's stream before each run).
std::shared_ptr<CudnnHandle> thread_handle() {
  thread_local std::shared_ptr<CudnnHandle> handle = std::make_shared<CudnnHandle>();
  return handle;
}

// The tactic cache named by EDGEGAN_TACTIC_CACHE, shared by the process's sessions: read
// once (a damaged or foreign file is ignored with a warning), written after each layer
// it did not know. Entries name the winning engine per graph; the plans themselves are
// built again from cuDNN's heuristics (plan blobs are not stored yet).
class SharedTacticCache {
 public:
  static SharedTacticCache& get() {
    static SharedTacticCache cache;
    return cache;
  }
  bool enabled() const { return !path_.empty(); }
  std::optional<std::string> find(const std::string& layer, Precision p) {
    std::lock_guard<std::mutex> lock(mutex_);
    const TacticEntry* e = cache_.find(layer, to_string(p));
    return e ? std::optional<std::string>(e->tactic) : std::nullopt;
  }
  void put(const std::string& layer, Precision p, const std::string& tactic) {
    std::lock_guard<std::mutex> lock(mutex_);
    cache_.put({layer, to_string(p), tactic, {}});
    try {
      cache_.save(path_);
    } catch (const Error& e) {
      std::cerr << "edgegan: tactic cache not saved: " << e.what() << "\n";
    }
  }

 private:
  SharedTacticCache() : cache_(TacticCacheKey{}) {
    const char* path = std::getenv("EDGEGAN_TACTIC_CACHE");
    if (!path || !*path) return;
    path_ = path;
    TacticCacheKey key;
    int device = 0, driver = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess) key.gpu = prop.name;
    if (cudaDriverGetVersion(&driver) == cudaSuccess) key.driver = static_cast<uint32_t>(driver);
    key.cudnn = static_cast<uint32_t>(cudnn_library().version);
    std::string warning;
    cache_ = TacticCache::load(path_, key, &warning);
    if (!warning.empty()) std::cerr << "edgegan: " << warning << "\n";
  }
  std::mutex mutex_;
  std::string path_;
  TacticCache cache_;
};

std::string layer_signature(const std::vector<ConvGraphSpec>& specs) {
  std::string s;
  for (const ConvGraphSpec& c : specs) s += (s.empty() ? "" : "; ") + c.describe();
  return s;
}

}  // namespace

bool cudnn_tactics_requested() {
  const char* env = std::getenv("EDGEGAN_CUDNN");
  return env && std::strcmp(env, "1") == 0;
}

std::unique_ptr<OpKernel> choose_conv_tactic(const KernelArgs& a, std::unique_ptr<OpKernel> own) {
  // Planning builds (no tracker) and training keep the project's kernels: timing needs
  // the device, and cuDNN's path has no backward here.
  if (!a.tracker || a.training || !cudnn_tactics_requested() || a.precision == Precision::kFp16) return own;
  const CudnnLibrary& lib = cudnn_library();
  if (!lib.loaded) {
    say_once_not_used(lib.why_not);
    return own;
  }
  ConvGraphLayer layer = conv_graph_layer(a);
  if (!layer.refusal.empty()) return own;
  std::shared_ptr<CudnnHandle> handle = thread_handle();
  if (!handle->error().empty()) {
    say_once_not_used(handle->error());
    return own;
  }
  SharedTacticCache& cache = SharedTacticCache::get();
  const std::string signature = layer_signature(layer.convs);
  const std::optional<std::string> known = cache.enabled() ? cache.find(signature, a.precision) : std::nullopt;
  if (known && *known == "own") return own;
  std::vector<std::unique_ptr<ConvGraph>> graphs;
  for (const ConvGraphSpec& c : layer.convs) {
    graphs.push_back(std::make_unique<ConvGraph>(c));
    if (!graphs.back()->valid() || graphs.back()->build_plans(handle->get()) == 0) return own;
  }
  if (known) {  // "cudnn:" and each graph's engine, ';' between: no timing
    std::vector<int> plans;
    uint64_t workspace = 0;
    size_t at = std::strlen("cudnn:");
    for (const auto& g : graphs) {
      const size_t end = std::min(known->find(';', at), known->size());
      const std::string name = known->substr(std::min(at, known->size()), end - std::min(at, end));
      at = end + 1;
      for (int p = 0; p < g->plan_count(); ++p)
        if (g->plan_name(p) == name) {
          plans.push_back(p);
          workspace = std::max<uint64_t>(workspace, static_cast<uint64_t>(std::max<int64_t>(0, g->workspace_bytes(p))));
          break;
        }
    }
    if (plans.size() == graphs.size())
      return std::make_unique<CudnnConvKernel>(a, std::move(own), std::move(layer.convs), std::move(graphs), std::move(plans), handle, workspace);
    // The cached engines are not offered now (another cuDNN build): time again below.
  }

  // Time both on scratch tensors of the layer's sizes, on a stream of our own.
  const schema::Op& op = a.op;
  const OpDef& def = op_def(op);
  std::vector<uint8_t*> tensors(a.model.tensors.size(), nullptr);
  std::vector<std::unique_ptr<Scratch>> scratch;
  auto bytes_of = [&](int t) { return static_cast<uint64_t>(a.batch) * static_cast<uint64_t>(a.tensor(t).per_sample) * a.tensor(t).element_size(); };
  for (int t : def.inputs(op)) {
    scratch.push_back(std::make_unique<Scratch>(bytes_of(t)));
    tensors[static_cast<size_t>(t)] = scratch.back()->bytes();
  }
  scratch.push_back(std::make_unique<Scratch>(bytes_of(def.output(op))));
  tensors[static_cast<size_t>(def.output(op))] = scratch.back()->bytes();
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "create a timing stream");
  std::unique_ptr<CudnnConvKernel> chosen;
  try {
    const Scratch own_workspace(own->workspace_bytes());
    RunContext ctx{.tensors = &tensors, .workspace = own_workspace.bytes(), .batch = a.batch, .threads = a.threads, .stream = stream};
    const float own_ms = median_ms(stream, [&] { own->run(ctx); });
    // Per graph, its fastest plan; the layer's cuDNN time is their sum.
    std::vector<int> plans;
    uint64_t workspace = 0;
    float cudnn_ms = 0;
    handle->set_stream(stream);
    // Zeros for the filters, bias and slopes: the values do not change the time.
    uint64_t params = 0;
    for (const ConvGraphSpec& c : layer.convs)
      params = std::max<uint64_t>(params, static_cast<uint64_t>(std::max(c.out_channels_padded * c.kernel_h * c.kernel_w * c.in_channels_padded,
                                                                         c.out_channels_padded)) * sizeof(float));
    const Scratch zeros(params);
    const int residual = op.kind_as_Conv2D() ? op.kind_as_Conv2D()->residual() : -1;
    const float* x = reinterpret_cast<const float*>(tensors[static_cast<size_t>(def.inputs(op)[0])]);
    float* y = reinterpret_cast<float*>(tensors[static_cast<size_t>(def.output(op))]);
    const float* r = residual >= 0 ? reinterpret_cast<const float*>(tensors[static_cast<size_t>(residual)]) : nullptr;
    for (size_t i = 0; i < graphs.size(); ++i) {
      ConvGraph& g = *graphs[i];
      const ConvGraphPointers ptr = pointers(layer.convs[i], x, y, r, zeros.bytes(), zeros.bytes(), zeros.bytes());
      int best = -1;
      float best_ms = 0;
      for (int p = 0; p < g.plan_count(); ++p) {
        const int64_t ws = g.workspace_bytes(p);
        if (ws < 0 || static_cast<uint64_t>(ws) > (uint64_t{256} << 20)) continue;  // a plan wanting more than 256 MiB of workspace is not tried
        const Scratch w(static_cast<uint64_t>(ws));
        bool ok = true;
        const float ms = median_ms(stream, [&] { ok = ok && g.execute(handle->get(), p, ptr, w.bytes(), nullptr); });
        if (ok && (best < 0 || ms < best_ms)) best = p, best_ms = ms;
      }
      if (best < 0) break;
      plans.push_back(best);
      workspace = std::max<uint64_t>(workspace, static_cast<uint64_t>(g.workspace_bytes(best)));
      cudnn_ms += best_ms;
    }
    if (plans.size() == graphs.size() && cudnn_ms < own_ms)
      chosen = std::make_unique<CudnnConvKernel>(a, std::move(own), std::move(layer.convs), std::move(graphs), std::move(plans), handle, workspace);
  } catch (...) {
    cudaStreamDestroy(stream);
    throw;
  }
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  if (cache.enabled()) cache.put(signature, a.precision, chosen ? chosen->tactic() : "own");
  if (chosen) return chosen;
  return own;
}

}  // namespace edgegan::cuda::cudnn

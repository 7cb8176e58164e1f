// The Vulkan backend: the arena is one buffer whose device address is the base of the
// tensor addresses kernels receive; each kernel's parameters and weights are one buffer
// of its own, uploaded when the session is built; each executor records its work into
// a command buffer (one barrier between consecutive commands) and submits it with a
// fence when the host waits. Every op kind's kernel is in ops/<op>.cpp; the table of
// them (kFactories below) is built from the schema's kinds.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "engine/backend/backend.h"
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/format/op_kind_table.h"
#include "kernels_common/activation.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_common/half.h"

namespace edgegan {
namespace vulkan {

namespace {

constexpr uint64_t kStagingBytes = uint64_t{4} << 20;  // at least, per stream

class Arena final : public DeviceBuffer {
 public:
  Arena(Context& c, uint64_t bytes, MemoryTracker& tracker) : buffer_(c, bytes, false, &tracker), bytes_(bytes) {}
  uint8_t* data() override { return reinterpret_cast<uint8_t*>(buffer_.address()); }
  uint64_t size() const override { return bytes_; }

 private:
  Buffer buffer_;
  uint64_t bytes_;
};

class VulkanStream final : public BackendStream, public Stream {
 public:
  // Its own command pool: recording into a pool's buffers must not race another
  // executor's on another thread.
  explicit VulkanStream(Context& c) : context_(c) {
    const VkDevice device = c.device();
    auto pool = make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = c.queue_family();
    check(vkCreateCommandPool(device, &pool, nullptr, &pool_), "create a command pool");
    auto alloc = make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    alloc.commandPool = pool_, alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, alloc.commandBufferCount = 1;
    auto f = make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    if (vkAllocateCommandBuffers(device, &alloc, &cb_) != VK_SUCCESS || vkCreateFence(device, &f, nullptr, &fence_) != VK_SUCCESS) {
      vkDestroyCommandPool(device, pool_, nullptr);  // frees its command buffer too
      throw Error("Vulkan backend: allocating a command buffer or fence failed");
    }
    staging_ = Buffer(c, kStagingBytes, true, nullptr);
  }
  ~VulkanStream() override {
    try {
      synchronize();
    } catch (...) {
    }
    vkDestroyFence(context_.device(), fence_, nullptr);
    vkDestroyCommandPool(context_.device(), pool_, nullptr);
  }
  void* native() const override { return const_cast<Stream*>(static_cast<const Stream*>(this)); }
  Context& context() override { return context_; }

  void reserve_staging(uint64_t bytes) override {
    if (bytes <= staging_.size()) return;
    synchronize();
    staging_ = Buffer(context_, bytes, true, nullptr);
  }
  // Copies that fit the staging left are recorded without waiting; the staging is
  // reused after the next submission.
  void copy_to_device(uint8_t* device, const void* host, size_t bytes) override {
    const auto* src = static_cast<const uint8_t*>(host);
    uint64_t address = reinterpret_cast<uint64_t>(device);
    while (bytes > 0) {
      if (cursor_ >= staging_.size()) synchronize();
      const uint64_t n = std::min<uint64_t>(bytes, staging_.size() - cursor_);
      std::memcpy(staging_.mapped() + cursor_, src, n);
      const Context::Location at = context_.locate(address, n);
      begin_command();
      VkBufferCopy region{cursor_, at.offset, n};
      vkCmdCopyBuffer(cb_, staging_.handle(), at.buffer, 1, &region);
      cursor_ = (cursor_ + n + 255) / 256 * 256;
      address += n, src += n, bytes -= n;
    }
  }
  void copy_to_host(void* host, const uint8_t* device, size_t bytes) override {
    auto* dst = static_cast<uint8_t*>(host);
    uint64_t address = reinterpret_cast<uint64_t>(device);
    synchronize();
    while (bytes > 0) {
      const uint64_t n = std::min<uint64_t>(bytes, staging_.size());
      const Context::Location at = context_.locate(address, n);
      begin_command();
      VkBufferCopy region{at.offset, 0, n};
      vkCmdCopyBuffer(cb_, at.buffer, staging_.handle(), 1, &region);
      auto host_read = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      host_read.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT, host_read.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host_read, 0, nullptr, 0, nullptr);
      synchronize();
      std::memcpy(dst, staging_.mapped(), n);
      address += n, dst += n, bytes -= n;
    }
  }
  void fill_zero(uint8_t* device, size_t bytes) override { fill(reinterpret_cast<uint64_t>(device), bytes, 0); }
  void fill(uint64_t address, uint64_t bytes, uint32_t value) override {
    if (bytes == 0) return;
    // vkCmdFillBuffer writes whole words: a tail of 1-3 bytes is rounded up inside the
    // buffer (tensors are 64-byte aligned in the arena, so the bytes past a tensor's end
    // are padding).
    const Context::Location at = context_.locate(address, bytes);
    const uint64_t words = std::min<uint64_t>((bytes + 3) / 4 * 4, at.owner->size() - at.offset) / 4 * 4;
    begin_command();
    vkCmdFillBuffer(cb_, at.buffer, at.offset, words, value);
  }
  void dispatch(const char* shader, bool half, Push push, uint64_t count) override {
    if (count == 0) return;
    if (count > UINT32_MAX) throw Error("Vulkan backend: a dispatch of more than 2^32 elements");
    const VkPipeline pipeline = context_.pipeline(shader, half);
    push.count = static_cast<uint32_t>(count);
    const uint64_t groups = std::min<uint64_t>((count + 63) / 64, context_.max_groups_x());
    begin_command();
    vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdPushConstants(cb_, context_.pipeline_layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Push), &push);
    vkCmdDispatch(cb_, static_cast<uint32_t>(groups), 1, 1);
  }
  void synchronize() override {
    cursor_ = 0;
    if (!recording_) return;
    recording_ = false;
    check(vkEndCommandBuffer(cb_), "end a command buffer");
    context_.submit_and_wait(cb_, fence_);
    check(vkResetCommandBuffer(cb_, 0), "reset a command buffer");
  }
  void run_recorded(const std::function<void()>& work) override { work(); }

 private:
  // Opens the command buffer if needed, then orders this command after every earlier
  // one, this submission's or a previous one's (dispatches and copies read what the
  // previous ones wrote).
  void begin_command() {
    if (!recording_) {
      auto begin = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
      begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      check(vkBeginCommandBuffer(cb_, &begin), "begin a command buffer");
      recording_ = true;
    }
    auto b = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cb_, stages, stages, 0, 1, &b, 0, nullptr, 0, nullptr);
  }

  Context& context_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool recording_ = false;
  Buffer staging_;
  uint64_t cursor_ = 0;
};

using KernelFactory = std::unique_ptr<OpKernel> (*)(const KernelArgs&, Context&);

struct Factories {
  template <schema::OpKind K>
  static constexpr KernelFactory at = &create_kernel<K>;
};

// Every op kind's kernel factory, indexed by kind - 1, built from the schema's list of
// kinds: a kind whose ops/<op>.cpp does not define create_kernel<Kind> fails the link.
constexpr auto kFactories = op_kind_table<Factories>();

KernelFactory factory_of(schema::OpKind kind) {
  const int i = op_kind_index(kind);
  if (i < 0) throw Error("Vulkan backend: unknown op kind " + std::to_string(static_cast<int>(kind)));
  return kFactories[static_cast<size_t>(i)];
}

class VulkanBackend final : public ComputeBackend {
 public:
  explicit VulkanBackend(int device) : device_(device) {}
  Backend kind() const override { return Backend::kVulkan; }
  const char* name() const override { return "vulkan"; }
  // fp32: float storage; fp16: half storage of the arena's float tensors and the
  // weights, float arithmetic (the _f16 shaders), where the device has 16-bit storage
  // buffers. A memory report plans fp16 on any device.
  std::string precision_refusal(Precision precision, bool planning) const override {
    if (precision == Precision::kFp32) return "";
    if (precision != Precision::kFp16) return std::string("the vulkan backend runs fp32 or fp16, not ") + to_string(precision);
    if (planning) return "";
    const Context* c = nullptr;
    try {
      c = &context();
    } catch (const Error&) {
      return "";  // no device at all: check_usable() says so when a session is made
    }
    if (!c->storage16())
      return "fp16 needs 16-bit storage buffers (storageBuffer16BitAccess), which Vulkan device " + std::to_string(device_) + " (" + c->device_name() +
             ") lacks (fp32 runs)";
    return "";
  }
  // A kind whose kernel is not written yet, or a shape or attribute its shaders do not
  // take, is refused by the kernel's constructor (KernelRefusal); a planning build (no
  // tracker: nothing uploaded) asks it before the session's real build.
  bool supports(const KernelArgs& args, std::string* why) const override {
    KernelArgs planning = args;
    planning.tracker = nullptr;
    // The shaders index tensors with 32-bit integers.
    const OpDef& def = op_def(args.op);
    std::vector<int> tensors = def.inputs(args.op);
    tensors.push_back(def.output(args.op));
    for (int t : tensors) {
      if (t < 0) continue;
      const TensorDesc& d = args.tensor(t);
      if (kernels::saturating_product({args.batch, d.per_sample}) > INT32_MAX) {
        if (why) *why = "tensor '" + d.name + "' holds more than 2^31 - 1 values at batch " + std::to_string(args.batch) + ", past its shaders' 32-bit indexing";
        return false;
      }
    }
    try {
      factory_of(args.op.kind_type())(planning, context());
      return true;
    } catch (const KernelRefusal& e) {
      if (why) *why = e.what();
      return false;
    }
  }
  std::unique_ptr<OpKernel> create_kernel(const OpDef&, const KernelArgs& args) const override {
    return factory_of(args.op.kind_type())(args, context());
  }
  std::unique_ptr<DeviceBuffer> allocate(uint64_t bytes, MemoryTracker& tracker) const override {
    return std::make_unique<Arena>(context(), bytes, tracker);
  }
  std::unique_ptr<BackendStream> open_stream() const override { return std::make_unique<VulkanStream>(context()); }
  bool device_memory() const override { return true; }
  void check_usable(const char* caller) const override {
    try {
      context();
    } catch (const Error& e) {
      throw Error(std::string(caller) + ": the Vulkan backend has no usable device: " + e.what());
    }
  }
  std::string weight_placement() const override { return "copied to the device"; }

 private:
  Context& context() const { return Context::get(device_); }
  int device_;
};

static_assert(kernels::kActivationCount == 16, "kernels_vulkan/common/activation.glsl numbers 16 activations: add the new one there");

}  // namespace

Upload::Upload(const KernelArgs& args, Context& context, int params)
    : args_(args), context_(&context), tracker_(args.tracker), half_(args.precision == Precision::kFp16), words_(static_cast<size_t>(params), 0) {}

void Upload::set_f(int slot, float value) { std::memcpy(&words_[static_cast<size_t>(slot)], &value, 4); }

int Upload::ints(const int32_t* data, uint64_t count) {
  const size_t at = words_.size();
  if (at + count > (uint64_t{1} << 31)) throw KernelRefusal("its weights exceed 2^31 floats");
  words_.resize(at + count);
  if (count) std::memcpy(&words_[at], data, count * 4);
  return static_cast<int>(at);
}

// Halves are appended two to a word from a word boundary, so that the array's offset in
// halves is twice its first word's (within the shaders' 32-bit int indexing).
int Upload::halves(const uint16_t* data, uint64_t count) {
  const size_t at = words_.size();
  if (at + (count + 1) / 2 > (uint64_t{1} << 30)) throw KernelRefusal("its weights exceed 2^31 halves");
  words_.resize(at + (count + 1) / 2);
  if (count) std::memcpy(&words_[at], data, count * 2);
  return static_cast<int>(2 * at);
}

int Upload::floats(const float* data, uint64_t count) {
  if (!half_) return ints(reinterpret_cast<const int32_t*>(data), count);  // the same 32-bit words
  std::vector<uint16_t> h(count);
  for (uint64_t i = 0; i < count; ++i) h[i] = kernels::float_to_half(data[i]);
  return halves(h.data(), count);
}

int Upload::weights(uint32_t buffer) {
  if (buffer == 0) return -1;
  if (args_.weights.is_f16(buffer)) {
    if (half_) return halves(args_.weights.f16(buffer), args_.model.buffer_bytes(buffer) / 2);
    const std::vector<float> widened = args_.model.widened(buffer);
    return floats(widened.data(), widened.size());
  }
  return floats(args_.weights.f32(buffer), args_.model.buffer_bytes(buffer) / 4);
}

void Upload::commit() {
  if (!tracker_) return;  // a planning build: sizes only
  buffer_ = Buffer(*context_, device_bytes(), false, tracker_);
  context_->write(buffer_.address(), words_.data(), device_bytes());
  bytes_ = device_bytes();
  words_ = {};
}

void set_activation(Upload& u, int act, schema::Activation activation, float alpha, float beta) {
  u.set(act, static_cast<int>(to_activation(activation)));
  u.set_f(act + 1, alpha);
  u.set_f(act + 2, beta);
}

void set_epilogue(Upload& u, const schema::Epilogue* ep, int act, int bias_slot, int slope_slot) {
  u.set(bias_slot, -1);
  u.set(slope_slot, -1);
  if (!ep) return set_activation(u, act, schema::Activation_None, 0.01f, 0.f);
  set_activation(u, act, ep->activation(), ep->alpha(), ep->beta());
  if (ep->bias()) u.set(bias_slot, u.weights(ep->bias()));
  if (ep->activation() == schema::Activation_PRelu) u.set(slope_slot, u.weights(ep->slope()));
}

void no_backward(const char* kernel) {
  throw Error(std::string(kernel) + ": the Vulkan backend has no backward kernels; train on the CPU backend");
}

}  // namespace vulkan

int vulkan_validation_messages() { return vulkan::validation_messages(); }

const ComputeBackend* vulkan_backend(int device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<vulkan::VulkanBackend>> backends;
  std::lock_guard<std::mutex> lock(mutex);
  auto& b = backends[device];
  if (!b) b = std::make_unique<vulkan::VulkanBackend>(device);
  return b.get();
}

}  // namespace edgegan

// The Vulkan device a session runs on: the loader opened at run time (volk, so the
// library has no link dependency on libvulkan and a machine without a driver gets one
// line saying so), one logical device per physical device index with a compute queue,
// buffers whose device addresses are what the engine hands kernels as tensor
// addresses, and the compute pipelines of the embedded shaders, made once per device.
#pragma once

#include <volk.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "edgegan/edgegan.h"
#include "engine/memory_tracker.h"

namespace edgegan::vulkan {

class Context;

// A buffer of device memory usable by shaders through its device address; host-mapped
// where the memory allows it (integrated GPUs, lavapipe). Counted in the tracker's
// device bytes while it lives, when it has one.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Context& context, uint64_t bytes, bool staging, MemoryTracker* tracker);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  VkBuffer handle() const { return buffer_; }
  uint64_t address() const { return address_; }
  uint64_t size() const { return size_; }
  uint8_t* mapped() const { return mapped_; }  // nullptr: not host-visible

 private:
  void release();
  Context* context_ = nullptr;
  MemoryTracker* tracker_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t address_ = 0, size_ = 0;
  uint8_t* mapped_ = nullptr;
  bool staging_ = false;
  uint64_t reserved_ = 0;  // the bytes asked for (what the tracker counts)
};

// Every shader's push constants (kernels_vulkan/common/common.glsl, scalar layout).
struct Push {
  uint64_t params = 0;         // the kernel's upload
  uint64_t tensors[4] = {};    // arena addresses
  uint32_t count = 0;          // elements the dispatch covers
  uint32_t first = 0;
};

class Context {
 public:
  // The context of physical device `index`, made on first use. Throws Error with the
  // reason when the loader, an instance or that device cannot be had.
  static Context& get(int index);
  ~Context();

  VkDevice device() const { return device_; }
  const std::string& device_name() const { return name_; }
  uint32_t max_groups_x() const { return max_groups_x_; }
  VkPipelineLayout pipeline_layout() const { return layout_; }
  // The embedded shader's (its _f16 variant where `half`), made once.
  VkPipeline pipeline(const char* shader, bool half);
  bool storage16() const { return storage16_; }  // storageBuffer16BitAccess (fp16 sessions)
  uint32_t memory_type(uint32_t allowed, bool staging) const;
  bool host_visible(uint32_t type) const { return memory_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT; }

  // The buffer holding a device address, and the address's offset in it.
  struct Location {
    VkBuffer buffer;
    uint64_t offset;
    const Buffer* owner;
  };
  Location locate(uint64_t address, uint64_t bytes) const;
  void register_buffer(const Buffer* b);
  void unregister_buffer(const Buffer* b);

  // Copies between the host and a device address outside any stream (weights when a
  // kernel is built, a kernel's check after its run): straight through the mapping
  // where there is one, else through a temporary staging buffer.
  void write(uint64_t address, const void* host, uint64_t bytes);
  void read(void* host, uint64_t address, uint64_t bytes);

  // Submits one command buffer and waits for it (the queue is shared by every stream).
  void submit_and_wait(VkCommandBuffer cb, VkFence fence);
  uint32_t queue_family() const { return queue_family_; }

 private:
  explicit Context(int index);
  void teardown();
  void one_shot_copy(VkBuffer src, uint64_t src_offset, VkBuffer dst, uint64_t dst_offset, uint64_t bytes);

  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  uint32_t max_groups_x_ = 65535;
  bool storage16_ = false;
  std::string name_;
  std::mutex queue_mutex_, pool_mutex_, pipelines_mutex_;
  mutable std::mutex buffers_mutex_;
  std::map<std::string, VkPipeline> pipelines_;
  std::map<uint64_t, const Buffer*> buffers_;  // by device address
};

// Messages the validation layer reported in this process (EDGEGAN_VULKAN_VALIDATION=1
// turns the layer on; each message is also printed on stderr).
int validation_messages();

// A Vulkan info structure of type `type`, every other member zero.
template <typename T>
T make(VkStructureType type) {
  T v{};
  v.sType = type;
  return v;
}

// A VkResult that is not VK_SUCCESS as an Error ("Vulkan backend: <what>: <code>").
void check(VkResult r, const char* what);

}  // namespace edgegan::vulkan

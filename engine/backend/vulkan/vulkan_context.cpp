// The Vulkan device, its buffers and pipelines (vulkan_context.h).
#define VOLK_IMPLEMENTATION
#include "engine/backend/vulkan/vulkan_context.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <utility>
#include <vector>

#include "kernels_vulkan/shaders.h"

namespace edgegan::vulkan {

namespace {

std::atomic<int> g_validation_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++g_validation_messages;
  std::cerr << "Vulkan validation: " << (data && data->pMessage ? data->pMessage : "(no text)") << "\n";
  return VK_FALSE;
}

bool validation_requested() {
  const char* env = std::getenv("EDGEGAN_VULKAN_VALIDATION");
  return env && std::strcmp(env, "0") != 0 && *env;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(), [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

}  // namespace

int validation_messages() { return g_validation_messages.load(); }

namespace {

// The codes a driver gives for what a user can act on, by name; the others by number.
std::string result_text(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "out of host memory";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
    case VK_ERROR_INITIALIZATION_FAILED: return "initialization failed";
    case VK_ERROR_DEVICE_LOST: return "the device was lost";
    case VK_ERROR_LAYER_NOT_PRESENT: return "a layer is not present";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "an extension is not present";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "no Vulkan driver (ICD) is installed, or none takes Vulkan 1.2";
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

}  // namespace

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw Error(std::string("Vulkan backend: ") + what + ": " + result_text(r));
}

namespace {

// The loader and one VkInstance for the whole process, never destroyed: a device that
// cannot be had (a wrong index, a missing feature) must not unload the driver the
// other devices use, and making an instance costs a driver load each time.
class Instance {
 public:
  // The process's instance, made on first use; its failure is kept and repeated.
  static Instance& get() {
    static std::mutex mutex;
    static Instance* instance = nullptr;
    static std::string* failure = nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    if (instance) return *instance;
    if (failure) throw Error(*failure);
    try {
      instance = new Instance();
      return *instance;
    } catch (const Error& e) {
      failure = new std::string(e.what());
      throw;
    }
  }
  const std::vector<VkPhysicalDevice>& devices() const { return devices_; }

 private:
  Instance() {
    if (volkInitialize() != VK_SUCCESS) throw Error("the Vulkan loader (libvulkan.so.1) cannot be opened: no Vulkan driver is installed");
    if (volkGetInstanceVersion() < VK_API_VERSION_1_2) throw Error("the Vulkan loader is older than Vulkan 1.2");
    auto app = make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.pApplicationName = "edgegan";
    app.apiVersion = VK_API_VERSION_1_2;
    auto info = make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    info.pApplicationInfo = &app;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    const bool validate = validation_requested();
    if (validate) {
      if (!has_layer(layer)) throw Error("EDGEGAN_VULKAN_VALIDATION is set but VK_LAYER_KHRONOS_validation is not installed");
      info.enabledLayerCount = 1, info.ppEnabledLayerNames = &layer;
      info.enabledExtensionCount = 1, info.ppEnabledExtensionNames = &extension;
    }
    check(vkCreateInstance(&info, nullptr, &instance_), "create an instance");
    volkLoadInstance(instance_);
    try {
      if (validate) {
        auto m = make<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
        m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        m.pfnUserCallback = on_validation_message;
        check(vkCreateDebugUtilsMessengerEXT(instance_, &m, nullptr, &messenger_), "install the validation messenger");
      }
      uint32_t count = 0;
      check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "list the devices");
      devices_.resize(count);
      check(vkEnumeratePhysicalDevices(instance_, &count, devices_.data()), "list the devices");
      devices_.resize(count);
    } catch (...) {
      if (messenger_) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
      vkDestroyInstance(instance_, nullptr);
      throw;
    }
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> devices_;
};

}  // namespace

Context& Context::get(int index) {
  // Kept for the whole process and never destroyed: sessions may outlive static
  // destruction order, and a driver's own threads may still be winding down at exit.
  static std::mutex mutex;
  static auto* contexts = new std::map<int, Context*>;
  static auto* failures = new std::map<int, std::string>;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = contexts->find(index); it != contexts->end()) return *it->second;
  if (auto it = failures->find(index); it != failures->end()) throw Error(it->second);
  try {
    Context* c = new Context(index);
    (*contexts)[index] = c;
    return *c;
  } catch (const Error& e) {
    (*failures)[index] = e.what();
    throw;
  }
}

Context::Context(int index) {
  const std::vector<VkPhysicalDevice>& devices = Instance::get().devices();
  const auto count = static_cast<uint32_t>(devices.size());
  if (count == 0) throw Error("no Vulkan device is present");
  if (index < 0 || static_cast<uint32_t>(index) >= count)
    throw Error("device " + std::to_string(index) + " does not exist (" + std::to_string(count) + " Vulkan device" + (count == 1 ? "" : "s") +
                ", numbered from 0)");
  physical_ = devices[static_cast<size_t>(index)];
  try {
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(physical_, &props);
    name_ = props.deviceName;
    if (props.apiVersion < VK_API_VERSION_1_2) throw Error("device " + std::to_string(index) + " (" + name_ + ") is older than Vulkan 1.2");
    max_groups_x_ = props.limits.maxComputeWorkGroupCount[0];
    auto f12 = make<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    auto f11 = make<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
    f12.pNext = &f11;
    auto features = make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    features.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(physical_, &features);
    // EDGEGAN_VULKAN_NO_16BIT_STORAGE=1 treats the device as one without (the tests of
    // the fp32 fallback run on lavapipe, which has it).
    const char* no16 = std::getenv("EDGEGAN_VULKAN_NO_16BIT_STORAGE");
    storage16_ = f11.storageBuffer16BitAccess == VK_TRUE && !(no16 && std::string(no16) == "1");
    if (!f12.bufferDeviceAddress || !f12.scalarBlockLayout)
      throw Error("device " + std::to_string(index) + " (" + name_ + ") lacks bufferDeviceAddress or scalarBlockLayout");
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, family.data());
    queue_family_ = families;
    for (uint32_t i = 0; i < families; ++i)
      if (family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        queue_family_ = i;
        break;
      }
    if (queue_family_ == families) throw Error("device " + std::to_string(index) + " (" + name_ + ") has no compute queue");
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

    const float priority = 1.f;
    auto queue = make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    queue.queueFamilyIndex = queue_family_, queue.queueCount = 1, queue.pQueuePriorities = &priority;
    auto enable12 = make<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    enable12.bufferDeviceAddress = VK_TRUE;
    enable12.scalarBlockLayout = VK_TRUE;
    auto enable11 = make<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
    enable11.storageBuffer16BitAccess = storage16_ ? VK_TRUE : VK_FALSE;  // the _f16 shaders' halves
    enable12.pNext = &enable11;
    auto dinfo = make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    dinfo.pNext = &enable12;
    dinfo.queueCreateInfoCount = 1, dinfo.pQueueCreateInfos = &queue;
    check(vkCreateDevice(physical_, &dinfo, nullptr, &device_), "create the device");
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
    auto pool = make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = queue_family_;
    check(vkCreateCommandPool(device_, &pool, nullptr, &pool_), "create a command pool");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Push)};
    auto layout = make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout.pushConstantRangeCount = 1, layout.pPushConstantRanges = &range;
    check(vkCreatePipelineLayout(device_, &layout, nullptr, &layout_), "create the pipeline layout");
  } catch (...) {
    teardown();
    throw;
  }
}

Context::~Context() { teardown(); }

void Context::teardown() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    for (auto& [name, p] : pipelines_) vkDestroyPipeline(device_, p, nullptr);
    pipelines_.clear();
    if (layout_) vkDestroyPipelineLayout(device_, layout_, nullptr);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
    device_ = VK_NULL_HANDLE;
  }
}

VkPipeline Context::pipeline(const char* shader, bool half) {
  const std::string name = std::string(shader) + (half ? "_f16" : "");
  std::lock_guard<std::mutex> lock(pipelines_mutex_);
  if (auto it = pipelines_.find(name); it != pipelines_.end()) return it->second;
  const SpirvShader* spirv = find_shader(name.c_str());
  if (!spirv) throw Error("Vulkan backend: no shader named '" + name + "' is embedded");
  auto m = make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  m.codeSize = spirv->words * 4;
  m.pCode = spirv->code;
  VkShaderModule module = VK_NULL_HANDLE;
  check(vkCreateShaderModule(device_, &m, nullptr, &module), "create a shader module");
  auto p = make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  p.stage = make<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  p.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  p.stage.module = module;
  p.stage.pName = "main";
  p.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &p, nullptr, &pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  check(r, "create a compute pipeline");
  pipelines_[name] = pipeline;
  return pipeline;
}

uint32_t Context::memory_type(uint32_t allowed, bool staging) const {
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Device memory: mappable device-local first (no staging needed), then device-local.
  // Staging: host-visible and coherent.
  const std::vector<VkMemoryPropertyFlags> wanted =
      staging ? std::vector<VkMemoryPropertyFlags>{host} : std::vector<VkMemoryPropertyFlags>{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host,
                                                                                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
  for (VkMemoryPropertyFlags flags : wanted)
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw Error("Vulkan backend: no suitable memory type");
}

Context::Location Context::locate(uint64_t address, uint64_t bytes) const {
  std::lock_guard<std::mutex> lock(buffers_mutex_);
  auto it = buffers_.upper_bound(address);
  if (it == buffers_.begin()) throw Error("Vulkan backend: an address outside every buffer");
  --it;
  const Buffer* b = it->second;
  if (address + bytes > b->address() + b->size()) throw Error("Vulkan backend: a copy past the end of its buffer");
  return {b->handle(), address - b->address(), b};
}

void Context::register_buffer(const Buffer* b) {
  std::lock_guard<std::mutex> lock(buffers_mutex_);
  buffers_[b->address()] = b;
}

void Context::unregister_buffer(const Buffer* b) {
  std::lock_guard<std::mutex> lock(buffers_mutex_);
  auto it = buffers_.find(b->address());
  if (it != buffers_.end() && it->second == b) buffers_.erase(it);
}

void Context::submit_and_wait(VkCommandBuffer cb, VkFence fence) {
  auto submit = make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1, submit.pCommandBuffers = &cb;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    check(vkQueueSubmit(queue_, 1, &submit, fence), "submit work");
  }
  check(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "wait for the device");
  check(vkResetFences(device_, 1, &fence), "reset a fence");
}

void Context::one_shot_copy(VkBuffer src, uint64_t src_offset, VkBuffer dst, uint64_t dst_offset, uint64_t bytes) {
  // The context's pool is shared by every thread: held for the whole recording.
  std::lock_guard<std::mutex> lock(pool_mutex_);
  VkCommandBuffer cb = VK_NULL_HANDLE;
  auto alloc = make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = pool_, alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, alloc.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device_, &alloc, &cb), "allocate a command buffer");
  VkFence fence = VK_NULL_HANDLE;
  auto finfo = make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkResult r = vkCreateFence(device_, &finfo, nullptr, &fence);
  if (r == VK_SUCCESS) {
    auto begin = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &begin);
    // After whatever the device wrote before (a finished run), and before the host reads.
    auto before = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0,
                         nullptr, 0, nullptr);
    VkBufferCopy region{src_offset, dst_offset, bytes};
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    auto host = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT, host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, nullptr, 0, nullptr);
    vkEndCommandBuffer(cb);
    try {
      submit_and_wait(cb, fence);
    } catch (...) {
      r = VK_ERROR_DEVICE_LOST;
    }
    vkDestroyFence(device_, fence, nullptr);
  }
  vkFreeCommandBuffers(device_, pool_, 1, &cb);
  check(r, "copy between the host and the device");
}

void Context::write(uint64_t address, const void* host, uint64_t bytes) {
  if (bytes == 0) return;
  const Location at = locate(address, bytes);
  if (at.owner->mapped()) {
    std::memcpy(at.owner->mapped() + at.offset, host, bytes);
    return;
  }
  Buffer staging(*this, bytes, true, nullptr);
  std::memcpy(staging.mapped(), host, bytes);
  one_shot_copy(staging.handle(), 0, at.buffer, at.offset, bytes);
}

void Context::read(void* host, uint64_t address, uint64_t bytes) {
  if (bytes == 0) return;
  const Location at = locate(address, bytes);
  if (at.owner->mapped()) {
    std::memcpy(host, at.owner->mapped() + at.offset, bytes);
    return;
  }
  Buffer staging(*this, bytes, true, nullptr);
  one_shot_copy(at.buffer, at.offset, staging.handle(), 0, bytes);
  std::memcpy(host, staging.mapped(), bytes);
}

Buffer::Buffer(Context& context, uint64_t bytes, bool staging, MemoryTracker* tracker)
    : context_(&context), size_(std::max<uint64_t>(bytes, 64)), staging_(staging) {
  const VkDevice device = context.device();
  auto info = make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = size_;
  info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
               (staging ? 0 : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device, &info, nullptr, &buffer_), "create a buffer");
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device, buffer_, &req);
  auto flags = make<VkMemoryAllocateFlagsInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  auto alloc = make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.pNext = staging ? nullptr : &flags;
  alloc.allocationSize = req.size;
  try {
    alloc.memoryTypeIndex = context.memory_type(req.memoryTypeBits, staging);
    const VkResult r = vkAllocateMemory(device, &alloc, nullptr, &memory_);
    if (r != VK_SUCCESS)
      throw Error("Vulkan backend: allocating " + std::to_string(bytes) + " bytes of device memory failed (VkResult " + std::to_string(static_cast<int>(r)) + ")");
    check(vkBindBufferMemory(device, buffer_, memory_, 0), "bind buffer memory");
    void* mapped = nullptr;
    if (context.host_visible(alloc.memoryTypeIndex) && vkMapMemory(device, memory_, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS) mapped_ = static_cast<uint8_t*>(mapped);
    if (!staging) {
      auto a = make<VkBufferDeviceAddressInfo>(VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
      a.buffer = buffer_;
      address_ = vkGetBufferDeviceAddress(device, &a);
      context.register_buffer(this);
    }
  } catch (...) {
    release();
    throw;
  }
  if (tracker) {
    tracker_ = tracker;
    tracker_->note_device_allocation(bytes);
  }
  reserved_ = bytes;
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  if (!context_) return;
  const VkDevice device = context_->device();
  if (address_) context_->unregister_buffer(this);
  if (buffer_) vkDestroyBuffer(device, buffer_, nullptr);
  if (memory_) vkFreeMemory(device, memory_, nullptr);  // unmaps too
  if (tracker_) tracker_->note_device_release(reserved_);
  context_ = nullptr, tracker_ = nullptr, buffer_ = VK_NULL_HANDLE, memory_ = VK_NULL_HANDLE, address_ = 0, mapped_ = nullptr;
}

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this == &o) return *this;
  release();
  context_ = std::exchange(o.context_, nullptr);
  tracker_ = std::exchange(o.tracker_, nullptr);
  buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
  memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
  address_ = std::exchange(o.address_, 0);
  size_ = std::exchange(o.size_, 0);
  mapped_ = std::exchange(o.mapped_, nullptr);
  staging_ = o.staging_;
  reserved_ = std::exchange(o.reserved_, 0);
  if (address_) context_->register_buffer(this);  // the registry points at the new owner
  return *this;
}

}  // namespace edgegan::vulkan

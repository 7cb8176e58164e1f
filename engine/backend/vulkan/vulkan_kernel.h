// What the Vulkan backend's op kernels share: the stream they record dispatches on,
// the upload of what a kernel reads besides the arena (its parameter block and
// weights, one device buffer per kernel), and the factory each op file in ops/ defines.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/vulkan/vulkan_context.h"
#include "engine/ops/op_def.h"

namespace edgegan::vulkan {

// One executor's queue (BackendStream::native() on this backend): a command buffer
// that records dispatches, copies and fills in order, each behind a barrier on the
// previous, submitted with a fence when the host needs the results.
class Stream {
 public:
  virtual ~Stream() = default;
  // Records one shader (its _f16 variant where `half`: an fp16 session's) over `count`
  // elements with these push constants (count set here).
  virtual void dispatch(const char* shader, bool half, Push push, uint64_t count) = 0;
  // Fills `bytes` (a multiple of 4) at a device address with a 32-bit value.
  virtual void fill(uint64_t address, uint64_t bytes, uint32_t value) = 0;
  virtual Context& context() = 0;
};

inline Stream& stream_of(const RunContext& ctx) { return *static_cast<Stream*>(ctx.stream); }
inline uint64_t address_of(const RunContext& ctx, int tensor) { return reinterpret_cast<uint64_t>((*ctx.tensors)[static_cast<size_t>(tensor)]); }

// A layer the kernels cannot run as the model has it (the message says why): thrown by
// a kernel's constructor, planning builds included, so that supports() finds it before
// the session allocates anything.
struct KernelRefusal : Error {
  using Error::Error;
};

// Everything one kernel reads besides the arena, as 32-bit words: a parameter block of
// `params` ints first (shapes, offsets, activation), then the arrays appended (tables
// of ints; weights as floats, or as halves in an fp16 session, two to a word). Shaders
// read it through Push::params and address the ints by word offset and the weights by
// offset in their storage type (floats() and weights() return it). commit() places it
// in one device buffer; a planning build (no tracker) only counts the bytes.
class Upload {
 public:
  Upload(const KernelArgs& args, Context& context, int params);
  void set(int slot, int32_t value) { words_[static_cast<size_t>(slot)] = static_cast<uint32_t>(value); }
  void set_f(int slot, float value);
  int32_t get(int slot) const { return static_cast<int32_t>(words_[static_cast<size_t>(slot)]); }
  int floats(const float* data, uint64_t count);  // element offset of the copy (rounded to halves in fp16)
  int ints(const int32_t* data, uint64_t count);  // word offset of the copy
  int weights(uint32_t buffer);                   // a model buffer as floats or halves; 0: -1
  bool half() const { return half_; }             // an fp16 session's: halves, the _f16 shaders
  void commit();
  uint64_t address() const { return buffer_.address(); }
  uint64_t device_bytes() const { return bytes_ ? bytes_ : words_.size() * 4; }
  Context& context() const { return *context_; }

 private:
  const KernelArgs& args_;
  Context* context_;
  MemoryTracker* tracker_;
  int halves(const uint16_t* data, uint64_t count);  // offset in halves
  bool half_;
  std::vector<uint32_t> words_;
  uint64_t bytes_ = 0;  // after commit()
  Buffer buffer_;
};

// The activation of a file's epilogue or op in an upload's parameter block: its number,
// alpha, beta at slots act, act+1, act+2 (a fused PRelu is LeakyRelu with a slope per
// channel: the slope array's offset goes to `slope_slot`, -1 without).
void set_activation(Upload& u, int act, schema::Activation activation, float alpha, float beta);
void set_epilogue(Upload& u, const schema::Epilogue* ep, int act, int bias_slot, int slope_slot);

// A kernel that has no backward pass on this backend.
[[noreturn]] void no_backward(const char* kernel);

// A kernel that is one dispatch of one shader over `count_` elements with its upload and
// up to four arena tensors (t0..t3 in the shader, -1: none): the derived constructor fills
// upload_'s parameter block (and sets count_ if not given here), then commits it.
class SingleDispatchKernel : public OpKernel {
 public:
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    for (int i = 0; i < 4; ++i) p.tensors[i] = tensors_[i] >= 0 ? address_of(ctx, tensors_[i]) : 0;
    stream_of(ctx).dispatch(shader_, upload_.half(), p, static_cast<uint64_t>(count_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 protected:
  SingleDispatchKernel(const KernelArgs& a, Context& c, const char* shader, int params, std::initializer_list<int> tensors, int64_t count = 0)
      : upload_(a, c, params), shader_(shader), count_(count) {
    int i = 0;
    for (int t : tensors) tensors_[i++] = t;
  }
  int tensor(int i) const { return tensors_[i]; }

  Upload upload_;
  const char* shader_;
  int64_t count_;

 private:
  int tensors_[4] = {-1, -1, -1, -1};
};

// The kernel factory of an op kind, defined in ops/<op>.cpp. vulkan_backend.cpp's table
// takes it for every kind of the schema, so a kind without one fails the link.
// `context` is the backend's device (uploads go there).
template <schema::OpKind Kind>
std::unique_ptr<OpKernel> create_kernel(const KernelArgs& args, Context& context);

}  // namespace edgegan::vulkan

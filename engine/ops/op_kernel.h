// An op prepared for execution by a session: weights bound (in place from the
// model file), kernel chosen, scratch size known before the first run.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/memory_tracker.h"
#include "engine/model_impl.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan {

struct RunContext {
  const std::vector<uint8_t*>* tensors;  // arena address of every tensor
  uint8_t* workspace = nullptr;          // this op's scratch (workspace_bytes())
  int64_t batch = 1;
  int threads = 1;
  float* f32(int tensor) const { return reinterpret_cast<float*>((*tensors)[static_cast<size_t>(tensor)]); }
  const int64_t* i64(int tensor) const { return reinterpret_cast<const int64_t*>((*tensors)[static_cast<size_t>(tensor)]); }
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual const char* kernel_name() const = 0;     // e.g. "conv_transpose2d_split"
  virtual uint64_t workspace_bytes() const { return 0; }
  virtual uint64_t repacked_weight_bytes() const { return 0; }  // session-owned weight copies
  virtual uint64_t macs() const { return 0; }  // multiply-accumulates one run executes
  // Output may share the input's buffer: no data movement at all (Reshape that keeps order).
  virtual bool output_aliases_input() const { return false; }
  // Output may overwrite the input element by element (activations, affine).
  virtual bool works_in_place() const { return false; }
  virtual int in_place_input() const { return -1; }
  virtual void run(const RunContext& ctx) = 0;
};

// Builds the CPU kernel for one validated op, for runs at `threads` threads (its
// workspace may depend on them). Weight copies are allocated through `tracker`; with
// nullptr the kernel is built for planning only and must not be run.
std::unique_ptr<OpKernel> create_cpu_op(const Model::Impl& model, const schema::Op& op, ConvTransposeAlgo algo, int64_t batch, int threads,
                                        MemoryTracker* tracker);

cpu::Epilogue make_epilogue(const Model::Impl& model, const schema::Epilogue* ep);

// Kernel geometry of a validated op at a batch size (shared by the op kernels and the Trainer).
cpu::ConvShape deconv_shape_of(const Model::Impl& model, const schema::ConvTranspose2D& op, int64_t batch);
cpu::ConvShape conv_shape_of(const Model::Impl& model, const schema::Conv2D& op, int64_t batch);
cpu::Activation to_cpu(schema::Activation a);

// Copies `batch` samples of tensor `from` (its storage order) into tensor `to`'s
// storage order, both read as the same logical (NCHW) elements: the data movement
// of a Reshape, and, run from the output to the input, of its gradient. `scratch`
// holds batch*per_sample floats and is used only when neither layout is logical.
void relayout(const TensorDesc& from, const TensorDesc& to, int64_t batch, const float* x, float* y, float* scratch);

// A Concat as cpu::concat sees it: `outer` rows of one contiguous chunk per input.
struct ConcatLayout {
  int64_t outer = 1;
  std::vector<int64_t> chunks;
};
ConcatLayout concat_layout(const Model::Impl& model, const schema::Concat& op, int64_t batch);

// One factory per op kind (each in its own file).
std::unique_ptr<OpKernel> make_conv_transpose2d(const Model::Impl&, const schema::ConvTranspose2D&, ConvTransposeAlgo, int64_t batch,
                                                int threads, MemoryTracker* tracker);
std::unique_ptr<OpKernel> make_conv2d(const Model::Impl&, const schema::Conv2D&, int64_t batch);
std::unique_ptr<OpKernel> make_dense(const Model::Impl&, const schema::Dense&, int64_t batch);
std::unique_ptr<OpKernel> make_embedding(const Model::Impl&, const schema::Embedding&, int64_t batch, const std::string& name);
std::unique_ptr<OpKernel> make_concat(const Model::Impl&, const schema::Concat&, int64_t batch);
std::unique_ptr<OpKernel> make_reshape(const Model::Impl&, const schema::Reshape&, int64_t batch);
std::unique_ptr<OpKernel> make_channel_affine(const Model::Impl&, const schema::ChannelAffine&, int64_t batch);
std::unique_ptr<OpKernel> make_elementwise(const Model::Impl&, const schema::Elementwise&, int64_t batch);

}  // namespace edgegan

// Trainer: the model's ops run with the trainer's own (mutable) copies of the
// weights; every activation is kept for the backward pass, which walks the ops
// in reverse and adds each op's input gradients into its inputs' gradients.
#include "edgegan/trainer.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cstring>

#include "edgegan/io.h"
#include "engine/input_binding.h"
#include "engine/model_impl.h"
#include "kernels_cpu/common/half.h"
#include "engine/ops/op_kernel.h"  // to_cpu(Activation)
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "kernels_cpu/dense/dense.h"
#include "kernels_cpu/channel_affine/channel_affine.h"
#include "kernels_cpu/concat/concat.h"
#include "kernels_cpu/elementwise/elementwise.h"
#include "kernels_cpu/embedding/embedding.h"
#include "kernels_cpu/reshape/reshape.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/loss/loss.h"
#include "kernels_cpu/optimizer/optimizer.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward_zero_insert.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan {
namespace {

namespace fb = schema;

// A trainable weight blob of the model file.
struct Param {
  std::string name;
  uint32_t buffer = 0;  // where save() writes it back
  int op = -1;
  bool frozen = false;
  size_t count = 0;  // elements
  int states = 0;    // optimizer state arrays: Adam 2, SGD with momentum 1, frozen 0
  std::vector<float> value, grad, state1, state2;  // optimizer state only as the optimizer needs it
};

struct TrainOp {
  fb::OpKind kind = fb::OpKind_NONE;
  std::vector<int> inputs;
  int output = -1;
  std::vector<int> weights;  // param per phase (ConvTranspose2D; -1 for a tapless phase) or the single weight param
  int bias = -1;             // bias or affine shift param
  cpu::Activation activation = cpu::Activation::kNone;
  float alpha = 0.01f;
  cpu::ConvShape deconv;
  int64_t panel_columns = 0;  // ConvTranspose2D: the file's weight panel width (0: plain)
  cpu::ConvShape conv;
  int64_t in_features = 0, out_features = 0;  // Dense; Embedding rows/dim; affine channels
  ConcatLayout concat;
};

// Kernels' workspaces are kept between calls and only ever grow: the backward pass of
// every step reuses them instead of allocating (and page-faulting in) fresh memory.
void grow(std::vector<float>& buffer, int64_t floats) {
  if (buffer.size() < static_cast<size_t>(floats)) buffer.resize(static_cast<size_t>(floats));
}

void add_into(std::vector<float>& dst, const float* src) {
  for (size_t i = 0; i < dst.size(); ++i) dst[i] += src[i];
}

}  // namespace

struct Trainer::Impl {
  std::shared_ptr<const Model> model;
  TrainerOptions options;
  int threads = 1;
  int64_t batch = 1;
  std::vector<Param> params;
  std::vector<TrainOp> ops;
  std::vector<std::vector<float>> values, grads;  // per tensor (float tensors)
  std::vector<std::vector<int64_t>> labels;       // per tensor (int64 inputs)
  std::vector<float> workspace;                   // kernels' scratch (transposed weights for dX; zero-insertion buffers), grown as needed
  std::vector<float> param_scratch;               // one op's parameter gradients before they are added, grown as needed
  // Per tensor, during backward(): no gradient has been written to it yet, so its buffer
  // holds stale values that read as zero. The first contribution overwrites instead of
  // adding, so the pass never clears the gradient buffers up front.
  std::vector<char> grad_untouched;
  // For a reader (or an in-place accumulator) of tensor t's gradient: zeros if nothing wrote it.
  std::vector<float>& written_grad(int t) {
    std::vector<float>& g = grads[static_cast<size_t>(t)];
    if (grad_untouched[static_cast<size_t>(t)]) std::fill(g.begin(), g.end(), 0.f);
    grad_untouched[static_cast<size_t>(t)] = 0;
    return g;
  }
  bool have_forward = false;
  int64_t steps = 0;

  const Model::Impl& m() const { return model->impl(); }
  const TensorDesc& desc(int t) const { return m().tensors[static_cast<size_t>(t)]; }
  size_t numel(int t) const { return static_cast<size_t>(batch * desc(t).per_sample); }

  int building_op = -1;  // build(): the op whose parameters add_param() is collecting
  bool planning_only = false;  // training_memory(): sizes only, nothing copied
  bool parameter_gradients = true;  // run_backward(): false for input_gradients()
  std::vector<char> gradient_wanted;  // run_backward(), per tensor: false for the model's inputs in backward_parameters()
  int add_param(std::string name, uint32_t buffer) {
    if (buffer == 0) return -1;
    Param p;
    p.name = std::move(name);
    p.buffer = buffer;
    p.count = m().buffer_elements(buffer);
    p.op = building_op;
    p.frozen = std::find(options.frozen_ops.begin(), options.frozen_ops.end(), building_op) != options.frozen_ops.end();
    p.states = p.frozen ? 0 : options.optimizer == Optimizer::kAdam ? 2 : options.momentum != 0.f ? 1 : 0;
    if (!planning_only) {
      p.value = m().widened(buffer);  // fp16 weights train in float
      p.grad.assign(p.count, 0.f);
      if (p.states >= 1) p.state1.assign(p.count, 0.f);
      if (p.states >= 2) p.state2.assign(p.count, 0.f);
    }
    params.push_back(std::move(p));
    return static_cast<int>(params.size()) - 1;
  }
  const float* value_of(int param) const { return param >= 0 ? params[static_cast<size_t>(param)].value.data() : nullptr; }

  cpu::ConvTranspose2DWeights split_of(const TrainOp& op) const {
    cpu::ConvTranspose2DWeights w;
    w.phases_h = cpu::split_conv_transpose_axis(op.deconv.h);
    w.phases_w = cpu::split_conv_transpose_axis(op.deconv.w);
    for (int p : op.weights) w.sub_kernels.push_back(value_of(p));
    w.panel_columns = op.panel_columns;
    return w;
  }

  void build();
  void run_forward(const TrainOp& op);
  void run_backward(const TrainOp& op);
  std::vector<Tensor> backward_pass(const std::vector<Tensor>& output_gradients, bool with_parameters, bool with_input_gradients,
                                    const std::string& what);
};

void Trainer::Impl::build() {
  const auto& fops = *m().root->ops();
  for (int frozen : options.frozen_ops)
    if (frozen < 0 || frozen >= static_cast<int>(fops.size()))
      throw Error("trainer: frozen op " + std::to_string(frozen) + " is outside 0.." + std::to_string(fops.size() - 1));
  for (uint32_t i = 0; i < fops.size(); ++i) {
    building_op = static_cast<int>(i);
    const fb::Op& f = *fops.Get(i);
    const std::string label = "op " + std::to_string(i) + (f.name() ? " '" + f.name()->str() + "'" : std::string());
    TrainOp op;
    op.kind = f.kind_type();
    op.inputs = op_inputs(f);
    op.output = op_output(f);
    auto epilogue = [&](const fb::Epilogue* ep) {
      if (!ep) return;
      op.bias = add_param(label + " bias", ep->bias());
      op.activation = to_cpu(ep->activation());
      op.alpha = ep->alpha();
    };
    switch (op.kind) {
      case fb::OpKind_ConvTranspose2D: {
        const auto& c = *f.kind_as_ConvTranspose2D();
        op.deconv = deconv_shape_of(m(), c, batch);
        op.panel_columns = c.weight_panel_columns();
        for (const auto* p : *c.phases())
          op.weights.push_back(add_param(label + " phase (" + std::to_string(p->phase_h()) + "," + std::to_string(p->phase_w()) + ") weights",
                                         p->weights()));
        epilogue(c.epilogue());
        break;
      }
      case fb::OpKind_Conv2D: {
        const auto& c = *f.kind_as_Conv2D();
        op.conv = conv_shape_of(m(), c, batch);
        op.weights.push_back(add_param(label + " weights", c.weights()));
        epilogue(c.epilogue());
        break;
      }
      case fb::OpKind_Dense: {
        const auto& d = *f.kind_as_Dense();
        op.in_features = d.in_features();
        op.out_features = d.out_features();
        op.weights.push_back(add_param(label + " weights", d.weights()));
        epilogue(d.epilogue());
        break;
      }
      case fb::OpKind_Embedding: {
        const auto& e = *f.kind_as_Embedding();
        op.in_features = e.num_embeddings();
        op.out_features = e.dim();
        op.weights.push_back(add_param(label + " table", e.table()));
        break;
      }
      case fb::OpKind_ChannelAffine: {
        const auto& a = *f.kind_as_ChannelAffine();
        op.in_features = a.channels();
        op.weights.push_back(add_param(label + " scale", a.scale()));
        op.bias = add_param(label + " shift", a.shift());
        op.activation = to_cpu(a.activation());
        op.alpha = a.alpha();
        break;
      }
      case fb::OpKind_Elementwise: {
        op.activation = to_cpu(f.kind_as_Elementwise()->activation());
        op.alpha = f.kind_as_Elementwise()->alpha();
        break;
      }
      case fb::OpKind_Concat: op.concat = concat_layout(m(), *f.kind_as_Concat(), batch); break;
      default: break;  // Reshape: no parameters
    }
    ops.push_back(std::move(op));
  }
}

void Trainer::Impl::run_forward(const TrainOp& op) {
  float* y = values[static_cast<size_t>(op.output)].data();
  const cpu::Epilogue ep{value_of(op.bias), op.activation, op.alpha};
  switch (op.kind) {
    case fb::OpKind_ConvTranspose2D:
      cpu::conv_transpose2d_split(op.deconv, split_of(op), values[static_cast<size_t>(op.inputs[0])].data(), y, ep, threads);
      break;
    case fb::OpKind_Conv2D:
      cpu::conv2d_trimmed(op.conv, value_of(op.weights[0]), values[static_cast<size_t>(op.inputs[0])].data(), y, ep, threads);
      break;
    case fb::OpKind_Dense:
      cpu::dense(batch, op.in_features, op.out_features, values[static_cast<size_t>(op.inputs[0])].data(), value_of(op.weights[0]), y, ep, threads);
      break;
    case fb::OpKind_Embedding: {
      const auto& idx = labels[static_cast<size_t>(op.inputs[0])];
      for (size_t k = 0; k < idx.size(); ++k)
        if (idx[k] < 0 || idx[k] >= op.in_features)
          throw Error("forward: label " + std::to_string(idx[k]) + " at position " + std::to_string(k) + " is outside 0.." +
                      std::to_string(op.in_features - 1));
      cpu::embedding_lookup(static_cast<int64_t>(idx.size()), idx.data(), op.out_features, value_of(op.weights[0]), y);
      break;
    }
    case fb::OpKind_Concat: {
      std::vector<const float*> src;
      for (int in : op.inputs) src.push_back(values[static_cast<size_t>(in)].data());
      cpu::concat(op.concat.outer, src, op.concat.chunks, y);
      break;
    }
    case fb::OpKind_Reshape: {
      std::vector<float> scratch(numel(op.output));
      relayout(desc(op.inputs[0]), desc(op.output), batch, values[static_cast<size_t>(op.inputs[0])].data(), y, scratch.data());
      break;
    }
    case fb::OpKind_ChannelAffine:
      cpu::channel_affine(static_cast<int64_t>(numel(op.output)) / op.in_features, op.in_features, value_of(op.weights[0]), value_of(op.bias),
                          values[static_cast<size_t>(op.inputs[0])].data(), y, op.activation, op.alpha);
      break;
    case fb::OpKind_Elementwise:
      cpu::elementwise_activation(static_cast<int64_t>(numel(op.output)), values[static_cast<size_t>(op.inputs[0])].data(), y, op.activation, op.alpha);
      break;
    default: throw Error("forward: unsupported op");
  }
}

void Trainer::Impl::run_backward(const TrainOp& op) {
  // The output's gradient is not read again after this op: the activation's backward runs in place.
  std::vector<float>& g = written_grad(op.output);  // zeros when nothing reads this output
  cpu::activation_backward(static_cast<int64_t>(g.size()), values[static_cast<size_t>(op.output)].data(), g.data(), op.activation, op.alpha);
  auto param_grad = [&](int p) -> std::vector<float>& { return params[static_cast<size_t>(p)].grad; };
  auto input_grad = [&](size_t k) -> std::vector<float>& { return grads[static_cast<size_t>(op.inputs[k])]; };
  // Where a kernel overwrites its result: straight into the input's gradient while that is
  // still zero (its first contribution), else into a temporary that is then added.
  std::vector<float> tmp;
  auto input_grad_target = [&](size_t k) -> float* {
    std::vector<float>& dst = input_grad(k);
    if (grad_untouched[static_cast<size_t>(op.inputs[k])]) return dst.data();
    tmp.resize(dst.size());
    return tmp.data();
  };
  auto finish_input_grad = [&](size_t k, const float* written) {
    std::vector<float>& dst = input_grad(k);
    if (written != dst.data()) add_into(dst, written);
    grad_untouched[static_cast<size_t>(op.inputs[k])] = 0;
  };
  // Adds a whole gradient into input k's (copies it, for the first contribution).
  auto accumulate_input_grad = [&](size_t k, const float* src) {
    std::vector<float>& dst = input_grad(k);
    if (grad_untouched[static_cast<size_t>(op.inputs[k])]) std::copy(src, src + dst.size(), dst.begin());
    else add_into(dst, src);
    grad_untouched[static_cast<size_t>(op.inputs[k])] = 0;
  };
  auto param_buffer = [&](size_t n) {
    if (param_scratch.size() < n) param_scratch.resize(n);
    return param_scratch.data();
  };
  switch (op.kind) {
    case fb::OpKind_ConvTranspose2D: {
      const cpu::ConvTranspose2DWeights w = split_of(op);
      const int64_t pixels = batch * op.deconv.h.out * op.deconv.w.out;
      if (parameter_gradients && op.bias >= 0) {
        tmp.assign(static_cast<size_t>(op.deconv.out_channels), 0.f);
        cpu::bias_backward(pixels, op.deconv.out_channels, g.data(), tmp.data());
        add_into(param_grad(op.bias), tmp.data());
      }
      // The phases' weight gradients side by side in the scratch (none for input_gradients()).
      auto phase_size = [&](int p) -> size_t { return parameter_gradients && p >= 0 ? params[static_cast<size_t>(p)].value.size() : 0; };
      size_t total = 0;
      for (int p : op.weights) total += phase_size(p);
      float* dsub_all = param_buffer(total);
      std::vector<float*> dsub_ptr;
      for (size_t p = 0, at = 0; p < op.weights.size(); ++p) {
        const size_t n = phase_size(op.weights[p]);
        dsub_ptr.push_back(n ? dsub_all + at : nullptr);
        at += n;
      }
      const float* x = values[static_cast<size_t>(op.inputs[0])].data();
      const bool want_dx = gradient_wanted[static_cast<size_t>(op.inputs[0])];
      float* dx = want_dx ? input_grad_target(0) : nullptr;
      if (options.conv_transpose_backward == ConvTransposeBackward::kZeroInsert) {
        // The baseline: full kernel assembled from the phases, gradient of the full kernel
        // scattered back into them.
        const cpu::ConvShape& s = op.deconv;
        std::vector<float> full(static_cast<size_t>(s.h.kernel * s.w.kernel * s.in_channels * s.out_channels)), dfull(full.size());
        cpu::assemble_conv_transpose2d_full_kernel(s, w, cpu::FullKernelLayout::kTapsFirst, full.data());
        grow(workspace, std::max(cpu::conv_transpose2d_zero_insert_backward_input_workspace(s),
                                 cpu::conv_transpose2d_zero_insert_backward_weights_workspace(s)));
        if (parameter_gradients) {
          cpu::conv_transpose2d_zero_insert_backward_weights(s, x, g.data(), dfull.data(), workspace.data(), threads);
          cpu::scatter_conv_transpose2d_full_kernel(s, w.phases_h, w.phases_w, dfull.data(), dsub_ptr, w.panel_columns);
        }
        if (want_dx) cpu::conv_transpose2d_zero_insert_backward_input(s, full.data(), g.data(), dx, workspace.data(), threads);
      } else {
        if (parameter_gradients)
          cpu::conv_transpose2d_backward_weights(op.deconv, w.phases_h, w.phases_w, x, g.data(), dsub_ptr, threads, w.panel_columns);
        if (want_dx) {
          grow(workspace, cpu::conv_transpose2d_backward_input_workspace(op.deconv));
          cpu::conv_transpose2d_backward_input(op.deconv, w, g.data(), dx, workspace.data(), threads);
        }
      }
      for (size_t p = 0; p < op.weights.size(); ++p)
        if (dsub_ptr[p]) add_into(param_grad(op.weights[p]), dsub_ptr[p]);
      if (want_dx) finish_input_grad(0, dx);
      break;
    }
    case fb::OpKind_Conv2D: {
      if (parameter_gradients && op.bias >= 0) {
        tmp.assign(static_cast<size_t>(op.conv.out_channels), 0.f);
        cpu::bias_backward(batch * op.conv.h.out * op.conv.w.out, op.conv.out_channels, g.data(), tmp.data());
        add_into(param_grad(op.bias), tmp.data());
      }
      if (parameter_gradients) {
        float* dw = param_buffer(params[static_cast<size_t>(op.weights[0])].value.size());
        cpu::conv2d_backward_weights(op.conv, values[static_cast<size_t>(op.inputs[0])].data(), g.data(), dw, threads);
        add_into(param_grad(op.weights[0]), dw);
      }
      // From the current weights (they change every step): their transposed view is rebuilt
      // in the kept workspace.
      if (!gradient_wanted[static_cast<size_t>(op.inputs[0])]) break;
      float* dx = input_grad_target(0);
      grow(workspace, cpu::conv2d_backward_input_workspace(op.conv));
      cpu::conv2d_backward_input(op.conv, value_of(op.weights[0]), g.data(), dx, workspace.data(), threads);
      finish_input_grad(0, dx);
      break;
    }
    case fb::OpKind_Dense: {
      std::vector<float> dw(params[static_cast<size_t>(op.weights[0])].value.size()), db(static_cast<size_t>(op.out_features));
      tmp.assign(input_grad(0).size(), 0.f);
      cpu::dense_backward(batch, op.in_features, op.out_features, values[static_cast<size_t>(op.inputs[0])].data(), value_of(op.weights[0]),
                          g.data(), tmp.data(), dw.data(), db.data());
      accumulate_input_grad(0, tmp.data());
      if (parameter_gradients) add_into(param_grad(op.weights[0]), dw.data());
      if (parameter_gradients && op.bias >= 0) add_into(param_grad(op.bias), db.data());
      break;
    }
    case fb::OpKind_Embedding: {
      if (!parameter_gradients) break;  // its input is a label: nothing flows further
      const auto& idx = labels[static_cast<size_t>(op.inputs[0])];
      tmp.assign(params[static_cast<size_t>(op.weights[0])].value.size(), 0.f);
      cpu::embedding_backward(static_cast<int64_t>(idx.size()), idx.data(), op.in_features, op.out_features, g.data(), tmp.data());
      add_into(param_grad(op.weights[0]), tmp.data());
      break;
    }
    case fb::OpKind_Concat: {
      std::vector<std::vector<float>> parts;
      std::vector<float*> part_ptr;
      for (int in : op.inputs) parts.emplace_back(numel(in));
      for (auto& p : parts) part_ptr.push_back(p.data());
      cpu::concat_backward(op.concat.outer, g.data(), static_cast<int>(parts.size()), op.concat.chunks.data(), part_ptr.data());
      for (size_t k = 0; k < parts.size(); ++k) accumulate_input_grad(k, parts[k].data());
      break;
    }
    case fb::OpKind_Reshape: {
      // The gradient goes through the same re-ordering, from the output's layout to the input's.
      std::vector<float> scratch(g.size());
      tmp.assign(g.size(), 0.f);
      relayout(desc(op.output), desc(op.inputs[0]), batch, g.data(), tmp.data(), scratch.data());
      accumulate_input_grad(0, tmp.data());
      break;
    }
    case fb::OpKind_ChannelAffine: {
      const int64_t c = op.in_features, pixels = static_cast<int64_t>(g.size()) / c;
      const float* x = values[static_cast<size_t>(op.inputs[0])].data();
      const float* scale = value_of(op.weights[0]);
      auto& dscale = param_grad(op.weights[0]);
      auto& dshift = param_grad(op.bias);
      auto& dx = written_grad(op.inputs[0]);
      for (int64_t p = 0; p < pixels; ++p)
        for (int64_t k = 0; k < c; ++k) {
          const size_t i = static_cast<size_t>(p * c + k);
          if (parameter_gradients) {
            dscale[static_cast<size_t>(k)] += g[i] * x[i];
            dshift[static_cast<size_t>(k)] += g[i];
          }
          dx[i] += g[i] * scale[k];
        }
      break;
    }
    case fb::OpKind_Elementwise: accumulate_input_grad(0, g.data()); break;
    default: throw Error("backward: unsupported op");
  }
}

Trainer::Trainer(std::shared_ptr<const Model> model, const TrainerOptions& options) try : impl_(std::make_unique<Impl>()) {
  if (!model) throw Error("trainer: no model");
  if (options.batch < 1 || options.batch > (1 << 16)) throw Error("trainer: batch " + std::to_string(options.batch) + " is outside 1..65536");
  if (!(options.learning_rate > 0.f)) throw Error("trainer: the learning rate must be positive");
  cpu_kernel_family();  // settles the kernel family: a bad EDGEGAN_ISA is an Error here, not inside a kernel
  Impl& s = *impl_;
  s.model = std::move(model);
  s.options = options;
  s.batch = options.batch;
#ifdef _OPENMP
  s.threads = options.threads > 0 ? options.threads : std::max(1, omp_get_max_threads());
#endif
  s.build();
  const size_t n = s.m().tensors.size();
  s.values.resize(n);
  s.grads.resize(n);
  s.labels.resize(n);
} catch (const std::bad_alloc&) {
  throw Error("trainer: out of memory while preparing the model");
}

Trainer::~Trainer() = default;

std::vector<Tensor> Trainer::forward(const std::vector<Tensor>& inputs) try {
  Impl& s = *impl_;
  const Model::Impl& m = s.m();
  const std::vector<const Tensor*> bound = bind_inputs(m, s.batch, inputs, "forward");
  for (size_t t = 0; t < m.tensors.size(); ++t)
    if (m.tensors[t].dtype == DType::kFloat32) s.values[t].resize(s.numel(static_cast<int>(t)));  // every op writes its whole output
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const int t = m.input_tensors[i];
    if (m.inputs[i].dtype == DType::kInt64) s.labels[static_cast<size_t>(t)] = bound[i]->i64;
    else s.values[static_cast<size_t>(t)] = bound[i]->f32;
  }
  for (const TrainOp& op : s.ops) s.run_forward(op);
  s.have_forward = true;
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    Tensor t{m.outputs[i].name, DType::kFloat32, m.outputs[i].layout, m.outputs[i].dims, s.values[static_cast<size_t>(m.output_tensors[i])], {}};
    t.shape[0] = s.batch;
    outputs.push_back(std::move(t));
  }
  return outputs;
} catch (const std::bad_alloc&) {
  throw Error("forward: out of memory");
}

std::vector<Tensor> Trainer::backward(const std::vector<Tensor>& output_gradients) {
  return impl_->backward_pass(output_gradients, true, true, "backward");
}

void Trainer::backward_parameters(const std::vector<Tensor>& output_gradients) {
  impl_->backward_pass(output_gradients, true, false, "backward_parameters");
}

std::vector<Tensor> Trainer::input_gradients(const std::vector<Tensor>& output_gradients) {
  return impl_->backward_pass(output_gradients, false, true, "input_gradients");
}

std::vector<Tensor> Trainer::Impl::backward_pass(const std::vector<Tensor>& output_gradients, bool with_parameters,
                                                 bool with_input_gradients, const std::string& what) try {
  Impl& s = *this;
  const Model::Impl& m = s.m();
  if (!s.have_forward) throw Error(what + ": call forward() first");
  if (output_gradients.size() != m.outputs.size())
    throw Error(what + ": the model has " + std::to_string(m.outputs.size()) + " outputs, got " + std::to_string(output_gradients.size()) + " gradients");
  s.parameter_gradients = with_parameters;
  s.gradient_wanted.assign(m.tensors.size(), 1);
  if (!with_input_gradients)
    for (int t : m.input_tensors) s.gradient_wanted[static_cast<size_t>(t)] = 0;
  for (size_t t = 0; t < m.tensors.size(); ++t) s.grads[t].resize(s.values[t].size());  // allocated once, not cleared
  s.grad_untouched.assign(m.tensors.size(), 1);
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const auto& g = output_gradients[i];
    const size_t want = s.numel(m.output_tensors[i]);
    if (g.dtype != DType::kFloat32 || g.f32.size() != want)
      throw Error(what + ": the gradient of output '" + m.outputs[i].name + "' must hold " + std::to_string(want) + " floats");
    const size_t out = static_cast<size_t>(m.output_tensors[i]);
    if (s.grad_untouched[out]) std::copy(g.f32.begin(), g.f32.end(), s.grads[out].begin());
    else add_into(s.grads[out], g.f32.data());  // a tensor listed as two outputs
    s.grad_untouched[out] = 0;
  }
  for (auto op = s.ops.rbegin(); op != s.ops.rend(); ++op) {
    s.run_backward(*op);
  }
  std::vector<Tensor> input_grads;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputInfo& info = m.inputs[i];
    Tensor t{info.name, info.dtype, info.layout, info.dims, {}, {}};
    t.shape[0] = s.batch;
    if (info.dtype == DType::kFloat32) {
      t.f32 = s.written_grad(m.input_tensors[i]);  // zeros if skipped or unused
    }
    else t.shape = {};  // labels have no gradient
    input_grads.push_back(std::move(t));
  }
  return input_grads;
} catch (const std::bad_alloc&) {
  throw Error(what + ": out of memory");
}

void Trainer::step() {
  Impl& s = *impl_;
  ++s.steps;
  for (Param& p : s.params) {
    if (p.frozen) continue;
    const int64_t n = static_cast<int64_t>(p.value.size());
    if (s.options.optimizer == Optimizer::kSgd) {
      cpu::sgd_step(n, p.value.data(), p.grad.data(), p.state1.data(), s.steps == 1,
                    {s.options.learning_rate, s.options.momentum, 0.f, s.options.weight_decay, false});
    } else {
      cpu::adam_step(n, p.value.data(), p.grad.data(), p.state1.data(), p.state2.data(), s.steps,
                     {s.options.learning_rate, s.options.beta1, s.options.beta2, s.options.eps, s.options.weight_decay});
    }
  }
  zero_grad();
}

void Trainer::zero_grad() {
  for (Param& p : impl_->params) std::fill(p.grad.begin(), p.grad.end(), 0.f);
}

std::vector<Parameter> Trainer::parameters() {
  std::vector<Parameter> out;
  for (Param& p : impl_->params) out.push_back({p.name, &p.value, &p.grad, p.op, !p.frozen});
  return out;
}

int64_t Trainer::parameter_count() const {
  int64_t n = 0;
  for (const Param& p : impl_->params) n += static_cast<int64_t>(p.value.size());
  return n;
}

int64_t Trainer::steps_taken() const { return impl_->steps; }
const Model& Trainer::model() const { return *impl_->model; }
int Trainer::batch() const { return static_cast<int>(impl_->batch); }

void Trainer::save(const std::string& path, const std::string& source_path) const {
  const Impl& s = *impl_;
  const Model::Impl& m = s.m();
  if (!source_path.empty()) ensure_not_an_input(path, {source_path});
  // Same file, same layout: only the weight bytes change, so the phases stay split
  // and every offset stays valid.
  std::vector<uint8_t> bytes(m.file, m.file + m.file_size);
  const size_t data_begin = static_cast<size_t>(m.data - m.file);
  for (const Param& p : s.params) {
    uint8_t* dst = bytes.data() + data_begin + m.root->buffers()->Get(p.buffer)->offset();
    if (m.is_f16(p.buffer)) {  // an fp16 model stays fp16: the tuned weights are rounded to half
      for (size_t i = 0; i < p.value.size(); ++i) {
        const uint16_t h = cpu::float_to_half(p.value[i]);
        std::memcpy(dst + i * sizeof h, &h, sizeof h);
      }
    } else {
      std::memcpy(dst, p.value.data(), p.value.size() * sizeof(float));
    }
  }
  Model::from_bytes(bytes);  // what we write must load
  write_file_atomically(path, bytes.data(), bytes.size());
}

// ---- memory: planned from the model alone, or measured from what a Trainer holds.

int64_t TrainingMemory::total() const {
  return activations + activation_gradients + labels + parameters + parameter_gradients + optimizer_state + scratch + mapped_weights;
}

TrainingMemory training_memory(const std::shared_ptr<const Model>& model, const TrainerOptions& options) {
  if (!model) throw Error("training_memory: no model");
  Trainer::Impl s;
  s.model = model;
  s.options = options;
  s.batch = options.batch;
  s.planning_only = true;
  s.build();
  TrainingMemory r;
  int64_t largest_tensor = 0, largest_param = 0;
  for (const TensorDesc& t : s.m().tensors) {
    const int64_t n = s.batch * t.per_sample;
    if (t.dtype == DType::kFloat32) {
      r.activations += n * 4;
      r.activation_gradients += n * 4;
      largest_tensor = std::max(largest_tensor, n * 4);
    } else {
      r.labels += n * 8;
    }
  }
  for (const Param& p : s.params) {
    const auto bytes = static_cast<int64_t>(p.count * sizeof(float));
    r.parameters += bytes;
    r.parameter_gradients += bytes;
    r.optimizer_state += p.states * bytes;
    largest_param = std::max(largest_param, bytes);
  }
  // Backward keeps one op's parameter gradients and one input gradient at a time, and
  // the largest conv / transposed-conv kernel transposed for its input gradient.
  int64_t largest_kernel = 0;
  for (const TrainOp& op : s.ops) {
    if (op.kind == fb::OpKind_Conv2D) largest_kernel = std::max(largest_kernel, cpu::conv2d_backward_input_workspace(op.conv) * 4);
    if (op.kind == fb::OpKind_ConvTranspose2D)
      largest_kernel = std::max(largest_kernel, cpu::conv_transpose2d_backward_input_workspace(op.deconv) * 4);
  }
  r.scratch = largest_param + largest_tensor + largest_kernel;
  r.mapped_weights = static_cast<int64_t>(model->weight_bytes());
  return r;
}

TrainingMemory Trainer::memory() const {
  const Impl& s = *impl_;
  auto bytes = [](const auto& v) { return static_cast<int64_t>(v.capacity() * sizeof(v[0])); };
  TrainingMemory r;
  for (size_t t = 0; t < s.values.size(); ++t) {
    r.activations += bytes(s.values[t]);
    r.activation_gradients += bytes(s.grads[t]);
    r.labels += bytes(s.labels[t]);
  }
  for (const Param& p : s.params) {
    r.parameters += bytes(p.value);
    r.parameter_gradients += bytes(p.grad);
    r.optimizer_state += bytes(p.state1) + bytes(p.state2);
  }
  r.scratch = bytes(s.param_scratch) + bytes(s.workspace);
  r.mapped_weights = static_cast<int64_t>(s.model->weight_bytes());
  return r;
}

}  // namespace edgegan

// Semantic checks of a .egan file, run after the flatbuffers Verifier. The
// Verifier only proves the bytes parse; these checks prove the model makes
// sense: every index in range, every shape consistent with its op, every weight
// buffer exactly the size its op needs, every split deconvolution's phases equal
// to the ones its kernel/stride/pads imply. A hostile file fails here with a
// message, before any allocation sized by the file's numbers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "engine/text_stream.h"
#include "engine/model_impl.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/conv_geometry.h"

namespace edgegan {
namespace {

namespace fb = schema;

// Largest per-sample tensor (elements) and spatial parameters we accept; far
// beyond any GAN, small enough that every product below fits in int64.
constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxElements = int64_t{1} << 32;
constexpr int64_t kMaxKernel = 64, kMaxStride = 64, kMaxDilation = 64, kMaxPad = 4096;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error("invalid model: " + where + ": " + what);
}

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

int64_t checked_mul(int64_t a, int64_t b, const std::string& where) {
  if (a < 0 || b < 0) fail(where, "negative size");
  if (a != 0 && b > kMaxElements / a) fail(where, "size overflows the engine's limits");
  return a * b;
}

std::string dims_str(const std::vector<int64_t>& d) {
  auto os = text_stream();
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "x" : "") << d[i];
  return os.str();
}

class Validator {
 public:
  explicit Validator(Model::Impl& m) : m_(m), root_(*m.root) {}

  void run() {
    if (root_.schema_version() != kSchemaVersion)
      fail("header", "schema version " + std::to_string(root_.schema_version()) +
                         " is not supported (this engine reads version " + std::to_string(kSchemaVersion) + ")");
    m_.producer = str(root_.producer());
    m_.source_sha256 = str(root_.source_sha256());
    check_buffers();
    check_tensors();
    check_inputs();
    check_ops();
    check_every_tensor_defined();
    check_outputs();
    if (root_.metadata())
      for (const auto* kv : *root_.metadata())
        if (kv) m_.metadata.emplace_back(str(kv->key()), str(kv->value()));
  }

 private:
  void check_buffers() {
    const auto* buffers = root_.buffers();
    if (!buffers || buffers->size() == 0) fail("buffers", "missing (buffer 0 must be the empty sentinel)");
    for (uint32_t i = 0; i < buffers->size(); ++i) {
      const auto* b = buffers->Get(i);
      const std::string where = "buffer " + std::to_string(i);
      if (!b) fail(where, "null entry");
      if (i == 0 && b->size() != 0) fail(where, "the sentinel buffer must be empty");
      if (b->offset() % kWeightAlignment != 0) fail(where, "offset is not 64-byte aligned");
      if (b->offset() > m_.data_size || b->size() > m_.data_size - b->offset())
        fail(where, "lies outside the file (offset " + std::to_string(b->offset()) + ", size " +
                        std::to_string(b->size()) + ", data section " + std::to_string(m_.data_size) + " bytes)");
      if (b->dtype() != fb::DType_Float32 && b->dtype() != fb::DType_Float16)
        fail(where, "weights must be float32 or float16 (dtype " + std::to_string(static_cast<int>(b->dtype())) + ")");
    }
  }

  void check_tensors() {
    const auto* tensors = root_.tensors();
    if (!tensors || tensors->size() == 0) fail("tensors", "missing");
    for (uint32_t i = 0; i < tensors->size(); ++i) {
      const auto* t = tensors->Get(i);
      std::string where = "tensor " + std::to_string(i);
      if (!t || !t->dims()) fail(where, "missing dims");
      TensorDesc d;
      d.name = str(t->name());
      where += " '" + d.name + "'";
      if (t->dtype() == fb::DType_Float32) d.dtype = DType::kFloat32;
      else if (t->dtype() == fb::DType_Int64) d.dtype = DType::kInt64;
      else fail(where, "unsupported dtype");
      if (t->layout() == fb::Layout_RowMajor) d.layout = Layout::kRowMajor;
      else if (t->layout() == fb::Layout_NHWC) d.layout = Layout::kNHWC;
      else fail(where, "unknown layout");
      const auto& dims = *t->dims();
      // flatbuffers' Verifier (2.0.8) checks a vector's length field, not that 8-byte
      // elements are 8-byte aligned; reading a misaligned int64 is undefined behaviour.
      if (reinterpret_cast<uintptr_t>(dims.data()) % alignof(int64_t) != 0) fail(where, "dims are not 8-byte aligned");
      if (dims.size() < 1 || dims.size() > 6) fail(where, "rank must be 1..6");
      if (dims.Get(0) != -1) fail(where, "dims[0] must be -1 (the batch)");
      if (d.layout == Layout::kNHWC && dims.size() != 4) fail(where, "NHWC layout needs rank 4");
      d.dims.push_back(-1);
      d.per_sample = 1;
      for (uint32_t k = 1; k < dims.size(); ++k) {
        const int64_t v = dims.Get(k);
        if (v < 1 || v > kMaxDim) fail(where, "dimension " + std::to_string(k) + " = " + std::to_string(v) + " is out of range");
        d.dims.push_back(v);
        d.per_sample = checked_mul(d.per_sample, v, where);
      }
      m_.tensors.push_back(std::move(d));
    }
  }

  const TensorDesc& tensor(int index, const std::string& where, const char* role) {
    if (index < 0 || static_cast<size_t>(index) >= m_.tensors.size())
      fail(where, std::string(role) + " tensor index " + std::to_string(index) + " is out of range");
    return m_.tensors[static_cast<size_t>(index)];
  }

  // An op input: must exist already (graph input or earlier op output).
  const TensorDesc& use(int index, const std::string& where, const char* role) {
    const TensorDesc& t = tensor(index, where, role);
    if (t.producer >= current_op_ || (t.producer < 0 && !is_graph_input(index)))
      fail(where, std::string(role) + " tensor '" + t.name + "' is used before it is produced");
    return t;
  }

  TensorDesc& define(int index, const std::string& where) {
    tensor(index, where, "output");
    TensorDesc& t = m_.tensors[static_cast<size_t>(index)];
    if (t.producer >= 0 || is_graph_input(index)) fail(where, "output tensor '" + t.name + "' is produced twice");
    t.producer = current_op_;
    return t;
  }

  bool is_graph_input(int index) const {
    if (!root_.inputs()) return false;
    for (const auto* in : *root_.inputs())
      if (in && in->tensor() == index) return true;
    return false;
  }

  void expect_dims(const TensorDesc& t, const std::vector<int64_t>& want, const std::string& where, const char* role) {
    if (t.dims != want)
      fail(where, std::string(role) + " '" + t.name + "' has shape " + dims_str(t.dims) + ", the op needs " + dims_str(want));
  }

  void expect_float(const TensorDesc& t, const std::string& where) {
    if (t.dtype != DType::kFloat32) fail(where, "tensor '" + t.name + "' must be float32");
  }

  // fp16_allowed: the op reads this buffer in half precision too (the split
  // deconvolution's sub-kernels); everything else must be float32.
  void expect_buffer(uint32_t index, uint64_t elements, const std::string& where, const char* role, bool optional,
                     bool fp16_allowed = false) {
    const auto* buffers = root_.buffers();
    if (index >= buffers->size()) fail(where, std::string(role) + " buffer index " + std::to_string(index) + " is out of range");
    if (index == 0) {
      if (optional || elements == 0) return;
      fail(where, std::string(role) + " is missing");
    }
    const bool fp16 = buffers->Get(index)->dtype() == fb::DType_Float16;
    if (fp16 && !fp16_allowed) fail(where, std::string(role) + " buffer is float16; only transposed-convolution weights may be");
    const uint64_t want = elements * (fp16 ? 2 : 4);
    if (buffers->Get(index)->size() != want)
      fail(where, std::string(role) + " buffer has " + std::to_string(buffers->Get(index)->size()) +
                      " bytes, the op needs " + std::to_string(want));
  }

  void check_epilogue(const fb::Epilogue* ep, int64_t channels, const std::string& where) {
    if (!ep) return;
    expect_buffer(ep->bias(), static_cast<uint64_t>(channels), where, "bias", true);
    check_activation(ep->activation(), ep->alpha(), where);
  }

  static void check_activation(fb::Activation a, float alpha, const std::string& where) {
    if (a < fb::Activation_MIN || a > fb::Activation_MAX) fail(where, "unknown activation");
    if (!std::isfinite(alpha)) fail(where, "activation slope is not finite");
  }

  static void check_range(int64_t v, int64_t lo, int64_t hi, const std::string& where, const char* what) {
    if (v < lo || v > hi)
      fail(where, std::string(what) + " = " + std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  }

  // Parameters Conv2D and ConvTranspose2D share; returns the validated NHWC input.
  template <typename ConvOp>
  const TensorDesc& check_conv_params(const ConvOp& op, int64_t min_pad, const std::string& where) {
    const TensorDesc& x = use(op.input(), where, "input");
    expect_float(x, where);
    if (x.layout != Layout::kNHWC) fail(where, "input must be an NHWC image tensor");
    check_range(op.in_channels(), 1, kMaxDim, where, "in_channels");
    check_range(op.out_channels(), 1, kMaxDim, where, "out_channels");
    check_range(op.kernel_h(), 1, kMaxKernel, where, "kernel_h");
    check_range(op.kernel_w(), 1, kMaxKernel, where, "kernel_w");
    check_range(op.stride_h(), 1, kMaxStride, where, "stride_h");
    check_range(op.stride_w(), 1, kMaxStride, where, "stride_w");
    check_range(op.dilation_h(), 1, kMaxDilation, where, "dilation_h");
    check_range(op.dilation_w(), 1, kMaxDilation, where, "dilation_w");
    for (int p : {op.pad_top(), op.pad_left(), op.pad_bottom(), op.pad_right()}) check_range(p, min_pad, kMaxPad, where, "pad");
    if (x.dims[3] != op.in_channels()) fail(where, "input has " + std::to_string(x.dims[3]) + " channels, the op expects " + std::to_string(op.in_channels()));
    return x;
  }

  void check_conv_transpose(const fb::ConvTranspose2D& op, const std::string& where) {
    // Transposed convolutions may have negative pads (ONNX output_shape asks for extra output).
    const TensorDesc& x = check_conv_params(op, -kMaxPad, where);
    cpu::ConvAxis h{x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), 0};
    cpu::ConvAxis w{x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), 0};
    // The output length also absorbs output_padding, so it is read from the output tensor and
    // must lie within [length without output_padding, that + max(stride, dilation) - 1] (PyTorch's rule).
    TensorDesc& y = define(op.output(), where);
    if (y.layout != Layout::kNHWC || y.dims.size() != 4) fail(where, "output must be an NHWC image tensor");
    expect_float(y, where);
    if (y.dims[3] != op.out_channels()) fail(where, "output has " + std::to_string(y.dims[3]) + " channels, the op produces " + std::to_string(op.out_channels()));
    h.out = y.dims[1];
    w.out = y.dims[2];
    for (const auto* axis : {&h, &w}) {
      const int64_t base = cpu::conv_transpose_output_length(axis->in, axis->kernel, axis->stride, axis->dilation, axis->pad_begin, axis->pad_end, 0);
      const int64_t max_output_padding = std::max(axis->stride, axis->dilation) - 1;
      if (axis->out < base || axis->out > base + max_output_padding)
        fail(where, "output length " + std::to_string(axis->out) + " does not follow from input " + std::to_string(axis->in) +
                        ", kernel, stride and pads (expected " + std::to_string(base) + " + output_padding, output_padding < max(stride, dilation))");
    }
    check_axis_phases(op.axis_phases_h(), cpu::split_conv_transpose_axis(h), where + " (height phases)");
    check_axis_phases(op.axis_phases_w(), cpu::split_conv_transpose_axis(w), where + " (width phases)");
    const auto* phases = op.phases();
    if (!phases || phases->size() != static_cast<uint32_t>(op.stride_h() * op.stride_w()))
      fail(where, "must store stride_h*stride_w = " + std::to_string(op.stride_h() * op.stride_w()) + " phases");
    const auto ph = cpu::split_conv_transpose_axis(h), pw = cpu::split_conv_transpose_axis(w);
    int fp16_phases = 0, stored_phases = 0;
    for (uint32_t i = 0; i < phases->size(); ++i) {
      const auto* p = phases->Get(i);
      const std::string pwhere = where + " phase " + std::to_string(i);
      if (!p) fail(pwhere, "null entry");
      if (p->phase_h() != static_cast<int>(i / op.stride_w()) || p->phase_w() != static_cast<int>(i % op.stride_w()))
        fail(pwhere, "phases must be stored in row-major (phase_h, phase_w) order");
      const uint64_t taps = ph[i / op.stride_w()].taps.size() * pw[i % op.stride_w()].taps.size();
      expect_buffer(p->weights(), taps * static_cast<uint64_t>(op.in_channels()) * static_cast<uint64_t>(op.out_channels()), pwhere, "sub-kernel", false,
                    /*fp16_allowed=*/true);
      if (p->weights() != 0) {
        ++stored_phases;
        fp16_phases += root_.buffers()->Get(p->weights())->dtype() == fb::DType_Float16 ? 1 : 0;
      }
    }
    if (fp16_phases != 0 && fp16_phases != stored_phases) fail(where, "mixes float16 and float32 sub-kernels (one precision per op)");
    check_epilogue(op.epilogue(), op.out_channels(), where);
  }

  void check_axis_phases(const flatbuffers::Vector<flatbuffers::Offset<fb::AxisPhase>>* stored,
                         const std::vector<cpu::AxisPhase>& expected, const std::string& where) {
    if (!stored || stored->size() != expected.size()) fail(where, "must hold one entry per stride residue");
    for (uint32_t r = 0; r < stored->size(); ++r) {
      const auto* p = stored->Get(r);
      const auto& e = expected[r];
      bool same = p && p->residue() == static_cast<int>(e.residue) && p->taps() && p->offsets() &&
                  p->taps()->size() == e.taps.size() && p->offsets()->size() == e.offsets.size();
      for (uint32_t t = 0; same && t < e.taps.size(); ++t)
        same = p->taps()->Get(t) == e.taps[t] && p->offsets()->Get(t) == e.offsets[t];
      if (!same) fail(where, "residue " + std::to_string(r) + " does not match the split of its kernel/stride/dilation");
    }
  }

  void check_conv(const fb::Conv2D& op, const std::string& where) {
    const TensorDesc& x = check_conv_params(op, 0, where);
    const int64_t oh = cpu::conv_output_length(x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom());
    const int64_t ow = cpu::conv_output_length(x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right());
    if (oh < 1 || ow < 1) fail(where, "the kernel does not fit the padded input");
    TensorDesc& y = define(op.output(), where);
    expect_float(y, where);
    if (y.layout != Layout::kNHWC) fail(where, "output must be NHWC");
    expect_dims(y, {-1, oh, ow, op.out_channels()}, where, "output");
    expect_buffer(op.weights(), static_cast<uint64_t>(op.kernel_h()) * op.kernel_w() * op.in_channels() * op.out_channels(), where, "weights", false);
    check_epilogue(op.epilogue(), op.out_channels(), where);
  }

  void check_dense(const fb::Dense& op, const std::string& where) {
    const TensorDesc& x = use(op.input(), where, "input");
    expect_float(x, where);
    check_range(op.in_features(), 1, kMaxDim, where, "in_features");
    check_range(op.out_features(), 1, kMaxDim, where, "out_features");
    expect_dims(x, {-1, op.in_features()}, where, "input");
    TensorDesc& y = define(op.output(), where);
    expect_float(y, where);
    expect_dims(y, {-1, op.out_features()}, where, "output");
    expect_buffer(op.weights(), static_cast<uint64_t>(op.in_features()) * op.out_features(), where, "weights", false);
    check_epilogue(op.epilogue(), op.out_features(), where);
  }

  void check_embedding(const fb::Embedding& op, const std::string& where) {
    const TensorDesc& idx = use(op.indices(), where, "indices");
    if (idx.dtype != DType::kInt64) fail(where, "indices '" + idx.name + "' must be int64");
    check_range(op.num_embeddings(), 1, kMaxDim, where, "num_embeddings");
    check_range(op.dim(), 1, kMaxDim, where, "dim");
    TensorDesc& y = define(op.output(), where);
    expect_float(y, where);
    if (y.per_sample != checked_mul(idx.per_sample, op.dim(), where))
      fail(where, "output '" + y.name + "' must hold indices × dim values per sample");
    expect_buffer(op.table(), static_cast<uint64_t>(op.num_embeddings()) * op.dim(), where, "table", false);
  }

  void check_concat(const fb::Concat& op, const std::string& where) {
    if (!op.inputs() || op.inputs()->size() == 0) fail(where, "has no inputs");
    TensorDesc& y = define(op.output(), where);
    expect_float(y, where);
    const int64_t rank = static_cast<int64_t>(y.dims.size());
    check_range(op.axis(), 1, rank - 1, where, "axis");
    int64_t total = 0;
    for (int index : *op.inputs()) {
      const TensorDesc& x = use(index, where, "input");
      expect_float(x, where);
      if (x.dims.size() != y.dims.size() || x.layout != y.layout) fail(where, "input '" + x.name + "' differs in rank or layout from the output");
      for (int64_t k = 1; k < rank; ++k)
        if (k != op.axis() && x.dims[k] != y.dims[k]) fail(where, "input '" + x.name + "' has shape " + dims_str(x.dims) + ", incompatible with output " + dims_str(y.dims));
      total += x.dims[op.axis()];
    }
    if (total != y.dims[op.axis()]) fail(where, "input lengths along the axis do not add up to the output's");
  }

  void check_reshape(const fb::Reshape& op, const std::string& where) {
    const TensorDesc& x = use(op.input(), where, "input");
    TensorDesc& y = define(op.output(), where);
    expect_float(x, where);
    expect_float(y, where);
    if (x.per_sample != y.per_sample) fail(where, "reshape from " + dims_str(x.dims) + " to " + dims_str(y.dims) + " changes the element count");
  }

  void check_affine(const fb::ChannelAffine& op, const std::string& where) {
    const TensorDesc& x = use(op.input(), where, "input");
    TensorDesc& y = define(op.output(), where);
    expect_float(x, where);
    expect_float(y, where);
    expect_dims(y, x.dims, where, "output");
    const int64_t channels = x.layout == Layout::kNHWC ? x.dims[3] : (x.dims.size() > 1 ? x.dims[1] : 1);
    if (op.channels() != channels || x.dims.size() == 3 || x.dims.size() > 4)
      fail(where, "channels = " + std::to_string(op.channels()) + " does not match input '" + x.name + "' " + dims_str(x.dims));
    expect_buffer(op.scale(), static_cast<uint64_t>(channels), where, "scale", false);
    expect_buffer(op.shift(), static_cast<uint64_t>(channels), where, "shift", false);
    check_activation(op.activation(), op.alpha(), where);
  }

  void check_elementwise(const fb::Elementwise& op, const std::string& where) {
    const TensorDesc& x = use(op.input(), where, "input");
    TensorDesc& y = define(op.output(), where);
    expect_float(x, where);
    expect_float(y, where);
    expect_dims(y, x.dims, where, "output");
    if (y.layout != x.layout) fail(where, "layout changes");
    check_activation(op.activation(), op.alpha(), where);
  }

  void check_ops() {
    const auto* ops = root_.ops();
    if (!ops || ops->size() == 0) fail("ops", "the model has no ops");
    for (current_op_ = 0; current_op_ < static_cast<int>(ops->size()); ++current_op_) {
      const auto* op = ops->Get(static_cast<uint32_t>(current_op_));
      std::string where = "op " + std::to_string(current_op_);
      if (!op) fail(where, "null entry");
      if (op->name()) where += " '" + op->name()->str() + "'";
      // The Verifier accepts a union whose type is set but whose table is absent.
      if (op->kind_type() != fb::OpKind_NONE && !op->kind()) fail(where, "the op's parameters are missing");
      switch (op->kind_type()) {
        case fb::OpKind_ConvTranspose2D: check_conv_transpose(*op->kind_as_ConvTranspose2D(), where + " (ConvTranspose2D)"); break;
        case fb::OpKind_Conv2D: check_conv(*op->kind_as_Conv2D(), where + " (Conv2D)"); break;
        case fb::OpKind_Dense: check_dense(*op->kind_as_Dense(), where + " (Dense)"); break;
        case fb::OpKind_Embedding: check_embedding(*op->kind_as_Embedding(), where + " (Embedding)"); break;
        case fb::OpKind_Concat: check_concat(*op->kind_as_Concat(), where + " (Concat)"); break;
        case fb::OpKind_Reshape: check_reshape(*op->kind_as_Reshape(), where + " (Reshape)"); break;
        case fb::OpKind_ChannelAffine: check_affine(*op->kind_as_ChannelAffine(), where + " (ChannelAffine)"); break;
        case fb::OpKind_Elementwise: check_elementwise(*op->kind_as_Elementwise(), where + " (Elementwise)"); break;
        default: fail(where, "unknown op kind " + std::to_string(static_cast<int>(op->kind_type())) + " (file written by a newer converter?)");
      }
    }
  }

  void check_inputs() {
    const auto* inputs = root_.inputs();
    if (!inputs || inputs->size() == 0) fail("inputs", "the model has no inputs");
    for (uint32_t i = 0; i < inputs->size(); ++i) {
      const auto* in = inputs->Get(i);
      const std::string where = "graph input " + std::to_string(i);
      if (!in) fail(where, "null entry");
      const TensorDesc& t = tensor(in->tensor(), where, "input");
      for (uint32_t j = 0; j < i; ++j)
        if (inputs->Get(j)->tensor() == in->tensor()) fail(where, "listed twice");
      InputInfo info;
      info.name = t.name;
      info.dtype = t.dtype;
      info.layout = t.layout;
      info.dims = t.dims;
      switch (in->role()) {
        case fb::InputRole_Other: info.role = InputRole::kOther; break;
        case fb::InputRole_Noise:
          info.role = InputRole::kNoise;
          info.noise_size = in->noise_size();
          if (t.dtype != DType::kFloat32 || info.noise_size != t.per_sample) fail(where, "noise_size must equal the float input's size per sample");
          break;
        case fb::InputRole_Label:
          info.role = InputRole::kLabel;
          info.label_count = in->label_count();
          if (t.dtype != DType::kInt64 || info.label_count < 1) fail(where, "a label input must be int64 with label_count >= 1");
          break;
        case fb::InputRole_Image: info.role = InputRole::kImage; break;
        default: fail(where, "unknown role");
      }
      m_.inputs.push_back(std::move(info));
      m_.input_tensors.push_back(in->tensor());
    }
  }

  // Every tensor is either produced or a graph input (so none is read uninitialised).
  void check_every_tensor_defined() {
    for (size_t i = 0; i < m_.tensors.size(); ++i)
      if (m_.tensors[i].producer < 0 && !is_graph_input(static_cast<int>(i)))
        fail("tensor " + std::to_string(i) + " '" + m_.tensors[i].name + "'", "is neither produced by an op nor a graph input");
  }

  void check_outputs() {
    const auto* outputs = root_.outputs();
    if (!outputs || outputs->size() == 0) fail("outputs", "the model has no outputs");
    for (uint32_t i = 0; i < outputs->size(); ++i) {
      const auto* out = outputs->Get(i);
      const std::string where = "graph output " + std::to_string(i);
      if (!out) fail(where, "null entry");
      const TensorDesc& t = tensor(out->tensor(), where, "output");
      if (t.dtype != DType::kFloat32) fail(where, "outputs must be float32");
      OutputInfo info;
      info.name = t.name;
      info.layout = t.layout;
      info.dims = t.dims;
      info.value_min = out->value_min();
      info.value_max = out->value_max();
      switch (out->role()) {
        case fb::OutputRole_Other: info.role = OutputRole::kOther; break;
        case fb::OutputRole_Image: info.role = OutputRole::kImage; break;
        case fb::OutputRole_Score: info.role = OutputRole::kScore; break;
        default: fail(where, "unknown role");
      }
      m_.outputs.push_back(std::move(info));
      m_.output_tensors.push_back(out->tensor());
    }
  }

  Model::Impl& m_;
  const fb::Model& root_;
  int current_op_ = 0;
};

}  // namespace

void validate_model(Model::Impl& m) {
  constexpr size_t kMinSize = 16;
  if (m.file_size < kMinSize) throw Error("invalid model: the file is too small to be an .egan model (" + std::to_string(m.file_size) + " bytes)");
  if (!flatbuffers::BufferHasIdentifier(m.file, schema::ModelIdentifier(), /*size_prefixed=*/true))
    throw Error("invalid model: not an .egan file (file identifier 'EGAN' not found)");
  const uint64_t fb_size = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(m.file);
  if (fb_size > m.file_size - sizeof(flatbuffers::uoffset_t))
    throw Error("invalid model: the file is truncated (header says " + std::to_string(fb_size) + " bytes of graph, file has " + std::to_string(m.file_size) + ")");
  flatbuffers::Verifier verifier(m.file, sizeof(flatbuffers::uoffset_t) + fb_size, /*max_depth=*/64, /*max_tables=*/1'000'000);
  if (!schema::VerifySizePrefixedModelBuffer(verifier))
    throw Error("invalid model: the graph section is corrupt (flatbuffers verification failed)");
  m.root = schema::GetSizePrefixedModel(m.file);
  const size_t data_begin = (sizeof(flatbuffers::uoffset_t) + fb_size + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
  m.data = m.file + std::min(data_begin, m.file_size);
  m.data_size = data_begin < m.file_size ? m.file_size - data_begin : 0;
  Validator(m).run();
}

const float* Model::Impl::f32(uint32_t buffer) const {
  if (buffer == 0) return nullptr;
  if (is_f16(buffer)) throw Error("internal: buffer " + std::to_string(buffer) + " is float16, read as float32");
  return reinterpret_cast<const float*>(data + root->buffers()->Get(buffer)->offset());
}

const uint16_t* Model::Impl::f16(uint32_t buffer) const {
  if (buffer == 0) return nullptr;
  if (!is_f16(buffer)) throw Error("internal: buffer " + std::to_string(buffer) + " is float32, read as float16");
  return reinterpret_cast<const uint16_t*>(data + root->buffers()->Get(buffer)->offset());
}

bool Model::Impl::is_f16(uint32_t buffer) const {
  return buffer != 0 && root->buffers()->Get(buffer)->dtype() == schema::DType_Float16;
}

uint64_t Model::Impl::buffer_elements(uint32_t buffer) const {
  return buffer == 0 ? 0 : buffer_bytes(buffer) / (is_f16(buffer) ? 2 : 4);
}

std::vector<float> Model::Impl::widened(uint32_t buffer) const {
  const uint64_t n = buffer_elements(buffer);
  if (!is_f16(buffer)) {
    const float* src = f32(buffer);
    return std::vector<float>(src, src + n);
  }
  const uint16_t* src = f16(buffer);
  std::vector<float> out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = cpu::half_to_float(src[i]);
  return out;
}

uint64_t Model::Impl::buffer_bytes(uint32_t buffer) const { return root->buffers()->Get(buffer)->size(); }

}  // namespace edgegan

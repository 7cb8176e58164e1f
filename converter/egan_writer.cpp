#include "converter/egan_writer.h"

#include <cstring>

#include "converter/errors.h"
#include "egan_generated.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"

namespace edgegan::converter {
namespace {

namespace fb = schema;
constexpr uint32_t kSchemaVersion = 1;
constexpr size_t kAlign = 64;

// One weight buffer's bytes and element type.
struct Blob {
  std::vector<uint8_t> bytes;
  fb::DType dtype;
};

class Writer {
 public:
  explicit Writer(bool fp16_conv_transpose_weights) : fp16_conv_transpose_weights_(fp16_conv_transpose_weights) {}

  // Adds a float32 weight blob, returns its buffer index (0 for an empty blob).
  uint32_t blob(const std::vector<float>& values) {
    if (values.empty()) return 0;
    Blob b{std::vector<uint8_t>(values.size() * sizeof(float)), fb::DType_Float32};
    std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
    blobs_.push_back(std::move(b));
    return static_cast<uint32_t>(blobs_.size());  // buffer 0 is the sentinel
  }

  // A transposed-convolution sub-kernel: float32, or IEEE halves when asked.
  uint32_t conv_transpose_blob(const std::vector<float>& values) {
    if (!fp16_conv_transpose_weights_ || values.empty()) return blob(values);
    Blob b{std::vector<uint8_t>(values.size() * sizeof(uint16_t)), fb::DType_Float16};
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t h = cpu::float_to_half(values[i]);
      std::memcpy(b.bytes.data() + i * sizeof h, &h, sizeof h);
    }
    blobs_.push_back(std::move(b));
    return static_cast<uint32_t>(blobs_.size());
  }

  fb::Activation activation(cpu::Activation a) { return static_cast<fb::Activation>(static_cast<int>(a)); }

  flatbuffers::Offset<fb::Epilogue> epilogue(const IrOp& op) {
    return fb::CreateEpilogue(b_, blob(op.bias), activation(op.activation), op.alpha);
  }

  flatbuffers::Offset<fb::Op> conv_transpose(const IrModel& m, const IrOp& op) {
    const ConvGeometry& g = op.geometry;
    const IrTensor& x = m.tensors[static_cast<size_t>(op.inputs[0])];
    cpu::ConvShape s;
    s.in_channels = g.in_channels;
    s.out_channels = g.out_channels;
    s.h = {x.dims[1], g.kernel_h, g.stride_h, g.dilation_h, g.pad_top, g.pad_bottom, g.out_h};
    s.w = {x.dims[2], g.kernel_w, g.stride_w, g.dilation_w, g.pad_left, g.pad_right, g.out_w};
    const auto ph = cpu::split_conv_transpose_axis(s.h), pw = cpu::split_conv_transpose_axis(s.w);
    const auto packed = cpu::pack_conv_transpose2d_weights(s, ph, pw, op.weights.data(), cpu::kWeightPanelColumns);
    auto axis_phases = [&](const std::vector<cpu::AxisPhase>& phases) {
      std::vector<flatbuffers::Offset<fb::AxisPhase>> v;
      for (const auto& p : phases) {
        std::vector<int32_t> taps(p.taps.begin(), p.taps.end()), offs(p.offsets.begin(), p.offsets.end());
        v.push_back(fb::CreateAxisPhase(b_, static_cast<int>(p.residue), b_.CreateVector(taps), b_.CreateVector(offs)));
      }
      return b_.CreateVector(v);
    };
    const auto aph = axis_phases(ph), apw = axis_phases(pw);
    std::vector<flatbuffers::Offset<fb::ConvTranspose2DPhase>> phases;
    for (size_t i = 0; i < packed.size(); ++i)
      phases.push_back(fb::CreateConvTranspose2DPhase(b_, static_cast<int>(i / pw.size()), static_cast<int>(i % pw.size()), conv_transpose_blob(packed[i])));
    const auto ph_vec = b_.CreateVector(phases);
    const auto ep = epilogue(op);
    const auto body = fb::CreateConvTranspose2D(b_, op.inputs[0], op.output, static_cast<int>(g.in_channels), static_cast<int>(g.out_channels),
                                                static_cast<int>(g.kernel_h), static_cast<int>(g.kernel_w), static_cast<int>(g.stride_h),
                                                static_cast<int>(g.stride_w), static_cast<int>(g.dilation_h), static_cast<int>(g.dilation_w),
                                                static_cast<int>(g.pad_top), static_cast<int>(g.pad_left), static_cast<int>(g.pad_bottom),
                                                static_cast<int>(g.pad_right), aph, apw, ph_vec, ep, cpu::kWeightPanelColumns);
    return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_ConvTranspose2D, body.Union());
  }

  flatbuffers::Offset<fb::Op> conv(const IrOp& op) {
    const ConvGeometry& g = op.geometry;
    cpu::ConvShape s;
    s.in_channels = g.in_channels;
    s.out_channels = g.out_channels;
    s.h.kernel = g.kernel_h;
    s.w.kernel = g.kernel_w;
    std::vector<float> packed(op.weights.size());
    cpu::pack_conv2d_weights(s, op.weights.data(), packed.data());
    const uint32_t w = blob(packed);
    const auto ep = epilogue(op);
    const auto body = fb::CreateConv2D(b_, op.inputs[0], op.output, static_cast<int>(g.in_channels), static_cast<int>(g.out_channels),
                                       static_cast<int>(g.kernel_h), static_cast<int>(g.kernel_w), static_cast<int>(g.stride_h),
                                       static_cast<int>(g.stride_w), static_cast<int>(g.dilation_h), static_cast<int>(g.dilation_w),
                                       static_cast<int>(g.pad_top), static_cast<int>(g.pad_left), static_cast<int>(g.pad_bottom),
                                       static_cast<int>(g.pad_right), w, ep);
    return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_Conv2D, body.Union());
  }

  flatbuffers::Offset<fb::Op> op(const IrModel& m, const IrOp& op) {
    switch (op.kind) {
      case IrOpKind::kConvTranspose: return conv_transpose(m, op);
      case IrOpKind::kConv: return conv(op);
      case IrOpKind::kDense: {
        const uint32_t w = blob(op.weights);
        const auto ep = epilogue(op);
        const auto body = fb::CreateDense(b_, op.inputs[0], op.output, static_cast<int>(op.in_features), static_cast<int>(op.out_features), w, ep);
        return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_Dense, body.Union());
      }
      case IrOpKind::kEmbedding: {
        const auto body = fb::CreateEmbedding(b_, op.inputs[0], op.output, static_cast<int>(op.in_features), static_cast<int>(op.out_features), blob(op.weights));
        return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_Embedding, body.Union());
      }
      case IrOpKind::kConcat: {
        const auto ins = b_.CreateVector(op.inputs);
        const auto body = fb::CreateConcat(b_, ins, op.output, op.axis);
        return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_Concat, body.Union());
      }
      case IrOpKind::kReshape: {
        const auto body = fb::CreateReshape(b_, op.inputs[0], op.output);
        return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_Reshape, body.Union());
      }
      case IrOpKind::kChannelAffine: {
        const uint32_t scale = blob(op.weights), shift = blob(op.bias);
        const auto body = fb::CreateChannelAffine(b_, op.inputs[0], op.output, static_cast<int>(op.weights.size()), scale, shift,
                                                  activation(op.activation), op.alpha);
        return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_ChannelAffine, body.Union());
      }
      case IrOpKind::kElementwise: {
        const auto body = fb::CreateElementwise(b_, op.inputs[0], op.output, activation(op.activation), op.alpha);
        return fb::CreateOp(b_, b_.CreateString(op.name), fb::OpKind_Elementwise, body.Union());
      }
    }
    throw ConvertError("internal: unknown IR op");
  }

  std::vector<uint8_t> finish(const IrModel& m, const std::string& producer) {
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (const IrTensor& t : m.tensors)
      tensors.push_back(fb::CreateTensor(b_, b_.CreateString(t.name), t.is_int ? fb::DType_Int64 : fb::DType_Float32,
                                         t.nhwc ? fb::Layout_NHWC : fb::Layout_RowMajor, b_.CreateVector(t.dims)));
    std::vector<flatbuffers::Offset<fb::Op>> ops;
    for (const IrOp& o : m.ops) ops.push_back(op(m, o));
    std::vector<flatbuffers::Offset<fb::GraphInput>> inputs;
    for (const IrInput& in : m.inputs)
      inputs.push_back(fb::CreateGraphInput(b_, in.tensor, static_cast<fb::InputRole>(static_cast<int>(in.role)),
                                            static_cast<int>(in.noise_size), static_cast<int>(in.label_count)));
    std::vector<flatbuffers::Offset<fb::GraphOutput>> outputs;
    for (const IrOutput& out : m.outputs)
      outputs.push_back(fb::CreateGraphOutput(b_, out.tensor, static_cast<fb::OutputRole>(static_cast<int>(out.role)), out.value_min, out.value_max));
    std::vector<flatbuffers::Offset<fb::KeyValue>> meta;
    for (const auto& [k, v] : m.metadata) meta.push_back(fb::CreateKeyValue(b_, b_.CreateString(k), b_.CreateString(v)));

    // Buffer table: offsets relative to the data section, each 64-byte aligned.
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers{fb::CreateBuffer(b_, uint64_t{0}, uint64_t{0})};
    uint64_t offset = 0;
    for (const auto& blob : blobs_) {
      buffers.push_back(fb::CreateBuffer(b_, offset, blob.bytes.size(), blob.dtype));
      offset += (blob.bytes.size() + kAlign - 1) / kAlign * kAlign;
    }
    const auto root = fb::CreateModel(b_, kSchemaVersion, b_.CreateString(producer), b_.CreateString(m.source_sha256),
                                      b_.CreateVector(tensors), b_.CreateVector(buffers), b_.CreateVector(ops),
                                      b_.CreateVector(inputs), b_.CreateVector(outputs), b_.CreateVector(meta));
    fb::FinishSizePrefixedModelBuffer(b_, root);

    std::vector<uint8_t> file(b_.GetBufferPointer(), b_.GetBufferPointer() + b_.GetSize());
    file.resize((file.size() + kAlign - 1) / kAlign * kAlign, 0);
    for (const auto& blob : blobs_) {
      const size_t at = file.size();
      file.resize(at + (blob.bytes.size() + kAlign - 1) / kAlign * kAlign, 0);
      std::memcpy(file.data() + at, blob.bytes.data(), blob.bytes.size());
    }
    return file;
  }

 private:
  flatbuffers::FlatBufferBuilder b_{1 << 16};
  bool fp16_conv_transpose_weights_;
  std::vector<Blob> blobs_;
};

}  // namespace

std::vector<uint8_t> write_egan(const IrModel& model, const std::string& producer, bool fp16_conv_transpose_weights) {
  Writer w(fp16_conv_transpose_weights);
  return w.finish(model, producer);
}

}  // namespace edgegan::converter

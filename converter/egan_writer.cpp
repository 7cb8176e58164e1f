#include "converter/egan_writer.h"

#include <cstring>

#include "converter/errors.h"
#include "converter/ops/op_lowering.h"
#include "engine/format/egan_format.h"
#include "engine/model_integrity.h"
#include "egan_generated.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"

namespace edgegan::converter {
namespace fb = schema;
constexpr size_t kAlign = kWeightAlignment;

uint32_t EganWriter::blob(const std::vector<float>& values) {
  if (values.empty()) return 0;
  Blob b{std::vector<uint8_t>(values.size() * sizeof(float)), fb::DType_Float32};
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  blobs_.push_back(std::move(b));
  return static_cast<uint32_t>(blobs_.size());  // buffer 0 is the sentinel
}

uint32_t EganWriter::conv_transpose_blob(const std::vector<float>& values) {
  if (!fp16_conv_transpose_weights_ || values.empty()) return blob(values);
  Blob b{std::vector<uint8_t>(values.size() * sizeof(uint16_t)), fb::DType_Float16};
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = cpu::float_to_half(values[i]);
    std::memcpy(b.bytes.data() + i * sizeof h, &h, sizeof h);
  }
  blobs_.push_back(std::move(b));
  return static_cast<uint32_t>(blobs_.size());
}

flatbuffers::Offset<fb::Epilogue> EganWriter::epilogue(const IrOp& op) { return fb::CreateEpilogue(b_, blob(op.bias), op.activation, op.alpha, op.beta, blob(op.slope)); }

flatbuffers::Offset<fb::Op> EganWriter::op(const IrOp& op, fb::OpKind kind, flatbuffers::Offset<void> body) {
  return fb::CreateOp(b_, b_.CreateString(op.name), kind, body);
}

std::vector<uint8_t> EganWriter::finish(const IrModel& m, const std::string& producer) {
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const IrTensor& t : m.tensors)
    tensors.push_back(fb::CreateTensor(b_, b_.CreateString(t.name), t.is_int ? fb::DType_Int64 : fb::DType_Float32,
                                       t.nhwc ? fb::Layout_NHWC : fb::Layout_RowMajor, b_.CreateVector(t.dims)));
  std::vector<flatbuffers::Offset<fb::Op>> ops;
  for (const IrOp& o : m.ops) ops.push_back(op_lowering(o.kind).write(m, o, *this));
  std::vector<flatbuffers::Offset<fb::GraphInput>> inputs;
  for (const IrInput& in : m.inputs)
    inputs.push_back(fb::CreateGraphInput(b_, in.tensor, in.role,
                                          static_cast<int>(in.noise_size), static_cast<int>(in.label_count)));
  std::vector<flatbuffers::Offset<fb::GraphOutput>> outputs;
  for (const IrOutput& out : m.outputs)
    outputs.push_back(fb::CreateGraphOutput(b_, out.tensor, out.role, out.value_min, out.value_max));
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
  seal_model_file(file);
  return file;
}

std::vector<uint8_t> write_egan(const IrModel& model, const std::string& producer, bool fp16_conv_transpose_weights) {
  EganWriter w(fp16_conv_transpose_weights);
  return w.finish(model, producer);
}

}  // namespace edgegan::converter

// Serializes the engine IR into .egan bytes: packs conv weights to
// [kh][kw][Cin][Cout], splits every transposed convolution into its
// stride_h*stride_w phase sub-kernels, and lays weights out 64-byte aligned
// after the flatbuffer (see engine/format/egan.fbs for the file layout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/egan_ir.h"
#include "egan_generated.h"

namespace edgegan::converter {

// The writer as each kind's OpLowering::write sees it: the flatbuffer being built and
// the weight blobs of the data section.
class EganWriter {
 public:
  explicit EganWriter(bool fp16_conv_transpose_weights) : fp16_conv_transpose_weights_(fp16_conv_transpose_weights) {}
  flatbuffers::FlatBufferBuilder& fbb() { return b_; }
  // A float32 weight blob; returns its buffer index (0 for an empty blob).
  uint32_t blob(const std::vector<float>& values);
  // A transposed-convolution sub-kernel: float32, or IEEE halves when asked.
  uint32_t conv_transpose_blob(const std::vector<float>& values);
  // The op's bias and activation.
  flatbuffers::Offset<schema::Epilogue> epilogue(const IrOp& op);
  // The Op table around a kind's table.
  flatbuffers::Offset<schema::Op> op(const IrOp& op, schema::OpKind kind, flatbuffers::Offset<void> body);
  std::vector<uint8_t> finish(const IrModel& model, const std::string& producer);

 private:
  struct Blob {
    std::vector<uint8_t> bytes;
    schema::DType dtype;
  };
  flatbuffers::FlatBufferBuilder b_{1 << 16};
  bool fp16_conv_transpose_weights_;
  std::vector<Blob> blobs_;
};

// fp16_conv_transpose_weights: store the transposed-convolution sub-kernels as IEEE
// halves (round to nearest even); everything else stays float32.
std::vector<uint8_t> write_egan(const IrModel& model, const std::string& producer, bool fp16_conv_transpose_weights = false);

}  // namespace edgegan::converter

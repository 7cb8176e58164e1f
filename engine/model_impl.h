// The validated, read-only form of a loaded .egan file that sessions execute.
// Everything here has passed validate_model(): indices are in range, shapes are
// consistent and buffers lie inside the file, so sessions need not re-check.
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"
#include "egan_generated.h"
#include "engine/format/egan_format.h"
#include "engine/mapped_file.h"

namespace edgegan {

struct TensorDesc {
  std::string name;
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kRowMajor;
  std::vector<int64_t> dims;   // storage order, dims[0] = -1
  int64_t per_sample = 0;      // product of dims[1..]
  int producer = -1;           // op index, -1 for graph inputs
  size_t element_size() const { return dtype == DType::kInt64 ? 8 : 4; }
  // Storage order equals the logical (ONNX, NCHW) order: row-major, or NHWC with
  // one channel or a 1x1 map. Reshapes between such tensors move no data.
  bool storage_is_logical() const { return layout != Layout::kNHWC || dims[3] == 1 || dims[1] * dims[2] == 1; }
};

// Where a session's kernels read an op's weight buffers: in place from the model
// file (inference), or from a Trainer's float copies, which change every step.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual const float* f32(uint32_t buffer) const = 0;       // nullptr for buffer 0
  virtual const uint16_t* f16(uint32_t buffer) const = 0;    // for is_f16 buffers
  virtual bool is_f16(uint32_t buffer) const = 0;
};

struct Model::Impl final : WeightSource {
  std::unique_ptr<MappedFile> mapping;   // set by load()
  std::unique_ptr<uint8_t, void (*)(void*)> owned{nullptr, &std::free};  // from_bytes(): 64-B aligned copy
  const uint8_t* file = nullptr;
  size_t file_size = 0;
  const schema::Model* root = nullptr;
  const uint8_t* data = nullptr;         // data section
  size_t data_size = 0;                  // excluding the checksum trailer
  Integrity integrity = Integrity::kNoChecksum;
  std::vector<std::string> warnings;

  std::vector<TensorDesc> tensors;
  std::vector<InputInfo> inputs;
  std::vector<int> input_tensors;
  std::vector<OutputInfo> outputs;
  std::vector<int> output_tensors;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string producer, source_sha256;

  // Set on a model re-shaped for another input size (Model::at_input_size): the model
  // as loaded, whose file this one reads (kept alive here) and whose tensors hold the
  // shapes written in the file. While validating, ops derive their outputs' shapes
  // from their inputs instead of checking the file's (OpValidator::define_output).
  std::shared_ptr<const Model> file_model;

  const float* f32(uint32_t buffer) const override;     // nullptr for buffer 0; the buffer must be float32
  const uint16_t* f16(uint32_t buffer) const override;  // nullptr for buffer 0; the buffer must be float16
  bool is_f16(uint32_t buffer) const override;          // fp16 weights (`edgegan-convert --weights fp16`)
  uint64_t buffer_bytes(uint32_t buffer) const;
  uint64_t buffer_elements(uint32_t buffer) const;
  std::vector<float> widened(uint32_t buffer) const;  // a float copy, whatever the stored precision
};

// An input Model::at_input_size re-shapes: an NHWC map that is not a noise vector (which
// a generator may hold as a 1x1 map).
inline bool is_image_input(const InputInfo& in) { return in.layout == Layout::kNHWC && in.role != InputRole::kNoise; }

// Builds a Model::Impl from a file image: checks the checksums (unless told not
// to), runs the flatbuffers Verifier, then the semantic checks. Throws Error naming
// the damaged section, or the op / tensor and the defect.
void validate_model(Model::Impl& impl, const LoadOptions& options = {});

// Fills `impl` (file pointers copied from `base`, already validated) as the same graph
// with every NHWC graph input at height x width, each op's output shape derived from
// its inputs. Throws Error naming the op whose shape cannot follow.
void validate_at_input_size(Model::Impl& impl, std::shared_ptr<const Model> base, int64_t height, int64_t width);

}  // namespace edgegan


// Semantic checks of a .egan file, run after the flatbuffers Verifier. The
// Verifier only proves the bytes parse; these checks prove the model makes
// sense: every index in range, every shape consistent with its op, every weight
// buffer exactly the size its op needs, every split transposed convolution's phases equal
// to the ones its kernel/stride/pads imply. A hostile file fails here with a
// message, before any allocation sized by the file's numbers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "engine/text_stream.h"
#include "engine/model_impl.h"
#include "engine/model_integrity.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_common/conv_geometry.h"

namespace edgegan {
namespace {

// A metadata key under its current name: files converted before the transposed
// convolution had one name everywhere carry "deconv_weights".
std::string current_metadata_key(std::string key) {
  return key == "deconv_weights" ? "conv_transpose2d_weights" : key;
}

namespace fb = schema;

[[noreturn]] void fail(const std::string& where, const std::string& what) { fail_validation(where, what); }

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

int64_t checked_mul(int64_t a, int64_t b, const std::string& where) {
  if (a < 0 || b < 0) fail(where, "negative size");
  if (a != 0 && b > kMaxElements / a) fail(where, "size overflows the engine's limits");
  return a * b;
}

class Validator {
 public:
  explicit Validator(Model::Impl& m) : m_(m), root_(*m.root) {}
  // Re-shaping: every NHWC graph input at height x width (m.file_model set).
  Validator(Model::Impl& m, int64_t height, int64_t width) : m_(m), root_(*m.root), input_h_(height), input_w_(width) {}

  void run() {
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
        if (kv) m_.metadata.emplace_back(current_metadata_key(str(kv->key())), str(kv->value()));
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

  bool is_graph_input(int index) const {
    if (!root_.inputs()) return false;
    for (const auto* in : *root_.inputs())
      if (in && in->tensor() == index) return true;
    return false;
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
      if (op->kind_type() < schema::OpKind_MIN || op->kind_type() > schema::OpKind_MAX || op->kind_type() == schema::OpKind_NONE)
        fail(where, "unknown op kind " + std::to_string(static_cast<int>(op->kind_type())) + " (file written by a newer converter?)");
      const OpDef& def = op_def(*op);
      OpValidator v(m_, current_op_, where + " (" + def.name() + ")");
      def.validate(*op, v);
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
      if (input_h_ > 0 && is_image_input(info)) info.dims = reshape_input(in->tensor(), where);
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

  // An NHWC graph input given the requested height and width (same channels); its new dims.
  const std::vector<int64_t>& reshape_input(int index, const std::string& where) {
    TensorDesc& t = m_.tensors[static_cast<size_t>(index)];
    if (input_h_ > kMaxDim || input_w_ > kMaxDim) fail(where, "height and width must be at most " + std::to_string(kMaxDim));
    t.dims[1] = input_h_;
    t.dims[2] = input_w_;
    t.per_sample = checked_mul(checked_mul(input_h_, input_w_, where), t.dims[3], where);
    return t.dims;
  }

  Model::Impl& m_;
  const fb::Model& root_;
  int current_op_ = 0;
  int64_t input_h_ = 0, input_w_ = 0;  // > 0: re-shaping to this input size
};

}  // namespace

namespace {

std::string hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

[[noreturn]] void corrupt(const std::string& what) { throw Error("corrupt model: " + what); }

}  // namespace

void validate_model(Model::Impl& m, const LoadOptions& options) {
  constexpr size_t kMinSize = 16;
  if (m.file_size < kMinSize) throw Error("invalid model: the file is too small to be an .egan model (" + std::to_string(m.file_size) + " bytes)");
  if (!flatbuffers::BufferHasIdentifier(m.file, schema::ModelIdentifier(), /*size_prefixed=*/true))
    throw Error("invalid model: not an .egan file (file identifier 'EGAN' not found)");
  const uint64_t fb_size = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(m.file);
  if (fb_size > m.file_size - sizeof(flatbuffers::uoffset_t))
    throw Error("invalid model: the file is truncated (header says " + std::to_string(fb_size) + " bytes of graph, file has " + std::to_string(m.file_size) + ")");
  const size_t data_begin = data_section_begin(fb_size);

  // The graph's checksum comes first: a damaged graph is named as such, not as
  // whatever nonsense the damage happens to spell.
  Trailer trailer;
  const bool has_trailer = m.file_size >= data_begin + kTrailerSize && read_trailer(m.file, m.file_size, &trailer);
  if (has_trailer && options.verify_checksums) {
    const uint64_t graph = checksum(m.file, data_begin);
    if (graph != trailer.graph_checksum)
      corrupt("the graph section (bytes 0.." + std::to_string(data_begin) + ") fails its checksum (stored " +
              hex(trailer.graph_checksum) + ", computed " + hex(graph) + ")");
  }

  flatbuffers::Verifier verifier(m.file, sizeof(flatbuffers::uoffset_t) + fb_size, /*max_depth=*/64, /*max_tables=*/1'000'000);
  if (!schema::VerifySizePrefixedModelBuffer(verifier))
    throw Error("invalid model: the graph section is corrupt (flatbuffers verification failed)");
  m.root = schema::GetSizePrefixedModel(m.file);

  const uint32_t version = m.root->schema_version();
  if (version < kOldestReadableSchemaVersion || version > kSchemaVersion)
    throw Error("invalid model: schema version " + std::to_string(version) + " is not supported (this engine reads versions " +
                std::to_string(kOldestReadableSchemaVersion) + " to " + std::to_string(kSchemaVersion) + ")");
  size_t data_end = m.file_size;
  if (version >= kFirstChecksummedSchemaVersion) {
    if (!has_trailer)
      corrupt("its checksum trailer is missing: the file is truncated or its last " + std::to_string(kTrailerSize) +
              " bytes are damaged");
    data_end = m.file_size - kTrailerSize;
    const uint64_t data_bytes = data_end >= data_begin ? data_end - data_begin : 0;
    if (data_end < data_begin || trailer.data_bytes != data_bytes)
      corrupt("the trailer says " + std::to_string(trailer.data_bytes) + " bytes of weights, the file holds " +
              std::to_string(data_bytes) + " (truncated or extended)");
    if (options.verify_checksums) {
      const uint64_t data = checksum(m.file + data_begin, data_bytes);
      if (data != trailer.data_checksum)
        corrupt("the weights (data section, " + std::to_string(data_bytes) + " bytes from offset " +
                std::to_string(data_begin) + ") fail their checksum (stored " + hex(trailer.data_checksum) +
                ", computed " + hex(data) + ")");
      m.integrity = Integrity::kVerified;
    } else {
      m.integrity = Integrity::kNotVerified;
    }
  } else {
    if (has_trailer) corrupt("schema version " + std::to_string(version) + " files have no checksum trailer, but this one ends in one");
    m.integrity = Integrity::kNoChecksum;
    m.warnings.push_back("the model carries no checksum (schema version " + std::to_string(version) +
                         ", written before checksums): damage to it cannot be detected; convert it again to add them");
  }
  m.data = m.file + std::min(data_begin, data_end);
  m.data_size = data_begin < data_end ? data_end - data_begin : 0;
  Validator(m).run();
}

void validate_at_input_size(Model::Impl& m, std::shared_ptr<const Model> base, int64_t height, int64_t width) {
  if (height < 1 || width < 1) throw Error("the input size must be positive (asked for " + std::to_string(height) + "x" + std::to_string(width) + ")");
  const Model::Impl& b = base->impl();
  m.file = b.file;
  m.file_size = b.file_size;
  m.root = b.root;
  m.data = b.data;
  m.data_size = b.data_size;
  m.integrity = b.integrity;
  m.file_model = std::move(base);
  bool has_image_input = false;
  for (const auto& in : b.inputs) has_image_input |= is_image_input(in);
  if (!has_image_input) throw Error("the model has no image input (NHWC) whose size could change");
  try {
    Validator(m, height, width).run();
  } catch (const Error& e) {
    std::string why = e.what();
    const std::string prefix = "invalid model: ";  // the file is fine; this size is not
    if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    throw Error("the model cannot run at input size " + std::to_string(height) + "x" + std::to_string(width) + ": " + why);
  }
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

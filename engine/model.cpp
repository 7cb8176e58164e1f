#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "engine/model_impl.h"
#include "engine/ops/op_def.h"

namespace edgegan {

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::shared_ptr<const Model> Model::load(const std::string& path, const LoadOptions& options) {
  try {
    return load_checked(path, options);
  } catch (const std::bad_alloc&) {
    throw Error("'" + path + "': out of memory while loading the model");
  }
}

std::shared_ptr<const Model> Model::load_checked(const std::string& path, const LoadOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->mapping = std::make_unique<MappedFile>(path);
  impl->file = impl->mapping->data();
  impl->file_size = impl->mapping->size();
  try {
    validate_model(*impl, options);
  } catch (const Error& e) {
    throw Error("'" + path + "': " + e.what());
  }
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

std::shared_ptr<const Model> Model::from_bytes(std::span<const uint8_t> bytes, const LoadOptions& options) {
  try {
    return from_bytes_checked(bytes, options);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory while loading the model");
  }
}

std::shared_ptr<const Model> Model::from_bytes_checked(std::span<const uint8_t> bytes, const LoadOptions& options) {
  auto impl = std::make_unique<Impl>();
  // A 64-byte aligned copy, so weights are aligned exactly as in a mapped file.
  const size_t padded = (bytes.size() + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
  impl->owned.reset(static_cast<uint8_t*>(std::aligned_alloc(kWeightAlignment, padded == 0 ? kWeightAlignment : padded)));
  if (!impl->owned) throw Error("out of memory copying the model (" + std::to_string(bytes.size()) + " bytes)");
  if (!bytes.empty()) std::memcpy(impl->owned.get(), bytes.data(), bytes.size());
  impl->file = impl->owned.get();
  impl->file_size = bytes.size();
  validate_model(*impl, options);
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

std::shared_ptr<const Model> Model::at_input_size(std::shared_ptr<const Model> model, int64_t height, int64_t width) {
  if (!model) throw Error("at_input_size: no model");
  bool has_image = false, same = true;
  for (const auto& in : model->inputs())
    if (is_image_input(in)) {
      has_image = true;
      same = same && in.dims[1] == height && in.dims[2] == width;
    }
  if (has_image && same) return model;
  auto impl = std::make_unique<Impl>();
  try {
    validate_at_input_size(*impl, std::move(model), height, width);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory re-shaping the model");
  }
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

const char* to_string(Integrity integrity) {
  switch (integrity) {
    case Integrity::kVerified: return "verified";
    case Integrity::kNotVerified: return "not verified";
    case Integrity::kNoChecksum: return "no checksum";
  }
  return "?";
}

Integrity Model::integrity() const { return impl_->integrity; }
const std::vector<std::string>& Model::warnings() const { return impl_->warnings; }
uint32_t Model::schema_version() const { return impl_->root->schema_version(); }
const std::string& Model::producer() const { return impl_->producer; }
const std::string& Model::source_sha256() const { return impl_->source_sha256; }
const std::vector<std::pair<std::string, std::string>>& Model::metadata() const { return impl_->metadata; }
const std::vector<InputInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<OutputInfo>& Model::outputs() const { return impl_->outputs; }
uint64_t Model::weight_bytes() const { return impl_->data_size; }
uint64_t Model::file_bytes() const { return impl_->file_size; }

int64_t Model::noise_size() const {
  for (const auto& in : impl_->inputs)
    if (in.role == InputRole::kNoise) return in.noise_size;
  return 0;
}

int64_t Model::label_count() const {
  for (const auto& in : impl_->inputs)
    if (in.role == InputRole::kLabel) return in.label_count;
  return 0;
}

std::vector<OpInfo> Model::ops() const {
  const Impl& m = *impl_;
  std::vector<OpInfo> result;
  auto add_tensor = [&](OpInfo& info, int index, bool output) {
    const TensorDesc& t = m.tensors[static_cast<size_t>(index)];
    (output ? info.outputs : info.inputs).push_back(t.name);
    (output ? info.output_dims : info.input_dims).push_back(t.dims);
  };
  for (const auto* op : *m.root->ops()) {
    const OpDef& def = op_def(*op);
    OpInfo info;
    info.kind = def.name();
    info.name = op->name() ? op->name()->str() : "";
    for (int t : def.inputs(*op)) add_tensor(info, t, false);
    add_tensor(info, def.output(*op), true);
    def.describe(m, *op, info);
    result.push_back(std::move(info));
  }
  return result;
}

}  // namespace edgegan

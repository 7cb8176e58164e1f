#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "engine/text_stream.h"
#include "engine/model_impl.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan {

namespace fb = schema;

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::shared_ptr<const Model> Model::load(const std::string& path) {
  try {
    return load_checked(path);
  } catch (const std::bad_alloc&) {
    throw Error("'" + path + "': out of memory while loading the model");
  }
}

std::shared_ptr<const Model> Model::load_checked(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->mapping = std::make_unique<MappedFile>(path);
  impl->file = impl->mapping->data();
  impl->file_size = impl->mapping->size();
  try {
    validate_model(*impl);
  } catch (const Error& e) {
    throw Error("'" + path + "': " + e.what());
  }
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

std::shared_ptr<const Model> Model::from_bytes(std::span<const uint8_t> bytes) {
  try {
    return from_bytes_checked(bytes);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory while loading the model");
  }
}

std::shared_ptr<const Model> Model::from_bytes_checked(std::span<const uint8_t> bytes) {
  auto impl = std::make_unique<Impl>();
  // A 64-byte aligned copy, so weights are aligned exactly as in a mapped file.
  const size_t padded = (bytes.size() + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
  impl->owned.reset(static_cast<uint8_t*>(std::aligned_alloc(kWeightAlignment, padded == 0 ? kWeightAlignment : padded)));
  if (!impl->owned) throw Error("out of memory copying the model (" + std::to_string(bytes.size()) + " bytes)");
  if (!bytes.empty()) std::memcpy(impl->owned.get(), bytes.data(), bytes.size());
  impl->file = impl->owned.get();
  impl->file_size = bytes.size();
  validate_model(*impl);
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

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

namespace {

const char* activation_name(fb::Activation a) {
  switch (a) {
    case fb::Activation_Relu: return "relu";
    case fb::Activation_LeakyRelu: return "leaky_relu";
    case fb::Activation_Tanh: return "tanh";
    case fb::Activation_Sigmoid: return "sigmoid";
    default: return "";
  }
}

std::string epilogue_text(const fb::Epilogue* ep) {
  if (!ep) return "";
  std::string s;
  if (ep->bias()) s += " +bias";
  if (ep->activation() != fb::Activation_None) {
    s += std::string(" ") + activation_name(ep->activation());
    if (ep->activation() == fb::Activation_LeakyRelu) {
      auto os = text_stream();
      os << "(" << ep->alpha() << ")";
      s += os.str();
    }
  }
  return s;
}

// "k4x4 s2x2 pads(t,l,b,r) 1,1,1,1 +bias relu" for Conv2D and ConvTranspose2D alike.
template <typename ConvOp>
std::string conv_text(const ConvOp& c) {
  auto os = text_stream();
  os << "k" << c.kernel_h() << "x" << c.kernel_w() << " s" << c.stride_h() << "x" << c.stride_w() << " pads(t,l,b,r) "
     << c.pad_top() << "," << c.pad_left() << "," << c.pad_bottom() << "," << c.pad_right();
  if (c.dilation_h() != 1 || c.dilation_w() != 1) os << " dilation " << c.dilation_h() << "x" << c.dilation_w();
  os << epilogue_text(c.epilogue());
  return os.str();
}

}  // namespace

std::vector<OpInfo> Model::ops() const {
  const Impl& m = *impl_;
  std::vector<OpInfo> result;
  auto add_tensor = [&](OpInfo& info, int index, bool output) {
    const TensorDesc& t = m.tensors[static_cast<size_t>(index)];
    (output ? info.outputs : info.inputs).push_back(t.name);
    (output ? info.output_dims : info.input_dims).push_back(t.dims);
  };
  auto bytes = [&](uint32_t buffer) { return buffer ? m.buffer_bytes(buffer) : 0; };
  for (const auto* op : *m.root->ops()) {
    OpInfo info;
    info.name = op->name() ? op->name()->str() : "";
    auto attrs = text_stream();
    switch (op->kind_type()) {
      case fb::OpKind_ConvTranspose2D: {
        const auto& c = *op->kind_as_ConvTranspose2D();
        info.kind = "ConvTranspose2D";
        add_tensor(info, c.input(), false);
        add_tensor(info, c.output(), true);
        attrs << conv_text(c);
        for (const auto* p : *c.phases()) {
          PhaseInfo ph;
          ph.phase_h = p->phase_h();
          ph.phase_w = p->phase_w();
          ph.taps_h = static_cast<int>(c.axis_phases_h()->Get(static_cast<uint32_t>(p->phase_h()))->taps()->size());
          ph.taps_w = static_cast<int>(c.axis_phases_w()->Get(static_cast<uint32_t>(p->phase_w()))->taps()->size());
          info.phases.push_back(ph);
          info.weight_bytes += bytes(p->weights());
          info.fp16_weights |= m.is_f16(p->weights());
        }
        if (c.epilogue()) info.weight_bytes += bytes(c.epilogue()->bias());
        // One panel as wide as Cout is the plain layout: reported as 0.
        info.weight_panel_columns = static_cast<int64_t>(c.weight_panel_columns()) < c.out_channels() ? static_cast<int>(c.weight_panel_columns()) : 0;
        break;
      }
      case fb::OpKind_Conv2D: {
        const auto& c = *op->kind_as_Conv2D();
        info.kind = "Conv2D";
        add_tensor(info, c.input(), false);
        add_tensor(info, c.output(), true);
        attrs << conv_text(c);
        info.weight_bytes = bytes(c.weights()) + (c.epilogue() ? bytes(c.epilogue()->bias()) : 0);
        break;
      }
      case fb::OpKind_Dense: {
        const auto& d = *op->kind_as_Dense();
        info.kind = "Dense";
        add_tensor(info, d.input(), false);
        add_tensor(info, d.output(), true);
        attrs << d.in_features() << "->" << d.out_features() << epilogue_text(d.epilogue());
        info.weight_bytes = bytes(d.weights()) + (d.epilogue() ? bytes(d.epilogue()->bias()) : 0);
        break;
      }
      case fb::OpKind_Embedding: {
        const auto& e = *op->kind_as_Embedding();
        info.kind = "Embedding";
        add_tensor(info, e.indices(), false);
        add_tensor(info, e.output(), true);
        attrs << e.num_embeddings() << " rows x " << e.dim();
        info.weight_bytes = bytes(e.table());
        break;
      }
      case fb::OpKind_Concat: {
        const auto& c = *op->kind_as_Concat();
        info.kind = "Concat";
        for (int i : *c.inputs()) add_tensor(info, i, false);
        add_tensor(info, c.output(), true);
        attrs << "axis " << c.axis() << " (storage order)";
        break;
      }
      case fb::OpKind_Reshape: {
        const auto& r = *op->kind_as_Reshape();
        info.kind = "Reshape";
        add_tensor(info, r.input(), false);
        add_tensor(info, r.output(), true);
        break;
      }
      case fb::OpKind_ChannelAffine: {
        const auto& a = *op->kind_as_ChannelAffine();
        info.kind = "ChannelAffine";
        add_tensor(info, a.input(), false);
        add_tensor(info, a.output(), true);
        attrs << a.channels() << " channels";
        if (a.activation() != fb::Activation_None) attrs << " " << activation_name(a.activation());
        info.weight_bytes = bytes(a.scale()) + bytes(a.shift());
        break;
      }
      case fb::OpKind_Elementwise: {
        const auto& e = *op->kind_as_Elementwise();
        info.kind = "Elementwise";
        add_tensor(info, e.input(), false);
        add_tensor(info, e.output(), true);
        attrs << activation_name(e.activation());
        break;
      }
      default: break;
    }
    info.attributes = attrs.str();
    result.push_back(std::move(info));
  }
  return result;
}

}  // namespace edgegan

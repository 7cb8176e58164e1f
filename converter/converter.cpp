#include "engine/text_stream.h"
#include "converter/converter.h"

#include <google/protobuf/arena.h>
#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <optional>
#include <sstream>

#include "converter/checkpoint/checkpoint_reader.h"
#include "converter/convert_proto.h"
#include "converter/egan_ir.h"
#include "converter/egan_writer.h"
#include "converter/stylegan_patterns.h"
#include "converter/window_patterns.h"
#include "edgegan/edgegan.h"
#include "edgegan/io.h"

namespace edgegan::converter {
namespace {

// Recorded in every file: the project version (one number for library, tools and module).
const char* kProducer = "edgegan-convert " EDGEGAN_VERSION_STRING;

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr)) throw ConvertError("sha256 failed");
  auto os = text_stream();
  for (unsigned int i = 0; i < len; ++i) os << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(digest[i]);
  return os.str();
}

std::string dims_text(const std::vector<int64_t>& d) {
  auto os = text_stream();
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "x" : "") << (d[i] < 0 ? std::string("N") : std::to_string(d[i]));
  return os.str();
}

std::string summarize(const Model& model, const IrModel& ir) {
  auto os = text_stream();
  for (const InputInfo& in : model.inputs()) {
    os << "input  " << in.name << " " << dims_text(in.dims) << (in.layout == Layout::kNHWC ? " (NHWC)" : "");
    if (in.role == InputRole::kNoise) os << "  noise, " << in.noise_size << " values";
    if (in.role == InputRole::kLabel) os << "  label, " << in.label_count << " classes";
    if (in.role == InputRole::kImage) os << "  image";
    os << "\n";
  }
  int index = 0;
  for (const OpInfo& op : model.ops()) {
    os << "op " << std::setw(2) << index++ << "  " << std::left << std::setw(16) << op.kind << std::right << dims_text(op.input_dims[0])
       << " -> " << dims_text(op.output_dims[0]) << "  " << op.attributes;
    if (!op.phases.empty()) {
      os << "  phases:";
      for (const PhaseInfo& p : op.phases) os << " (" << p.phase_h << "," << p.phase_w << ")=" << p.taps_h << "x" << p.taps_w;
    }
    os << "  [" << op.name << "]\n";
  }
  for (const OutputInfo& out : model.outputs()) {
    os << "output " << out.name << " " << dims_text(out.dims) << (out.layout == Layout::kNHWC ? " (NHWC)" : "");
    if (!std::isnan(out.value_min)) os << "  values in [" << out.value_min << ", " << out.value_max << "]";
    os << "\n";
  }
  os << ir.ops.size() << " ops, " << ir.batchnorms_folded << " BatchNorm folded, " << ir.activations_fused << " activations fused, "
     << ir.residuals_fused << " residual Adds fused; weights " << model.weight_bytes() << " bytes, file " << model.file_bytes() << " bytes\n";
  return os.str();
}

ConvertResult convert_onnx_checked(const std::string& onnx_bytes, const std::string& source_name, const ConvertOptions& options);

}  // namespace

WeightPrecision weight_precision_from_string(const std::string& name) {
  if (name == "fp32") return WeightPrecision::kFp32;
  if (name == "fp16") return WeightPrecision::kFp16;
  throw ConvertError("unknown weight precision '" + name + "' (expected fp32 or fp16)");
}

ConvertResult convert_onnx(const std::string& onnx_bytes, const std::string& source_name, const ConvertOptions& options) {
  try {
    return convert_onnx_checked(onnx_bytes, source_name, options);
  } catch (const std::bad_alloc&) {
    throw ConvertError("'" + source_name + "': out of memory while converting");
  }
}

namespace {
ConvertResult convert_onnx_checked(const std::string& onnx_bytes, const std::string& source_name, const ConvertOptions& options) {
  // Parsed into an arena: protobuf is not exception-safe, and if an allocation fails
  // half way the arena still owns (and frees) every message made so far.
  google::protobuf::Arena arena;
  onnx::ModelProto& proto = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  if (onnx_bytes.empty() || !proto.ParseFromString(onnx_bytes)) throw ConvertError("'" + source_name + "' is not a valid ONNX model (protobuf parse failed)");
  if (!proto.has_graph()) throw ConvertError("'" + source_name + "' has no graph");
  return convert_proto(proto, sha256_hex(onnx_bytes),
                       {{"source_file", source_name},
                        {"onnx_producer", proto.producer_name() + (proto.producer_version().empty() ? "" : " " + proto.producer_version())}},
                       options);
}
}  // namespace

ConvertResult convert_proto(const onnx::ModelProto& proto, const std::string& source_sha256,
                            std::vector<std::pair<std::string, std::string>> metadata, const ConvertOptions& options) {
  // StyleGAN2's fixed-batch forms are rewritten on a copy (only of a model that may hold them).
  std::optional<onnx::ModelProto> rewritten;
  if (may_hold_stylegan_patterns(proto)) {
    rewritten.emplace(proto);
    if (rewrite_stylegan_patterns(*rewritten) == 0) rewritten.reset();
  }
  // So is window attention's batch-moving Transpose read by Gathers (SwinIR's qkv).
  if (may_hold_window_patterns(rewritten ? *rewritten : proto)) {
    const bool copied = rewritten.has_value();
    if (!copied) rewritten.emplace(proto);
    if (rewrite_window_patterns(*rewritten) == 0 && !copied) rewritten.reset();
  }
  const onnx::ModelProto& source = rewritten ? *rewritten : proto;
  const OnnxGraph graph(source);
  IrModel ir = lower_to_ir(graph, source);
  ir.source_sha256 = source_sha256;
  if (metadata.size() > 1 && metadata[1].first == "onnx_producer") metadata.insert(metadata.begin() + 1, {"onnx_opset", std::to_string(graph.opset())});
  ir.metadata = std::move(metadata);
  ir.metadata.emplace_back("conv_transpose2d_weights", options.weights == WeightPrecision::kFp16 ? "fp16" : "fp32");
  for (const auto& kv : options.metadata) ir.metadata.push_back(kv);
  ConvertResult result;
  result.egan = write_egan(ir, kProducer, options.weights == WeightPrecision::kFp16);
  // The converter never writes a file the engine would reject: load it back.
  std::shared_ptr<const Model> model;
  try {
    model = Model::from_bytes(result.egan);
  } catch (const Error& e) {
    throw ConvertError(std::string("internal error: the written model does not load: ") + e.what());
  }
  result.summary = summarize(*model, ir);
  return result;
}

std::string sha256_of(const std::string& bytes) { return sha256_hex(bytes); }

ConvertResult convert_file(const std::string& onnx_path, const std::string& egan_path, const ConvertOptions& options) {
  try {
    ensure_not_an_input(egan_path, options.blend_path.empty() ? std::vector<std::string>{onnx_path} : std::vector<std::string>{onnx_path, options.blend_path});
  } catch (const Error& e) {
    throw ConvertError(e.what());
  }
  std::ifstream in(onnx_path, std::ios::binary);
  if (!in) throw ConvertError("cannot open '" + onnx_path + "': " + std::strerror(errno));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t slash = onnx_path.find_last_of('/');
  const std::string name = slash == std::string::npos ? onnx_path : onnx_path.substr(slash + 1);
  const bool onnx_name = name.size() >= 5 && name.compare(name.size() - 5, 5, ".onnx") == 0;
  const bool checkpoint = !onnx_name && checkpoint::looks_like_checkpoint(bytes);
  if (!checkpoint && !options.blend_path.empty()) throw ConvertError("--blend takes checkpoints (.pth, .safetensors), and '" + name + "' is not one");
  ConvertResult r = checkpoint ? convert_checkpoint(bytes, name, options) : convert_onnx(bytes, name, options);
  try {
    write_file_atomically(egan_path, r.egan.data(), r.egan.size());
  } catch (const Error& e) {
    throw ConvertError(e.what());
  }
  return r;
}

}  // namespace edgegan::converter

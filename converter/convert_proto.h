// The converter's common path from an ONNX graph in memory: lowering, fusions, phase
// split, writing, and loading the result back. convert_onnx parses a file into it; the
// checkpoint import (converter/checkpoint/) builds the graph of a detected architecture.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <utility>
#include <vector>

#include "converter/converter.h"

namespace edgegan::converter {

// `metadata` first (source_file first), then the opset, the weight precision and options.metadata.
ConvertResult convert_proto(const onnx::ModelProto& proto, const std::string& source_sha256,
                            std::vector<std::pair<std::string, std::string>> metadata, const ConvertOptions& options);

// SHA-256 of `bytes` in hex (recorded as the source's checksum).
std::string sha256_of(const std::string& bytes);

}  // namespace edgegan::converter

// Model files made hostile on purpose for the loader tests: not damaged (their
// checksums are right), so the structural and per-op checks must catch them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"
#include "egan_generated.h"
#include "engine/model_integrity.h"

namespace edgegan::testing {

// `valid` unpacked into the flatbuffers object API, changed by `mutate`, and packed again
// with its original data section and new checksums.
inline std::vector<uint8_t> repacked_model(const std::vector<uint8_t>& valid, const std::function<void(schema::ModelT&)>& mutate) {
  const uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(valid.data());
  const size_t data_begin = (4 + fb_size + 63) / 64 * 64;
  std::unique_ptr<schema::ModelT> m(schema::GetSizePrefixedModel(valid.data())->UnPack());
  mutate(*m);
  flatbuffers::FlatBufferBuilder b;
  schema::FinishSizePrefixedModelBuffer(b, schema::Model::Pack(b, m.get()));
  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  out.resize((out.size() + 63) / 64 * 64, 0);
  out.insert(out.end(), valid.begin() + static_cast<long>(data_begin), valid.end() - kTrailerSize);
  seal_model_file(out);
  return out;
}

// The message loading `bytes` throws, or "" when it loads.
inline std::string load_error(const std::vector<uint8_t>& bytes, const LoadOptions& options = {}) {
  try {
    Model::from_bytes(bytes, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace edgegan::testing

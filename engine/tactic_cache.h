// The tactic cache file: which kernel won each layer's timing on a device, and the
// serialized cuDNN plan behind it, so that a later session of the same model on the same
// GPU, driver and cuDNN times nothing. Input from disk, so never trusted: a file that is
// damaged (bad magic, version, lengths or checksum) or was made on another device is
// ignored with a one-line warning, and the layers are timed again.
//
// Format (little-endian): "EGTC", u32 version (1), the key (string GPU name, u32 driver
// version, u32 cuDNN version), u32 entry count, per entry three strings (layer
// signature, precision, tactic) and a byte blob (the plan), then the XXH3-64 of every
// byte before it. A string or blob is a u32 length and its bytes; each at most 16 MiB.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace edgegan {

struct TacticCacheKey {
  std::string gpu;       // the device's name, e.g. "NVIDIA H100 80GB HBM3"
  uint32_t driver = 0;   // cudaDriverGetVersion
  uint32_t cudnn = 0;    // cudnnGetVersion
  bool operator==(const TacticCacheKey&) const = default;
};

struct TacticEntry {
  std::string layer;      // the layer's signature (ConvGraphSpec::describe(): shapes, batch, epilogue)
  std::string precision;  // "fp32" | "tf32" | "fp16"
  std::string tactic;     // "own" (the project's kernel) or "cudnn:<engine>"
  std::vector<uint8_t> plan;  // the serialized cuDNN plan (empty for "own")
  bool operator==(const TacticEntry&) const = default;
};

class TacticCache {
 public:
  explicit TacticCache(TacticCacheKey key) : key_(std::move(key)) {}
  const TacticCacheKey& key() const { return key_; }
  const std::vector<TacticEntry>& entries() const { return entries_; }

  const TacticEntry* find(const std::string& layer, const std::string& precision) const;
  void put(TacticEntry entry);  // replaces the entry of the same layer and precision

  std::vector<uint8_t> serialize() const;
  // The cache in `bytes` for `key`: empty, with `warning` set, when the bytes are damaged
  // or were written for another key.
  static TacticCache parse(std::span<const uint8_t> bytes, const TacticCacheKey& key, std::string* warning);
  // A missing file is an empty cache without a warning; an unreadable one warns.
  static TacticCache load(const std::string& path, const TacticCacheKey& key, std::string* warning);
  void save(const std::string& path) const;  // atomically

 private:
  TacticCacheKey key_;
  std::vector<TacticEntry> entries_;
};

}  // namespace edgegan

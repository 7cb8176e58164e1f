#include "engine/tactic_cache.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "edgegan/edgegan.h"
#include "edgegan/io.h"

namespace edgegan {

namespace {

constexpr char kMagic[4] = {'E', 'G', 'T', 'C'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kMaxField = 16u << 20;

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_bytes(std::vector<uint8_t>& out, const void* data, size_t size) {
  if (size > kMaxField) throw Error("tactic cache: a field of " + std::to_string(size) + " bytes is over the format's 16 MiB");
  put_u32(out, static_cast<uint32_t>(size));
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + size);
}
void put_string(std::vector<uint8_t>& out, const std::string& s) { put_bytes(out, s.data(), s.size()); }

// Reads fields off the checked bytes; any read past the end marks it bad (no throw, no
// read outside the span).
struct Reader {
  std::span<const uint8_t> bytes;
  size_t at = 0;
  bool bad = false;
  uint32_t u32() {
    if (bad || bytes.size() - at < 4) return bad = true, 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes[at + static_cast<size_t>(i)]) << (8 * i);
    at += 4;
    return v;
  }
  std::vector<uint8_t> blob() {
    const uint32_t n = u32();
    if (bad || n > kMaxField || bytes.size() - at < n) return bad = true, std::vector<uint8_t>{};
    std::vector<uint8_t> v(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    return v;
  }
  std::string string() {
    const std::vector<uint8_t> v = blob();
    return {v.begin(), v.end()};
  }
};

}  // namespace

const TacticEntry* TacticCache::find(const std::string& layer, const std::string& precision) const {
  for (const TacticEntry& e : entries_)
    if (e.layer == layer && e.precision == precision) return &e;
  return nullptr;
}

void TacticCache::put(TacticEntry entry) {
  for (TacticEntry& e : entries_)
    if (e.layer == entry.layer && e.precision == entry.precision) {
      e = std::move(entry);
      return;
    }
  entries_.push_back(std::move(entry));
}

std::vector<uint8_t> TacticCache::serialize() const {
  std::vector<uint8_t> out(std::begin(kMagic), std::end(kMagic));
  put_u32(out, kVersion);
  put_string(out, key_.gpu);
  put_u32(out, key_.driver);
  put_u32(out, key_.cudnn);
  put_u32(out, static_cast<uint32_t>(entries_.size()));
  for (const TacticEntry& e : entries_) {
    put_string(out, e.layer);
    put_string(out, e.precision);
    put_string(out, e.tactic);
    put_bytes(out, e.plan.data(), e.plan.size());
  }
  const uint64_t sum = XXH3_64bits(out.data(), out.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(sum >> (8 * i)));
  return out;
}

TacticCache TacticCache::parse(std::span<const uint8_t> bytes, const TacticCacheKey& key, std::string* warning) {
  TacticCache cache(key);
  auto damaged = [&](const std::string& why) {
    if (warning) *warning = "tactic cache ignored: " + why;
    return TacticCache(key);
  };
  if (bytes.size() < 4 + 4 + 8 || std::memcmp(bytes.data(), kMagic, 4) != 0) return damaged("not a tactic cache file");
  const std::span<const uint8_t> body = bytes.first(bytes.size() - 8);
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) stored |= static_cast<uint64_t>(bytes[body.size() + static_cast<size_t>(i)]) << (8 * i);
  if (XXH3_64bits(body.data(), body.size()) != stored) return damaged("its checksum does not match (damaged or truncated)");
  Reader r{body, 4};
  if (r.u32() != kVersion) return damaged("written by another version of edgegan");
  TacticCacheKey found;
  found.gpu = r.string();
  found.driver = r.u32();
  found.cudnn = r.u32();
  const uint32_t count = r.u32();
  if (r.bad) return damaged("its header is cut short");
  if (!(found == key)) return damaged("made on " + found.gpu + " (driver " + std::to_string(found.driver) + ", cuDNN " + std::to_string(found.cudnn) + ")");
  for (uint32_t i = 0; i < count && !r.bad; ++i) {
    TacticEntry e;
    e.layer = r.string();
    e.precision = r.string();
    e.tactic = r.string();
    e.plan = r.blob();
    if (!r.bad) cache.entries_.push_back(std::move(e));
  }
  if (r.bad || r.at != body.size()) return damaged("its entries do not fill the file");
  return cache;
}

TacticCache TacticCache::load(const std::string& path, const TacticCacheKey& key, std::string* warning) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return TacticCache(key);
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    if (warning) *warning = "tactic cache ignored: '" + path + "' cannot be read";
    return TacticCache(key);
  }
  return parse(bytes, key, warning);
}

void TacticCache::save(const std::string& path) const {
  const std::vector<uint8_t> bytes = serialize();
  write_file_atomically(path, bytes.data(), bytes.size());
}

}  // namespace edgegan

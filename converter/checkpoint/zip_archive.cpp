#include "converter/checkpoint/zip_archive.h"

#include <zlib.h>

#include <array>
#include <algorithm>
#include <cstring>

#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEnd = 0x06054b50, kEnd64 = 0x06064b50,
                   kEnd64Locator = 0x07064b50;

// Little-endian reads that throw instead of reading past the end.
struct Bytes {
  std::string_view b;
  uint64_t u(uint64_t at, int n, const char* what) const {
    if (at > b.size() || b.size() - at < static_cast<uint64_t>(n)) throw ConvertError(std::string("zip archive truncated (") + what + ")");
    uint64_t v = 0;
    for (int k = n; k-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[static_cast<size_t>(at) + static_cast<size_t>(k)]);
    return v;
  }
};

uint32_t crc32(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (char ch : data) c = table[(c ^ static_cast<uint8_t>(ch)) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// Deflate's largest expansion: a 258-byte match costs at least 2 bits, about 1032:1.
// A declared size beyond it (plus a block's slack) cannot be real: a bomb's lie.
constexpr uint64_t kMaxDeflateRatio = 1032;
// All inflated entries together: far above any checkpoint's tensors, far below what
// would exhaust memory on a lie the ratio allows.
constexpr uint64_t kMaxInflatedBytes = uint64_t{16} << 30;

// A raw deflate stream (zip method 8) inflated to exactly `size` bytes: a stream that
// ends early, runs on past `size` or is corrupt is refused.
std::string inflate_entry(const std::string& name, std::string_view packed, uint64_t size) {
  std::string out(static_cast<size_t>(size), '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw ConvertError("zip entry '" + name + "': cannot start inflating (out of memory)");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  uint64_t in_left = packed.size(), out_left = size;
  int rc = Z_OK;
  // zlib counts in 32-bit units: feed and drain in chunks below UINT_MAX.
  constexpr uint64_t kChunk = uint64_t{1} << 30;
  while (rc == Z_OK) {
    if (z.avail_in == 0 && in_left > 0) {
      z.avail_in = static_cast<uInt>(std::min(in_left, kChunk));
      in_left -= z.avail_in;
    }
    if (z.avail_out == 0 && out_left > 0) {
      z.avail_out = static_cast<uInt>(std::min(out_left, kChunk));
      out_left -= z.avail_out;
    }
    const uInt before_in = z.avail_in, before_out = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR || (rc == Z_OK && z.avail_in == before_in && z.avail_out == before_out)) {
      // No progress: either the output is full and the stream goes on, or the input ran out.
      const bool full = z.avail_out == 0 && out_left == 0;
      inflateEnd(&z);
      throw ConvertError("zip entry '" + name + "' " + (full ? "inflates to more than its stated " + std::to_string(size) + " bytes"
                                                             : "is a deflate stream cut short"));
    }
  }
  const uint64_t produced = size - out_left - z.avail_out;
  const bool trailing = z.avail_in != 0 || in_left != 0;
  inflateEnd(&z);
  if (rc != Z_STREAM_END) throw ConvertError("zip entry '" + name + "' is not a valid deflate stream");
  if (produced != size)
    throw ConvertError("zip entry '" + name + "' inflates to " + std::to_string(produced) + " bytes, not its stated " + std::to_string(size));
  if (trailing) throw ConvertError("zip entry '" + name + "' has bytes after its deflate stream");
  return out;
}

}  // namespace

ZipArchive::ZipArchive(std::string_view bytes) {
  const Bytes r{bytes};
  // The end-of-central-directory record: the last signature within the 64 KiB comment window.
  if (bytes.size() < 22) throw ConvertError("zip archive truncated (no end of central directory)");
  size_t end = std::string_view::npos;
  const size_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (size_t at = bytes.size() - 22 + 1; at-- > lowest;)
    if (r.u(at, 4, "end record") == kEnd) {
      end = at;
      break;
    }
  if (end == std::string_view::npos) throw ConvertError("zip archive truncated (no end of central directory)");
  uint64_t count = r.u(end + 10, 2, "end record"), dir_size = r.u(end + 12, 4, "end record"), dir_at = r.u(end + 16, 4, "end record");
  if (r.u(end + 4, 2, "end record") != 0 || r.u(end + 6, 2, "end record") != 0) throw ConvertError("multi-volume zip archives are not supported");
  if (count == 0xffff || dir_size == 0xffffffffu || dir_at == 0xffffffffu) {  // zip64
    if (end < 20 || r.u(end - 20, 4, "zip64 locator") != kEnd64Locator) throw ConvertError("zip64 archive without its locator");
    const uint64_t at64 = r.u(end - 20 + 8, 8, "zip64 locator");
    if (r.u(at64, 4, "zip64 end record") != kEnd64) throw ConvertError("zip64 end record not found where its locator says");
    count = r.u(at64 + 32, 8, "zip64 end record");
    dir_size = r.u(at64 + 40, 8, "zip64 end record");
    dir_at = r.u(at64 + 48, 8, "zip64 end record");
  }
  if (dir_at > bytes.size() || dir_size > bytes.size() - dir_at) throw ConvertError("zip central directory lies past the end of the file");
  if (count > dir_size / 46) throw ConvertError("zip central directory claims more entries than it holds");
  uint64_t at = dir_at;
  for (uint64_t e = 0; e < count; ++e) {
    if (r.u(at, 4, "central directory") != kCentralHeader) throw ConvertError("zip central directory entry " + std::to_string(e) + " is malformed");
    const uint64_t flags = r.u(at + 8, 2, "central directory"), method = r.u(at + 10, 2, "central directory");
    const uint32_t crc = static_cast<uint32_t>(r.u(at + 16, 4, "central directory"));
    uint64_t packed = r.u(at + 20, 4, "central directory"), size = r.u(at + 24, 4, "central directory");
    const uint64_t name_len = r.u(at + 28, 2, "central directory"), extra_len = r.u(at + 30, 2, "central directory"),
                   comment_len = r.u(at + 32, 2, "central directory");
    uint64_t local = r.u(at + 42, 4, "central directory");
    r.u(at + 46 + name_len + extra_len + comment_len, 0, "central directory");
    const std::string name(bytes.substr(static_cast<size_t>(at + 46), static_cast<size_t>(name_len)));
    // zip64 extra field: the 64-bit values of the fields saturated above, in this order.
    for (uint64_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const uint64_t id = r.u(x, 2, "extra field"), len = r.u(x + 2, 2, "extra field");
      if (x + 4 + len > at + 46 + name_len + extra_len) throw ConvertError("zip entry '" + name + "' has a malformed extra field");
      if (id == 1) {
        uint64_t y = x + 4;
        auto take = [&](uint64_t& field, uint64_t saturated) {
          if (field != saturated) return;
          if (y + 8 > x + 4 + len) throw ConvertError("zip entry '" + name + "' has a short zip64 field");
          field = r.u(y, 8, "zip64 field");
          y += 8;
        };
        take(size, 0xffffffffu);
        take(packed, 0xffffffffu);
        take(local, 0xffffffffu);
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (flags & 1) throw ConvertError("zip entry '" + name + "' is encrypted");
    if (method != 0 && method != 8)
      throw ConvertError("zip entry '" + name + "' is compressed by method " + std::to_string(method) +
                         " (only stored and deflated entries are read): re-save the checkpoint with torch.save");
    if (method == 0 && packed != size) throw ConvertError("zip entry '" + name + "' is stored with two different sizes");
    if (r.u(local, 4, "local header") != kLocalHeader) throw ConvertError("zip entry '" + name + "' has no local header where the directory says");
    const uint64_t data = local + 30 + r.u(local + 26, 2, "local header") + r.u(local + 28, 2, "local header");
    if (data > bytes.size() || packed > bytes.size() - data)
      throw ConvertError("zip entry '" + name + "' (" + std::to_string(packed) + " bytes) lies past the end of the file");
    std::string_view content = bytes.substr(static_cast<size_t>(data), static_cast<size_t>(packed));
    if (method == 8) {
      // The stated size is checked before anything is allocated: a bomb is refused unread.
      if (size > packed * kMaxDeflateRatio + 1024)
        throw ConvertError("zip entry '" + name + "' claims " + std::to_string(size) + " bytes from " + std::to_string(packed) +
                           " deflated, more than deflate can expand (a zip bomb?)");
      if (size > kMaxInflatedBytes - inflated_bytes_)
        throw ConvertError("zip entries inflate to more than " + std::to_string(kMaxInflatedBytes >> 30) + " GiB in all (a zip bomb?)");
      inflated_bytes_ += size;
      inflated_.push_back(std::make_unique<const std::string>(inflate_entry(name, content, size)));
      content = *inflated_.back();
    }
    if (crc32(content) != crc) throw ConvertError("zip entry '" + name + "' fails its CRC-32 check (corrupt or truncated)");
    if (!entries_.emplace(name, content).second) throw ConvertError("zip entry '" + name + "' appears twice");
  }
}

std::string_view ZipArchive::entry(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw ConvertError("zip archive has no entry '" + name + "'");
  return it->second;
}

}  // namespace edgegan::converter::checkpoint

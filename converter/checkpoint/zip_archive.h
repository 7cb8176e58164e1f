// The entries of a zip archive held in memory, as PyTorch writes them (stored, not
// compressed; zip64 records when large). Reads only the central directory and each
// entry's local header; every size and offset is checked against the bytes held.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace edgegan::converter::checkpoint {

class ZipArchive {
 public:
  // Throws ConvertError (the reason, without the file's name) for a malformed or
  // truncated archive, an encrypted entry, or a compressed one (PyTorch stores).
  explicit ZipArchive(std::string_view bytes);

  // An entry's data (its CRC-32 checked); throws ConvertError when there is none.
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  std::string_view entry(const std::string& name) const;
  const std::map<std::string, std::string_view>& entries() const { return entries_; }

 private:
  std::map<std::string, std::string_view> entries_;
};

}  // namespace edgegan::converter::checkpoint

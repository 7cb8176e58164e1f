// The entries of a zip archive held in memory, as PyTorch writes them (stored, not
// compressed; zip64 records when large), or deflated, as archives re-packed by other
// tools are. Reads only the central directory and each entry's local header; every size
// and offset is checked against the bytes held, and a deflated entry's stated size
// against what deflate can expand to before anything is inflated (zip bombs).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace edgegan::converter::checkpoint {

class ZipArchive {
 public:
  // Throws ConvertError (the reason, without the file's name) for a malformed or
  // truncated archive, an encrypted entry, one compressed other than by deflate, or a
  // deflated one that does not inflate to exactly its stated size.
  explicit ZipArchive(std::string_view bytes);

  // An entry's data (its CRC-32 checked); throws ConvertError when there is none.
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  std::string_view entry(const std::string& name) const;
  const std::map<std::string, std::string_view>& entries() const { return entries_; }

 private:
  std::map<std::string, std::string_view> entries_;  // views into the bytes held or into inflated_
  std::vector<std::unique_ptr<const std::string>> inflated_;  // heap-held: the views survive moves
  uint64_t inflated_bytes_ = 0;
};

}  // namespace edgegan::converter::checkpoint

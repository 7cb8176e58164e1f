// Read-only memory map of a whole file (RAII). Weights are used in place from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace edgegan {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws Error naming the path
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace edgegan

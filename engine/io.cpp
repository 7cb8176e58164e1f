#include "engine/text_stream.h"
#include "edgegan/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>


namespace edgegan {

// ---------------------------------------------------------------- .npy
// Format: "\x93NUMPY", major, minor, header length (u16 for v1, u32 for v2/3),
// then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.

namespace {

std::string dict_value(const std::string& header, const std::string& key, const std::string& what) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(what + ": .npy header has no '" + key + "'");
  size_t p = header.find(':', k);
  if (p == std::string::npos) throw Error(what + ": malformed .npy header");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) throw Error(what + ": malformed .npy header");
  size_t end;
  if (header[p] == '\'') {
    end = header.find('\'', p + 1);
    if (end == std::string::npos) throw Error(what + ": malformed .npy header");
    return header.substr(p + 1, end - p - 1);
  }
  if (header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) throw Error(what + ": malformed .npy header");
    return header.substr(p, end - p + 1);
  }
  end = header.find_first_of(",}", p);
  if (end == std::string::npos) throw Error(what + ": malformed .npy header");
  return header.substr(p, end - p);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& what) {
  std::vector<int64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty()) continue;
    if (item.size() > 12 || !std::all_of(item.begin(), item.end(), ::isdigit)) throw Error(what + ": bad .npy shape " + text);
    shape.push_back(std::stoll(item));
  }
  return shape;
}

}  // namespace

Tensor parse_npy(const uint8_t* data, size_t size, const std::string& what) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(data, kMagic, 6) != 0) throw Error(what + ": not a .npy file");
  const int major = data[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = data[8] | (static_cast<size_t>(data[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) throw Error(what + ": truncated .npy header");
    header_len = data[8] | (static_cast<size_t>(data[9]) << 8) | (static_cast<size_t>(data[10]) << 16) | (static_cast<size_t>(data[11]) << 24);
    header_start = 12;
  } else {
    throw Error(what + ": unsupported .npy version " + std::to_string(major));
  }
  if (header_len > size - header_start) throw Error(what + ": truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(data + header_start), header_len);
  const std::string descr = dict_value(header, "descr", what);
  if (dict_value(header, "fortran_order", what).find("False") == std::string::npos)
    throw Error(what + ": Fortran-order .npy arrays are not supported (save with np.ascontiguousarray)");
  const std::string shape_text = dict_value(header, "shape", what);
  if (shape_text.empty() || shape_text.front() != '(') throw Error(what + ": bad .npy shape");

  Tensor t;
  t.shape = parse_shape(shape_text, what);
  if (t.shape.size() > 8) throw Error(what + ": .npy rank " + std::to_string(t.shape.size()) + " is too high");
  uint64_t count = 1;
  for (int64_t d : t.shape) {
    if (d < 0 || (d > 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(d))) throw Error(what + ": .npy shape is too large");
    count *= static_cast<uint64_t>(d);
  }
  size_t elem;
  if (descr == "<f4") { t.dtype = DType::kFloat32; elem = 4; }
  else if (descr == "<i8") { t.dtype = DType::kInt64; elem = 8; }
  else if (descr == "<i4") { t.dtype = DType::kInt64; elem = 4; }
  else throw Error(what + ": .npy dtype '" + descr + "' is not supported (use float32 or int64)");
  const size_t body = header_start + header_len;
  if (count * elem != size - body)
    throw Error(what + ": .npy data holds " + std::to_string(size - body) + " bytes, its shape needs " + std::to_string(count * elem));
  const uint8_t* p = data + body;
  if (count == 0) {
    // an empty array: nothing to copy (and no buffer to copy into)
  } else if (descr == "<f4") {
    t.f32.resize(count);
    std::memcpy(t.f32.data(), p, count * 4);
  } else if (descr == "<i8") {
    t.i64.resize(count);
    std::memcpy(t.i64.data(), p, count * 8);
  } else {
    t.i64.resize(count);
    for (size_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      t.i64[i] = v;
    }
  }
  return t;
}

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_npy(bytes.data(), bytes.size(), "'" + path + "'");
}

void write_npy(const std::string& path, const Tensor& t) {
  auto h = text_stream();
  h << "{'descr': '" << (t.dtype == DType::kInt64 ? "<i8" : "<f4") << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i) h << t.shape[i] << (t.shape.size() == 1 || i + 1 < t.shape.size() ? ", " : "");
  h << "), }";
  std::string header = h.str();
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (t.dtype == DType::kInt64) out.append(reinterpret_cast<const char*>(t.i64.data()), t.i64.size() * 8);
  else out.append(reinterpret_cast<const char*>(t.f32.data()), t.f32.size() * 4);
  write_file_atomically(path, out.data(), out.size());
}

// ---------------------------------------------------------------- safe writes

void ensure_not_an_input(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) return;  // does not exist yet
  for (const std::string& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw Error("refusing to write '" + output + "': it is the input file '" + input + "'");
  }
}

}  // namespace edgegan

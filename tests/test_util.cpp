#include "tests/test_util.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace edgegan::testing {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace edgegan::testing

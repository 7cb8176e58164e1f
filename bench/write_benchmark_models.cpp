// Writes the HUGE² benchmark generators (random weights, fixed seed) as ONNX files
// so scripts can convert and measure them:  write_benchmark_models DIR
#include <fstream>
#include <iostream>

#include "tests/test_models/onnx_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  for (const auto& [name, bytes] : {std::pair{"huge2_dcgan", edgegan::testing::huge2_dcgan_onnx()},
                                    std::pair{"huge2_cgan", edgegan::testing::huge2_cgan_onnx()}}) {
    std::ofstream out(dir + "/" + name + ".onnx", std::ios::binary);
    out << bytes;
    if (!out) {
      std::cerr << "cannot write " << dir << "/" << name << ".onnx\n";
      return 1;
    }
  }
  return 0;
}

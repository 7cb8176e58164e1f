#include "cli/model_loading.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace edgegan_cli {
namespace {
bool verify_checksums = true;
}

void set_verify_checksums(bool verify) { verify_checksums = verify; }

std::shared_ptr<const edgegan::Model> load_model(const std::string& path) {
  auto model = edgegan::Model::load(path, {.verify_checksums = verify_checksums});
  for (const std::string& w : model->warnings()) std::cerr << "edgegan: warning: '" << path << "': " << w << "\n";
  return model;
}

int verify(const std::vector<std::string>& paths) {
  int damaged = 0;
  for (const std::string& path : paths) {
    try {
      const auto start = std::chrono::steady_clock::now();
      auto model = edgegan::Model::load(path, {.verify_checksums = true});
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      char took[32];
      std::snprintf(took, sizeof took, "%.1f ms", ms);
      if (model->integrity() == edgegan::Integrity::kNoChecksum) {
        std::cout << path << ": no checksum (schema version " << model->schema_version()
                  << ", written before checksums); its structure is valid, damage to its weights cannot be detected\n";
      } else {
        std::cout << path << ": ok (graph and " << model->weight_bytes() << " bytes of weights match their checksums, "
                  << "structure valid; " << took << ")\n";
      }
    } catch (const std::exception& e) {
      std::string what = e.what();
      const std::string named = "'" + path + "': ";  // the load's message names the file; the line already does
      if (what.rfind(named, 0) == 0) what.erase(0, named.size());
      std::cout << path << ": DAMAGED: " << what << "\n";
      ++damaged;
    }
  }
  return damaged == 0 ? 0 : 1;
}

}  // namespace edgegan_cli

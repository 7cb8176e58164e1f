// The models the engine suites load: .egan files that make_test_models converted
// before the suites run (the CTest fixture test_models), so those suites need no
// converter. Names as make_test_models.cpp lists them, without ".egan".
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"
#include "tests/test_util.h"

namespace edgegan::testing {

inline std::filesystem::path test_models_dir() { return EDGEGAN_TEST_MODELS_DIR; }

inline std::filesystem::path test_model_path(const std::string& name) { return test_models_dir() / (name + ".egan"); }

inline std::shared_ptr<const Model> test_model(const std::string& name) { return Model::load(test_model_path(name).string()); }

inline std::vector<uint8_t> test_model_bytes(const std::string& name) {
  const std::string s = read_file(test_model_path(name));
  return {s.begin(), s.end()};
}

// Why `backend` refuses `model` ("" when it takes it): a backend that lacks an op, or
// cannot run an op's attributes, refuses the model when a session is made, naming the
// op. One-backend suites skip such models with that message rather than fail.
inline std::string backend_refusal(const std::shared_ptr<const Model>& model, Backend backend) {
  if (backend == Backend::kCpu) return "";  // the CPU backend runs every op
  try {
    Session session(model, {.backend = backend, .batch = 1});
    return "";
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("backend") == std::string::npos) throw;  // not a refusal: the suite must see it
    return what;
  }
}

}  // namespace edgegan::testing

// ONNX's own operator conformance cases (tests/conformance/cases, written by
// make_onnx_node_cases.py from the onnx wheel's case generators) through the whole
// product: converted, loaded, run on the CPU at 1 and 2 threads, and compared with
// ONNX's expected outputs within 1e-4 * max(1, max|y|).
//
// A case the engine does not support is listed in expected_refusals.txt with the
// reason; for it the test checks that the converter or the loader refuses it with a
// message (never a crash, never a wrong answer), and fails when it starts to pass,
// so the list only shrinks as ops land.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "edgegan/io.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;

fs::path conformance_dir() { return testing::source_dir() / "tests" / "conformance"; }

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(conformance_dir() / "cases"))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// case -> why it is refused
const std::map<std::string, std::string>& expected_refusals() {
  static const std::map<std::string, std::string> refusals = [] {
    std::map<std::string, std::string> m;
    std::ifstream in(conformance_dir() / "expected_refusals.txt");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      const size_t colon = line.find(':');
      m[line.substr(0, colon)] = colon == std::string::npos ? "" : line.substr(colon + 1);
    }
    return m;
  }();
  return refusals;
}

std::vector<Tensor> npy_dir(const fs::path& dir) {
  std::vector<Tensor> tensors;
  if (!fs::exists(dir)) return tensors;
  for (const auto& e : fs::directory_iterator(dir)) {
    Tensor t = read_npy(e.path().string());
    t.name = e.path().stem().string();
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// Converts, loads and runs the case at `threads`; returns the outputs in ONNX layout.
std::vector<Tensor> run_case(const std::string& name, int threads) {
  const fs::path dir = conformance_dir() / "cases" / name;
  const auto converted = converter::convert_onnx(testing::read_file(dir / "model.onnx"), name);
  const auto model = Model::from_bytes(converted.egan);
  std::vector<Tensor> inputs = npy_dir(dir / "inputs");
  for (Tensor& t : inputs)
    for (const InputInfo& info : model->inputs())
      if (info.name == t.name && info.layout == Layout::kNHWC) t = to_nhwc(t);
  if (inputs.empty()) throw Error("the case has no run-time inputs");
  Session session(model, {.threads = threads, .batch = static_cast<int>(inputs[0].shape[0])});
  std::vector<Tensor> outputs;
  for (const Tensor& out : session.run(inputs)) outputs.push_back(to_nchw(out));
  return outputs;
}

class OnnxNodeCase : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeCase, MatchesOnnxOrIsRefusedAsListed) {
  const std::string& name = GetParam();
  const auto refused = expected_refusals().find(name);
  if (refused != expected_refusals().end()) {
    std::string message;
    try {
      run_case(name, 1);
    } catch (const std::exception& e) {
      message = e.what();
    }
    EXPECT_FALSE(message.empty()) << name << " is listed in expected_refusals.txt (" << refused->second
                                  << ") but now converts and runs: remove it from the list";
    return;
  }
  const std::vector<Tensor> expected = npy_dir(conformance_dir() / "cases" / name / "outputs");
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::vector<Tensor> outputs;
    try {
      outputs = run_case(name, threads);
    } catch (const std::exception& e) {
      FAIL() << name << ": " << e.what();
    }
    ASSERT_EQ(outputs.size(), expected.size());
    for (const Tensor& out : outputs) {
      const auto want = std::find_if(expected.begin(), expected.end(), [&](const Tensor& e) { return e.name == out.name; });
      ASSERT_NE(want, expected.end()) << "no expected output named " << out.name;
      ASSERT_EQ(out.shape, want->shape) << out.name;
      float scale = 1.f;
      for (float v : want->f32) scale = std::max(scale, std::fabs(v));
      EXPECT_LE(testing::max_abs_diff(out.f32, want->f32), 1e-4f * scale) << out.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxNodeCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(OnnxConformance, EveryListedRefusalIsACase) {
  const auto names = case_names();
  for (const auto& [name, why] : expected_refusals())
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), name)) << name << " is listed but has no case directory";
}

// Maintenance: prints the line expected_refusals.txt needs for every case that is
// refused today (run by hand after an op lands:
//   conformance_test --gtest_also_run_disabled_tests --gtest_filter='*PrintRefusals'
// and review the list; a case that runs but disagrees with ONNX is a bug, not a refusal).
TEST(OnnxConformance, DISABLED_PrintRefusals) {
  for (const std::string& name : case_names()) {
    try {
      run_case(name, 1);
    } catch (const std::exception& e) {
      std::string why = e.what();
      why = why.substr(0, why.find('\n'));
      std::cout << name << ": " << why << "\n";
    }
  }
}

}  // namespace
}  // namespace edgegan

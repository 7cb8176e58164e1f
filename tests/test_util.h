// Helpers shared by the test suites.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace edgegan::testing {

inline std::filesystem::path source_dir() { return EDGEGAN_SOURCE_DIR; }
inline std::filesystem::path golden_dir() { return source_dir() / "tests" / "golden" / "cases"; }

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline int uniform_int(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  float m = 0.f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

std::string read_file(const std::filesystem::path& p);

}  // namespace edgegan::testing

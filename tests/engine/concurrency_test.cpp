// One loaded Model shared read-only by several Sessions on different threads
// at once gives exactly the results of running them one by one (run under
// ThreadSanitizer in the sanitizer build).
#include <gtest/gtest.h>

#include <thread>

#include "edgegan/edgegan.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

TEST(Concurrency, SharedModelManySessionsSameResults) {
  const auto model = Model::load((testing::source_dir() / "models" / "cgan_digits" / "generator.egan").string());
  constexpr int kThreads = 4, kRuns = 3, kBatch = 3;
  auto noise_of = [](int t) { return normal_noise(kBatch * 64, 100 + static_cast<uint64_t>(t)); };
  auto labels_of = [](int t) { return std::vector<int64_t>{t % 10, (t + 3) % 10, (t + 7) % 10}; };
  auto algo_of = [](int t) { return t % 2 ? ConvTransposeAlgo::kSplit : ConvTransposeAlgo::kCol2im; };

  std::vector<std::vector<float>> sequential(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    Session s(model, {.threads = 1 + t % 2, .batch = kBatch, .conv_transpose_algo = algo_of(t)});
    sequential[static_cast<size_t>(t)] = s.generate(noise_of(t), labels_of(t)).f32;
  }

  std::vector<std::vector<std::vector<float>>> concurrent(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        Session s(model, {.threads = 1 + t % 2, .batch = kBatch, .conv_transpose_algo = algo_of(t)});
        for (int r = 0; r < kRuns; ++r) concurrent[static_cast<size_t>(t)].push_back(s.generate(noise_of(t), labels_of(t)).f32);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[static_cast<size_t>(t)], "");
    ASSERT_EQ(concurrent[static_cast<size_t>(t)].size(), static_cast<size_t>(kRuns));
    for (const auto& out : concurrent[static_cast<size_t>(t)]) EXPECT_EQ(out, sequential[static_cast<size_t>(t)]) << "thread " << t;
  }
}

}  // namespace
}  // namespace edgegan

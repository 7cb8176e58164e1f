// One loaded Model shared read-only by several Sessions on different threads
// at once gives exactly the results of running them one by one, also while a
// Trainer tunes and saves a copy of it (run under ThreadSanitizer in the
// sanitizer build).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "edgegan/edgegan.h"
#include "edgegan/trainer.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

TEST(Concurrency, SharedModelManySessionsSameResults) {
  const auto model = Model::load((testing::source_dir() / "models" / "cgan_digits" / "generator.egan").string());
  constexpr int kThreads = 4, kRuns = 3, kBatch = 3;
  auto noise_of = [](int t) { return normal_noise(kBatch * 64, 100 + static_cast<uint64_t>(t)); };
  auto labels_of = [](int t) { return std::vector<int64_t>{t % 10, (t + 3) % 10, (t + 7) % 10}; };
  auto algo_of = [](int t) { return t % 2 ? ConvTranspose2DAlgo::kSplit : ConvTranspose2DAlgo::kCol2im; };

  std::vector<std::vector<float>> sequential(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    Session s(model, {.threads = 1 + t % 2, .batch = kBatch, .conv_transpose2d_algo = algo_of(t)});
    sequential[static_cast<size_t>(t)] = s.generate(noise_of(t), labels_of(t)).f32;
  }

  std::vector<std::vector<std::vector<float>>> concurrent(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        Session s(model, {.threads = 1 + t % 2, .batch = kBatch, .conv_transpose2d_algo = algo_of(t)});
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

// Sessions keep generating from the shared model on three threads while a fourth
// fine-tunes it with a Trainer and saves the tuned copy several times, and a fifth
// loads (and verifies) each saved copy. The sessions' images never change, the
// model's file on disk is untouched, and every saved copy is whole.
TEST(Concurrency, SessionsKeepServingWhileATrainerSavesATunedCopy) {
  const std::string source = (testing::source_dir() / "models" / "cgan_digits" / "generator.egan").string();
  const auto model = Model::load(source);
  constexpr int kSessions = 3, kBatch = 2, kSaves = 3;
  auto noise_of = [](int t) { return normal_noise(kBatch * 64, 200 + static_cast<uint64_t>(t)); };
  const std::vector<int64_t> labels = {3, 8};
  std::vector<std::vector<float>> expected(kSessions);
  for (int t = 0; t < kSessions; ++t)
    expected[static_cast<size_t>(t)] = Session(model, {.threads = 1, .batch = kBatch}).generate(noise_of(t), labels).f32;

  const auto tuned_path = std::filesystem::temp_directory_path() / ("edgegan_concurrent_tuned_" + std::to_string(::getpid()) + ".egan");
  std::atomic<int> saves_done{0};
  std::atomic<bool> training_done{false};
  std::vector<std::string> errors(kSessions + 2);
  std::vector<int> mismatches(kSessions, 0), runs(kSessions, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kSessions; ++t)
    threads.emplace_back([&, t] {
      try {
        Session s(model, {.threads = 1, .batch = kBatch});
        do {
          if (s.generate(noise_of(t), labels).f32 != expected[static_cast<size_t>(t)]) ++mismatches[static_cast<size_t>(t)];
          ++runs[static_cast<size_t>(t)];
        } while (!training_done);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(t)] = e.what();
      }
    });
  threads.emplace_back([&] {
    try {
      Trainer trainer(model, {.batch = kBatch, .threads = 1});
      Tensor noise{model->inputs()[0].name, DType::kFloat32, Layout::kRowMajor, {kBatch, 64}, noise_of(9), {}};
      Tensor label{model->inputs()[1].name, DType::kInt64, Layout::kRowMajor, {kBatch}, {}, labels};
      if (model->inputs()[0].dtype == DType::kInt64) std::swap(noise, label);
      for (int save = 0; save < kSaves; ++save) {
        const std::vector<Tensor> out = trainer.forward({noise, label});
        trainer.backward({out[0]});  // pulls the images towards zero
        trainer.step();
        trainer.save(tuned_path.string(), source);
        ++saves_done;
      }
    } catch (const std::exception& e) {
      errors[kSessions] = e.what();
    }
    training_done = true;
  });
  threads.emplace_back([&] {
    try {
      int seen = 0;
      while (seen < kSaves) {
        if (saves_done > seen) {
          seen = saves_done;
          const auto copy = Model::load(tuned_path.string());  // whole and verified, never a part
          if (copy->integrity() != Integrity::kVerified) errors[kSessions + 1] = "a saved copy was not verified";
        } else if (training_done) {
          break;
        } else {
          std::this_thread::yield();
        }
      }
    } catch (const std::exception& e) {
      errors[kSessions + 1] = e.what();
    }
  });
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  for (int t = 0; t < kSessions; ++t) {
    EXPECT_GT(runs[static_cast<size_t>(t)], 0);
    EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0) << "session " << t;
  }
  EXPECT_EQ(saves_done, kSaves);
  const auto reloaded = Model::load(source);  // the source file is untouched and still verifies
  EXPECT_EQ(Session(reloaded, {.threads = 1, .batch = kBatch}).generate(noise_of(0), labels).f32, expected[0]);
  const auto tuned = Model::load(tuned_path.string());
  EXPECT_NE(Session(tuned, {.threads = 1, .batch = kBatch}).generate(noise_of(0), labels).f32, expected[0]);
  std::filesystem::remove(tuned_path);
}

}  // namespace
}  // namespace edgegan

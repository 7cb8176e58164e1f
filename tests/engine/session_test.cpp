// Session behaviour on a real converted model: input checking, labels, batch,
// memory plan, generate(), noise determinism.
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <random>

#include "edgegan/edgegan.h"
#include "edgegan/io.h"
#include "edgegan/report.h"
#include "edgegan/trainer.h"
#include "tests/engine/mse_steps.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using edgegan::testing::golden_dir;
using edgegan::testing::read_file;

std::shared_ptr<const Model> small_cgan() {
  static auto model = testing::test_model("golden/cgan_embed_concat_small");
  return model;
}

TEST(Session, ReportsRolesFromTheConverter) {
  const auto m = small_cgan();
  EXPECT_EQ(m->noise_size(), 6);
  EXPECT_EQ(m->label_count(), 5);
  ASSERT_EQ(m->outputs().size(), 1u);
  EXPECT_EQ(m->outputs()[0].role, OutputRole::kImage);
  EXPECT_EQ(m->outputs()[0].value_min, -1.f);
  EXPECT_EQ(m->outputs()[0].value_max, 1.f);
}

TEST(Session, GenerateIsDeterministicAndBatchIndependent) {
  const auto m = small_cgan();
  Session s4(m, {.batch = 4});
  const auto noise = normal_noise(4 * 6, 42);
  EXPECT_EQ(noise, normal_noise(4 * 6, 42));
  EXPECT_NE(noise, normal_noise(4 * 6, 43));
  const std::vector<int64_t> labels = {0, 1, 2, 4};
  const Tensor a = s4.generate(noise, labels);
  EXPECT_EQ(a.f32, s4.generate(noise, labels).f32);
  // Image 2 alone equals image 2 of the batch (GEMM summation order may differ in the last bits).
  Session s1(m, {.batch = 1});
  const Tensor one = s1.generate(std::span(noise).subspan(12, 6), std::span(labels).subspan(2, 1));
  const size_t per = one.f32.size();
  const std::vector<float> batch_image(a.f32.begin() + 2 * static_cast<long>(per), a.f32.begin() + 3 * static_cast<long>(per));
  EXPECT_LE(edgegan::testing::max_abs_diff(one.f32, batch_image), 1e-6f);
  // Thread count never changes a bit.
  Session s4_1(m, {.threads = 1, .batch = 4}), s4_2(m, {.threads = 2, .batch = 4});
  EXPECT_EQ(s4_1.generate(noise, labels).f32, s4_2.generate(noise, labels).f32);
}

// `values` as input `in` at batch `batch`.
Tensor batch_tensor(const InputInfo& in, int64_t batch, std::vector<float> values) {
  std::vector<int64_t> dims = in.dims;
  dims[0] = batch;
  return Tensor{in.name, DType::kFloat32, in.layout, dims, std::move(values), {}};
}

// At batch 16 the shipped DCGAN's 8x8x128 -> 16x16x64 layer has enough windows for the
// Winograd form; at batch 1 it runs on the split sub-kernels. Each image agrees.
TEST(Session, WinogradLayersAgreeWithTheSplitSubKernels) {
  const auto m = Model::load((edgegan::testing::source_dir() / "models" / "dcgan_digits" / "generator.egan").string());
  const int64_t nz = m->noise_size();
  const auto noise = normal_noise(16 * nz, 5);
  auto noise_tensor = [&](int64_t batch, std::vector<float> values) {
    std::vector<int64_t> dims = m->inputs()[0].dims;
    dims[0] = batch;
    return Tensor{m->inputs()[0].name, DType::kFloat32, m->inputs()[0].layout, dims, std::move(values), {}};
  };
  auto winograd_ran = [](const std::vector<OpTiming>& t) {
    return std::any_of(t.begin(), t.end(), [](const OpTiming& o) { return o.kernel == "conv_transpose2d_split_winograd"; });
  };
  Session s16(m, {.threads = 2, .batch = 16}), s1(m, {.threads = 1, .batch = 1});
  std::vector<OpTiming> timings;
  const std::vector<float> batch = s16.run_profiled({noise_tensor(16, noise)}, timings)[0].f32;
  EXPECT_TRUE(winograd_ran(timings));
  for (int64_t image : {0, 7, 15}) {
    const std::vector<float> z(noise.begin() + image * nz, noise.begin() + (image + 1) * nz);
    const std::vector<float> one = s1.run_profiled({noise_tensor(1, z)}, timings)[0].f32;
    EXPECT_FALSE(winograd_ran(timings));
    const auto per = static_cast<long>(one.size());
    const std::vector<float> from_batch(batch.begin() + image * per, batch.begin() + (image + 1) * per);
    EXPECT_LE(edgegan::testing::max_abs_diff(one, from_batch), 1e-6f) << "image " << image;  // 3e-7 measured
  }
}

// A one-layer model whose transformed filters a session does not keep: at batch 16 each
// run makes what it needs of them in the workspace and runs `winograd`; a second run is
// the same, and the report counts no kept filters and a workspace of at least
// `workspace_floats`. At batch 1 `direct` runs, and each of `images` agrees with its row
// of the batch within the engine's tolerance (1e-4: 1332 terms deep, the transforms'
// rounding reaches 2.4e-5 on the scalar family).
void expect_per_run_filters_agree(const std::string& model, const std::string& winograd, const std::string& direct, uint64_t workspace_floats,
                                  std::initializer_list<int64_t> images, unsigned seed) {
  const auto m = edgegan::testing::test_model(model);
  const InputInfo& in = m->inputs()[0];
  const int64_t per = in.dims[1] * in.dims[2] * in.dims[3];
  std::mt19937 rng(seed);
  const std::vector<float> x = edgegan::testing::random_floats(rng, static_cast<size_t>(16 * per));
  Session s16(m, {.threads = 2, .batch = 16}), s1(m, {.threads = 1, .batch = 1});
  std::vector<OpTiming> timings;
  const std::vector<float> batch = s16.run_profiled({batch_tensor(in, 16, x)}, timings)[0].f32;
  ASSERT_EQ(timings.size(), 1u);
  EXPECT_EQ(timings[0].kernel, winograd);
  EXPECT_EQ(s16.run({batch_tensor(in, 16, x)})[0].f32, batch) << "a second run (filters made again) differs";
  const MemoryReport r = memory_report(m, {.threads = 2, .batch = 16});
  EXPECT_EQ(r.totals.session_weight_bytes, 0u);
  EXPECT_GE(r.layers[0].workspace_bytes, workspace_floats * 4);
  const int64_t out_per = static_cast<int64_t>(batch.size()) / 16;
  for (int64_t image : images) {
    const std::vector<float> one =
        s1.run_profiled({batch_tensor(in, 1, std::vector<float>(x.begin() + image * per, x.begin() + (image + 1) * per))}, timings)[0].f32;
    EXPECT_EQ(timings[0].kernel, direct);
    const std::vector<float> from_batch(batch.begin() + image * out_per, batch.begin() + (image + 1) * out_per);
    EXPECT_LE(edgegan::testing::max_abs_diff(one, from_batch), 1e-4f) << "image " << image;
  }
}

// A 3x3 layer whose F(4x4, 3x3) filters (3.2 MiB) are not kept, on a 12x12 map: F(6x6,
// 3x3) at batch 16 (64 windows; its workspace holds every window's 64 transformed
// elements), direct at batch 1 (4).
TEST(Session, WideWinogradLayerAgreesWithTheDirectPath) {
  expect_per_run_filters_agree("built/winograd_wide", "conv2d_winograd_f6", "conv2d_trimmed", 64u * 64 * 148, {0, 9, 15}, 5);
}

// A k4 s2 transposed layer over 2 MiB of filters: at batch 16 (1296 windows) the
// Winograd form on whole filters made in every run; at batch 1 (81 windows) its sliced
// form, no filters in the workspace, just every window's input transform. The same
// floats, image by image.
TEST(Session, TransposedWinogradWholeAndSlicedFiltersGiveTheSameFloats) {
  const auto m = edgegan::testing::test_model("built/winograd_transposed_wide");
  const InputInfo& in = m->inputs()[0];
  const int64_t per = in.dims[1] * in.dims[2] * in.dims[3];
  const uint64_t filter_bytes = 4u * 9 * 128 * 120 * 4;
  std::mt19937 rng(6);
  const std::vector<float> x = edgegan::testing::random_floats(rng, static_cast<size_t>(16 * per));
  Session s16(m, {.threads = 2, .batch = 16}), s1(m, {.threads = 1, .batch = 1});
  std::vector<OpTiming> timings;
  const std::vector<float> batch = s16.run_profiled({batch_tensor(in, 16, x)}, timings)[0].f32;
  EXPECT_EQ(timings[0].kernel, "conv_transpose2d_split_winograd");
  EXPECT_EQ(s16.run({batch_tensor(in, 16, x)})[0].f32, batch) << "a second run (filters made again) differs";
  const MemoryReport r16 = memory_report(m, {.threads = 2, .batch = 16}), r1 = memory_report(m, {.threads = 1, .batch = 1});
  EXPECT_EQ(r16.totals.session_weight_bytes, 0u);
  EXPECT_GE(r16.layers[0].workspace_bytes, filter_bytes);
  EXPECT_EQ(r1.totals.session_weight_bytes, 0u);
  EXPECT_LT(r1.layers[0].workspace_bytes, filter_bytes) << "the sliced form holds no whole filters";
  const int64_t out_per = static_cast<int64_t>(batch.size()) / 16;
  for (int64_t image : {0, 11}) {
    const std::vector<float> one =
        s1.run_profiled({batch_tensor(in, 1, std::vector<float>(x.begin() + image * per, x.begin() + (image + 1) * per))}, timings)[0].f32;
    EXPECT_EQ(timings[0].kernel, "conv_transpose2d_split_winograd");
    EXPECT_EQ(one, std::vector<float>(batch.begin() + image * out_per, batch.begin() + (image + 1) * out_per)) << "image " << image;
  }
}

// FSRCNN x3's 9x9 stride-3 head to one channel runs on the phase-lanes path, its
// weights packed once by the session (56 x 81 floats, counted in the report); every
// image of a batch of 3 is the same bits as that image alone, at 1 and at 2 threads.
TEST(Session, ThinTransposedHeadRunsOnPhaseLanesBatchAndThreadIndependent) {
  const auto m = edgegan::testing::test_model("golden/zoo_fsrcnn_x3");
  const InputInfo& in = m->inputs()[0];
  const int64_t per = in.dims[1] * in.dims[2] * in.dims[3];
  std::mt19937 rng(8);
  const std::vector<float> x = edgegan::testing::random_floats(rng, static_cast<size_t>(3 * per));
  std::vector<OpTiming> timings;
  Session s3(m, {.threads = 2, .batch = 3});
  const std::vector<float> batch = s3.run_profiled({batch_tensor(in, 3, x)}, timings)[0].f32;
  ASSERT_FALSE(timings.empty());
  EXPECT_EQ(timings.back().kernel, "conv_transpose2d_split_phase_lanes");
  const MemoryReport r = memory_report(m, {.threads = 1, .batch = 1});
  EXPECT_GE(r.totals.session_weight_bytes, 56u * 81 * 4);
  const int64_t out_per = static_cast<int64_t>(batch.size()) / 3;
  for (int threads : {1, 2}) {
    Session s1(m, {.threads = threads, .batch = 1});
    for (int64_t image : {0, 2}) {
      const std::vector<float> one = s1.run({batch_tensor(in, 1, std::vector<float>(x.begin() + image * per, x.begin() + (image + 1) * per))})[0].f32;
      EXPECT_EQ(one, std::vector<float>(batch.begin() + image * out_per, batch.begin() + (image + 1) * out_per))
          << "image " << image << ", threads " << threads;
    }
  }
}

// A session keeps at most 32 MiB of transformed Winograd filters, in graph order: of
// twelve layers of 2.7 MiB each the first eleven keep theirs, the twelfth makes its own
// in every run (in its workspace). Planning only: nothing runs.
TEST(Session, KeptWinogradFiltersStayWithinTheSessionBudget) {
  const auto m = edgegan::testing::test_model("built/winograd_budget");
  const uint64_t filters = 36u * 141 * 141 * 4;
  const MemoryReport r = memory_report(m, {.threads = 1, .batch = 1});
  ASSERT_EQ(r.layers.size(), 12u);
  for (const LayerMemory& l : r.layers) EXPECT_EQ(l.kernel, "conv2d_winograd") << "layer " << l.index;
  EXPECT_EQ(r.totals.session_weight_bytes, 11 * filters);
  EXPECT_LE(r.totals.session_weight_bytes, uint64_t{32} << 20);
  EXPECT_LT(r.layers[10].workspace_bytes, filters);
  EXPECT_GE(r.layers[11].workspace_bytes, filters);
}

// The same model run: the twelfth layer makes its filters in its workspace in every run
// (the arena's other tensors around it). A second run gives the same floats, and so does
// each image run alone at 1 thread against its row of a batch of 3 at 2 threads.
TEST(Session, WinogradFiltersMadeInEveryRunPastTheBudgetGiveStableResults) {
  const auto m = edgegan::testing::test_model("built/winograd_budget");
  const InputInfo& in = m->inputs()[0];
  const int64_t per = in.dims[1] * in.dims[2] * in.dims[3];
  std::mt19937 rng(21);
  const std::vector<float> x = edgegan::testing::random_floats(rng, static_cast<size_t>(3 * per));
  Session s3(m, {.threads = 2, .batch = 3}), s1(m, {.threads = 1, .batch = 1});
  std::vector<OpTiming> timings;
  const std::vector<float> batch = s3.run_profiled({batch_tensor(in, 3, x)}, timings)[0].f32;
  ASSERT_EQ(timings.size(), 12u);
  for (const OpTiming& t : timings) EXPECT_EQ(t.kernel, "conv2d_winograd");
  EXPECT_EQ(s3.run({batch_tensor(in, 3, x)})[0].f32, batch) << "a second run (the last layer's filters made again) differs";
  const int64_t out_per = static_cast<int64_t>(batch.size()) / 3;
  for (int64_t image = 0; image < 3; ++image) {
    const std::vector<float> one = s1.run({batch_tensor(in, 1, std::vector<float>(x.begin() + image * per, x.begin() + (image + 1) * per))})[0].f32;
    EXPECT_EQ(one, std::vector<float>(batch.begin() + image * out_per, batch.begin() + (image + 1) * out_per)) << "image " << image;
  }
}

// 3x3 stride-1 convolutions: the Winograd form (batch 4: 100 windows) against the direct
// path (batch 1: 25), image by image; then after a trainer's steps changed the weights,
// its own forward (its Winograd filters re-derived each step) against a fresh session on
// the saved model, at both batch sizes.
TEST(Session, WinogradConvolutionsAgreeWithTheDirectPath) {
  const auto m = edgegan::testing::test_model("built/winograd_block");
  const InputInfo& in = m->inputs()[0];
  const int64_t per = in.dims[1] * in.dims[2] * in.dims[3];
  std::mt19937 rng(4);
  const std::vector<float> x = edgegan::testing::random_floats(rng, static_cast<size_t>(4 * per));
  auto tensor = [&](int64_t batch, std::vector<float> values) { return batch_tensor(in, batch, std::move(values)); };
  auto winograd_count = [](const std::vector<OpTiming>& t) {
    return std::count_if(t.begin(), t.end(), [](const OpTiming& o) { return o.kernel == "conv2d_winograd"; });
  };
  auto check = [&](const std::shared_ptr<const Model>& model, const std::vector<float>* trainer_batch) {
    Session s4(model, {.threads = 2, .batch = 4}), s1(model, {.threads = 1, .batch = 1});
    std::vector<OpTiming> timings;
    const std::vector<float> batch = s4.run_profiled({tensor(4, x)}, timings)[0].f32;
    EXPECT_EQ(winograd_count(timings), 2);
    if (trainer_batch) {
      EXPECT_LE(edgegan::testing::max_abs_diff(*trainer_batch, batch), 1e-6f) << "the trainer's forward";
    }
    for (int64_t image = 0; image < 4; ++image) {
      const std::vector<float> one = s1.run_profiled({tensor(1, std::vector<float>(x.begin() + image * per, x.begin() + (image + 1) * per))}, timings)[0].f32;
      EXPECT_EQ(winograd_count(timings), 0);
      const std::vector<float> from_batch(batch.begin() + image * per, batch.begin() + (image + 1) * per);
      EXPECT_LE(edgegan::testing::max_abs_diff(one, from_batch), 2e-5f) << "image " << image;
    }
  };
  check(m, nullptr);
  Trainer trainer(m, {.batch = 4, .threads = 2, .learning_rate = 0.05f});
  edgegan::testing::mse_steps_towards(trainer, {tensor(4, x)}, 3);
  const std::vector<float> trained = trainer.forward({tensor(4, x)})[0].f32;
  namespace fs = std::filesystem;
  const fs::path saved = fs::temp_directory_path() / ("edgegan_winograd_" + std::to_string(::getpid()) + ".egan");
  trainer.save(saved.string());
  const auto tuned = Model::load(saved.string());
  const std::vector<float> before = Session(m, {.batch = 4}).run({tensor(4, x)})[0].f32;
  EXPECT_GT(edgegan::testing::max_abs_diff(before, trained), 1e-3f) << "the steps did not change the weights";
  check(tuned, &trained);
  fs::remove(saved);
}

TEST(Session, RejectsBadInputsWithClearMessages) {
  const auto m = small_cgan();
  Session s(m, {.batch = 2});
  const auto noise = normal_noise(12, 1);
  auto expect_error = [](auto&& fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::vector<int64_t> ok_labels = {1, 2};
  const std::vector<int64_t> bad_labels = {1, 5}, negative = {-1, 0}, too_few = {1};
  expect_error([&] { s.generate(noise, bad_labels); }, "outside 0..4");
  expect_error([&] { s.generate(noise, negative); }, "outside 0..4");
  expect_error([&] { s.generate(noise, too_few); }, "one label per image");
  expect_error([&] { s.generate(std::span(noise).subspan(1), ok_labels); }, "noise holds 11 values");
  Tensor z{"z", DType::kFloat32, Layout::kRowMajor, {2, 7}, std::vector<float>(14), {}};
  Tensor l{"label", DType::kInt64, Layout::kRowMajor, {2}, {}, {0, 1}};
  expect_error([&] { s.run({z, l}); }, "has shape [2, 7]");
  expect_error([&] { s.run({l}); }, "'z' is missing");
  Tensor extra = l;
  extra.name = "nope";
  expect_error([&] { s.run({extra}); }, "no input named 'nope'");
  Tensor zf{"label", DType::kFloat32, Layout::kRowMajor, {2}, {0, 1}, {}};
  z.shape = {2, 6};
  z.f32.resize(12);
  expect_error([&] { s.run({z, zf}); }, "must be int64");
  expect_error([&] { Session(m, {.batch = 0}); }, "batch 0");
  expect_error([&] { Session(m, {.threads = -1}); }, "threads -1");
  expect_error([&] { Session(m, {.backend = Backend::kCuda}); }, "CUDA");
  EXPECT_THROW(conv_transpose2d_algo_from_string("winograd"), Error);
}

TEST(Session, SplitArenaIsSmallerThanTheBaselines) {
  const auto m = small_cgan();
  Session split(m, {.batch = 4});
  Session zero(m, {.batch = 4, .conv_transpose2d_algo = ConvTranspose2DAlgo::kZeroInsert});
  Session col(m, {.batch = 4, .conv_transpose2d_algo = ConvTranspose2DAlgo::kCol2im});
  // The split path copies no weights but those of its thin layers on the phase-lanes path,
  // packed (144 bytes here), far below the baselines' full kernels.
  EXPECT_LE(split.session_weight_bytes(), 1024u);
  EXPECT_LT(split.session_weight_bytes(), zero.session_weight_bytes());
  EXPECT_GT(zero.arena_bytes(), split.arena_bytes());
  EXPECT_GT(col.arena_bytes(), split.arena_bytes());
}

// No kernel keeps large scratch on its thread's stack (the heads' rows of transposed
// input and transposed weights are planned into the arena): a session runs on a thread
// with a 64 KiB stack where the platform allows it (musl gives new threads 128 KiB),
// the shipped models' heads included, and gives what it gives on the main thread.
TEST(Session, RunsOnAThreadWithASmallStack) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const size_t kStackBytes = 1 << 20;  // instrumented frames are several times larger
#else
  // 64 KiB, or the platform's minimum where that is more (128 KiB on AArch64 glibc).
  const size_t kStackBytes = std::max<size_t>(64 * 1024, static_cast<size_t>(PTHREAD_STACK_MIN));
#endif
  for (const char* name : {"dcgan_digits", "cgan_digits"}) {
    SCOPED_TRACE(name);
    const auto model = Model::load((testing::source_dir() / "models" / name / "generator.egan").string());
    Session session(model, {.threads = 1, .batch = 3});
    const auto noise = normal_noise(static_cast<size_t>(3 * model->noise_size()), 7);
    const std::vector<int64_t> labels = model->label_count() > 0 ? std::vector<int64_t>{1, 4, 7} : std::vector<int64_t>{};
    const Tensor want = session.generate(noise, labels);

    struct Job {
      Session* session;
      const std::vector<float>* noise;
      const std::vector<int64_t>* labels;
      Tensor got;
      std::string error;
    } job{&session, &noise, &labels, {}, {}};
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, kStackBytes), 0);
    pthread_t thread;
    ASSERT_EQ(pthread_create(
                  &thread, &attr,
                  [](void* arg) -> void* {
                    auto* j = static_cast<Job*>(arg);
                    try {
                      j->got = j->session->generate(*j->noise, *j->labels);
                    } catch (const std::exception& e) {
                      j->error = e.what();
                    }
                    return nullptr;
                  },
                  &job),
              0);
    ASSERT_EQ(pthread_join(thread, nullptr), 0);
    pthread_attr_destroy(&attr);
    EXPECT_EQ(job.error, "");
    EXPECT_EQ(job.got.f32, want.f32);
  }
}

}  // namespace
}  // namespace edgegan

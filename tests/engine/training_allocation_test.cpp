// A fine-tuning loop allocates nothing after its first step: every heap allocation
// (operator new, and malloc and its relatives from edgegan's own code) is counted
// while GanStep runs the DCGAN-64 of pytorch/examples, and steps 2 and 3 must count 0.
// The same test checks that training runs the inference kernels: the Winograd form
// and the other paths a Session picks at the same batch. Its own executable (it
// replaces operator new); not under ThreadSanitizer, whose runtime owns operator new.
#include <gtest/gtest.h>

#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "edgegan/edgegan.h"
#include "edgegan/trainer.h"
#include "tests/test_models/test_models.h"

namespace {

std::atomic<long> g_allocations{0};
// EDGEGAN_TRACE_ALLOCATIONS=1: each counted allocation inside a measured step prints
// its call stack (backtrace_symbols_fd writes without allocating), to find who allocates.
std::atomic<bool> g_tracing{false};

void note_allocation() {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (g_tracing.load(std::memory_order_relaxed)) {
    void* frames[24];
    const int n = backtrace(frames, 24);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    (void)!write(STDERR_FILENO, "----\n", 5);
  }
}

void* counted(size_t n, size_t align) {
  note_allocation();
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}

}  // namespace

void* test_allocate(size_t n, size_t align, bool) { return counted(n, align); }

#include "tests/engine/replaced_operator_new.h"

// edgegan's own calls to the C allocator, redirected here by the linker (--wrap).
extern "C" {
void* __real_malloc(size_t);
void* __real_calloc(size_t, size_t);
void* __real_realloc(void*, size_t);
void* __real_aligned_alloc(size_t, size_t);
int __real_posix_memalign(void**, size_t, size_t);
void* __wrap_malloc(size_t n) {
  note_allocation();
  return __real_malloc(n);
}
void* __wrap_calloc(size_t n, size_t size) {
  note_allocation();
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t n) {
  note_allocation();
  return __real_realloc(p, n);
}
void* __wrap_aligned_alloc(size_t align, size_t n) {
  note_allocation();
  return __real_aligned_alloc(align, n);
}
int __wrap_posix_memalign(void** p, size_t align, size_t n) {
  note_allocation();
  return __real_posix_memalign(p, align, n);
}
}

namespace edgegan {
namespace {

GanBatch random_batch(int batch, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  GanBatch b;
  b.noise.resize(static_cast<size_t>(batch) * 100);
  for (float& v : b.noise) v = normal(rng);
  b.real_images.resize(static_cast<size_t>(batch) * 64 * 64 * 3);
  for (float& v : b.real_images) v = uniform(rng);
  return b;
}

TEST(TrainingAllocations, Dcgan64StepsAfterTheFirstAllocateNothing) {
  const auto g = testing::test_model("built/dcgan64_generator");
  const auto d = testing::test_model("built/dcgan64_discriminator");
  constexpr int kBatch = 4;  // the 16x16x128 layer takes the Winograd form from 256 windows: 81 per image
  // Under an emulator (the AArch64 stage, ~35 s a step) one thread count and one
  // measured step still check the NEON family's workspaces; natively, both and two.
#ifdef EDGEGAN_TESTS_EMULATED
  constexpr bool emulated = true;
#else
  constexpr bool emulated = false;
#endif
  const std::vector<int> thread_counts = emulated ? std::vector<int>{2} : std::vector<int>{1, 2};
  const int last_step = emulated ? 2 : 3;
  for (int threads : thread_counts) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Trainer tg(g, {.batch = kBatch, .threads = threads, .learning_rate = 2e-4f});
    Trainer td(d, {.batch = kBatch, .threads = threads, .learning_rate = 2e-4f});
    // Training runs the kernels inference runs, the Winograd form included.
    EXPECT_EQ(tg.kernel_names(), Session(g, {.threads = threads, .batch = kBatch}).kernel_names());
    EXPECT_EQ(td.kernel_names(), Session(d, {.threads = threads, .batch = kBatch}).kernel_names());
    const auto names = tg.kernel_names();
    std::string listed;
    for (const std::string& n : names) listed += " " + n;
    EXPECT_NE(std::find(names.begin(), names.end(), "conv_transpose2d_split_winograd"), names.end()) << listed;

    GanStep step(tg, td);
    std::mt19937 rng(7);
    const GanBatch data = random_batch(kBatch, rng);
    const uint64_t held = tg.measured_allocation_bytes() + td.measured_allocation_bytes();
    const GanLosses first = step.run(data);  // sizes the step's tensors
    EXPECT_TRUE(std::isfinite(first.generator));
    for (int s = 2; s <= last_step; ++s) {
      const long before = g_allocations.load();
      g_tracing = std::getenv("EDGEGAN_TRACE_ALLOCATIONS") != nullptr;
      const GanLosses losses = step.run(data);
      g_tracing = false;
      EXPECT_EQ(g_allocations.load() - before, 0) << "step " << s;
      EXPECT_TRUE(std::isfinite(losses.generator) && std::isfinite(losses.discriminator_real));
    }
    // Neither trainer allocated for the model after construction.
    EXPECT_EQ(tg.measured_allocation_bytes() + td.measured_allocation_bytes(), held);
  }
}

// A forward_into, backward_into and step loop on a one-input golden model allocates
// nothing after its first pass (its ops take their scratch from the plan).
void expect_steps_allocate_nothing(const std::string& golden, int batch = 3) {
  const auto m = testing::test_model("golden/" + golden);
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Trainer t(m, {.batch = batch, .threads = threads, .learning_rate = 1e-3f});
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    const InputInfo& in = m->inputs()[0];
    Tensor x{in.name, in.dtype, in.layout, in.dims, {}, {}};
    x.shape[0] = batch;
    x.f32.resize(static_cast<size_t>(x.elements()));
    for (float& v : x.f32) v = uniform(rng);
    const std::vector<Tensor> inputs = {x};
    std::vector<Tensor> outputs, input_grads;
    t.forward_into(inputs, outputs);
    std::vector<Tensor> grads = outputs;
    for (float& v : grads[0].f32) v = uniform(rng);
    t.backward_into(grads, input_grads);
    t.step();
    const long before = g_allocations.load();
    for (int s = 0; s < 2; ++s) {
      t.forward_into(inputs, outputs);
      t.backward_into(grads, input_grads);
      t.step();
    }
    EXPECT_EQ(g_allocations.load() - before, 0);
  }
}

TEST(TrainingAllocations, GroupNormStepsAfterTheFirstAllocateNothing) { expect_steps_allocate_nothing("norm_group_norm_torch"); }
// SlidingChannelConv (and the depthwise convolutions, nearest upsampling around it).
TEST(TrainingAllocations, SlidingChannelConvStepsAfterTheFirstAllocateNothing) { expect_steps_allocate_nothing("scc_dw_generator"); }
// ModulatedConv2D (its nested convolution run on tensor tables it made when built), at
// the batch StyleGAN2 was exported at.
TEST(TrainingAllocations, ModulatedConvStepsAfterTheFirstAllocateNothing) { expect_steps_allocate_nothing("family_stylegan2_nonfused", 2); }

// The counter sees allocations: a test of the test.
TEST(TrainingAllocations, TheCounterCounts) {
  const long before = g_allocations.load();
  auto* v = new std::vector<float>(100);
  void* p = std::malloc(64);  // from this file: wrapped too
  EXPECT_GE(g_allocations.load() - before, 3);
  std::free(p);
  delete v;
}

}  // namespace
}  // namespace edgegan

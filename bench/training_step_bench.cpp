// One adversarial training step (edgegan::gan_step: G forward, D real and fake
// forward/backward, D Adam step, G backward through D, G Adam step), batch 16, per
// iteration, for the DCGAN-64 of pytorch/examples and the shipped models, with the
// transposed convolutions back-propagated by the split kernels (the product) or by
// the zero-insertion baseline on the same GEMM. bench/training_step_torch.py times
// PyTorch doing the same step; bench/training_vs_pytorch.sh runs both.
//
//   build/bench/training_step_bench --dcgan64_dir=build/bench/dcgan64
//
// The DCGAN-64 models are generated, not shipped (bench/make_dcgan64_onnx.py, then
// edgegan-convert); without them those benchmarks report an error and the others run.
// Each repetition is one step (Iterations(1)): the median over repetitions is the
// number to read, as for the PyTorch script.
#include <benchmark/benchmark.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "edgegan/trainer.h"

namespace {

using namespace edgegan;

std::string g_dcgan64_dir = EDGEGAN_BENCH_DCGAN64_DIR;  // --dcgan64_dir=...
constexpr int kBatch = 16;
constexpr int kWarmupSteps = 2;
constexpr int kRepetitions = 15;

struct ModelPair {
  const char* name;
  std::string generator, discriminator;
};

std::vector<ModelPair> model_pairs() {
  const std::string shipped = std::string(EDGEGAN_SOURCE_DIR) + "/models/";
  return {{"dcgan64", g_dcgan64_dir + "/generator.egan", g_dcgan64_dir + "/discriminator.egan"},
          {"dcgan_digits", shipped + "dcgan_digits/generator.egan", shipped + "dcgan_digits/discriminator.egan"},
          {"cgan_digits", shipped + "cgan_digits/generator.egan", shipped + "cgan_digits/discriminator.egan"}};
}

int64_t per_sample(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

// Random data of the right shapes: images uniform in [-1, 1], normal noise, uniform labels.
GanBatch random_batch(const Model& g, const Model& d, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::normal_distribution<float> normal;
  GanBatch b;
  for (const InputInfo& in : g.inputs()) {
    if (in.role == InputRole::kLabel) {
      for (int i = 0; i < kBatch; ++i) b.fake_labels.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(in.label_count)));
    } else {
      b.noise.resize(static_cast<size_t>(kBatch * per_sample(in.dims)));
      for (float& v : b.noise) v = normal(rng);
    }
  }
  for (const InputInfo& in : d.inputs()) {
    if (in.role == InputRole::kLabel) {
      for (int i = 0; i < kBatch; ++i) b.real_labels.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(in.label_count)));
    } else {
      b.real_images.resize(static_cast<size_t>(kBatch * per_sample(in.dims)));
      for (float& v : b.real_images) v = uniform(rng);
    }
  }
  return b;
}

// The trainers of the configuration being timed, kept across its repetitions (they run
// back to back), warmed up once.
struct Setup {
  std::string key;
  std::unique_ptr<Trainer> g, d;
  GanBatch batch;
};
std::unique_ptr<Setup> g_setup;

void gan_step_bench(benchmark::State& state, const ModelPair& pair, ConvTransposeBackward backward) {
  const int threads = static_cast<int>(state.range(0));
  const std::string key = std::string(pair.name) + "/" + std::to_string(threads) + "/" + std::to_string(static_cast<int>(backward));
  if (!g_setup || g_setup->key != key) {
    g_setup.reset();
    if (!std::filesystem::exists(pair.generator) || !std::filesystem::exists(pair.discriminator)) {
      state.SkipWithError(("missing " + pair.generator + " or its discriminator (bench/make_dcgan64_onnx.py, then edgegan-convert)").c_str());
      for (auto _ : state) {
      }
      return;
    }
    auto s = std::make_unique<Setup>();
    s->key = key;
    const TrainerOptions options{.batch = kBatch, .threads = threads, .optimizer = Optimizer::kAdam, .learning_rate = 2e-4f,
                                 .beta1 = 0.5f, .beta2 = 0.999f, .conv_transpose_backward = backward};
    s->g = std::make_unique<Trainer>(Model::load(pair.generator), options);
    s->d = std::make_unique<Trainer>(Model::load(pair.discriminator), options);
    std::mt19937 rng(0);
    s->batch = random_batch(s->g->model(), s->d->model(), rng);
    for (int i = 0; i < kWarmupSteps; ++i) gan_step(*s->g, *s->d, s->batch);
    g_setup = std::move(s);
  }
  GanLosses losses;
  for (auto _ : state) {
    losses = gan_step(*g_setup->g, *g_setup->d, g_setup->batch);
    benchmark::DoNotOptimize(losses);
  }
  state.counters["params_M"] = static_cast<double>(g_setup->g->parameter_count() + g_setup->d->parameter_count()) * 1e-6;
}

void register_all() {
  static const std::vector<ModelPair> pairs = model_pairs();
  for (const ModelPair& p : pairs)
    for (ConvTransposeBackward b : {ConvTransposeBackward::kSplit, ConvTransposeBackward::kZeroInsert})
      benchmark::RegisterBenchmark((std::string("gan_step/") + p.name + (b == ConvTransposeBackward::kSplit ? "/split" : "/zero_insert")).c_str(),
                                   [&p, b](benchmark::State& st) { gan_step_bench(st, p, b); })
          ->ArgName("threads")
          ->Arg(1)
          ->Arg(2)
          ->Iterations(1)
          ->Repetitions(kRepetitions)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  // Our flag first (Google Benchmark rejects flags it does not know).
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    constexpr const char* kFlag = "--dcgan64_dir=";
    if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) == 0) g_dcgan64_dir = argv[i] + std::strlen(kFlag);
    else argv[kept++] = argv[i];
  }
  argc = kept;
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

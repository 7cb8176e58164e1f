// The Trainer on whole models: every parameter's and input's gradient against
// central finite differences of the loss through the whole network, a short
// training run lowering its loss, and save -> reload giving the same outputs.
#include "edgegan/trainer.h"
#include "edgegan/io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "tests/engine/mse_steps.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::golden_dir;
using testing::random_floats;
using testing::read_file;

std::shared_ptr<const Model> golden_model(const std::string& name) { return testing::test_model("golden/" + name); }

// A conv whose BatchNorm cannot fold (its output is also a graph output): covers
// ChannelAffine, a standalone activation and two outputs.
std::shared_ptr<const Model> two_output_model() { return testing::test_model("built/two_outputs"); }

std::vector<Tensor> random_inputs(const Model& m, int batch, std::mt19937& rng) {
  std::vector<Tensor> inputs;
  for (const InputInfo& in : m.inputs()) {
    Tensor t{in.name, in.dtype, in.layout, in.dims, {}, {}};
    t.shape[0] = batch;
    if (in.dtype == DType::kInt64) {
      for (int64_t i = 0; i < t.elements(); ++i) t.i64.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(in.label_count)));
    } else {
      t.f32 = random_floats(rng, static_cast<size_t>(t.elements()));
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// loss = sum over outputs of <output, weight>, in double.
double weighted_loss(const std::vector<Tensor>& outputs, const std::vector<Tensor>& weights) {
  double l = 0;
  for (size_t o = 0; o < outputs.size(); ++o)
    for (size_t i = 0; i < outputs[o].f32.size(); ++i) l += static_cast<double>(outputs[o].f32[i]) * weights[o].f32[i];
  return l;
}

// Checks `param_samples` values of every parameter and `input_samples` of every float
// input against central finite differences.
void check_gradients(const std::shared_ptr<const Model>& model, int batch, unsigned seed, size_t param_samples = 4, size_t input_samples = 6,
                     int min_checked = 11) {
  std::mt19937 rng(seed);
  Trainer trainer(model, {.batch = batch, .threads = 2});
  std::vector<Tensor> inputs = random_inputs(*model, batch, rng);
  std::vector<Tensor> outputs = trainer.forward(inputs);
  std::vector<Tensor> weights;
  for (const Tensor& o : outputs) weights.push_back(Tensor{o.name, DType::kFloat32, o.layout, o.shape, random_floats(rng, o.f32.size()), {}});
  const std::vector<Tensor> input_grads = trainer.backward(weights);
  auto loss_now = [&] { return weighted_loss(trainer.forward(inputs), weights); };
  int checked = 0, mismatches = 0;
  auto compare = [&](float& value, double analytic, const std::string& what) {
    // Small enough that no ReLU kink falls inside the step (1e-2 crossed some in the
    // small cGAN), large enough for float forward passes.
    // A normalisation (GroupNorm) puts many values next to a following ReLU's kink, so a
    // mismatch is measured again with a step 4x smaller: a kink inside the first step
    // leaves the second, a wrong gradient does not.
    constexpr float kStep = 1e-3f;
    const float saved = value;
    auto central = [&](float step) {
      value = saved + step;
      trainer.parameters_edited();
      const double up = loss_now();
      value = saved - step;
      trainer.parameters_edited();
      const double down = loss_now();
      value = saved;
      trainer.parameters_edited();
      return (up - down) / (2.0 * step);
    };
    auto off = [&](double numeric) { return std::abs(numeric - analytic) > 2e-2 * std::max(1.0, std::abs(analytic)); };
    double numeric = central(kStep);
    if (off(numeric)) numeric = central(kStep / 4);
    ++checked;
    if (off(numeric)) {
      ++mismatches;
      ADD_FAILURE_AT(__FILE__, __LINE__) << what << ": finite difference " << numeric << ", backward " << analytic;
    }
  };
  for (Parameter& p : trainer.parameters()) {
    const std::vector<float> grad = *p.gradient;  // backward() accumulated these
    for (size_t i = 0; i < p.values->size(); i += 1 + p.values->size() / param_samples) compare((*p.values)[i], grad[i], p.name + "[" + std::to_string(i) + "]");
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].dtype != DType::kFloat32) continue;
    for (size_t i = 0; i < inputs[k].f32.size(); i += 1 + inputs[k].f32.size() / input_samples)
      compare(inputs[k].f32[i], input_grads[k].f32[i], "input " + inputs[k].name + "[" + std::to_string(i) + "]");
  }
  EXPECT_GE(checked, min_checked);
  EXPECT_EQ(mismatches, 0);
}

TEST(Trainer, GeneratorGradientsMatchFiniteDifferences) { check_gradients(golden_model("cgan_embed_concat_small"), 3, 1); }
TEST(Trainer, NonSquareGeneratorGradientsMatchFiniteDifferences) { check_gradients(golden_model("g_k3s2_outpad_nonsquare"), 2, 2); }
TEST(Trainer, DiscriminatorGradientsMatchFiniteDifferences) { check_gradients(golden_model("d_conv_dilated_flatten"), 2, 3); }
TEST(Trainer, DepthwiseBlockGradientsMatchFiniteDifferences) { check_gradients(golden_model("inverted_residual_depthwise"), 2, 5); }
// (Seed 6 puts a ReLU kink of this model within 1e-4 of one sampled bias: its one-sided
// differences differ, the backward equal to the lower one.)
TEST(Trainer, GroupedConvGradientsMatchFiniteDifferences) { check_gradients(golden_model("conv_grouped_depthwise_mult2"), 2, 9); }
TEST(Trainer, GroupedConvTransposeGradientsMatchFiniteDifferences) { check_gradients(golden_model("conv_transpose2d_grouped"), 2, 7); }
TEST(Trainer, AffineAndTwoOutputGradientsMatchFiniteDifferences) { check_gradients(two_output_model(), 2, 4); }
// 1-D maps (rank-3 relayouts, Conv1d, ConvTranspose1d, BatchNorm1d as ChannelAffine) and pools.
// (A bias moves 40 pre-activations of two LeakyReLU layers at once: with some seeds one
// crosses its kink inside the 1e-3 step, which a 1e-4 step confirms; this seed has none.)
TEST(Trainer, OneDimensionalGeneratorGradientsMatchFiniteDifferences) { check_gradients(golden_model("melgan_block_conv_transpose1d_s4"), 2, 9); }
TEST(Trainer, OneDimensionalPoolDiscriminatorGradientsMatchFiniteDifferences) { check_gradients(golden_model("melgan_d_pool1d"), 2, 6); }
TEST(Trainer, PoolDiscriminatorGradientsMatchFiniteDifferences) { check_gradients(golden_model("patchgan_gap_head"), 2, 7); }
// GroupNorm: torch's GroupNorm pattern (Mul, Add and LeakyReLU folded in) between
// convolutions, and a GroupNormalization straight from the input, at more seeds than
// GoldenTraining's.
TEST(Trainer, GroupNormGradientsMatchFiniteDifferences) {
  check_gradients(golden_model("norm_group_norm_torch"), 2, 6);
  check_gradients(golden_model("norm_opset21_group_normalization"), 3, 7);
}
// Binary (run-time operands of every broadcast kind, a constant operand, x * x) and PRelu.
TEST(Trainer, BinaryGradientsMatchFiniteDifferences) { check_gradients(golden_model("binary_residual_block"), 2, 5); }
TEST(Trainer, ResidualScalingGradientsMatchFiniteDifferences) { check_gradients(golden_model("binary_esrgan_head"), 2, 6); }
// (Batch and seed such that no pre-activation lies within the step of PReLU's kink at 0:
// with seed 7 and batch 3 one did, and a bias's finite difference straddled it.)
TEST(Trainer, PReluGradientsMatchFiniteDifferences) { check_gradients(golden_model("prelu_block"), 2, 8); }
// Elu, Selu, Clip, HardSigmoid, Softplus fused into convs (gradients from the output);
// HardSwish and Mish as Elementwise ops (gradients from the input). Elu(0.7), Selu, Clip,
// HardSigmoid and HardSwish have kinks: with seed 9 one pre-activation lay within the
// step of Elu's kink at 0 (slopes 0.7 and 1) and a bias's finite difference straddled it.
TEST(Trainer, NewActivationGradientsMatchFiniteDifferences) { check_gradients(golden_model("activations_after_conv"), 2, 10); }

// Every golden case trains: its backward, through every op it uses, against finite
// differences. That covers each op's golden and every generator family of the zoo
// (tests/golden/make_zoo.py). Left out: the shipped models (their own tests train them)
// and the opset variants (the same model as another case).
std::vector<std::string> trainable_golden_cases() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(golden_dir())) {
    const std::string name = e.path().filename().string();
    const bool opset_variant = name.size() > 8 && name.compare(name.size() - 8, 6, "_opset") == 0;
    // Generators whose normalised maps put thousands of ReLU inputs per channel within any
    // float step of the kink: finite differences of their norms' parameters are noise.
    // GoldenAutograd checks their backward against PyTorch instead.
    // ProGAN and the Real-CUGAN-style U-Net likewise: an early parameter moves every
    // LeakyReLU input of the maps after it (pixel norms rescale whole pixels), and StyleGAN2's
    // (the styles and demodulation rescale whole channels of every later map). The
    // SwinIR-style network too: the finite difference of one bias of the conv before its
    // LeakyReLU came out 6% off at both steps, as a few inputs within the step of the kink
    // make it (the whole network's backward matches PyTorch's autograd in GoldenAutograd).
    // The translator with group norms and SE (ImageToImage's whole-picture statistics):
    // one bias of its transposed conv before a LeakyReLU came out 4% off at both steps.
    const bool kink_dense = name == "family_norm_se_translator" || name == "zoo_animeganv2" || name == "zoo_cyclegan_resnet" || name == "zoo_esrgan_rrdb" || name == "zoo_fast_style" ||
                            name == "family_progan" || name == "family_realcugan_2x" || name.rfind("family_stylegan2_fused", 0) == 0 ||
                            name == "family_stylegan2_nonfused" || name == "family_swinir_2x";
    if (e.is_directory() && !opset_variant && !kink_dense && !std::filesystem::exists(e.path() / "model_path.txt")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTraining, GradientsMatchFiniteDifferences) {
#ifdef EDGEGAN_TESTS_EMULATED
  GTEST_SKIP() << "hundreds of forward passes: too slow under the emulator (the native suites run it)";
#endif
  check_gradients(golden_model(GetParam()), 2, 7, 2, 3, /*min_checked=*/3);
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenTraining, ::testing::ValuesIn(trainable_golden_cases()), [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Whole generators against PyTorch autograd: a case with backward/ (the zoo, written by
// make_zoo.py) holds PyTorch's input gradients of sum(output * output_weights). They
// flow back through every op's input gradient, so a wrong composition anywhere shows;
// each op's parameter gradients are checked by GoldenTraining on its own goldens. (Finite
// differences are no check for these: thousands of ReLU inputs per channel sit within
// any float step of their kink.)
std::vector<std::string> autograd_cases() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(golden_dir()))
    if (std::filesystem::exists(e.path() / "backward")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenAutograd : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenAutograd, InputGradientsMatchPyTorch) {
  const std::filesystem::path dir = golden_dir() / GetParam();
  const auto model = golden_model(GetParam());
  std::vector<Tensor> inputs;
  for (const InputInfo& in : model->inputs()) {
    Tensor t = read_npy((dir / "inputs" / (in.name + ".npy")).string());
    t.name = in.name;
    inputs.push_back(in.layout == Layout::kNHWC ? to_nhwc(t) : t);
  }
  ASSERT_EQ(model->outputs().size(), 1u);
  Tensor weights = read_npy((dir / "backward" / "output_weights.npy").string());
  weights.name = model->outputs()[0].name;
  if (model->outputs()[0].layout == Layout::kNHWC) weights = to_nhwc(weights);
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Trainer trainer(model, {.batch = static_cast<int>(inputs[0].shape[0]), .threads = threads});
    trainer.forward(inputs);
    const std::vector<Tensor> grads = trainer.backward({weights});
    ASSERT_EQ(grads.size(), inputs.size());
    for (size_t k = 0; k < grads.size(); ++k) {
      const Tensor want = read_npy((dir / "backward" / (inputs[k].name + ".npy")).string());
      const Tensor got = to_nchw(grads[k]);
      ASSERT_EQ(got.shape, want.shape) << inputs[k].name;
      float scale = 1.f;
      for (float v : want.f32) scale = std::max(scale, std::fabs(v));
      EXPECT_LE(testing::max_abs_diff(got.f32, want.f32), 1e-4f * scale) << inputs[k].name << " (largest gradient " << scale << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenAutograd, ::testing::ValuesIn(autograd_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Trainer, AdamLowersTheLossAndTheSavedModelReloads) {
  const auto model = golden_model("cgan_embed_concat_small");
  std::mt19937 rng(9);
  Trainer trainer(model, {.batch = 4, .threads = 2, .optimizer = Optimizer::kAdam, .learning_rate = 1e-2f, .beta1 = 0.9f});
  const std::vector<Tensor> inputs = random_inputs(*model, 4, rng);
  const auto [first, last] = testing::mse_steps_towards(trainer, inputs, 30);
  EXPECT_LT(last, 0.5 * first);
  EXPECT_EQ(trainer.steps_taken(), 30);

  const auto path = std::filesystem::temp_directory_path() / ("edgegan_trainer_" + std::to_string(::getpid()) + ".egan");
  trainer.save(path.string());
  const auto tuned = Model::load(path.string());
  EXPECT_EQ(tuned->integrity(), Integrity::kVerified);  // sealed over the new weights
  Session session(tuned, {.threads = 2, .batch = 4});
  EXPECT_EQ(session.run(inputs)[0].f32, trainer.forward(inputs)[0].f32);  // same kernels, same weights: same bits
  EXPECT_EQ(tuned->ops().size(), model->ops().size());
  EXPECT_EQ(tuned->ops()[4].phases.size(), 4u);  // still split
  std::filesystem::remove(path);
}

// Saving a model from before checksums writes one that has them.
TEST(Trainer, SavingASchemaVersion1ModelAddsChecksums) {
  const auto old_model =
      Model::load((testing::source_dir() / "tests/fixtures/schema_v1/cgan_digits_generator.egan").string());
  ASSERT_EQ(old_model->integrity(), Integrity::kNoChecksum);
  Trainer trainer(old_model, {.batch = 2});
  std::mt19937 rng(3);
  const std::vector<Tensor> inputs = random_inputs(*old_model, 2, rng);
  trainer.forward(inputs);
  trainer.backward({trainer.forward(inputs)[0]});
  trainer.step();
  const auto path = std::filesystem::temp_directory_path() / ("edgegan_trainer_v1_" + std::to_string(::getpid()) + ".egan");
  trainer.save(path.string());
  const auto tuned = Model::load(path.string());
  EXPECT_EQ(tuned->schema_version(), 2u);
  EXPECT_EQ(tuned->integrity(), Integrity::kVerified);
  EXPECT_TRUE(tuned->warnings().empty());
  Session session(tuned, {.threads = 1, .batch = 2});
  EXPECT_EQ(session.run(inputs)[0].f32, trainer.forward(inputs)[0].f32);
  std::filesystem::remove(path);
}

TEST(Trainer, MisuseIsAClearError) {
  const auto model = golden_model("cgan_embed_concat_small");
  Trainer trainer(model, {.batch = 2});
  EXPECT_THROW(trainer.backward({}), Error);  // before forward
  std::mt19937 rng(1);
  auto inputs = random_inputs(*model, 2, rng);
  trainer.forward(inputs);
  EXPECT_THROW(trainer.backward({}), Error);  // wrong count
  EXPECT_THROW(trainer.backward({Tensor{"image", DType::kFloat32, Layout::kNHWC, {2}, {1.f, 2.f}, {}}}), Error);
  inputs[1].i64[0] = 99;
  EXPECT_THROW(trainer.forward(inputs), Error);  // label out of range
  EXPECT_THROW(Trainer(model, {.batch = 0}), Error);
  EXPECT_THROW(Trainer(model, {.learning_rate = 0.f}), Error);
}

// The zero-insertion backward of the transposed convolutions (the baseline) gives the
// split backward's gradients: every parameter and the inputs, within 1e-5.
TEST(Trainer, ZeroInsertionBackwardGivesTheSplitGradients) {
  for (const char* name : {"cgan_embed_concat_small", "g_k3s2_outpad_nonsquare", "conv_transpose2d_dilation2", "conv_transpose2d_asym_pads",
                           "g_stride4_k7_rect", "conv_transpose2d_output_shape_odd"}) {
    SCOPED_TRACE(name);
    const auto model = golden_model(name);
    std::mt19937 rng(11);
    const std::vector<Tensor> inputs = random_inputs(*model, 3, rng);
    Trainer split(model, {.batch = 3, .threads = 2});
    Trainer zero(model, {.batch = 3, .threads = 2, .conv_transpose_backward = ConvTransposeBackward::kZeroInsert});
    const std::vector<Tensor> out = split.forward(inputs);
    ASSERT_EQ(zero.forward(inputs)[0].f32, out[0].f32);  // the option changes only the backward pass
    std::vector<Tensor> weights;
    for (const Tensor& o : out) weights.push_back(Tensor{o.name, DType::kFloat32, o.layout, o.shape, random_floats(rng, o.f32.size()), {}});
    const std::vector<Tensor> dx_split = split.backward(weights), dx_zero = zero.backward(weights);
    std::vector<Parameter> ps = split.parameters(), pz = zero.parameters();
    ASSERT_EQ(ps.size(), pz.size());
    int conv_transpose_params = 0;
    for (size_t p = 0; p < ps.size(); ++p) {
      ASSERT_EQ(ps[p].gradient->size(), pz[p].gradient->size()) << ps[p].name;
      EXPECT_LE(testing::max_abs_diff(*ps[p].gradient, *pz[p].gradient), 1e-5f) << ps[p].name;
      if (ps[p].name.find("phase") != std::string::npos) ++conv_transpose_params;
    }
    EXPECT_GT(conv_transpose_params, 0);
    for (size_t k = 0; k < inputs.size(); ++k) EXPECT_LE(testing::max_abs_diff(dx_split[k].f32, dx_zero[k].f32), 1e-5f) << inputs[k].name;
  }
}

TEST(Trainer, FrozenOpsKeepTheirWeightsAndPassGradientsOn) {
  const auto model = golden_model("g_k3s2_outpad_nonsquare");
  std::mt19937 rng(11);
  std::vector<Tensor> inputs = random_inputs(*model, 2, rng);
  const int last = static_cast<int>(model->ops().size()) - 1;
  Trainer free_trainer(model, {.batch = 2, .threads = 1});
  Trainer frozen_trainer(model, {.batch = 2, .threads = 1, .frozen_ops = {last}});
  std::vector<Tensor> outputs = free_trainer.forward(inputs);
  frozen_trainer.forward(inputs);
  std::vector<Tensor> weights;
  for (const Tensor& o : outputs) weights.push_back(Tensor{o.name, DType::kFloat32, o.layout, o.shape, random_floats(rng, o.f32.size()), {}});
  const std::vector<Tensor> free_dx = free_trainer.backward(weights);
  const std::vector<Tensor> frozen_dx = frozen_trainer.backward(weights);
  EXPECT_EQ(free_dx[0].f32, frozen_dx[0].f32);  // freezing changes updates, not gradients
  std::vector<std::vector<float>> before;
  for (Parameter& p : frozen_trainer.parameters()) before.push_back(*p.values);
  frozen_trainer.step();
  int frozen = 0, moved = 0;
  std::vector<Parameter> after = frozen_trainer.parameters();
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].trainable, after[i].op != last) << after[i].name;
    if (after[i].op == last) {
      ++frozen;
      EXPECT_EQ(*after[i].values, before[i]) << after[i].name << " moved although its op is frozen";
    } else {
      moved += *after[i].values != before[i];
    }
  }
  EXPECT_GT(frozen, 0);
  EXPECT_GT(moved, 0);
  EXPECT_THROW(Trainer(model, {.batch = 2, .frozen_ops = {last + 1}}), Error);
}

TEST(Trainer, MemoryPlannedFromTheModelIsWhatItHolds) {
  const auto model = golden_model("cgan_embed_concat_small");
  TrainerOptions adam{.batch = 3, .threads = 1};
  TrainerOptions sgd{.batch = 3, .threads = 1, .optimizer = Optimizer::kSgd, .learning_rate = 0.01f};
  TrainerOptions momentum = sgd;
  momentum.momentum = 0.9f;
  TrainerOptions frozen = adam;
  frozen.frozen_ops = {0};
  for (const TrainerOptions& options : {adam, sgd, momentum, frozen}) {
    const TrainingMemory planned = training_memory(model, options);
    Trainer trainer(model, options);
    std::mt19937 rng(3);
    const std::vector<Tensor> outputs = trainer.forward(random_inputs(*model, 3, rng));
    trainer.backward(outputs);  // any gradient will do
    trainer.step();
    const TrainingMemory measured = trainer.memory();
    EXPECT_EQ(measured.activations, planned.activations);
    EXPECT_EQ(measured.activation_gradients, planned.activation_gradients);
    EXPECT_EQ(measured.labels, planned.labels);
    EXPECT_EQ(measured.parameters, planned.parameters);
    EXPECT_EQ(measured.parameter_gradients, planned.parameter_gradients);
    EXPECT_EQ(measured.optimizer_state, planned.optimizer_state);
    EXPECT_EQ(measured.mapped_weights, planned.mapped_weights);
    EXPECT_LE(measured.scratch, planned.scratch);
    EXPECT_GT(planned.labels, 0);  // the cGAN's label input
  }
  const TrainingMemory p_adam = training_memory(model, adam), p_sgd = training_memory(model, sgd), p_mom = training_memory(model, momentum);
  EXPECT_EQ(p_adam.optimizer_state, 2 * p_adam.parameters);
  EXPECT_EQ(p_sgd.optimizer_state, 0);
  EXPECT_EQ(p_mom.optimizer_state, p_mom.parameters);
  EXPECT_LT(training_memory(model, frozen).optimizer_state, p_adam.optimizer_state);
}

// A random d(loss)/d(output) for each output: any loss's gradient, to compare passes by.
std::vector<Tensor> random_output_gradients(const std::vector<Tensor>& outputs, std::mt19937& rng) {
  std::vector<Tensor> grads;
  for (const Tensor& o : outputs) grads.push_back(Tensor{o.name, DType::kFloat32, o.layout, o.shape, random_floats(rng, o.f32.size()), {}});
  return grads;
}

TEST(Trainer, InputGradientsLeaveParameterGradientsAlone) {
  const auto model = golden_model("cgan_embed_concat_small");
  std::mt19937 rng(21);
  const std::vector<Tensor> inputs = random_inputs(*model, 3, rng);
  Trainer full(model, {.batch = 3, .threads = 2});
  Trainer inputs_only(model, {.batch = 3, .threads = 2});
  const std::vector<Tensor> outputs = full.forward(inputs);
  inputs_only.forward(inputs);
  const std::vector<Tensor> weights = random_output_gradients(outputs, rng);
  const std::vector<Tensor> a = full.backward(weights), b = inputs_only.input_gradients(weights);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].f32, b[i].f32) << a[i].name;
  for (Parameter& p : inputs_only.parameters())
    EXPECT_TRUE(std::all_of(p.gradient->begin(), p.gradient->end(), [](float g) { return g == 0.f; })) << p.name;
}

// A discriminator (conv first, reading the image input) and a generator (transposed conv
// first, reading the noise): skipping the first op's input gradient changes no parameter's.
TEST(Trainer, BackwardParametersGivesTheParameterGradientsOfBackward) {
  for (const char* name : {"d_conv_dilated_flatten", "cgan_embed_concat_small"}) {
    SCOPED_TRACE(name);
    const auto model = golden_model(name);
    std::mt19937 rng(22);
    const std::vector<Tensor> inputs = random_inputs(*model, 3, rng);
    Trainer full(model, {.batch = 3, .threads = 2});
    Trainer params_only(model, {.batch = 3, .threads = 2});
    const std::vector<Tensor> outputs = full.forward(inputs);
    params_only.forward(inputs);
    const std::vector<Tensor> weights = random_output_gradients(outputs, rng);
    full.backward(weights);
    params_only.backward_parameters(weights);
    const std::vector<Parameter> a = full.parameters(), b = params_only.parameters();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(*a[i].gradient, *b[i].gradient) << a[i].name;
      EXPECT_TRUE(std::any_of(a[i].gradient->begin(), a[i].gradient->end(), [](float g) { return g != 0.f; })) << a[i].name;
    }
  }
}

// The shipped DCGAN file predates weight panels (each tap plain [Cin][Cout]); the same
// ONNX converted now stores column panels of 32. Both must generate, train and update
// alike: the trainer writes each weight gradient in its file's layout.
TEST(Trainer, PlainAndPanelledWeightFilesTrainAlike) {
  // Converted before weight panels (and checksums) existed, and the same ONNX converted now.
  const auto plain = Model::load((testing::source_dir() / "tests/fixtures/schema_v1/cgan_digits_generator.egan").string());
  const auto panelled = testing::test_model("shipped/cgan_digits/generator");
  ASSERT_EQ(plain->ops().size(), panelled->ops().size());
  bool any_panels = false;
  for (size_t i = 0; i < plain->ops().size(); ++i) {
    EXPECT_EQ(plain->ops()[i].weight_panel_columns, 0) << i;
    any_panels |= panelled->ops()[i].weight_panel_columns == 32;
  }
  ASSERT_TRUE(any_panels);

  std::mt19937 rng(23);
  const std::vector<Tensor> inputs = random_inputs(*plain, 2, rng);
  const TrainerOptions options{.batch = 2, .threads = 2, .optimizer = Optimizer::kSgd, .learning_rate = 0.05f};
  Trainer a(plain, options), b(panelled, options);
  auto expect_near = [](const std::vector<Tensor>& x, const std::vector<Tensor>& y, const char* when) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t o = 0; o < x.size(); ++o) {
      ASSERT_EQ(x[o].f32.size(), y[o].f32.size());
      for (size_t i = 0; i < x[o].f32.size(); ++i) ASSERT_NEAR(x[o].f32[i], y[o].f32[i], 1e-5f) << when << ", element " << i;
    }
  };
  const std::vector<Tensor> ya = a.forward(inputs), yb = b.forward(inputs);
  expect_near(ya, yb, "before training");
  const std::vector<Tensor> weights = random_output_gradients(ya, rng);
  a.backward(weights);
  b.backward(weights);
  a.step();
  b.step();
  expect_near(a.forward(inputs), b.forward(inputs), "after one SGD step");
}

TEST(BatchInputs, BindsTheFloatAndLabelInputsAndNamesMistakes) {
  const auto cgan = golden_model("cgan_embed_concat_small");
  const InputInfo* noise = nullptr;
  for (const InputInfo& in : cgan->inputs())
    if (in.dtype == DType::kFloat32) noise = &in;
  ASSERT_NE(noise, nullptr);
  const std::vector<Tensor> bound = batch_inputs(*cgan, 2, std::vector<float>(2 * noise->noise_size, 0.5f), {1, 2});
  ASSERT_EQ(bound.size(), cgan->inputs().size());
  for (const Tensor& t : bound) {
    EXPECT_EQ(t.shape[0], 2);
    if (t.dtype == DType::kInt64) EXPECT_EQ(t.i64, (std::vector<int64_t>{1, 2}));
    else EXPECT_EQ(t.f32.size(), static_cast<size_t>(2 * noise->noise_size));
  }
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { batch_inputs(*cgan, 2, {}, {1}); }).find("needs 2 labels, got 1"), std::string::npos);
  const auto d = golden_model("d_conv_dilated_flatten");
  EXPECT_NE(message([&] { batch_inputs(*d, 1, {}, {3}); }).find("takes none"), std::string::npos);
}

}  // namespace
}  // namespace edgegan

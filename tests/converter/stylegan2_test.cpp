// StyleGAN2 exported at a fixed batch (tests/golden/make_stylegan2.py, every form of the
// modulated convolution): what the converter makes of it. The goldens test checks the
// values at the export batch; here the structure (no zero insertion, no per-sample
// weights) and that the model no longer depends on the export batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <onnx/onnx_pb.h>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "edgegan/io.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/converted_model.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::golden_dir;
using testing::read_file;

class ConverterStyleGan2 : public ::testing::TestWithParam<const char*> {
 protected:
  std::string dir() const { return (golden_dir() / GetParam()).string(); }
  std::shared_ptr<const Model> model() const { return testing::converted_model(read_file(golden_dir() / GetParam() / "model.onnx")); }
};

// Up-sampling runs as phase-split transposed convolutions (the modulated 3x3 ones and
// the skip path's upfirdn2d, its [1,3,3,1] FIR the kernel): no Pad op, so no zero is
// inserted, and every convolution's weight is a constant (the batch is no conv group).
TEST_P(ConverterStyleGan2, UpSamplesWithoutZeroInsertion) {
  const auto m = model();
  int transposed = 0, fir = 0;
  for (const OpInfo& op : m->ops()) {
    EXPECT_NE(op.kind, "Pad") << op.name;
    if (op.kind == "ConvTranspose2D" || (op.kind == "ModulatedConv2D" && op.attributes.rfind("transposed ", 0) == 0)) {
      ++transposed;
      EXPECT_FALSE(op.phases.empty()) << op.name;
      if (op.attributes.find("k4x4 s2x2") != std::string::npos && op.attributes.find("groups 3") != std::string::npos) ++fir;
    }
    if (op.kind == "Conv2D" || op.kind == "ConvTranspose2D" || op.kind == "ModulatedConv2D") {
      EXPECT_EQ(op.attributes.find("groups 2"), std::string::npos) << "the batch folded into groups: " << op.name;
    }
  }
  EXPECT_EQ(transposed, 4);  // two modulated up-sampling convs, two skip up-samplings
  EXPECT_EQ(fir, 2);
}

// Every modulated convolution whose input is a run-time map is one ModulatedConv2D: the
// two up-sampling ones (stride-2 transposed, stored as 4 phases) and the two 3x3 ones
// demodulated, the first toRGB 1x1 one not; the style scaling and the demodulation
// chain (style squared, Dense of the squared sums, Sqrt, reciprocal) are gone with them.
// Not yet: the first layer, whose input is the learned constant, and the two toRGB
// convs whose skip sum is fused into them as a residual keep their decomposed form.
TEST_P(ConverterStyleGan2, ModulatedConvolutionsAreOneOpEach) {
  const auto m = model();
  int modulated = 0, demodulated = 0, up = 0, sqrt = 0;
  for (const OpInfo& op : m->ops()) {
    if (op.kind == "UnaryMath" && op.attributes.find("Sqrt") != std::string::npos) ++sqrt;
    if (op.kind != "ModulatedConv2D") continue;
    ++modulated;
    if (op.attributes.find(" demodulated") != std::string::npos) ++demodulated;
    if (op.attributes.rfind("transposed ", 0) == 0) {
      ++up;
      EXPECT_NE(op.attributes.find("k3x3 s2x2"), std::string::npos) << op.attributes;
      EXPECT_EQ(op.phases.size(), 4u) << op.name;
    }
    ASSERT_EQ(op.inputs.size(), 2u) << op.name;
    ASSERT_EQ(op.input_dims[1].size(), 2u) << "the style is [N, Cin]: " << op.name;
  }
  EXPECT_EQ(modulated, 5);
  EXPECT_EQ(demodulated, 4);
  EXPECT_EQ(up, 2);
  EXPECT_LE(sqrt, 2);  // the mapping network's pixel norm and the first layer's demodulation
}

// Exported at batch 2, run at batch 1 and 3: each sample is what PyTorch gave for it.
TEST_P(ConverterStyleGan2, RunsAtAnyBatch) {
  const auto m = model();
  const Tensor z = read_npy(dir() + "/inputs/z.npy");
  const Tensor want = read_npy(dir() + "/outputs/output.npy");
  const int64_t zdim = z.shape[1], per_sample = static_cast<int64_t>(want.f32.size()) / want.shape[0];
  float scale = 1.f;
  for (float v : want.f32) scale = std::max(scale, std::abs(v));
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    std::vector<float> zs;  // sample b is the golden's sample b % 2
    for (int64_t b = 0; b < batch; ++b) zs.insert(zs.end(), z.f32.begin() + (b % 2) * zdim, z.f32.begin() + (b % 2 + 1) * zdim);
    const Tensor in{"z", DType::kFloat32, z.layout, {batch, zdim}, zs, {}};
    Session s(m, {.threads = 1, .batch = static_cast<int>(batch)});
    const Tensor out = to_nchw(s.run({in})[0]);
    ASSERT_EQ(static_cast<int64_t>(out.f32.size()), batch * per_sample);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < per_sample; ++k)
        ASSERT_NEAR(out.f32[static_cast<size_t>(b * per_sample + k)], want.f32[static_cast<size_t>((b % 2) * per_sample + k)], 1e-4f * scale)
            << "sample " << b << " value " << k;
  }
}

// upfirdn2d in the ports' two portable forms (channels folded into the batch; cropped, the
// FIR repeated per channel at run time): each the same grouped transposed convolution,
// phase-split; then the subtraction of the two. Nothing else.
TEST(ConverterStyleGan2Upsampling, PortableUpfirdn2dFormsAreTransposedConvs) {
  const auto m = testing::converted_model(read_file(golden_dir() / "family_stylegan2_upfirdn2d" / "model.onnx"));
  ASSERT_EQ(testing::op_kinds(*m), (std::vector<std::string>{"ConvTranspose2D", "ConvTranspose2D", "Binary"}));
  for (int k : {0, 1}) {
    const OpInfo op = m->ops()[static_cast<size_t>(k)];  // ops() returns a copy
    EXPECT_NE(op.attributes.find("k4x4 s2x2"), std::string::npos) << op.attributes;
    EXPECT_NE(op.attributes.find("groups 16"), std::string::npos) << op.attributes;
    EXPECT_EQ(op.phases.size(), 4u);
  }
}

// The fused form whose declared batch is not its conv groups' (the input edited to 3):
// no pattern matches, and the conversion stops with one line naming the first node whose
// shape depends on the export batch.
TEST(ConverterStyleGan2Refusal, BatchThatIsNotTheGroupsIsRefusedInOneLine) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(read_file(golden_dir() / "family_stylegan2_fused" / "model.onnx")));
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(3);
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  const std::string error = testing::convert_error(bytes);
  EXPECT_NE(error.find("node '"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

// The pattern pass folds constants by walking producers. A hostile graph that feeds a
// node its own output, or chains more folds than any export, is no constant to it: the
// conversion ends in a one-line answer, not in a stack overflow (found by the fuzzer),
// and a reshape target whose sides overflow int64 is no constant either (UBSan).
TEST(ConverterStyleGan2Refusal, HostileConstantsUnderATileEndInOneLine) {
  for (const char* form : {"cycle", "chain", "overflowing reshape"}) {
    const std::string kind = form;
    testing::OnnxBuilder b;
    b.input("x", {1, 4}).floats("k", {1, 4}, {1, 2, 3, 4}).ints("reps", {2}, {1, 1});
    std::string constant = "k";
    if (kind == "overflowing reshape") {  // a product of the target's sides past int64
      b.ints("huge", {3}, {int64_t{1} << 40, int64_t{1} << 40, -1});
      b.node("Reshape", "reshape", {"k", "huge"}, {"reshaped"});
      constant = "reshaped";
    } else if (kind == "cycle") {
      testing::OnnxBuilder::attr(b.node("Concat", "loop", {"k", "looped"}, {"looped"}), "axis", int64_t{0});
      constant = "looped";
    } else {
      for (int i = 0; i < 50000; ++i) {
        std::string next(1, 'u');  // appended: GCC 12 warns falsely on "u" + std::to_string(i)
        next += std::to_string(i);
        testing::OnnxBuilder::attr(b.node("Cast", next, {constant}, {next}), "to", int64_t{onnx::TensorProto::FLOAT});
        constant = next;
      }
    }
    b.node("Tile", "tile", {constant, "reps"}, {"t"});
    b.node("Add", "add", {"x", "t"}, {"y"});
    b.output("y");
    // A fixed batch, as the pass looks only at graphs exported with one.
    b.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(1);
    const std::string error = testing::convert_error(b.bytes());
    EXPECT_EQ(error.find('\n'), std::string::npos) << form << ": " << error;
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, ConverterStyleGan2, ::testing::Values("family_stylegan2_fused", "family_stylegan2_nonfused", "family_stylegan2_fused_views"));

}  // namespace
}  // namespace edgegan

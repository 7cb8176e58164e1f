// PyTorch checkpoints and safetensors (converter/checkpoint/): each case of
// tests/checkpoint/cases (written by make_checkpoints.py: zip, legacy and safetensors,
// fp32/fp16/bf16, every wrapper, both ESRGAN layouts, CycleGAN's ResNet generator) converts with no options, names its
// architecture, and runs to PyTorch's output; hostile files are refused in one line,
// nothing run and nothing written; blends at t = 0 and 1 equal their ends exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "converter/checkpoint/checkpoint_reader.h"
#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "edgegan/io.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::source_dir;

fs::path checkpoint_dir() { return source_dir() / "tests" / "checkpoint"; }
const char* kMarker = "/tmp/edgegan_checkpoint_pwned";  // what the hostile pickles would create

std::vector<std::string> dirs(const fs::path& root) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

fs::path model_file(const fs::path& dir) {
  for (const char* name : {"model.pth", "model.safetensors"})
    if (fs::exists(dir / name)) return dir / name;
  return {};
}

// The model's output on `input` (NCHW), at the input's size.
Tensor run(const std::vector<uint8_t>& egan, const Tensor& input) {
  auto model = Model::at_input_size(Model::from_bytes(egan), input.shape[2], input.shape[3]);
  Session session(model, {.threads = 1, .batch = 1});
  Tensor x = to_nhwc(input);
  x.name = model->inputs()[0].name;
  return to_nchw(session.run({x})[0]);
}

// Within 1e-4 relative to max(1, max |want|).
void expect_close(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape, want.shape);
  float peak = 1.f;
  for (float v : want.f32) peak = std::max(peak, std::fabs(v));
  EXPECT_LE(testing::max_abs_diff(got.f32, want.f32), 1e-4f * peak);
}

std::string metadata(const std::vector<uint8_t>& egan, const std::string& key) {
  const auto model = Model::from_bytes(egan);  // held: metadata() refers into it
  for (const auto& [k, v] : model->metadata())
    if (k == key) return std::string(v);
  return "";
}

class CheckpointCase : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckpointCase, ConvertsWithNoOptionsAndMatchesPyTorch) {
  const fs::path dir = checkpoint_dir() / "cases" / GetParam();
  const fs::path file = model_file(dir);
  ASSERT_FALSE(file.empty());
  std::string arch = read_file(dir / "architecture.txt");
  arch.erase(arch.find_last_not_of('\n') + 1);
  const auto r = converter::convert_checkpoint(read_file(file), file.filename().string());
  EXPECT_EQ(metadata(r.egan, "architecture"), arch);
  EXPECT_NE(r.summary.find(arch), std::string::npos) << r.summary;
  // The pixel range is recorded: `upscale` and `translate` need no flags.
  std::string range = read_file(dir / "pixel_range.txt");
  range.erase(range.find_last_not_of('\n') + 1);
  EXPECT_EQ(metadata(r.egan, "input_mean"), range == "0,1" ? "0,0,0" : "0.5,0.5,0.5") << range;
  EXPECT_EQ(metadata(r.egan, "input_std"), range == "0,1" ? "1,1,1" : "0.5,0.5,0.5") << range;
  EXPECT_EQ(metadata(r.egan, "output_mean"), metadata(r.egan, "input_mean"));
  expect_close(run(r.egan, read_npy((dir / "input.npy").string())), read_npy((dir / "output.npy").string()));
  // Real-CUGAN at odd sides, which its release pads further and crops back.
  if (fs::exists(dir / "input_odd.npy"))
    expect_close(run(r.egan, read_npy((dir / "input_odd.npy").string())), read_npy((dir / "output_odd.npy").string()));
}

INSTANTIATE_TEST_SUITE_P(Cases, CheckpointCase, ::testing::ValuesIn(dirs(checkpoint_dir() / "cases")),
                         [](const auto& info) { return info.param; });

class HostileCheckpoint : public ::testing::TestWithParam<std::string> {};

// Each is refused with one line naming the file; the command in it never runs; no output file.
TEST_P(HostileCheckpoint, RefusedInOneLineNothingRunNothingWritten) {
  fs::remove(kMarker);
  const fs::path in = checkpoint_dir() / "hostile" / GetParam();
  const fs::path out = fs::temp_directory_path() / ("edgegan_hostile_" + GetParam() + ".egan");
  fs::remove(out);
  try {
    converter::convert_file(in.string(), out.string());
    FAIL() << "converted " << in;
  } catch (const converter::ConvertError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find("'" + GetParam() + "'"), std::string::npos) << m;
    std::cout << "      " << m << "\n";
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(kMarker));
}

std::vector<std::string> hostile_files() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(checkpoint_dir() / "hostile")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Files, HostileCheckpoint, ::testing::ValuesIn(hostile_files()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

// The refusals say why, not only that.
TEST(HostileCheckpoint, RefusalsNameTheReason) {
  auto refusal = [](const std::string& name) {
    try {
      converter::convert_checkpoint(read_file(checkpoint_dir() / "hostile" / name), name);
    } catch (const converter::ConvertError& e) {
      return std::string(e.what());
    }
    return std::string("(converted)");
  };
  // Protocol 2 writes Python 2's module names (__builtin__, commands): refused all the same.
  EXPECT_NE(refusal("os_system.pth").find("refers to 'posix.system'"), std::string::npos) << refusal("os_system.pth");
  EXPECT_NE(refusal("eval.pth").find("refers to '__builtin__.eval'"), std::string::npos) << refusal("eval.pth");
  EXPECT_NE(refusal("builtins_import.pth").find("refers to '__builtin__.__import__'"), std::string::npos);
  EXPECT_NE(refusal("subprocess_popen.pth").find(".Popen'"), std::string::npos);
  EXPECT_NE(refusal("subprocess_popen_legacy.pth").find(".Popen'"), std::string::npos);
  EXPECT_NE(refusal("whole_module.pth").find("__main__.Compact"), std::string::npos) << refusal("whole_module.pth");
  EXPECT_NE(refusal("storage_larger_than_archive.pth").find("needs more than"), std::string::npos);
  EXPECT_NE(refusal("offset_past_end.pth").find("reads element 25 of a storage of 16"), std::string::npos);
  EXPECT_NE(refusal("overlap.safetensors").find("overlap"), std::string::npos);
  EXPECT_NE(refusal("header_past_end.safetensors").find("runs past the end"), std::string::npos);
  EXPECT_NE(refusal("deflate_bomb.pth").find("more than deflate can expand"), std::string::npos) << refusal("deflate_bomb.pth");
  EXPECT_NE(refusal("deflate_short_size.pth").find("inflates to more than its stated"), std::string::npos) << refusal("deflate_short_size.pth");
  EXPECT_NE(refusal("deflate_long_size.pth").find("inflates to 13824 bytes, not its stated 13825"), std::string::npos) << refusal("deflate_long_size.pth");
}

// A checkpoint re-packed with deflated entries converts to the model its stored original
// converts to.
TEST(Checkpoint, DeflatedEntriesAreInflated) {
  const fs::path stored = checkpoint_dir() / "cases" / "compact_x4_params_zip";
  const auto result = converter::convert_checkpoint(read_file(checkpoint_dir() / "deflated" / "model.pth"), "model.pth");
  const Tensor x = read_npy((stored / "input.npy").string());
  expect_close(run(result.egan, x), run(converter::convert_checkpoint(read_file(stored / "model.pth"), "model.pth").egan, x));
  expect_close(run(result.egan, x), read_npy((stored / "output.npy").string()));
}

// A deflated entry cut anywhere, or with any byte of its stream flipped, is refused in one
// line (or, where a flip leaves a valid stream, caught by the CRC-32 or read), never a crash.
TEST(HostileCheckpoint, DamagedDeflateStreamsAreRefused) {
  const std::string bytes = read_file(checkpoint_dir() / "deflated" / "model.pth");
  for (size_t at = 40; at < bytes.size(); at += bytes.size() / 61) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    try {
      converter::convert_checkpoint(damaged, "flipped");
    } catch (const converter::ConvertError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

// Every prefix of a real checkpoint is refused in one line (or, for the legacy format,
// never read past its end), never a crash.
TEST(HostileCheckpoint, EveryTruncationIsRefused) {
  for (const char* c : {"compact_x2_legacy/model.pth", "compact_x4_params_zip/model.pth", "compact_x4_bf16_safetensors/model.safetensors"}) {
    const std::string bytes = read_file(checkpoint_dir() / "cases" / c);
    for (size_t n = 0; n < bytes.size(); n += std::max<size_t>(1, bytes.size() / 97)) {
      try {
        converter::convert_checkpoint(bytes.substr(0, n), "cut");
        ADD_FAILURE() << c << " cut at " << n << " converted";
      } catch (const converter::ConvertError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      }
    }
  }
}

std::vector<uint8_t> blend(float t, const std::string& other = "b.pth") {
  converter::ConvertOptions o;
  o.blend_path = (checkpoint_dir() / "blend" / other).string();
  o.blend_t = t;
  return converter::convert_checkpoint(read_file(checkpoint_dir() / "blend" / "a.pth"), "a.pth", o).egan;
}

TEST(CheckpointBlend, EndsAreExactlyTheCheckpoints) {
  const Tensor x = read_npy((checkpoint_dir() / "blend" / "input.npy").string());
  const auto a = converter::convert_checkpoint(read_file(checkpoint_dir() / "blend" / "a.pth"), "a.pth").egan;
  const auto b = converter::convert_checkpoint(read_file(checkpoint_dir() / "blend" / "b.pth"), "b.pth").egan;
  EXPECT_EQ(run(blend(0.f), x).f32, run(a, x).f32);
  EXPECT_EQ(run(blend(1.f), x).f32, run(b, x).f32);
  EXPECT_NE(run(a, x).f32, run(b, x).f32);
  EXPECT_EQ(metadata(blend(0.3f), "blend"), "b.pth:0.300000012");
}

TEST(CheckpointBlend, MatchesPyTorchsBlend) {
  expect_close(run(blend(0.3f), read_npy((checkpoint_dir() / "blend" / "input.npy").string())),
               read_npy((checkpoint_dir() / "blend" / "output_0.3.npy").string()));
}

TEST(CheckpointBlend, OtherArchitectureRefusedNamingTheTensor) {
  try {
    blend(0.5f, "other.pth");
    FAIL();
  } catch (const converter::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'body.0.weight' is [8, 3, 3, 3] in one and [4, 3, 3, 3] in the other"), std::string::npos) << e.what();
  }
  EXPECT_THROW(blend(1.5f), converter::ConvertError);
}

std::string with_length(const std::string& header);

// A safetensors file of the given tensors (zeros), written here.
std::string safetensors(const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors) {
  std::ostringstream header;
  std::string data;
  header << "{";
  bool first = true;
  for (const auto& [name, shape] : tensors) {
    size_t n = 1;
    header << (first ? "" : ",") << "\"" << name << "\":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t k = 0; k < shape.size(); ++k) {
      header << (k ? "," : "") << shape[k];
      n *= static_cast<size_t>(shape[k]);
    }
    header << "],\"data_offsets\":[" << data.size() << "," << data.size() + n * 4 << "]}";
    data.append(n * 4, '\0');
    first = false;
  }
  header << "}";
  return with_length(header.str()) + data;
}

std::string with_length(const std::string& header) {
  std::string out(8, '\0');
  for (int k = 0; k < 8; ++k) out[static_cast<size_t>(k)] = static_cast<char>((header.size() >> (8 * k)) & 0xff);
  return out + header;
}

TEST(CheckpointLayout, UnknownLayoutNamesTheClosestArchitectureAndTheFirstMisfit) {
  // A compact network with one tensor too many.
  const std::string bytes = safetensors({{"body.0.weight", {8, 3, 3, 3}}, {"body.0.bias", {8}}, {"body.1.weight", {8}},
                                         {"body.2.weight", {48, 8, 3, 3}}, {"body.2.bias", {48}}, {"extra.weight", {4}}});
  try {
    converter::convert_checkpoint(bytes, "odd.safetensors");
    FAIL();
  } catch (const converter::ConvertError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("closest known architecture is SRVGGNetCompact"), std::string::npos) << m;
    EXPECT_NE(m.find("'extra.weight'"), std::string::npos) << m;
  }
  // Without the extra tensor it is a compact x4 network with no inner convs.
  const std::string fits = safetensors({{"body.0.weight", {8, 3, 3, 3}}, {"body.0.bias", {8}}, {"body.1.weight", {8}},
                                        {"body.2.weight", {48, 8, 3, 3}}, {"body.2.bias", {48}}});
  EXPECT_EQ(metadata(converter::convert_checkpoint(fits, "ok.safetensors").egan, "architecture"),
            "SRVGGNetCompact: in 3, out 3, features 8, convs 0, scale 4, activation prelu");
  // An RRDBNet missing its last conv names RRDBNet and the key it expected.
  try {
    converter::convert_checkpoint(safetensors({{"conv_first.weight", {8, 3, 3, 3}}, {"conv_body.weight", {8, 8, 3, 3}}}), "rrdb.safetensors");
    FAIL();
  } catch (const converter::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("closest known architecture is RRDBNet"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("conv_last.weight"), std::string::npos) << e.what();
  }
}

// A SPAN layout: detected with its parameters; one with a block missing names SPAN and
// the key it expected.
TEST(CheckpointLayout, SpanFromShapesAndItsClosestArchitectureLine) {
  auto span = [](int blocks) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> t;
    auto reparam = [&](const std::string& p, int64_t cin, int64_t cout) {
      t.push_back({p + ".sk.weight", {cout, cin, 1, 1}});
      t.push_back({p + ".conv.0.weight", {2 * cin, cin, 1, 1}});
      t.push_back({p + ".conv.1.weight", {2 * cout, 2 * cin, 3, 3}});
      t.push_back({p + ".conv.2.weight", {cout, 2 * cout, 1, 1}});
      t.push_back({p + ".eval_conv.weight", {cout, cin, 3, 3}});
    };
    reparam("conv_1", 3, 4);
    for (int k = 1; k <= blocks; ++k)
      for (const char* c : {".c1_r", ".c2_r", ".c3_r"}) reparam("block_" + std::to_string(k) + c, 4, 4);
    reparam("conv_2", 4, 4);
    t.push_back({"conv_cat.weight", {4, 16, 1, 1}});
    t.push_back({"upsampler.0.weight", {12, 4, 3, 3}});
    return safetensors(t);
  };
  EXPECT_EQ(metadata(converter::convert_checkpoint(span(6), "span.safetensors").egan, "architecture"), "SPAN: in 3, out 3, features 4, blocks 6, scale 2");
  try {
    converter::convert_checkpoint(span(5), "span5.safetensors");
    FAIL();
  } catch (const converter::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("closest known architecture is SPAN"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("block_6.c1_r.sk.weight"), std::string::npos) << e.what();
  }
}

TEST(CheckpointLayout, FormatsAreRecognisedByTheirFirstBytes) {
  EXPECT_TRUE(converter::checkpoint::looks_like_checkpoint(read_file(checkpoint_dir() / "cases" / "compact_x2_legacy" / "model.pth")));
  EXPECT_TRUE(converter::checkpoint::looks_like_checkpoint(read_file(checkpoint_dir() / "cases" / "compact_x4_params_zip" / "model.pth")));
  EXPECT_TRUE(converter::checkpoint::looks_like_checkpoint(safetensors({{"a", {1}}})));
  EXPECT_FALSE(converter::checkpoint::looks_like_checkpoint(std::string("\x08\x07\x12\x0bpytorch", 12)));  // an ONNX model's first bytes
}

}  // namespace
}  // namespace edgegan

namespace edgegan {
namespace {

// A range given on the command line replaces the architecture's, once.
TEST(CheckpointLayout, CommandLineRangeOverridesTheRecordedOne) {
  converter::ConvertOptions o;
  o.metadata = {{"input_mean", "0.5,0.5,0.5"}, {"input_std", "0.5,0.5,0.5"}};
  const auto egan = converter::convert_checkpoint(read_file(checkpoint_dir() / "cases" / "compact_x4_params_zip" / "model.pth"), "m.pth", o).egan;
  const auto model = Model::from_bytes(egan);
  int means = 0;
  for (const auto& [k, v] : model->metadata()) means += k == "input_mean";
  EXPECT_EQ(means, 1);
  EXPECT_EQ(metadata(egan, "input_mean"), "0.5,0.5,0.5");
  EXPECT_EQ(metadata(egan, "output_mean"), "0,0,0");
}

}  // namespace
}  // namespace edgegan

namespace edgegan {
namespace {

// Layers with an empty dimension fit no architecture (and never hang the detection).
TEST(CheckpointLayout, EmptyLayersAreRefused) {
  EXPECT_THROW(converter::convert_checkpoint(safetensors({{"body.0.weight", {8, 0, 3, 3}}, {"body.1.weight", {8}}, {"body.2.weight", {48, 8, 3, 3}}}),
                                             "empty.safetensors"),
               converter::ConvertError);
}

}  // namespace
}  // namespace edgegan

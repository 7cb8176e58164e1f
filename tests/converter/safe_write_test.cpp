// Writes never leave a partial file and never replace an input. The write
// failure is real: RLIMIT_FSIZE makes write() fail with EFBIG part way through,
// as a full disk would.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "converter/converter.h"
#include "edgegan/io.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;
using testing::golden_dir;
using testing::read_file;

class SafeWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("edgegan_safe_write_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `body` with files limited to `limit` bytes (SIGXFSZ ignored, so write() returns EFBIG).
  template <typename Body>
  void with_file_size_limit(rlim_t limit, Body body) {
    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
    auto* previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = limit;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    body();
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
  }

  size_t files_in_dir() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator())); }

  fs::path dir_;
};

TEST_F(SafeWrite, FailedWriteLeavesTheOldFileAndNoTemporary) {
  const std::string target = (dir_ / "out.bin").string();
  const std::string old_content = "the previous, complete file";
  std::ofstream(target) << old_content;
  const std::vector<uint8_t> big(1 << 20, 0x5a);
  with_file_size_limit(64 * 1024, [&] {
    try {
      write_file_atomically(target, big.data(), big.size());
      ADD_FAILURE() << "a write over the file size limit succeeded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
    }
  });
  EXPECT_EQ(read_file(target), old_content);
  EXPECT_EQ(files_in_dir(), 1u) << "a temporary file was left behind";
}

TEST_F(SafeWrite, FailedConversionLeavesTheOldModelAndTheInputUntouched) {
  const fs::path onnx = dir_ / "g.onnx";
  fs::copy_file(golden_dir() / "g_k5_k4_leaky_sigmoid" / "model.onnx", onnx);
  const std::string input_before = read_file(onnx);
  const std::string target = (dir_ / "g.egan").string();
  std::ofstream(target) << "old model";
  with_file_size_limit(4096, [&] {
    EXPECT_THROW(converter::convert_file(onnx.string(), target), converter::ConvertError);
  });
  EXPECT_EQ(read_file(target), "old model");
  EXPECT_EQ(read_file(onnx), input_before);
  EXPECT_EQ(files_in_dir(), 2u);
  // Without the limit it succeeds, replaces the target whole, and still leaves the input alone.
  converter::convert_file(onnx.string(), target);
  EXPECT_NE(read_file(target), "old model");
  EXPECT_EQ(read_file(onnx), input_before);
}

TEST_F(SafeWrite, RefusesToReplaceAnInput) {
  const fs::path onnx = dir_ / "g.onnx";
  fs::copy_file(golden_dir() / "g_k5_k4_leaky_sigmoid" / "model.onnx", onnx);
  const std::string before = read_file(onnx);
  fs::create_hard_link(onnx, dir_ / "link.onnx");
  fs::create_symlink(onnx, dir_ / "sym.onnx");
  for (const char* target : {"g.onnx", "link.onnx", "sym.onnx"}) {
    try {
      converter::convert_file(onnx.string(), (dir_ / target).string());
      ADD_FAILURE() << target << ": converted over its own input";
    } catch (const converter::ConvertError& e) {
      EXPECT_NE(std::string(e.what()).find("refusing to write"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_file(onnx), before);
  EXPECT_THROW(ensure_not_an_input(onnx.string(), {"/nonexistent", onnx.string()}), Error);
  EXPECT_NO_THROW(ensure_not_an_input((dir_ / "new.egan").string(), {onnx.string()}));
}

}  // namespace
}  // namespace edgegan

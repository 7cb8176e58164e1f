// Writes never leave a partial file and never replace an input. The write
// failure is real: RLIMIT_FSIZE makes write() fail with EFBIG part way through,
// as a full disk would.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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


// ---- temporaries left by killed writers

// Sets a file's modification time `seconds` into the past.
void age(const fs::path& file, int seconds) {
  timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
}

// A pid that ran and is gone: a child that exited and was reaped.
pid_t finished_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

std::vector<std::string> temporaries_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(".edgegan-tmp-", 0) == 0) names.push_back(e.path().filename().string());
  return names;
}

// A writer really killed part way (SIGXFSZ's default action ends the process when
// the write crosses RLIMIT_FSIZE) leaves its temporary; once it is old enough the
// next write removes it.
TEST_F(SafeWrite, TemporaryOfAKilledWriterIsRemovedByTheNextWrite) {
  const std::string target = (dir_ / "model.egan").string();
  const pid_t child = ::fork();
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_DFL);
    rlimit small{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &small);
    const std::vector<uint8_t> big(1 << 20, 1);
    try {
      write_file_atomically(target, big.data(), big.size());
    } catch (...) {
    }
    ::_exit(0);  // not reached: SIGXFSZ kills the writer
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer was not killed";
  std::vector<std::string> left = temporaries_in(dir_);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].rfind(".edgegan-tmp-" + std::to_string(child) + "-", 0), 0u) << left[0];
  EXPECT_FALSE(fs::exists(target));

  // Fresh, it might still be a writer's in another pid namespace: kept.
  const std::vector<uint8_t> bytes(100, 7);
  write_file_atomically(target, bytes.data(), bytes.size());
  EXPECT_EQ(temporaries_in(dir_).size(), 1u);
  age(dir_ / left[0], 11 * 60);
  write_file_atomically(target, bytes.data(), bytes.size());
  EXPECT_TRUE(temporaries_in(dir_).empty());
  EXPECT_EQ(fs::file_size(target), 100u);
}

TEST_F(SafeWrite, NeverRemovesAnotherProcesssLiveTemporaryOrForeignFiles) {
  // A live writer: a child that holds its temporary open and waits to be told to go.
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const pid_t live = ::fork();
  if (live == 0) {
    ::close(go[1]);
    char c;
    while (::read(go[0], &c, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  ::close(go[0]);
  const std::vector<std::string> kept = {
      ".edgegan-tmp-" + std::to_string(live) + "-abc123",           // its pid runs
      ".edgegan-tmp-" + std::to_string(::getpid()) + "-abc123",     // this process: another thread's write
      ".edgegan-tmp-abc123",                                       // no pid in the name
      ".edgegan-tmp-" + std::to_string(finished_pid()) + "-toolong9",  // not a name we write
      "model.egan",
  };
  for (const std::string& name : kept) {
    std::ofstream(dir_ / name) << "x";
    age(dir_ / name, 3600);
  }
  const std::string stale = ".edgegan-tmp-" + std::to_string(finished_pid()) + "-zz9xy8";
  std::ofstream(dir_ / stale) << "x";
  age(dir_ / stale, 3600);

  const std::vector<uint8_t> bytes(10, 1);
  write_file_atomically((dir_ / "out.bin").string(), bytes.data(), bytes.size());
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(dir_ / name)) << name;
  EXPECT_FALSE(fs::exists(dir_ / stale));

  ASSERT_EQ(::write(go[1], "x", 1), 1);
  ::close(go[1]);
  ::waitpid(live, nullptr, 0);
}

}  // namespace
}  // namespace edgegan

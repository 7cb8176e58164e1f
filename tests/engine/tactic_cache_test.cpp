// The tactic cache file (engine/tactic_cache.h): written and read back the same; a file
// damaged anywhere (any byte flipped, cut at any length), foreign (another GPU, driver
// or cuDNN) or not one at all is ignored with a one-line warning, never trusted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/tactic_cache.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

const TacticCacheKey kKey{"NVIDIA H100 80GB HBM3", 12080, 91900};

TacticCache sample() {
  TacticCache c(kKey);
  c.put({"conv 3x3 s1 64->64 128x128 b8 fp16 bias relu", "fp16", "cudnn:eng0_k2=1", {1, 2, 3, 250}});
  c.put({"conv 4x4 s1 512->256 (phase) b1 fp32", "fp32", "own", {}});
  c.put({"conv 3x3 s1 64->64 128x128 b8 fp16 bias relu", "tf32", "own", {}});
  return c;
}

TEST(TacticCache, RoundTripsAndReplacesAnEntryOfTheSameLayerAndPrecision) {
  TacticCache c = sample();
  ASSERT_EQ(c.entries().size(), 3u);
  c.put({"conv 4x4 s1 512->256 (phase) b1 fp32", "fp32", "cudnn:eng7", {9}});
  ASSERT_EQ(c.entries().size(), 3u);
  EXPECT_EQ(c.find("conv 4x4 s1 512->256 (phase) b1 fp32", "fp32")->tactic, "cudnn:eng7");
  EXPECT_EQ(c.find("conv 4x4 s1 512->256 (phase) b1 fp32", "fp16"), nullptr);
  std::string warning;
  const TacticCache back = TacticCache::parse(c.serialize(), kKey, &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(back.entries(), c.entries());
}

TEST(TacticCache, ADamagedFileIsIgnoredWithAWarning) {
  const std::vector<uint8_t> good = sample().serialize();
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x20;
    std::string warning;
    const TacticCache c = TacticCache::parse(bad, kKey, &warning);
    EXPECT_TRUE(c.entries().empty()) << "byte " << i;
    EXPECT_EQ(warning.rfind("tactic cache ignored: ", 0), 0u) << "byte " << i;
    EXPECT_EQ(warning.find('\n'), std::string::npos);
  }
  for (size_t n = 0; n < good.size(); ++n) {
    std::string warning;
    EXPECT_TRUE(TacticCache::parse(std::span(good).first(n), kKey, &warning).entries().empty()) << "cut at " << n;
    EXPECT_FALSE(warning.empty()) << "cut at " << n;
  }
}

TEST(TacticCache, AnotherDevicesFileIsIgnored) {
  for (const TacticCacheKey& other : {TacticCacheKey{"NVIDIA H200", 12080, 91900}, TacticCacheKey{kKey.gpu, 12090, 91900},
                                      TacticCacheKey{kKey.gpu, 12080, 90300}}) {
    std::string warning;
    EXPECT_TRUE(TacticCache::parse(sample().serialize(), other, &warning).entries().empty());
    EXPECT_NE(warning.find("made on NVIDIA H100 80GB HBM3 (driver 12080, cuDNN 91900)"), std::string::npos) << warning;
  }
}

TEST(TacticCache, SavedAndLoadedFromDisk) {
  const auto dir = std::filesystem::temp_directory_path() / ("edgegan_tactics_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "tactics.bin").string();
  std::string warning;
  EXPECT_TRUE(TacticCache::load(path, kKey, &warning).entries().empty());
  EXPECT_EQ(warning, "");  // no file yet: nothing to warn about
  sample().save(path);
  EXPECT_EQ(TacticCache::load(path, kKey, &warning).entries(), sample().entries());
  EXPECT_EQ(warning, "");
  std::ofstream(path, std::ios::binary) << "not a cache";
  EXPECT_TRUE(TacticCache::load(path, kKey, &warning).entries().empty());
  EXPECT_EQ(warning, "tactic cache ignored: not a tactic cache file");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace edgegan

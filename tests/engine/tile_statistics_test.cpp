// Whole-picture statistics over tiles (engine/image/tile_statistics.h): the tiles'
// shares of a layer's map partition it exactly, and sums merged share by share equal
// the statistics of the whole map.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/image/tile_statistics.h"

namespace edgegan {
namespace {

// Origins as ImageToImage steps them: by tile - overlap, the last ending at the far edge.
std::vector<int64_t> origins(int64_t length, int64_t tile, int64_t overlap) {
  std::vector<int64_t> o{0};
  while (o.back() + tile < length) o.push_back(std::min(o.back() + tile - overlap, length - tile));
  return o;
}

TEST(TileStatistics, SharesCountEveryPositionOnce) {
  struct Case {
    int64_t length, tile, overlap, alignment;
    int64_t map_num, map_den, crop;  // map length = length x num / den + crop
  };
  for (const Case& c : {Case{208, 64, 16, 4, 1, 1, 0}, Case{208, 64, 16, 4, 1, 4, 0}, Case{212, 48, 16, 4, 1, 2, 0}, Case{64, 64, 16, 4, 1, 4, 0},
                        Case{100, 40, 8, 4, 2, 1, 0}, Case{96, 40, 16, 4, 1, 2, -4}, Case{1000, 128, 32, 4, 1, 4, 0}}) {
    SCOPED_TRACE(std::to_string(c.length) + " " + std::to_string(c.tile) + " " + std::to_string(c.map_den) + " " + std::to_string(c.crop));
    const std::vector<int64_t> o = origins(c.length, c.tile, c.overlap);
    const int64_t map_tile = c.tile * c.map_num / c.map_den + c.crop, map_whole = c.length * c.map_num / c.map_den + c.crop;
    const std::vector<AxisShare> shares = map_shares(o, c.tile, c.length, map_tile, map_whole);
    std::vector<int> counted(static_cast<size_t>(map_whole), 0);
    for (size_t i = 0; i < shares.size(); ++i) {
      EXPECT_EQ(shares[i].origin, o[i] * c.map_num / c.map_den);
      EXPECT_GE(shares[i].begin, 0);
      EXPECT_LE(shares[i].end, map_tile);
      for (int64_t p = shares[i].begin; p < shares[i].end; ++p) ++counted[static_cast<size_t>(shares[i].origin + p)];
      // Away from the picture's edges, a share keeps about half the map overlap from the tile's border.
      const int64_t map_overlap = c.overlap * c.map_num / c.map_den + c.crop;
      if (i > 0) {
        EXPECT_GE(shares[i].begin, map_overlap / 2);
      }
      if (i + 1 < shares.size()) {
        EXPECT_GE(map_tile - shares[i].end, map_overlap / 2 - 1);
      }
    }
    for (size_t p = 0; p < counted.size(); ++p) ASSERT_EQ(counted[p], 1) << "position " << p;
  }
}

TEST(TileStatistics, RefusesMapsThatDoNotFollowTheTiles) {
  // Neighbours whose maps leave a gap (a crop larger than the overlap), and a map whose
  // tile origins fall between positions.
  EXPECT_THROW(map_shares({0, 24, 56}, 40, 96, 40 / 2 - 16, 96 / 2 - 16), Error);
  EXPECT_THROW(map_shares({0, 6, 12}, 8, 20, 3, 8), Error);
}

StatisticLayer moments(int64_t channels, int64_t groups) {
  StatisticLayer l;
  l.kind = StatisticLayer::Kind::kMoments;
  l.channels = channels;
  l.groups = groups;
  return l;
}

StatisticLayer reduction(int64_t channels, int op, bool channels_too) {
  StatisticLayer l;
  l.kind = StatisticLayer::Kind::kReduce;
  l.channels = channels;
  l.reduce = op;
  l.reduces_channels = channels_too;
  return l;
}

// A 13 x 11 map of 6 channels cut into three row blocks and two column blocks, merged:
// the values of the whole map (means far from zero, as after a bias).
TEST(TileStatistics, MergedSharesGiveTheWholeMapsStatistics) {
  const int64_t H = 13, W = 11, C = 6;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> map(static_cast<size_t>(H * W * C));
  for (size_t i = 0; i < map.size(); ++i) map[i] = 40.f + static_cast<float>(i % C) + 3.f * normal(rng);
  const std::vector<std::pair<int64_t, int64_t>> rows{{0, 4}, {4, 9}, {9, 13}}, columns{{0, 6}, {6, 11}};
  auto whole = [&](const StatisticLayer& layer) {
    StatisticSums sums(layer);
    for (auto [y0, y1] : rows)
      for (auto [x0, x1] : columns) sums.add(map.data(), W, y0, y1, x0, x1);
    EXPECT_EQ(sums.positions(), H * W);
    return sums.values();
  };
  for (int64_t groups : {int64_t{6}, int64_t{2}, int64_t{1}}) {
    const std::vector<float> v = whole(moments(C, groups));
    const int64_t per_group = C / groups;
    for (int64_t g = 0; g < groups; ++g) {
      double sum = 0, sq = 0;
      const double n = static_cast<double>(H * W * per_group);
      for (int64_t p = 0; p < H * W; ++p)
        for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) sum += map[static_cast<size_t>(p * C + c)];
      const double mean = sum / n;
      for (int64_t p = 0; p < H * W; ++p)
        for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) sq += std::pow(map[static_cast<size_t>(p * C + c)] - mean, 2);
      EXPECT_NEAR(v[static_cast<size_t>(2 * g)], mean, 1e-5 * std::abs(mean));
      EXPECT_NEAR(v[static_cast<size_t>(2 * g + 1)], sq / n, 1e-5 * sq / n);
    }
  }
  const std::vector<float> mean = whole(reduction(C, schema::ReduceOperation_Mean, false));
  const std::vector<float> max = whole(reduction(C, schema::ReduceOperation_Max, false));
  const std::vector<float> all = whole(reduction(C, schema::ReduceOperation_Sum, true));
  double total = 0;
  for (int64_t c = 0; c < C; ++c) {
    double sum = 0;
    float m = -INFINITY;
    for (int64_t p = 0; p < H * W; ++p) sum += map[static_cast<size_t>(p * C + c)], m = std::max(m, map[static_cast<size_t>(p * C + c)]);
    total += sum;
    EXPECT_NEAR(mean[static_cast<size_t>(c)], sum / static_cast<double>(H * W), 1e-4);
    EXPECT_EQ(max[static_cast<size_t>(c)], m);
  }
  ASSERT_EQ(all.size(), 1u);
  EXPECT_NEAR(all[0], total, 1e-6 * total);
}

}  // namespace
}  // namespace edgegan

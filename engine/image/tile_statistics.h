// Whole-picture statistics gathered over tiles (ImageToImage's exact tiles). Each
// statistic-bearing layer's input map is partitioned among the tiles as the output
// blending partitions the picture: between two neighbours at the middle of their
// overlap, so every position is counted once, by the tile in which it lies farthest
// from a border. Each picture's sums are kept in double and merged tile by tile.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/frozen_statistics.h"

namespace edgegan {

// One tile's share of a map along one axis.
struct AxisShare {
  int64_t origin = 0;          // the tile's first map position, in the whole map
  int64_t begin = 0, end = 0;  // the positions it owns, in the tile's own coordinates
};

// Along an axis of `length` input pixels cut into tiles of `tile` at `origins`: each
// tile's share of a map `map_tile` long in a tile and `map_whole` long in the whole
// picture. A tile's map starts at origin x (map_whole - map_tile) / (length - tile).
// Throws Error where that is not a whole position, or where neighbours' maps leave a gap.
std::vector<AxisShare> map_shares(const std::vector<int64_t>& origins, int64_t tile, int64_t length, int64_t map_tile, int64_t map_whole);

// One picture's sums for one layer.
class StatisticSums {
 public:
  explicit StatisticSums(const StatisticLayer& layer);
  // Adds rows [y0, y1) x columns [x0, x1) of one sample's map (width x channels floats per row).
  void add(const float* map, int64_t width, int64_t y0, int64_t y1, int64_t x0, int64_t x1);
  int64_t positions() const { return positions_; }
  // The frozen values (StatisticLayer::floats_per_sample).
  std::vector<float> values() const;

 private:
  StatisticLayer layer_;
  int64_t positions_ = 0;
  // kMoments: per group, the mean and the sum of squared deviations (Chan's merge);
  // kReduce: per output value, the sum (Sum, Mean), the sum of squares (L2) or the max.
  std::vector<double> mean_, m2_, acc_;
  std::vector<double> block_;  // scratch of one block's per-group sums
};

}  // namespace edgegan

#include "engine/image/tile_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace edgegan {

std::vector<AxisShare> map_shares(const std::vector<int64_t>& origins, int64_t tile, int64_t length, int64_t map_tile, int64_t map_whole) {
  const size_t n = origins.size();
  std::vector<AxisShare> shares(n);
  if (n == 1) {
    if (map_tile != map_whole) throw Error("internal: one tile covers the picture, yet its map is " + std::to_string(map_tile) + " long, not " + std::to_string(map_whole));
    shares[0] = {0, 0, map_tile};
    return shares;
  }
  const int64_t dm = map_whole - map_tile, dl = length - tile;
  for (size_t i = 0; i < n; ++i) {
    if ((origins[i] * dm) % dl != 0)
      throw Error("a layer's map of " + std::to_string(map_tile) + " positions per " + std::to_string(tile) +
                  "-pixel tile does not follow the tiles' origins; whole-picture statistics need another tile size");
    shares[i].origin = origins[i] * dm / dl;
  }
  // Tile i owns [b_i, b_{i+1}) of the whole map, b_i the middle of its overlap with tile i - 1.
  std::vector<int64_t> bounds(n + 1, 0);
  bounds[n] = map_whole;
  for (size_t i = 1; i < n; ++i) {
    const int64_t overlap = shares[i - 1].origin + map_tile - shares[i].origin;
    if (overlap < 0)
      throw Error("neighbouring tiles' maps leave a gap of " + std::to_string(-overlap) +
                  " positions at a layer with whole-map statistics; use a larger overlap");
    bounds[i] = shares[i].origin + overlap / 2;
  }
  for (size_t i = 0; i < n; ++i) {
    shares[i].begin = bounds[i] - shares[i].origin;
    shares[i].end = bounds[i + 1] - shares[i].origin;
    if (shares[i].begin < 0 || shares[i].end > map_tile || shares[i].begin > shares[i].end)
      throw Error("internal: tile " + std::to_string(i) + "'s share of a map is outside it");
  }
  return shares;
}

StatisticSums::StatisticSums(const StatisticLayer& layer) : layer_(layer) {
  if (layer.kind == StatisticLayer::Kind::kMoments) {
    mean_.assign(static_cast<size_t>(layer.groups), 0.0);
    m2_.assign(static_cast<size_t>(layer.groups), 0.0);
    block_.assign(static_cast<size_t>(layer.groups), 0.0);
  } else {
    const bool max = layer.reduce == schema::ReduceOperation_Max;
    acc_.assign(static_cast<size_t>(layer.floats_per_sample()), max ? -std::numeric_limits<double>::infinity() : 0.0);
  }
}

void StatisticSums::add(const float* map, int64_t width, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  const int64_t C = layer_.channels, count = (y1 - y0) * (x1 - x0);
  if (count <= 0) return;
  if (layer_.kind == StatisticLayer::Kind::kReduce) {
    const int op = layer_.reduce;
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t x = x0; x < x1; ++x) {
        const float* p = map + (y * width + x) * C;
        for (int64_t c = 0; c < C; ++c) {
          double& a = acc_[layer_.reduces_channels ? 0 : static_cast<size_t>(c)];
          const double v = p[c];
          if (op == schema::ReduceOperation_Max) a = std::max(a, v);
          else if (op == schema::ReduceOperation_L2) a += v * v;
          else a += v;
        }
      }
    positions_ += count;
    return;
  }
  // The block's mean and squared deviations per group (two passes in double), merged
  // with what came before by Chan's formula.
  const int64_t G = layer_.groups, per_group = C / G;
  const double block_count = static_cast<double>(count * per_group);
  std::fill(block_.begin(), block_.end(), 0.0);
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) {
      const float* p = map + (y * width + x) * C;
      for (int64_t c = 0; c < C; ++c) block_[static_cast<size_t>(c / per_group)] += p[c];
    }
  for (double& s : block_) s /= block_count;  // now the block's means
  std::vector<double> m2(static_cast<size_t>(G), 0.0);
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) {
      const float* p = map + (y * width + x) * C;
      for (int64_t c = 0; c < C; ++c) {
        const double d = p[c] - block_[static_cast<size_t>(c / per_group)];
        m2[static_cast<size_t>(c / per_group)] += d * d;
      }
    }
  const double before = static_cast<double>(positions_ * per_group), total = before + block_count;
  for (size_t g = 0; g < static_cast<size_t>(G); ++g) {
    const double delta = block_[g] - mean_[g];
    mean_[g] += delta * block_count / total;
    m2_[g] += m2[g] + delta * delta * before * block_count / total;
  }
  positions_ += count;
}

std::vector<float> StatisticSums::values() const {
  std::vector<float> v(static_cast<size_t>(layer_.floats_per_sample()));
  if (positions_ == 0) throw Error("internal: no position of a layer's map was counted");
  if (layer_.kind == StatisticLayer::Kind::kMoments) {
    const double n = static_cast<double>(positions_ * (layer_.channels / layer_.groups));
    for (size_t g = 0; g < mean_.size(); ++g) {
      v[2 * g] = static_cast<float>(mean_[g]);
      v[2 * g + 1] = static_cast<float>(m2_[g] / n);
    }
    return v;
  }
  const double n = static_cast<double>(positions_ * (layer_.reduces_channels ? layer_.channels : 1));
  for (size_t k = 0; k < acc_.size(); ++k) {
    const double a = acc_[k];
    v[k] = static_cast<float>(layer_.reduce == schema::ReduceOperation_Mean ? a / n : layer_.reduce == schema::ReduceOperation_L2 ? std::sqrt(a) : a);
  }
  return v;
}

}  // namespace edgegan

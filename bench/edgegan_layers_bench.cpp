// edgegan's layers timed the way bench/peers.sh times every peer: at least 3 calls and
// --warmup-s seconds untimed, then --repeat calls timed one by one, and the median of
// those single calls. (Google Benchmark reports means over many calls per repetition,
// which count every interruption the single-call median of the peers leaves out.)
//   bench/peer_layers.py --list | OMP_WAIT_POLICY=passive build/bench/edgegan_layers_bench --threads 2 --repeat 30
// Layers on stdin as "name in cin cout kernel" lines (stride 2, output twice the input),
// batch 1, the split algorithm and zero insertion on the same micro-kernels, set up as a
// session runs them (bench/conv_transpose2d_layer_fixture.h). One JSON object per (layer, algo), in
// the shape of bench/peer_layers.py's records. The wait policy is libgomp's, from
// OMP_WAIT_POLICY, and is reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench/conv_transpose2d_layer_fixture.h"
#include "kernels_cpu/common/cpu_isa.h"

namespace {

using edgegan::bench::Algo;
using edgegan::bench::ConvTranspose2DLayerFixture;
using edgegan::bench::LayerSpec;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double median_ms(ConvTranspose2DLayerFixture& f, int threads, int repeat, double warmup_s) {
  const auto warm = Clock::now();
  for (int n = 0; n < 3 || seconds_since(warm) < warmup_s; ++n) f.run(threads);
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = Clock::now();
    f.run(threads);
    ms.push_back(seconds_since(t0) * 1e3);
  }
  return median(ms);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeat = 30;
  double warmup_s = 0.2;
  bool zero_insert = true, ok = true;
  for (int i = 1; i < argc && ok; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--threads") && has_value) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && has_value) repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup-s") && has_value) warmup_s = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--split-only")) zero_insert = false;
    else ok = false;
  }
  if (!ok || threads < 1 || threads > 1024 || repeat < 1 || !(warmup_s >= 0)) {
    std::fprintf(stderr, "usage: %s [--threads T] [--repeat R] [--warmup-s S] [--split-only] < layers\n", argv[0]);
    return 2;
  }
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* wait = policy && !std::strcmp(policy, "passive") ? "passive" : "default";
  std::string name;
  LayerSpec l{};
  while (std::cin >> name >> l.in >> l.cin >> l.cout >> l.kernel) {
    if (l.in < 1 || l.cin < 1 || l.cout < 1 || l.kernel < 2 || l.kernel > 16) {
      std::fprintf(stderr, "edgegan_layers_bench: layer '%s' has a bad shape (in %d, cin %d, cout %d, kernel %d)\n", name.c_str(), l.in,
                   l.cin, l.cout, l.kernel);
      return 2;
    }
    l.name = name.c_str();
    for (const auto& [algo_name, algo] : {std::pair{"split", Algo::kSplit}, std::pair{"zero_insert", Algo::kZeroInsert}}) {
      if (algo == Algo::kZeroInsert && !zero_insert) continue;
      ConvTranspose2DLayerFixture f(l, 1, algo);
      const double ms = median_ms(f, threads, repeat, warmup_s);
      std::printf("{\"peer\": \"edgegan\", \"layer\": \"%s\", \"algo\": \"%s\", \"threads\": %d, \"batch\": 1, \"repeat\": %d, "
                  "\"wait_policy\": \"%s\", \"isa\": \"%s\", \"status\": \"ok\", \"ms\": %.6f}\n",
                  name.c_str(), algo_name, threads, repeat, wait, edgegan::cpu::isa_name(edgegan::cpu::active_isa()), ms);
      std::fflush(stdout);
    }
  }
  return 0;
}

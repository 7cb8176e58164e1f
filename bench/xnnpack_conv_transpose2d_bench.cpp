// XNNPACK's transposed convolution (xnn_create_deconvolution2d_nhwc_f32) on the GAN
// generator layers that bench/peer_layers.py lists, batch 1: one JSON object per layer,
// in the same shape as peer_layers.py's records, for bench/peers.sh. Built by that
// script against Debian's libxnnpack-dev:
//   g++ -O2 bench/xnnpack_conv_transpose2d_bench.cpp -lXNNPACK -lpthreadpool -o xnnpack_conv_transpose2d_bench
//   bench/peer_layers.py --list | ./xnnpack_conv_transpose2d_bench --threads 2 --repeat 30 [--passive]
// Layers on stdin as "name in cin cout kernel" lines; stride 2, output exactly twice the
// input (k4: pad 1; k5: pad 2 and output_padding 1). Random weights, fixed seed, a bias,
// no activation. Each layer is checked at sampled output points against a direct sum
// before timing; only xnn_run_operator is timed (create and setup happen once, as in an
// inference engine that plans ahead). --passive sets XNN_FLAG_YIELD_WORKERS: the thread
// pool's workers sleep after each run instead of spinning.
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

struct Layer {
  std::string name;
  int in, cin, cout, kernel;
  int pad() const { return (kernel - 1) / 2; }
  int out_pad() const { return kernel % 2; }
  int out() const { return 2 * in; }
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// y[oy][ox][co] by the definition: every input pixel scatters its kernel at stride 2,
// shifted up-left by the padding. x is NHWC, w is [Cout][kh][kw][Cin] (XNNPACK's layout).
float direct(const Layer& l, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b, int oy, int ox,
             int co) {
  double acc = b[co];
  for (int ky = 0; ky < l.kernel; ++ky)
    for (int kx = 0; kx < l.kernel; ++kx) {
      const int ty = oy + l.pad() - ky, tx = ox + l.pad() - kx;
      if (ty < 0 || tx < 0 || ty % 2 || tx % 2 || ty / 2 >= l.in || tx / 2 >= l.in) continue;
      const float* xp = &x[(static_cast<size_t>(ty / 2) * l.in + tx / 2) * l.cin];
      const float* wp = &w[((static_cast<size_t>(co) * l.kernel + ky) * l.kernel + kx) * l.cin];
      for (int ci = 0; ci < l.cin; ++ci) acc += static_cast<double>(xp[ci]) * wp[ci];
    }
  return static_cast<float>(acc);
}

// One JSON line. `extra` is preformatted ("\"ms\": 1.5, ...") or empty.
void emit(const Layer& l, int threads, int repeat, bool passive, const char* status, const std::string& extra) {
  const double macs = static_cast<double>(l.in) * l.in * l.kernel * l.kernel * l.cin * l.cout;
  std::printf("{\"peer\": \"xnnpack\", \"layer\": \"%s\", \"threads\": %d, \"batch\": 1, \"version\": \"Debian libxnnpack0\", "
              "\"macs\": %.0f, \"repeat\": %d, \"wait_policy\": \"%s\", \"status\": \"%s\"%s%s}\n",
              l.name.c_str(), threads, macs, repeat, passive ? "passive" : "default", status, extra.empty() ? "" : ", ", extra.c_str());
  std::fflush(stdout);
}

void run_layer(const Layer& l, int threads, int repeat, double warmup_s, bool passive, pthreadpool_t pool) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> x(static_cast<size_t>(l.in) * l.in * l.cin), w(static_cast<size_t>(l.cout) * l.kernel * l.kernel * l.cin),
      b(static_cast<size_t>(l.cout)), y(static_cast<size_t>(l.out()) * l.out() * l.cout);
  for (auto& v : x) v = d(rng);
  for (auto& v : w) v = d(rng) * 0.05f;  // keeps |y| near 1 for the check's tolerance
  for (auto& v : b) v = d(rng);

  const float inf = std::numeric_limits<float>::infinity();
  const uint32_t p = static_cast<uint32_t>(l.pad()), k = static_cast<uint32_t>(l.kernel);
  xnn_operator_t op = nullptr;
  const uint32_t flags = passive ? XNN_FLAG_YIELD_WORKERS : 0;  // the pool's workers sleep right after each run
  if (xnn_create_deconvolution2d_nhwc_f32(p, p, p, p, k, k, 2, 2, 1, 1, 1, l.cin, l.cout, l.cin, l.cout, w.data(), b.data(), -inf, inf, flags,
                                          &op) != xnn_status_success) {
    emit(l, threads, repeat, passive, "n/a", "\"why\": \"xnn_create_deconvolution2d_nhwc_f32 failed\"");
    return;
  }
  if (xnn_setup_deconvolution2d_nhwc_f32(op, 1, l.in, l.in, l.out_pad(), l.out_pad(), x.data(), y.data(), pool) != xnn_status_success ||
      xnn_run_operator(op, pool) != xnn_status_success) {
    emit(l, threads, repeat, passive, "n/a", "\"why\": \"xnn_setup/run failed\"");
    xnn_delete_operator(op);
    return;
  }

  // Check 256 sampled outputs, corners included, against the direct sum.
  double max_diff = 0;
  std::uniform_int_distribution<int> pix(0, l.out() - 1), ch(0, l.cout - 1);
  for (int i = 0; i < 256; ++i) {
    const int oy = i < 4 ? (i & 1) * (l.out() - 1) : pix(rng), ox = i < 4 ? (i >> 1) * (l.out() - 1) : pix(rng), co = ch(rng);
    const float got = y[(static_cast<size_t>(oy) * l.out() + ox) * l.cout + co];
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(got - direct(l, x, w, b, oy, ox, co))));
  }
  char extra[160];
  if (!(max_diff <= 1e-3)) {
    std::snprintf(extra, sizeof extra, "\"max_abs_diff\": %g, \"why\": \"max |diff| %.3g vs the direct sum > 1e-3\"", max_diff, max_diff);
    emit(l, threads, repeat, passive, "mismatch", extra);
    xnn_delete_operator(op);
    return;
  }

  const auto warm = Clock::now();
  for (int n = 0; n < 3 || seconds_since(warm) < warmup_s; ++n) xnn_run_operator(op, pool);
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = Clock::now();
    xnn_run_operator(op, pool);
    ms.push_back(seconds_since(t0) * 1e3);
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  double median = ms[ms.size() / 2];
  if (ms.size() % 2 == 0) median = (median + *std::max_element(ms.begin(), ms.begin() + ms.size() / 2)) / 2;
  std::snprintf(extra, sizeof extra, "\"ms\": %.6f, \"max_abs_diff\": %g", median, max_diff);
  emit(l, threads, repeat, passive, "ok", extra);
  xnn_delete_operator(op);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeat = 30;
  double warmup_s = 0.2;
  bool passive = false, ok = true;
  for (int i = 1; i < argc && ok; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--passive")) passive = true;
    else if (!std::strcmp(argv[i], "--threads") && has_value) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && has_value) repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup-s") && has_value) warmup_s = std::atof(argv[++i]);
    else ok = false;
  }
  if (!ok || threads < 1 || repeat < 1) {
    std::fprintf(stderr, "usage: %s [--threads T] [--repeat R] [--warmup-s S] [--passive] < layers\n", argv[0]);
    return 2;
  }
  if (xnn_initialize(nullptr) != xnn_status_success) {
    std::fprintf(stderr, "xnn_initialize failed\n");
    return 1;
  }
  pthreadpool_t pool = pthreadpool_create(static_cast<size_t>(threads));
  Layer l;
  while (std::cin >> l.name >> l.in >> l.cin >> l.cout >> l.kernel) run_layer(l, threads, repeat, warmup_s, passive, pool);
  pthreadpool_destroy(pool);
  xnn_deinitialize();
  return 0;
}

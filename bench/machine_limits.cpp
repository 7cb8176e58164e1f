// What this machine can do at best, as the yardstick for bench/peers.sh's GFLOP/s:
//   fma     AVX-512 FMA issue rate (24 independent accumulators, no memory traffic)
//   sgemm   a blocked AVX-512 sgemm (packed A and B, 8x32 micro-kernel) on 512x512x512,
//           written here: the machine's PyTorch is built with generic BLAS, so torch.mm is no yardstick
//   read    streaming read of a 256 MB buffer (from memory), and of half the last-level
//           cache, read again and again (from that cache)
// each at 1 and 2 threads, best of 5 runs (sgemm: 20), one JSON object on stdout:
//   g++ -O3 -march=native -fopenmp bench/machine_limits.cpp -o machine_limits && ./machine_limits
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Best (shortest) of `runs` timings of fn(), in seconds: these are limits, not typical times.
double best_seconds(const std::function<void()>& fn, int runs = 5) {
  fn();  // warm-up: page faults, thread start, clocks
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// Horizontal sum (GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its own header).
float hsum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0;
  for (float x : lanes) s += x;
  return s;
}

// ---- FMA issue rate ------------------------------------------------------------------
constexpr int kAcc = 24;  // > latency (4) x FMA pipes (2) with room to spare; 24 + 2 of 32 zmm

float fma_loop(long iters) {
  __m512 acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 24
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kAcc; ++i) s = _mm512_add_ps(s, acc[i]);
  return hsum(s);  // keeps the loop alive
}

double fma_gflops(int threads) {
  const long iters = 20'000'000;
  volatile float sink = 0;
  const double s = best_seconds([&] {
#pragma omp parallel num_threads(threads)
    {
      const float r = fma_loop(iters);
#pragma omp atomic
      sink = sink + r;
    }
  });
  return 2.0 * 16 * kAcc * iters * threads / s * 1e-9;
}

// ---- sgemm: C[M][N] = A[M][K] * B[K][N], row-major -------------------------------------
constexpr int kMr = 8, kNr = 32, kKc = 256, kMc = 64;

// acc[8][32] += Ap (kc x 8, packed) * Bp (kc x 32, packed); then C tile += acc
void micro_kernel(int kc, const float* ap, const float* bp, float* c, int ldc) {
  __m512 acc[kMr][2];
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int k = 0; k < kc; ++k, ap += kMr, bp += kNr) {
    const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      const __m512 a = _mm512_set1_ps(ap[i]);
      acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
    }
  }
  for (int i = 0; i < kMr; ++i) {
    float* ci = c + static_cast<long>(i) * ldc;
    _mm512_storeu_ps(ci, _mm512_add_ps(_mm512_loadu_ps(ci), acc[i][0]));
    _mm512_storeu_ps(ci + 16, _mm512_add_ps(_mm512_loadu_ps(ci + 16), acc[i][1]));
  }
}

// M, N multiples of 8 and 32 (512 is). The threads split N (no shared buffers, no barrier
// but the final join, so a busy machine skews it least). Per K block each thread packs its
// B columns into 32-column panels and each A block once, then sweeps its B panels over the
// A block: the B panel stays in L1, the A block in L2.
void sgemm(int m, int n, int k, const float* a, const float* b, float* c, int threads) {
  std::fill(c, c + static_cast<long>(m) * n, 0.f);
#pragma omp parallel num_threads(threads)
  {
    const int panels = n / kNr, t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int j0 = panels * t / nt * kNr, j1 = panels * (t + 1) / nt * kNr;
    std::vector<float> ap(static_cast<size_t>(kMc) * kKc), bp(static_cast<size_t>(kKc) * (j1 - j0));
    for (int p = 0; p < k; p += kKc) {
      const int kc = std::min(kKc, k - p);
      for (int j = j0; j < j1; j += kNr)  // panel: kc rows of 32
        for (int kk = 0; kk < kc; ++kk) std::copy_n(b + static_cast<long>(p + kk) * n + j, kNr, &bp[static_cast<size_t>(j - j0) * kc + kk * kNr]);
      for (int i0 = 0; i0 < m; i0 += kMc) {
        const int mc = std::min(kMc, m - i0);
        for (int i = 0; i < mc; i += kMr)  // 8-row strips, k-major
          for (int kk = 0; kk < kc; ++kk)
            for (int r = 0; r < kMr; ++r) ap[static_cast<size_t>(i) * kc + kk * kMr + r] = a[static_cast<long>(i0 + i + r) * k + p + kk];
        for (int j = j0; j < j1; j += kNr)
          for (int i = 0; i < mc; i += kMr)
            micro_kernel(kc, &ap[static_cast<size_t>(i) * kc], &bp[static_cast<size_t>(j - j0) * kc], c + static_cast<long>(i0 + i) * n + j, n);
      }
    }
  }
}

double sgemm_gflops(int threads, int size, double* max_err) {
  std::vector<float> a(static_cast<size_t>(size) * size), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6) / 8, b[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5) / 8;
  const double s = best_seconds([&] { sgemm(size, size, size, a.data(), b.data(), c.data(), threads); }, 20);  // ~1 ms each
  *max_err = 0;  // spot-check a few entries against the plain dot product
  for (int t = 0; t < 64; ++t) {
    const int i = (t * 131) % size, j = (t * 197) % size;
    double ref = 0;
    for (int kk = 0; kk < size; ++kk) ref += static_cast<double>(a[static_cast<size_t>(i) * size + kk]) * b[static_cast<size_t>(kk) * size + j];
    *max_err = std::max(*max_err, std::abs(ref - c[static_cast<size_t>(i) * size + j]));
  }
  return 2.0 * size * size * size / s * 1e-9;
}

// ---- streaming read --------------------------------------------------------------------
double read_gbs(int threads, const float* buf, long n) {
  volatile float sink = 0;
  const double s = best_seconds([&] {
    __m512 total = _mm512_setzero_ps();
#pragma omp parallel num_threads(threads)
    {
      __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
#pragma omp for schedule(static) nowait
      for (long i = 0; i < n; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_load_ps(&buf[i]));
        s1 = _mm512_add_ps(s1, _mm512_load_ps(&buf[i + 16]));
        s2 = _mm512_add_ps(s2, _mm512_load_ps(&buf[i + 32]));
        s3 = _mm512_add_ps(s3, _mm512_load_ps(&buf[i + 48]));
      }
#pragma omp critical
      total = _mm512_add_ps(total, _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    }
    sink = sink + hsum(total);
  });
  return n * sizeof(float) / s * 1e-9;
}

// The last-level cache one core sees, from sysfs (glibc's _SC_LEVEL3_CACHE_SIZE reads
// 384 MB on this VM, the whole package's); 32 MB where sysfs has no level-3 entry.
long last_level_cache_bytes() {
  long kib = 0;
  if (std::FILE* f = std::fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r")) {
    if (std::fscanf(f, "%ldK", &kib) != 1) kib = 0;
    std::fclose(f);
  }
  return kib > 0 ? kib << 10 : 32l << 20;
}

}  // namespace

int main() {
  const int max_threads = std::min(2, omp_get_num_procs());
  std::printf("{\n  \"best_of\": {\"fma\": 5, \"sgemm\": 20, \"read\": 5},\n");

  std::printf("  \"fma_gflops\": {\"accumulators\": %d", kAcc);  // summed over the threads
  for (int t = 1; t <= max_threads; ++t) {
    const double g = fma_gflops(t);
    std::printf(", \"%d\": %.1f, \"%d_per_core\": %.1f", t, g, t, g / t);
  }
  std::printf("},\n");

  const int size = 512;
  std::printf("  \"sgemm\": {\"m\": %d, \"n\": %d, \"k\": %d, \"kind\": \"blocked AVX-512 sgemm, 8x32 micro-kernel (bench/machine_limits.cpp)\", "
              "\"gflops\": {", size, size, size);
  double worst_err = 0;
  for (int t = 1; t <= max_threads; ++t) {
    double err = 0;
    const double g = sgemm_gflops(t, size, &err);
    worst_err = std::max(worst_err, err);
    std::printf("%s\"%d\": %.1f", t > 1 ? ", " : "", t, g);
  }
  std::printf("}, \"max_abs_err\": %.3g},\n", worst_err);

  const long n = 256l << 20 >> 2;  // 256 MB, 64-byte aligned for _mm512_load_ps
  float* buf = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  std::fill(buf, buf + n, 1.f);
  std::printf("  \"read_gbs\": {\"bytes\": %ld", n * static_cast<long>(sizeof(float)));
  for (int t = 1; t <= max_threads; ++t) std::printf(", \"%d\": %.1f", t, read_gbs(t, buf, n));
  std::printf("},\n");
  // The same read of half the last-level cache, again and again: the bandwidth of data a
  // layer re-reads from that cache on every call (weights that fit in it).
  const long llc = last_level_cache_bytes();
  const long cached = llc / 2 / 256 * 256 / static_cast<long>(sizeof(float));  // whole 64-float steps
  std::printf("  \"read_cached_gbs\": {\"bytes\": %ld", cached * static_cast<long>(sizeof(float)));
  for (int t = 1; t <= max_threads; ++t) std::printf(", \"%d\": %.1f", t, read_gbs(t, buf, cached));
  std::printf("}\n}\n");
  std::free(buf);
  return 0;
}

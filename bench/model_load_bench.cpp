// What verifying a model's checksums costs when it is loaded from a cold page
// cache: the time to the first image (load + session + one generate) with and
// without verification, interleaved so both see the same machine, medians of
// --repeat runs. Also the load alone, cold and warm.
//   model_load_bench MODEL.egan [--repeat N] [--batch B] [--threads T]
// Eviction uses posix_fadvise(DONTNEED), which drops the file's clean pages for
// any user; the resident fraction after it is printed (mincore) as proof.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// Fraction of the file's pages in the page cache.
double resident_fraction(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  struct stat st {};
  ::fstat(fd, &st);
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((static_cast<size_t>(st.st_size) + page - 1) / page);
  ::mincore(p, static_cast<size_t>(st.st_size), in.data());
  ::munmap(p, static_cast<size_t>(st.st_size));
  return static_cast<double>(std::count_if(in.begin(), in.end(), [](unsigned char c) { return c & 1; })) / static_cast<double>(in.size());
}

struct Times {
  std::vector<double> cold_load, cold_first_image, warm_load;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: model_load_bench MODEL.egan [--repeat N] [--batch B] [--threads T]\n");
    return 2;
  }
  const std::string path = argv[1];
  int repeat = 11, batch = 1, threads = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--batch")) batch = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
  }
  try {
    const uint64_t file_bytes = edgegan::Model::load(path)->file_bytes();
    Times verified, skipped;
    double resident_after_evict = 0;
    for (int r = 0; r < repeat; ++r) {
      for (const bool verify : {r % 2 == 0, r % 2 != 0}) {  // alternate which goes first
        Times& t = verify ? verified : skipped;
        evict(path);
        resident_after_evict = std::max(resident_after_evict, resident_fraction(path));
        const auto start = Clock::now();
        auto model = edgegan::Model::load(path, {.verify_checksums = verify});
        t.cold_load.push_back(ms_since(start));
        edgegan::Session session(model, {.threads = threads, .batch = batch});
        std::vector<edgegan::Tensor> inputs;
        for (const edgegan::InputInfo& in : model->inputs()) {
          edgegan::Tensor x{in.name, in.dtype, in.layout, in.dims, {}, {}};
          x.shape[0] = batch;
          if (in.dtype == edgegan::DType::kInt64) x.i64.assign(static_cast<size_t>(x.elements()), 0);
          else x.f32 = edgegan::normal_noise(static_cast<size_t>(x.elements()), 1);
          inputs.push_back(std::move(x));
        }
        session.run(inputs);
        t.cold_first_image.push_back(ms_since(start));
        const auto warm = Clock::now();
        auto again = edgegan::Model::load(path, {.verify_checksums = verify});
        t.warm_load.push_back(ms_since(warm));
      }
    }
    const double v = median(verified.cold_first_image), s = median(skipped.cold_first_image);
    std::printf("model %s, %.1f MB, batch %d, %d runs each, resident after eviction <= %.1f%%\n", path.c_str(),
                static_cast<double>(file_bytes) / 1e6, batch, repeat, 100 * resident_after_evict);
    std::printf("%-34s %12s %12s\n", "median ms", "verified", "skipped");
    std::printf("%-34s %12.2f %12.2f\n", "cold: load", median(verified.cold_load), median(skipped.cold_load));
    std::printf("%-34s %12.2f %12.2f\n", "cold: load + session + 1st image", v, s);
    std::printf("%-34s %12.2f %12.2f\n", "warm: load", median(verified.warm_load), median(skipped.warm_load));
    std::printf("verification cost: %+.2f ms = %+.1f%% of the cold time to the first image; checksums at %.1f GB/s (warm)\n", v - s,
                100 * (v - s) / s, static_cast<double>(file_bytes) / 1e6 / (median(verified.warm_load) - median(skipped.warm_load)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_load_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

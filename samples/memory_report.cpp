// Sample: ask the engine what a model will cost before deploying it, then run it
// and compare with what the process really used.
//   memory_report MODEL.egan [BATCH] [split|zero-insert|col2im] [--check]
// Prints the per-layer report, then three measured figures:
//   * the session's own allocations (counted at each allocation),
//   * the process's peak resident memory growth while loading and running,
// and with --check exits 1 unless allocations equal the report exactly and the
// RSS growth is within 10% of the report's total (+ the caller's input/output copies).
#include <edgegan/edgegan.h>
#include <edgegan/report.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

// A field of /proc/self/status in bytes (VmRSS, VmHWM).
uint64_t proc_status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;  // kB
  return 0;
}

// Linux: writing 5 to clear_refs resets the peak-RSS mark (VmHWM) to the current RSS.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out);
}

// Reads one byte of every page of the program's and its libraries' code, so those pages
// are resident before measuring: the first run of a fresh process would otherwise fault
// in whatever code it executes, which grows with the engine, not with the model.
void page_in_code() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    if (perms.size() < 3 || perms[0] != 'r' || perms[2] != 'x' || path.empty() || path[0] != '/') continue;
    const size_t dash = range.find('-');
    const uintptr_t begin = std::stoull(range.substr(0, dash), nullptr, 16), end = std::stoull(range.substr(dash + 1), nullptr, 16);
    for (uintptr_t a = begin; a < end; a += page) static_cast<void>(*reinterpret_cast<const volatile char*>(a));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " MODEL.egan [BATCH] [split|zero-insert|col2im] [--check]\n";
    return 2;
  }
  try {
    const std::string path = argv[1];
    const int batch = argc > 2 ? std::stoi(argv[2]) : 1;
    const edgegan::ConvTranspose2DAlgo algo = edgegan::conv_transpose2d_algo_from_string(argc > 3 ? argv[3] : "split");
    const bool check = argc > 4 && std::string(argv[4]) == "--check";
    const edgegan::SessionOptions options{.threads = 1, .batch = batch, .conv_transpose2d_algo = algo};

    // Inputs are the caller's memory: make them before measuring.
    std::vector<edgegan::Tensor> inputs;
    uint64_t io_bytes = 0;
    {
      auto probe = edgegan::Model::load(path);
      for (const auto& in : probe->inputs()) {
        edgegan::Tensor t{in.name, in.dtype, in.layout, in.dims, {}, {}};
        t.shape[0] = batch;
        if (in.dtype == edgegan::DType::kInt64) t.i64.assign(static_cast<size_t>(t.elements()), 0);
        else t.f32 = edgegan::normal_noise(static_cast<size_t>(t.elements()), 1);
        inputs.push_back(std::move(t));
      }
      for (const auto& out : probe->outputs()) {
        int64_t n = batch;
        for (size_t k = 1; k < out.dims.size(); ++k) n *= out.dims[k];
        io_bytes += static_cast<uint64_t>(n) * 4;  // run() returns a copy of each output
      }
    }

    page_in_code();
    const bool peak_ok = reset_peak_rss();
    const uint64_t rss_before = proc_status_bytes("VmRSS");
    auto model = edgegan::Model::load(path);  // mmap: weights are used in place
    edgegan::Session session(model, options);
    const auto outputs = session.run(inputs);
    const uint64_t rss_peak = proc_status_bytes("VmHWM");

    const edgegan::MemoryReport report = edgegan::memory_report(model, options, path);
    std::cout << report.to_table() << "\n";
    const uint64_t measured = session.measured_allocation_bytes();
    const uint64_t expected_rss = report.totals.total_bytes + io_bytes;
    const double growth = peak_ok ? static_cast<double>(rss_peak - rss_before) : NAN;
    std::printf("session allocations: measured %llu bytes, report %llu bytes (%s)\n", static_cast<unsigned long long>(measured),
                static_cast<unsigned long long>(report.totals.session_bytes), measured == report.totals.session_bytes ? "equal" : "DIFFERENT");
    std::printf("peak RSS growth: %.0f bytes; report total %llu + returned outputs %llu = %llu bytes (ratio %.3f)\n", growth,
                static_cast<unsigned long long>(report.totals.total_bytes), static_cast<unsigned long long>(io_bytes),
                static_cast<unsigned long long>(expected_rss), growth / static_cast<double>(expected_rss));
    if (check) {
      if (measured != report.totals.session_bytes) return 1;
      // Within 10%, or within 512 KiB for small models: a fresh process's first run also
      // touches allocator metadata and thread stacks (code is paged in before measuring),
      // which no report of the model's memory can predict.
      const double excess = std::abs(growth - static_cast<double>(expected_rss));
      if (!peak_ok || (excess > 0.10 * static_cast<double>(expected_rss) && excess > 512.0 * 1024.0)) return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

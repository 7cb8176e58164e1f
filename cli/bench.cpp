#include "cli/bench.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/model_loading.h"
#include "cli/precision_choice.h"
#include "edgegan/edgegan.h"

namespace edgegan_cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Inputs for any model, each by its name: standard-normal values for every float input
// (noise, an image for a discriminator, BigGAN's latent and class vector; the first drawn
// from seed 1, the next from 2, ...), class 0.. cycling for a label input.
std::vector<edgegan::Tensor> bench_inputs(const edgegan::Model& model, int batch) {
  std::vector<edgegan::Tensor> inputs;
  uint64_t seed = 1;
  for (const edgegan::InputInfo& info : model.inputs()) {
    edgegan::Tensor t{info.name, info.dtype, info.layout, info.dims, {}, {}};
    t.shape[0] = batch;
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    if (info.dtype == edgegan::DType::kInt64) {
      const int64_t classes = std::max<int64_t>(1, model.label_count());
      for (int64_t i = 0; i < count; ++i) t.i64.push_back(i % classes);
    } else {
      t.f32 = edgegan::normal_noise(static_cast<size_t>(count), seed++);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace

int bench(const BenchArgs& a) {
  auto model = edgegan_cli::load_model(a.model);
  if (a.input_height > 0) model = edgegan::Model::at_input_size(model, a.input_height, a.input_width);
  edgegan::SessionOptions options;
  options.threads = a.threads;
  options.batch = a.batch;
  options.conv_transpose2d_algo = edgegan::conv_transpose2d_algo_from_string(a.algo);
  options.backend = edgegan::backend_from_string(a.backend);
  options.device = a.device;
  const edgegan_cli::PrecisionChoice precision = edgegan_cli::choose_precision(a.precision, options.backend, a.device);
  options.precision = precision.precision;
  edgegan::Session session(model, options);
  const auto inputs = bench_inputs(*model, a.batch);

  // Whole-model times come from plain run()s; per-op times from profiled runs,
  // interleaved so that both see the same machine state.
  std::vector<edgegan::OpTiming> timings;
  for (int i = 0; i < a.warmup; ++i) session.run(inputs);
  std::vector<double> totals;
  std::vector<std::vector<double>> per_op;
  for (int r = 0; r < a.repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    session.run(inputs);
    totals.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    session.run_profiled(inputs, timings);
    per_op.resize(timings.size());
    for (size_t i = 0; i < timings.size(); ++i) per_op[i].push_back(timings[i].seconds);
  }

  const double total_ms = median(totals) * 1e3;
  // The mean counts every interruption the median leaves out: what a busy machine costs.
  const double mean_ms = totals.empty() ? 0.0 : std::accumulate(totals.begin(), totals.end(), 0.0) / static_cast<double>(totals.size()) * 1e3;
  if (a.json) {
    nlohmann::json j = {{"model", a.model},         {"batch", a.batch},
                        {"threads", session.threads()}, {"algo", a.algo}, {"backend", a.backend}, {"precision", edgegan::to_string(precision.precision)}, {"precision_fallback", precision.fallback},
                        {"weights", session.weight_placement()}, {"session_bytes", session.measured_allocation_bytes()},
                        {"isa", edgegan::cpu_kernel_family()}, {"microkernel", edgegan::cpu_gemm_ukernel()},
                        {"convolutions", edgegan::backend_convolution_tactics(options.backend)},
                        {"repeat", a.repeat},        {"total_ms", total_ms},
                        {"total_mean_ms", mean_ms}};
    j["layers"] = nlohmann::json::array();
    for (size_t i = 0; i < timings.size(); ++i)
      j["layers"].push_back({{"name", timings[i].name}, {"kernel", timings[i].kernel}, {"macs", timings[i].macs},
                             {"ms", median(per_op[i]) * 1e3}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << a.model << ": batch " << a.batch << ", " << precision.describe() << ", " << a.algo << ", ";
  if (a.backend == "cuda")
    std::cout << "CUDA (weights " << session.weight_placement() << "; convolutions: " << edgegan::backend_convolution_tactics(options.backend) << ")";
  else if (a.backend == "vulkan")
    std::cout << "Vulkan device " << a.device;
  else std::cout << session.threads() << " thread(s), " << edgegan::cpu_gemm_ukernel();
  std::cout << ", median of " << a.repeat << "\n";
  std::cout << std::left << std::setw(4) << "#" << std::setw(34) << "op" << std::setw(32) << "kernel" << std::right
            << std::setw(10) << "ms" << std::setw(10) << "GFLOP/s" << "\n";
  for (size_t i = 0; i < timings.size(); ++i) {
    const double ms = median(per_op[i]) * 1e3;
    std::cout << std::left << std::setw(4) << i << std::setw(34) << timings[i].name.substr(0, 33) << std::setw(32)
              << timings[i].kernel << std::right << std::fixed << std::setprecision(3) << std::setw(10) << ms
              << std::setprecision(1) << std::setw(10) << (ms > 0 ? 2e-6 * static_cast<double>(timings[i].macs) / ms : 0.0)
              << "\n";
  }
  std::cout << "whole model: " << std::setprecision(3) << total_ms << " ms (median of " << a.repeat << " runs; mean "
            << mean_ms << " ms)\n";
  return 0;
}

}  // namespace edgegan_cli

// libFuzzer target: a .egan file from outside -> Model::from_bytes -> Session ->
// one run -> memory report. Any input must end in success or edgegan::Error;
// a crash, leak, sanitizer report or timeout is a bug.
//
// Each input is loaded twice. First with its checksums verified, as users load
// it: almost every mutation stops there, which fuzzes the checksum path. Then
// with them skipped, so that mutations reach the structural checks and the
// kernels behind them, as a hostile file with correct checksums would.
#include <cstdint>
#include <vector>

#include "edgegan/edgegan.h"
#include "edgegan/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)edgegan::Model::from_bytes({data, size});
  } catch (const edgegan::Error&) {
  }
  std::shared_ptr<const edgegan::Model> model;
  try {
    model = edgegan::Model::from_bytes({data, size}, {.verify_checksums = false});
  } catch (const edgegan::Error&) {
    return 0;
  }
  // Small limits keep each input fast; what they reject is rejected with an Error.
  const edgegan::SessionOptions options{.threads = 1, .batch = 2, .memory_limit_bytes = 64 << 20, .compute_limit_macs = 20'000'000};
  try {
    (void)model->ops();
    const edgegan::MemoryReport report = edgegan::memory_report(model, options);
    (void)report.to_json();
    edgegan::Session session(model, options);
    std::vector<edgegan::Tensor> inputs;
    for (const auto& in : model->inputs()) {
      edgegan::Tensor t{in.name, in.dtype, in.layout, in.dims, {}, {}};
      t.shape[0] = options.batch;
      if (in.dtype == edgegan::DType::kInt64) {
        for (int64_t i = 0; i < t.elements(); ++i) t.i64.push_back(i % std::max<int64_t>(in.label_count, 1));
      } else {
        t.f32 = edgegan::normal_noise(static_cast<size_t>(t.elements()), 7);
      }
      inputs.push_back(std::move(t));
    }
    (void)session.run(inputs);
  } catch (const edgegan::Error&) {
  }
  return 0;
}

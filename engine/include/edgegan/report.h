// Memory-footprint report: what a model costs at a given batch and algorithm,
// per layer and in total, computed from the very plan a Session executes.
//
//   auto report = edgegan::memory_report(model, {.batch = 16});
//   std::cout << report.to_table();
//
// JSON field names (to_json) are stable; units are bytes and multiply-accumulates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"

namespace edgegan {

// One layer's cost under one algorithm (identical across algorithms unless the layer is a transposed convolution).
struct LayerAlgorithmCost {
  std::string algorithm;
  uint64_t macs = 0;
  uint64_t workspace_bytes = 0;
  uint64_t traffic_bytes = 0;
  bool operator==(const LayerAlgorithmCost&) const = default;
};

struct LayerMemory {
  int index = 0;
  std::string kind;                    // "ConvTranspose2D", ...
  std::string name;                    // source ONNX node(s)
  std::string kernel;                  // CPU kernel the session runs, e.g. "conv_transpose2d_split"
  std::vector<std::vector<int64_t>> input_shapes;  // storage order, batch included
  std::vector<int64_t> output_shape;
  uint64_t macs = 0;                   // executed by this algorithm
  uint64_t macs_zero_insert = 0;       // executed by zero insertion (= macs for ops that are not transposed convolutions)
  uint64_t weight_bytes = 0;           // as stored in the file (mapped, not copied)
  uint64_t input_bytes = 0;            // activations read
  uint64_t output_bytes = 0;           // activation written
  uint64_t workspace_bytes = 0;        // scratch in the arena
  uint64_t output_offset = 0;          // arena offset of the output buffer
  uint64_t output_buffer_bytes = 0;    // size of that buffer
  bool output_shares_input = false;    // aliased or computed in place: no new memory
  int64_t workspace_offset = -1;       // arena offset of the scratch, -1 for none
  uint64_t traffic_bytes = 0;          // estimated bytes read + written (traffic model, docs/memory-planner.md)
  std::vector<LayerAlgorithmCost> by_algorithm;  // split, zero-insert, col2im
  uint64_t unmaterialised_bytes = 0;   // what the composed form's intermediate would take (OpInfo), 0: none
};

struct AlgorithmTotals {
  std::string algorithm;               // "split" | "zero-insert" | "col2im"
  uint64_t arena_bytes = 0;            // planned activation arena, workspace included (the peak)
  uint64_t arena_lower_bound_bytes = 0;  // largest total of buffers alive at one step
  uint64_t no_reuse_bytes = 0;         // every tensor and scratch in its own memory
  uint64_t workspace_peak_bytes = 0;   // largest scratch of any op
  uint64_t session_weight_bytes = 0;   // weight copies the session makes (baselines only)
  uint64_t session_bytes = 0;          // what a Session allocates: arena + weight copies
  uint64_t total_bytes = 0;            // session_bytes + the mapped model file
  uint64_t macs = 0;
  uint64_t traffic_bytes = 0;
  bool operator==(const AlgorithmTotals&) const = default;
};

struct MemoryReport {
  std::string model;                   // name given by the caller (e.g. the file path)
  std::string backend = "cpu";
  std::string precision = "fp32";      // SessionOptions::precision: an fp16 arena holds float activations as halves
  std::string algorithm;               // the algorithm the per-layer rows describe
  int batch = 1;
  int threads = 1;                     // a session's threads: the heads' split workspace is per thread
  uint64_t file_bytes = 0;             // mapped model file
  uint64_t weight_bytes = 0;           // of which weights (data section)
  std::vector<LayerMemory> layers;
  AlgorithmTotals totals;              // for `algorithm`
  std::vector<AlgorithmTotals> algorithms;  // split, zero-insert, col2im, side by side

  std::string to_json() const;         // one JSON object
  static MemoryReport from_json(const std::string& json);  // throws Error on malformed input
  std::string to_table() const;        // human-readable, one row per layer + totals
  // The per-layer bar chart is the codec library's: write_report_chart (edgegan/image_io.h).
  bool operator==(const MemoryReport&) const = default;
};

inline bool operator==(const LayerMemory& a, const LayerMemory& b) {
  return a.index == b.index && a.kind == b.kind && a.name == b.name && a.kernel == b.kernel && a.input_shapes == b.input_shapes &&
         a.output_shape == b.output_shape && a.macs == b.macs && a.macs_zero_insert == b.macs_zero_insert &&
         a.weight_bytes == b.weight_bytes && a.input_bytes == b.input_bytes && a.output_bytes == b.output_bytes &&
         a.workspace_bytes == b.workspace_bytes && a.output_offset == b.output_offset && a.output_buffer_bytes == b.output_buffer_bytes &&
         a.output_shares_input == b.output_shares_input && a.workspace_offset == b.workspace_offset && a.traffic_bytes == b.traffic_bytes &&
         a.by_algorithm == b.by_algorithm;
}

// Plans (without allocating) what a Session with `options` would hold. Only the
// CPU backend is supported so far.
MemoryReport memory_report(const std::shared_ptr<const Model>& model, const SessionOptions& options, const std::string& name = "");

}  // namespace edgegan

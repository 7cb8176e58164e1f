// Builds MemoryReport from SessionPlans (one per algorithm), and its JSON and
// table forms.
//
// Traffic model (estimated bytes moved to and from memory by one run of a layer):
// every activation the op reads and the one it writes count once, weights count
// once (an embedding reads only the rows it gathers), and a workspace counts twice
// (written, then read back: the zero-inserted input, the col2im columns). Aliased
// reshapes move nothing. Caches are assumed to hold nothing between ops and to
// give perfect reuse within an op, so this is the compulsory traffic of each
// algorithm, not a cache simulation.
#include "engine/text_stream.h"
#include "edgegan/report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/session_plan.h"

namespace edgegan {

using nlohmann::json;

namespace {

constexpr ConvTranspose2DAlgo kAlgorithms[] = {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert, ConvTranspose2DAlgo::kCol2im};

struct PlannedModel {
  SessionPlan plan;
  std::vector<LayerMemory> layers;
  AlgorithmTotals totals;
};

PlannedModel plan_model(const Model& model, const ComputeBackend& backend, ConvTranspose2DAlgo algo, int64_t batch, int threads, Precision precision) {
  const Model::Impl& m = model.impl();
  PlannedModel p;
  PlanOptions options;
  options.batch = batch;
  options.threads = threads;
  options.conv_transpose2d_algo = algo;
  options.precision = precision;
  p.plan = build_session_plan(m, backend, options, m, /*tracker=*/nullptr);
  const std::vector<OpInfo> infos = model.ops();
  auto tensor_bytes = [&](int t) { return edgegan::tensor_bytes(m.tensors[static_cast<size_t>(t)], batch, precision); };
  auto with_batch = [&](std::vector<int64_t> dims) {
    dims[0] = batch;
    return dims;
  };

  AlgorithmTotals& t = p.totals;
  t.algorithm = to_string(algo);
  for (size_t i = 0; i < infos.size(); ++i) {
    const OpKernel& k = *p.plan.kernels[i];
    LayerMemory l;
    l.index = static_cast<int>(i);
    l.kind = infos[i].kind;
    l.name = infos[i].name;
    l.kernel = k.kernel_name();
    for (const auto& d : infos[i].input_dims) l.input_shapes.push_back(with_batch(d));
    l.output_shape = with_batch(infos[i].output_dims[0]);
    l.macs = k.macs();
    l.weight_bytes = infos[i].weight_bytes;
    for (int in : p.plan.op_inputs[i]) l.input_bytes += tensor_bytes(in);
    const int out = p.plan.op_output[i];
    l.output_bytes = tensor_bytes(out);
    l.workspace_bytes = k.workspace_bytes();
    l.unmaterialised_bytes = static_cast<uint64_t>(batch) * infos[i].unmaterialised_bytes_per_sample;
    const PlannedBuffer& ob = p.plan.buffers[static_cast<size_t>(p.plan.tensor_buffer[static_cast<size_t>(out)])];
    l.output_offset = ob.offset;
    l.output_buffer_bytes = ob.size;
    for (int in : p.plan.op_inputs[i])
      if (p.plan.tensor_buffer[static_cast<size_t>(in)] == p.plan.tensor_buffer[static_cast<size_t>(out)]) l.output_shares_input = true;
    const int ws = p.plan.workspace_buffer[i];
    if (ws >= 0) l.workspace_offset = static_cast<int64_t>(p.plan.buffers[static_cast<size_t>(ws)].offset);
    if (!k.output_aliases_input()) {
      l.traffic_bytes = l.input_bytes + l.output_bytes + k.weight_bytes_read(l.weight_bytes) + 2 * l.workspace_bytes;
    }
    t.macs += l.macs;
    t.traffic_bytes += l.traffic_bytes;
    t.workspace_peak_bytes = std::max(t.workspace_peak_bytes, l.workspace_bytes);
    t.no_reuse_bytes += l.workspace_bytes;
    p.layers.push_back(std::move(l));
  }
  for (size_t tensor = 0; tensor < m.tensors.size(); ++tensor) t.no_reuse_bytes += tensor_bytes(static_cast<int>(tensor));
  t.arena_bytes = p.plan.arena_bytes;
  t.arena_lower_bound_bytes = arena_lower_bound(p.plan.buffers);
  t.session_weight_bytes = p.plan.session_weight_bytes;
  t.session_bytes = t.arena_bytes + t.session_weight_bytes;
  t.total_bytes = t.session_bytes + model.file_bytes();
  return p;
}

// ---- table

std::string human(uint64_t bytes) {
  auto os = text_stream();
  os << std::fixed;
  if (bytes < 1024) os << bytes << " B";
  else if (bytes < 1024 * 1024) os << std::setprecision(1) << bytes / 1024.0 << " KiB";
  else os << std::setprecision(2) << bytes / (1024.0 * 1024.0) << " MiB";
  return os.str();
}

std::string count(uint64_t n) {
  auto os = text_stream();
  os << std::fixed << std::setprecision(n >= 1e9 ? 2 : 1);
  if (n >= 1000000000) os << n / 1e9 << " G";
  else if (n >= 1000000) os << n / 1e6 << " M";
  else if (n >= 1000) os << n / 1e3 << " k";
  else os << n;
  return os.str();
}

std::string shape(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(d[i]);
  }
  return s;
}

MemoryReport memory_report_checked(const std::shared_ptr<const Model>& model, const SessionOptions& options, const std::string& name);

}  // namespace

// ---- JSON (found by ADL from nlohmann::json, so in namespace edgegan)

void to_json(json& j, const LayerAlgorithmCost& c) {
  j = json{{"algorithm", c.algorithm}, {"macs", c.macs}, {"workspace_bytes", c.workspace_bytes}, {"traffic_bytes", c.traffic_bytes}};
}

void from_json(const json& j, LayerAlgorithmCost& c) {
  j.at("algorithm").get_to(c.algorithm);
  j.at("macs").get_to(c.macs);
  j.at("workspace_bytes").get_to(c.workspace_bytes);
  j.at("traffic_bytes").get_to(c.traffic_bytes);
}

void to_json(json& j, const LayerMemory& l) {
  j = json{{"index", l.index}, {"kind", l.kind}, {"name", l.name}, {"kernel", l.kernel}, {"input_shapes", l.input_shapes},
           {"output_shape", l.output_shape}, {"macs", l.macs}, {"macs_zero_insert", l.macs_zero_insert},
           {"weight_bytes", l.weight_bytes}, {"input_bytes", l.input_bytes}, {"output_bytes", l.output_bytes},
           {"workspace_bytes", l.workspace_bytes}, {"output_offset", l.output_offset}, {"output_buffer_bytes", l.output_buffer_bytes},
           {"output_shares_input", l.output_shares_input}, {"workspace_offset", l.workspace_offset}, {"traffic_bytes", l.traffic_bytes},
           {"by_algorithm", l.by_algorithm}};
  if (l.unmaterialised_bytes) j["unmaterialised_bytes"] = l.unmaterialised_bytes;
}

void from_json(const json& j, LayerMemory& l) {
  j.at("index").get_to(l.index);
  j.at("kind").get_to(l.kind);
  j.at("name").get_to(l.name);
  j.at("kernel").get_to(l.kernel);
  j.at("input_shapes").get_to(l.input_shapes);
  j.at("output_shape").get_to(l.output_shape);
  j.at("macs").get_to(l.macs);
  j.at("macs_zero_insert").get_to(l.macs_zero_insert);
  j.at("weight_bytes").get_to(l.weight_bytes);
  j.at("input_bytes").get_to(l.input_bytes);
  j.at("output_bytes").get_to(l.output_bytes);
  j.at("workspace_bytes").get_to(l.workspace_bytes);
  j.at("output_offset").get_to(l.output_offset);
  j.at("output_buffer_bytes").get_to(l.output_buffer_bytes);
  j.at("output_shares_input").get_to(l.output_shares_input);
  j.at("workspace_offset").get_to(l.workspace_offset);
  j.at("traffic_bytes").get_to(l.traffic_bytes);
  j.at("by_algorithm").get_to(l.by_algorithm);
  l.unmaterialised_bytes = j.value("unmaterialised_bytes", uint64_t{0});
}

void to_json(json& j, const AlgorithmTotals& t) {
  j = json{{"algorithm", t.algorithm}, {"arena_bytes", t.arena_bytes}, {"arena_lower_bound_bytes", t.arena_lower_bound_bytes},
           {"no_reuse_bytes", t.no_reuse_bytes}, {"workspace_peak_bytes", t.workspace_peak_bytes},
           {"session_weight_bytes", t.session_weight_bytes}, {"session_bytes", t.session_bytes}, {"total_bytes", t.total_bytes},
           {"macs", t.macs}, {"traffic_bytes", t.traffic_bytes}};
}

void from_json(const json& j, AlgorithmTotals& t) {
  j.at("algorithm").get_to(t.algorithm);
  j.at("arena_bytes").get_to(t.arena_bytes);
  j.at("arena_lower_bound_bytes").get_to(t.arena_lower_bound_bytes);
  j.at("no_reuse_bytes").get_to(t.no_reuse_bytes);
  j.at("workspace_peak_bytes").get_to(t.workspace_peak_bytes);
  j.at("session_weight_bytes").get_to(t.session_weight_bytes);
  j.at("session_bytes").get_to(t.session_bytes);
  j.at("total_bytes").get_to(t.total_bytes);
  j.at("macs").get_to(t.macs);
  j.at("traffic_bytes").get_to(t.traffic_bytes);
}

MemoryReport memory_report(const std::shared_ptr<const Model>& model, const SessionOptions& options, const std::string& name) {
  try {
    return memory_report_checked(model, options, name);
  } catch (const std::bad_alloc&) {
    throw Error("report: out of memory");
  }
}

namespace {
MemoryReport memory_report_checked(const std::shared_ptr<const Model>& model, const SessionOptions& options, const std::string& name) {
  if (!model) throw Error("report: no model");
  const ComputeBackend& backend = compute_backend(options.backend, "report", options.device);
  if (options.batch < 1 || options.batch > (1 << 16)) throw Error("report: batch " + std::to_string(options.batch) + " is outside 1..65536");
  MemoryReport r;
  r.model = name;
  r.backend = backend.name();
  check_precision(backend, options.precision, /*planning=*/true, "report");
  r.precision = to_string(options.precision);
  r.algorithm = to_string(options.conv_transpose2d_algo);
  r.batch = options.batch;
  r.threads = session_threads(options.threads);
  r.file_bytes = model->file_bytes();
  r.weight_bytes = model->weight_bytes();
  std::vector<PlannedModel> planned;
  for (ConvTranspose2DAlgo algo : kAlgorithms) planned.push_back(plan_model(*model, backend, algo, options.batch, r.threads, options.precision));
  const size_t chosen = static_cast<size_t>(std::find(std::begin(kAlgorithms), std::end(kAlgorithms), options.conv_transpose2d_algo) - std::begin(kAlgorithms));
  r.layers = planned[chosen].layers;
  for (size_t i = 0; i < r.layers.size(); ++i) {
    r.layers[i].macs_zero_insert = planned[1].layers[i].macs;
    for (const auto& p : planned)
      r.layers[i].by_algorithm.push_back({p.totals.algorithm, p.layers[i].macs, p.layers[i].workspace_bytes, p.layers[i].traffic_bytes});
  }
  r.totals = planned[chosen].totals;
  for (const auto& p : planned) r.algorithms.push_back(p.totals);
  return r;
}
}  // namespace

std::string MemoryReport::to_json() const {
  json j{{"model", model}, {"backend", backend}, {"precision", precision}, {"algorithm", algorithm}, {"batch", batch}, {"threads", threads}, {"file_bytes", file_bytes},
         {"weight_bytes", weight_bytes}, {"layers", layers}, {"totals", totals}, {"algorithms", algorithms}};
  // Names come from the model file; invalid UTF-8 in them is replaced, not fatal.
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

MemoryReport MemoryReport::from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    MemoryReport r;
    j.at("model").get_to(r.model);
    j.at("backend").get_to(r.backend);
    r.precision = j.value("precision", std::string("fp32"));  // reports written before it had a precision: fp32
    j.at("algorithm").get_to(r.algorithm);
    j.at("batch").get_to(r.batch);
    r.threads = j.value("threads", 1);  // reports written before it had threads: 1
    j.at("file_bytes").get_to(r.file_bytes);
    j.at("weight_bytes").get_to(r.weight_bytes);
    j.at("layers").get_to(r.layers);
    j.at("totals").get_to(r.totals);
    j.at("algorithms").get_to(r.algorithms);
    return r;
  } catch (const json::exception& e) {
    throw Error(std::string("memory report JSON: ") + e.what());
  }
}

std::string MemoryReport::to_table() const {
  auto os = text_stream();
  os << "memory report: " << (model.empty() ? "model" : model) << ", batch " << batch << ", " << threads << (threads == 1 ? " thread" : " threads")
     << ", " << backend << ", " << precision << ", algorithm " << algorithm << "\n\n";
  os << std::left << std::setw(3) << "#" << std::setw(19) << "op" << std::setw(18) << "output" << std::right << std::setw(10) << "MACs"
     << std::setw(14) << "MACs zero-ins" << std::setw(11) << "weights" << std::setw(11) << "act in" << std::setw(11) << "act out"
     << std::setw(11) << "workspace" << std::setw(22) << "arena offset+size" << std::setw(11) << "traffic" << "\n";
  for (const LayerMemory& l : layers) {
    std::string placement = l.output_shares_input ? "(shares input)" : human(l.output_offset) + " +" + human(l.output_buffer_bytes);
    os << std::left << std::setw(3) << l.index << std::setw(19) << l.kind << std::setw(18) << shape(l.output_shape) << std::right
       << std::setw(10) << count(l.macs) << std::setw(14) << count(l.macs_zero_insert) << std::setw(11) << human(l.weight_bytes)
       << std::setw(11) << human(l.input_bytes) << std::setw(11) << human(l.output_bytes) << std::setw(11) << human(l.workspace_bytes)
       << std::setw(22) << placement << std::setw(11) << human(l.traffic_bytes) << "\n";
  }
  os << "\n" << std::left << std::setw(44) << "totals" << std::right;
  for (const auto& a : algorithms) os << std::setw(14) << (a.algorithm == algorithm ? "[" + a.algorithm + "]" : a.algorithm);
  os << "\n";
  auto row = [&](const char* label, auto field, bool bytes) {
    os << std::left << std::setw(44) << label << std::right;
    for (const auto& a : algorithms) os << std::setw(14) << (bytes ? human(a.*field) : count(a.*field));
    os << "\n";
  };
  row("activation arena, planned (peak)", &AlgorithmTotals::arena_bytes, true);
  row("  lower bound (most bytes alive at once)", &AlgorithmTotals::arena_lower_bound_bytes, true);
  row("  without reuse (every tensor its own)", &AlgorithmTotals::no_reuse_bytes, true);
  row("workspace peak (inside the arena)", &AlgorithmTotals::workspace_peak_bytes, true);
  row("weight copies made by the session", &AlgorithmTotals::session_weight_bytes, true);
  row("session allocates (arena + copies)", &AlgorithmTotals::session_bytes, true);
  row("total with the mapped model file", &AlgorithmTotals::total_bytes, true);
  row("MACs per run", &AlgorithmTotals::macs, false);
  row("estimated memory traffic per run", &AlgorithmTotals::traffic_bytes, true);
  for (const LayerMemory& l : layers)
    if (l.unmaterialised_bytes)
      os << "\nop " << l.index << " " << l.kind << ": reads its inputs in place; the composed form's intermediate (channel stack) would take "
         << human(l.unmaterialised_bytes) << ", this op's workspace is " << human(l.workspace_bytes);
  os << "\nmodel file " << human(file_bytes) << " (weights " << human(weight_bytes) << "), mapped read-only, not copied\n";
  return os.str();
}

}  // namespace edgegan

// edgegan: run .egan generators from the command line. Uses only the public API.
//   edgegan generate MODEL -n 16 --seed 1 [--label 7] [--threads 2] -o grid.png
//   edgegan run MODEL --input z=z.npy [--input label=l.npy] -o out.npy
//   edgegan inspect MODEL
//   edgegan report MODEL [--batch N] [--threads T] [--json] [--chart FILE]
//   edgegan bench MODEL [--batch N] [--threads T] [--algo split|zero-insert|col2im] [--backend cpu|cuda] [--repeat R] [--json]
//   edgegan finetune G.egan [--discriminator D.egan] --data images.npy [--labels l.npy] --steps N -o tuned.egan
//   edgegan finetune G.egan --data inputs.npy --targets outputs.npy --steps N -o tuned.egan   (paired)
//   edgegan translate MODEL in.png [more.jpg | folder/]... [--list files.txt] -o out.png|out.jpg|out.webp|folder/ [-f png|jpg|webp] [--quality 95]
//                     [--tile 256 --overlap 16] [--memory-limit 256M] [--shard I/N] [--backend cpu|cuda]
//   edgegan upscale MODEL in.jpg -o big.png [-s 2] [--alpha lanczos|model] [--tile N] [--tile-stats exact|approx] [--memory-limit 256M] (and translate's options)
//   edgegan verify MODEL...
// Every command verifies a model's checksums as it loads it, unless --no-verify.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <tuple>

#include "cli/bench.h"
#include "cli/finetune.h"
#include "cli/image_commands.h"
#include "cli/model_loading.h"
#include "cli/precision_choice.h"
#include "edgegan/edgegan.h"
#include "edgegan/image_io.h"
#include "edgegan/io.h"
#include "edgegan/report.h"
#include "edgegan/trainer.h"

namespace {

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + (d[i] < 0 ? std::string("N") : std::to_string(d[i]));
  return s;
}

std::string precision;  // --precision (generate, run, report); "": the backend's default
int device = 0;           // --device (every command that takes --backend)

edgegan::SessionOptions session_options(int threads, int batch, const std::string& algo, const std::string& backend) {
  edgegan::SessionOptions o;
  o.threads = threads;
  o.batch = batch;
  o.conv_transpose2d_algo = edgegan::conv_transpose2d_algo_from_string(algo);
  o.backend = edgegan::backend_from_string(backend);
  o.device = device;
  o.precision = edgegan_cli::choose_precision(precision, o.backend, device).precision;
  return o;
}

int generate(const std::string& path, int count, uint64_t seed, int label, int threads, const std::string& algo,
             const std::string& backend, int columns, int scale, const std::string& out, const std::string& npy_out) {
  edgegan::ensure_not_an_input(out, {path});
  if (!npy_out.empty()) edgegan::ensure_not_an_input(npy_out, {path});
  auto model = edgegan_cli::load_model(path);
  if (model->noise_size() == 0) throw edgegan::Error("'" + path + "' has no noise input; it is not a generator (use 'edgegan run')");
  const int64_t classes = model->label_count();
  if (label >= 0 && classes == 0) throw edgegan::Error("--label given, but '" + path + "' is not a conditional model");
  if (label >= classes && classes > 0) throw edgegan::Error("--label " + std::to_string(label) + " is outside 0.." + std::to_string(classes - 1));
  edgegan::Session session(model, session_options(threads, count, algo, backend));
  const std::vector<float> noise = edgegan::normal_noise(static_cast<size_t>(count * model->noise_size()), seed);
  std::vector<int64_t> labels;
  if (classes > 0) {
    // --label L: every image of class L. Otherwise class = column (one column per class
    // unless --columns says otherwise), so each grid row counts 0, 1, 2, ...
    if (label < 0 && columns == 0) columns = static_cast<int>(classes);
    for (int i = 0; i < count; ++i) labels.push_back(label >= 0 ? label : (i % std::max(columns, 1)) % classes);
  }
  const edgegan::Tensor images = session.generate(noise, labels);
  const edgegan::OutputInfo& info = model->outputs().front();
  if (!npy_out.empty()) edgegan::write_npy(npy_out, images);
  edgegan::write_png_grid(out, images, columns, scale, info.value_min, info.value_max);
  std::cout << "wrote " << count << " images (" << dims_text({images.shape[1], images.shape[2], images.shape[3]}) << ") to " << out << "\n";
  return 0;
}

int run(const std::string& path, const std::vector<std::string>& inputs, const std::string& out, bool nhwc, int threads,
        const std::string& algo, const std::string& backend) {
  auto model = edgegan_cli::load_model(path);
  std::vector<edgegan::Tensor> tensors;
  std::vector<std::string> input_files = {path};
  int64_t batch = -1;
  for (const std::string& spec : inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw edgegan::Error("--input must be NAME=FILE.npy, got '" + spec + "'");
    input_files.push_back(spec.substr(eq + 1));
    edgegan::Tensor t = edgegan::read_npy(spec.substr(eq + 1));
    t.name = spec.substr(0, eq);
    const edgegan::InputInfo* info = nullptr;
    for (const auto& in : model->inputs())
      if (in.name == t.name) info = &in;
    if (!info) throw edgegan::Error("the model has no input named '" + t.name + "'");
    if (t.shape.empty()) throw edgegan::Error("input '" + t.name + "' must have a batch dimension");
    // .npy files hold ONNX (NCHW) order unless --nhwc: convert image inputs to the engine's NHWC.
    if (info->layout == edgegan::Layout::kNHWC && !nhwc) t = edgegan::to_nhwc(t);
    else if (info->layout == edgegan::Layout::kNHWC) t.layout = edgegan::Layout::kNHWC;
    if (batch >= 0 && t.shape[0] != batch) throw edgegan::Error("inputs disagree on the batch size");
    batch = t.shape[0];
    tensors.push_back(std::move(t));
  }
  if (batch < 1) throw edgegan::Error("no inputs given (use --input NAME=FILE.npy for each model input)");
  edgegan::Session session(model, session_options(threads, static_cast<int>(batch), algo, backend));
  std::vector<edgegan::Tensor> outputs = session.run(tensors);
  auto file_of = [&](const edgegan::Tensor& t) {
    if (outputs.size() == 1) return out;
    const size_t dot = out.rfind(".npy");
    return (dot == std::string::npos ? out : out.substr(0, dot)) + "." + t.name + ".npy";
  };
  for (const auto& t : outputs) edgegan::ensure_not_an_input(file_of(t), input_files);  // before writing anything
  for (size_t i = 0; i < outputs.size(); ++i) {
    edgegan::Tensor t = nhwc ? outputs[i] : edgegan::to_nchw(outputs[i]);
    const std::string file = file_of(outputs[i]);
    edgegan::write_npy(file, t);
    std::cout << "wrote " << t.name << " " << dims_text(t.shape) << " to " << file << "\n";
  }
  return 0;
}

int inspect(const std::string& path) {
  auto model = edgegan_cli::load_model(path);
  std::cout << path << ": schema " << model->schema_version() << ", by " << model->producer() << ", checksums "
            << edgegan::to_string(model->integrity()) << "\n"
            << "source sha256 " << model->source_sha256() << "\n";
  for (const auto& [k, v] : model->metadata()) std::cout << "  " << k << ": " << v << "\n";
  for (const auto& in : model->inputs()) {
    std::cout << "input  '" << in.name << "' " << dims_text(in.dims) << (in.layout == edgegan::Layout::kNHWC ? " NHWC" : "")
              << (in.dtype == edgegan::DType::kInt64 ? " int64" : " float32");
    if (in.role == edgegan::InputRole::kNoise) std::cout << "  noise (" << in.noise_size << " values)";
    if (in.role == edgegan::InputRole::kLabel) std::cout << "  label (" << in.label_count << " classes: 0.." << in.label_count - 1 << ")";
    if (in.role == edgegan::InputRole::kImage) std::cout << "  image";
    std::cout << "\n";
  }
  for (const auto& out : model->outputs()) {
    std::cout << "output '" << out.name << "' " << dims_text(out.dims) << (out.layout == edgegan::Layout::kNHWC ? " NHWC" : "");
    if (out.role == edgegan::OutputRole::kImage) std::cout << "  image";
    if (out.role == edgegan::OutputRole::kScore) std::cout << "  score";
    if (!std::isnan(out.value_min)) std::cout << ", values in [" << out.value_min << ", " << out.value_max << "]";
    std::cout << "\n";
  }
  int index = 0;
  for (const auto& op : model->ops()) {
    std::cout << "op " << std::setw(2) << index++ << " " << std::left << std::setw(19) << op.kind << std::right;
    for (size_t i = 0; i < op.inputs.size(); ++i) std::cout << (i ? ", " : "") << op.inputs[i] << " " << dims_text(op.input_dims[i]);
    std::cout << " -> " << op.outputs[0] << " " << dims_text(op.output_dims[0]) << "\n";
    if (!op.attributes.empty()) std::cout << "       " << op.attributes << "\n";
    if (op.weight_bytes) std::cout << "       weights " << op.weight_bytes << " bytes" << (op.fp16_weights ? " (sub-kernels fp16)" : "") << "\n";
    if (!op.phases.empty()) {
      std::cout << "       stored as " << op.phases.size() << (op.phases.size() == 1 ? " phase" : " phases") << " (taps h x w):";
      for (const auto& p : op.phases) std::cout << " (" << p.phase_h << "," << p.phase_w << ")=" << p.taps_h << "x" << p.taps_w;
      std::cout << "\n";
      if (op.weight_panel_columns > 0)
        std::cout << "       each tap's weights in column panels of " << op.weight_panel_columns << "\n";
    }
    if (!op.name.empty()) std::cout << "       from " << op.name << "\n";
  }
  std::cout << "weights " << model->weight_bytes() << " bytes (mapped), file " << model->file_bytes() << " bytes\n";
  // The precisions a session of this build can run it in, per backend (--precision).
  std::cout << "precision:";
  for (edgegan::Backend b : {edgegan::Backend::kCpu, edgegan::Backend::kCuda, edgegan::Backend::kVulkan}) {
    std::string runs;
    for (edgegan::Precision p : {edgegan::Precision::kFp32, edgegan::Precision::kTf32, edgegan::Precision::kFp16})
      if (edgegan::backend_runs_precision(b, p)) runs += std::string(runs.empty() ? "" : " ") + edgegan::to_string(p);
    std::cout << (b == edgegan::Backend::kCpu ? " " : "; ") << edgegan::to_string(b) << " " << (runs.empty() ? "not in this build" : runs);
    // The default where --precision is not given, where it is not fp32.
    if (b == edgegan::Backend::kVulkan && !runs.empty()) {
      const edgegan_cli::PrecisionChoice d = edgegan_cli::choose_precision("", b, device);
      std::cout << " (default " << edgegan::to_string(d.precision) << (d.fallback.empty() ? "" : ": " + d.fallback) << ")";
    }
  }
  std::cout << "\ncuda convolutions: " << edgegan::backend_convolution_tactics(edgegan::Backend::kCuda) << "\n";
  return 0;
}

// Fine-tuning memory: what a Trainer holds for this model and batch (planned, nothing allocated).
int training_report(const std::string& path, int batch, const std::string& optimizer, bool json) {
  auto model = edgegan_cli::load_model(path);
  edgegan::TrainerOptions options;
  options.batch = batch;
  options.optimizer = optimizer == "sgd" ? edgegan::Optimizer::kSgd : edgegan::Optimizer::kAdam;
  options.momentum = optimizer == "sgd-momentum" ? 0.9f : 0.f;
  const edgegan::TrainingMemory m = edgegan::training_memory(model, options);
  // The first four share one planned arena (a buffer is reused once nothing reads it),
  // so they add up to more than the arena row; the total counts the arena.
  const std::pair<const char*, int64_t> rows[] = {
      {"activations kept for backward", m.activations},  {"activation gradients", m.activation_gradients},
      {"labels", m.labels},                              {"kernels' scratch", m.scratch},
      {"arena (the four above, shared)", m.arena},       {"parameters (trainer's copies)", m.parameters},
      {"parameter gradients", m.parameter_gradients},    {"optimizer state", m.optimizer_state},
      {"weight copies (Winograd, lanes)", m.weight_copies}, {"mapped weights (model file)", m.mapped_weights},
      {"total", m.total()}};
  if (json) {
    std::cout << "{\"model\": \"" << path << "\", \"batch\": " << batch << ", \"optimizer\": \"" << optimizer << "\"";
    const char* keys[] = {"activations", "activation_gradients", "labels", "scratch", "arena", "parameters",
                          "parameter_gradients", "optimizer_state", "weight_copies", "mapped_weights", "total"};
    for (size_t i = 0; i < std::size(rows); ++i) std::cout << ", \"" << keys[i] << "_bytes\": " << rows[i].second;
    std::cout << "}\n";
    return 0;
  }
  std::cout << "training memory of " << path << ", batch " << batch << ", " << optimizer << "\n";
  for (const auto& [name, bytes] : rows)
    std::cout << "  " << std::left << std::setw(34) << name << std::right << std::setw(14) << bytes << " bytes  " << std::fixed
              << std::setprecision(2) << std::setw(9) << static_cast<double>(bytes) / (1 << 20) << " MiB\n";
  return 0;
}

// "256x192" -> {256, 192} (height x width).
std::pair<int64_t, int64_t> parse_input_size(const std::string& text) {
  const size_t x = text.find('x');
  try {
    size_t used_h = 0, used_w = 0;
    const int64_t h = std::stoll(text.substr(0, x), &used_h), w = std::stoll(text.substr(x + 1), &used_w);
    if (x != std::string::npos && used_h == x && used_w == text.size() - x - 1 && h > 0 && w > 0) return {h, w};
  } catch (const std::exception&) {
  }
  throw edgegan::Error("--input-size '" + text + "' is not HEIGHTxWIDTH, e.g. 256x256");
}

int report(const std::string& path, int batch, int threads, const std::string& backend, const std::string& algo, bool json,
           const std::string& chart, const std::string& input_size) {
  if (!chart.empty()) edgegan::ensure_not_an_input(chart, {path});
  auto model = edgegan_cli::load_model(path);
  if (!input_size.empty()) {  // an image model run at another size (a tile of translate/upscale)
    const auto [h, w] = parse_input_size(input_size);
    model = edgegan::Model::at_input_size(model, h, w);
  }
  std::vector<std::string> algos = {algo};
  if (algo == "all") algos = {"split", "zero-insert", "col2im"};
  std::vector<edgegan::MemoryReport> reports;
  for (const std::string& a : algos) reports.push_back(edgegan::memory_report(model, session_options(threads, batch, a, backend), path));
  if (json) {
    // One object for one algorithm; an array of objects for --algo all.
    if (reports.size() == 1) {
      std::cout << reports[0].to_json() << "\n";
    } else {
      std::cout << "[\n";
      for (size_t i = 0; i < reports.size(); ++i) std::cout << reports[i].to_json() << (i + 1 < reports.size() ? ",\n" : "\n");
      std::cout << "]\n";
    }
  } else {
    for (size_t i = 0; i < reports.size(); ++i) std::cout << (i ? "\n" : "") << reports[i].to_table();
  }
  if (!chart.empty()) {
    edgegan::write_report_chart(reports[0], chart);
    if (!json) std::cout << "wrote chart " << chart << "\n";
  }
  return 0;
}

}  // namespace

constexpr const char* kPrecisionHelp =
    "fp32, tf32 or fp16 (default: fp16 on --backend vulkan where the device has 16-bit storage, else fp32). tf32: CUDA, GEMM operands rounded "
    "on the tensor cores, ~1e-3 relative error; fp16: Vulkan and cpu, activations stored as halves (Vulkan: the weights too) with FP32 arithmetic, ~1e-2 relative error";

int main(int argc, char** argv) {
  CLI::App app{"edgegan: GAN generator inference on the edge"};
  app.require_subcommand(1);
  app.fallthrough();  // --no-verify may follow the subcommand
  bool no_verify = false;
  app.add_flag("--no-verify", no_verify,
               "skip the model's checksums (faster first load of a big model; damage to its weights goes unnoticed)");
  app.set_version_flag("--version", std::string("edgegan ") + edgegan::version() + " (.egan schema " +
                                        std::to_string(edgegan::file_format_version()) + ")");
  // Every argument error is one line, like every other error.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("edgegan: error: ") + e.what() + " (see edgegan --help)\n";
  });

  std::string model, out = "grid.png", npy_out, algo = "split", backend = "cpu";
  int count = 16, label = -1, threads = 0, columns = 0, scale = 4;
  uint64_t seed = 0;
  auto* gen = app.add_subcommand("generate", "generate images from noise and write them as one PNG grid");
  gen->add_option("model", model, ".egan generator")->required()->check(CLI::ExistingFile);
  gen->add_option("-n,--count", count, "number of images")->check(CLI::Range(1, 4096));
  gen->add_option("--seed", seed, "noise seed (same seed, same images)");
  gen->add_option("--label", label, "class of every image (conditional models)")->check(CLI::NonNegativeNumber);
  gen->add_option("--threads", threads, "CPU threads (0 = all cores)")->check(CLI::Range(0, 1024));
  gen->add_option("--columns", columns, "images per grid row (default: near-square, or one per class)")->check(CLI::Range(0, 4096));
  gen->add_option("--scale", scale, "pixel magnification in the PNG")->check(CLI::Range(1, 64));
  gen->add_option("--algo", algo, "transposed-conv algorithm")->check(CLI::IsMember({"split", "zero-insert", "col2im"}));
  gen->add_option("--backend", backend, "cpu, cuda or vulkan")->check(CLI::IsMember({"cpu", "cuda", "vulkan"}));
  gen->add_option("--device", device, "Vulkan: the physical device's index (vulkaninfo's order)")->check(CLI::Range(0, 255));
  gen->add_option("--precision", precision, kPrecisionHelp)->check(CLI::IsMember({"fp32", "tf32", "fp16"}));
  gen->add_option("--npy", npy_out, "also write the raw NHWC floats to this .npy file");
  gen->add_option("-o,--output", out, "PNG file to write");

  std::vector<std::string> inputs;
  std::string run_model, run_out = "out.npy", run_algo = "split", run_backend = "cpu";
  int run_threads = 0;
  bool nhwc = false;
  auto* runc = app.add_subcommand("run", "run a model on .npy inputs (ONNX NCHW order) and write .npy outputs");
  runc->add_option("model", run_model, ".egan model")->required()->check(CLI::ExistingFile);
  runc->add_option("-i,--input", inputs, "NAME=FILE.npy, once per model input")->required();
  runc->add_option("-o,--output", run_out, "output .npy (NAME is inserted when the model has several outputs)");
  runc->add_flag("--nhwc", nhwc, "inputs and outputs in the engine's NHWC order instead of ONNX's NCHW");
  runc->add_option("--threads", run_threads, "CPU threads (0 = all cores)")->check(CLI::Range(0, 1024));
  runc->add_option("--algo", run_algo, "transposed-conv algorithm")->check(CLI::IsMember({"split", "zero-insert", "col2im"}));
  runc->add_option("--backend", run_backend, "cpu, cuda or vulkan")->check(CLI::IsMember({"cpu", "cuda", "vulkan"}));
  runc->add_option("--device", device, "Vulkan: the physical device's index (vulkaninfo's order)")->check(CLI::Range(0, 255));
  runc->add_option("--precision", precision, kPrecisionHelp)->check(CLI::IsMember({"fp32", "tf32", "fp16"}));

  std::string inspect_model;
  auto* insp = app.add_subcommand("inspect", "show a model's inputs, ops, shapes and the phases of each transposed conv");
  insp->add_option("model", inspect_model, ".egan model")->required()->check(CLI::ExistingFile);

  std::string report_model, report_algo = "split", report_backend = "cpu", chart;
  int report_batch = 1, report_threads = 0;
  bool json = false;
  auto* rep = app.add_subcommand("report", "memory the model needs: per layer, totals, and each transposed-convolution algorithm side by side");
  rep->add_option("model", report_model, ".egan model")->required()->check(CLI::ExistingFile);
  rep->add_option("--batch", report_batch, "batch size")->check(CLI::Range(1, 65536));
  rep->add_option("--threads", report_threads, "threads the session would run on (0 = all cores): the heads' workspace is per thread")
      ->check(CLI::Range(0, 1024));
  rep->add_option("--backend", report_backend, "cpu, cuda or vulkan")->check(CLI::IsMember({"cpu", "cuda", "vulkan"}));
  rep->add_option("--device", device, "Vulkan: the physical device's index (vulkaninfo's order)")->check(CLI::Range(0, 255));
  rep->add_option("--precision", precision, "the precision the session would run in (fp16 plans a half-size activation arena); " + std::string(kPrecisionHelp))
      ->check(CLI::IsMember({"fp32", "tf32", "fp16"}));
  rep->add_option("--algo", report_algo, "algorithm of the per-layer rows")->check(CLI::IsMember({"split", "zero-insert", "col2im", "all"}));
  rep->add_flag("--json", json, "JSON instead of a table (field names documented in docs/memory-planner.md)");
  rep->add_option("--chart", chart, "write a per-layer bar chart (.svg or .png)");
  std::string report_input_size;
  rep->add_option("--input-size", report_input_size, "image models: plan for this input size, HEIGHTxWIDTH (e.g. a tile: 256x256)");
  bool training = false;
  std::string report_optimizer = "adam";
  rep->add_flag("--training", training, "memory for fine-tuning instead: kept activations, gradients, optimizer state");
  rep->add_option("--optimizer", report_optimizer, "with --training: adam, sgd or sgd-momentum")->check(CLI::IsMember({"adam", "sgd", "sgd-momentum"}));

  edgegan_cli::FinetuneArgs ft;
  auto* fin = app.add_subcommand("finetune", "fine-tune a generator on images (adversarially with --discriminator) and save it");
  fin->add_option("generator", ft.generator, ".egan generator")->required()->check(CLI::ExistingFile);
  fin->add_option("--discriminator", ft.discriminator, ".egan discriminator (logits); without one, each image is paired with a fixed noise vector and reconstructed")
      ->check(CLI::ExistingFile);
  fin->add_option("--data", ft.data, "float32 .npy of images, N x C x H x W (NCHW) in the generator's output range")->required()->check(CLI::ExistingFile);
  fin->add_option("--labels", ft.labels, "int64 .npy with one class per image (conditional models)")->check(CLI::ExistingFile);
  fin->add_option("--targets", ft.targets,
                  "paired fine-tuning (image-to-image, super-resolution): float32 .npy of the outputs wanted for the --data inputs, "
                  "N x C x H x W; --data then holds the model's inputs")
      ->check(CLI::ExistingFile);
  fin->add_option("--steps", ft.steps, "optimizer steps")->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  fin->add_option("--batch", ft.batch, "images per step")->check(CLI::Range(1, 65536));
  fin->add_option("--optimizer", ft.optimizer, "adam or sgd")->check(CLI::IsMember({"adam", "sgd"}));
  fin->add_option("--lr", ft.learning_rate, "learning rate")->check(CLI::Range(1e-9f, 10.f));
  fin->add_option("--d-lr", ft.discriminator_learning_rate, "discriminator learning rate (default: --lr)")->check(CLI::Range(1e-9f, 10.f));
  fin->add_option("--freeze", ft.frozen_generator_ops, "generator ops whose weights stay fixed, e.g. --freeze 1,2,3 (indices from 'edgegan inspect')")
      ->delimiter(',');
  fin->add_option("--beta1", ft.beta1, "Adam beta1")->check(CLI::Range(0.f, 0.9999f));
  fin->add_option("--beta2", ft.beta2, "Adam beta2")->check(CLI::Range(0.f, 0.99999f));
  fin->add_option("--momentum", ft.momentum, "SGD momentum")->check(CLI::Range(0.f, 0.9999f));
  fin->add_option("--loss", ft.loss, "reconstruction loss without a discriminator")->check(CLI::IsMember({"mse", "l1"}));
  fin->add_option("--seed", ft.seed, "seed of the batch order and the noise");
  fin->add_option("--threads", ft.threads, "CPU threads (0 = all cores)")->check(CLI::Range(0, 1024));
  fin->add_option("-o,--output", ft.output, "tuned generator .egan to write (atomically)")->required();
  fin->add_option("--discriminator-output", ft.discriminator_output, "also write the tuned discriminator here");
  fin->add_flag("-q,--quiet", ft.quiet, "no progress bar");

  edgegan_cli::BenchArgs bn;
  auto* bch = app.add_subcommand("bench", "median time of each layer and of the whole model");
  bch->add_option("model", bn.model, ".egan model")->required()->check(CLI::ExistingFile);
  bch->add_option("--batch", bn.batch, "batch size")->check(CLI::Range(1, 65536));
  bch->add_option("--threads", bn.threads, "CPU threads (0 = all cores)")->check(CLI::Range(0, 1024));
  bch->add_option("--algo", bn.algo, "transposed-conv algorithm")->check(CLI::IsMember({"split", "zero-insert", "col2im"}));
  bch->add_option("--backend", bn.backend, "cpu, cuda or vulkan")->check(CLI::IsMember({"cpu", "cuda", "vulkan"}));
  bch->add_option("--device", bn.device, "Vulkan: the physical device's index (vulkaninfo's order)")->check(CLI::Range(0, 255));
  bch->add_option("--precision", bn.precision, kPrecisionHelp)->check(CLI::IsMember({"fp32", "tf32", "fp16"}));
  bch->add_option("--repeat", bn.repeat, "timed runs (the median is reported)")->check(CLI::Range(1, 100000));
  bch->add_option("--warmup", bn.warmup, "untimed runs first")->check(CLI::Range(0, 100000));
  bch->add_flag("--json", bn.json, "JSON: total_ms (median), total_mean_ms, isa, microkernel, and per layer name, kernel, macs, ms");
  std::string bench_input_size;
  bch->add_option("--input-size", bench_input_size, "an image model at another input size, HEIGHTxWIDTH (as translate/upscale run it)");

  // translate and upscale: the same options, one command per model family.
  edgegan_cli::ImageCommandArgs translate_args, upscale_args;
  upscale_args.upscale = true;
  auto add_image_command = [&](const char* name, const char* help, edgegan_cli::ImageCommandArgs& a) {
    auto* c = app.add_subcommand(name, help);
    c->add_option("model", a.model, ".egan model")->required()->check(CLI::ExistingFile);
    c->add_option("images", a.inputs, "PNG, JPEG or WebP files, or folders of them (walked recursively; subfolders are kept in the output folder); or one video (.mp4, .mkv, .mov, .webm, .avi)");
    c->add_option("--list", a.list, "a text file naming more pictures or folders, one per line")->check(CLI::ExistingFile);
    c->add_option("-o,--output", a.output, "the picture to write (one input; its extension picks the format), a folder, or a video for a video")->required();
    c->add_option("-f,--format", a.format, "png, jpg or webp (default: -o's extension; png into a folder)");
    c->add_option("--quality", a.quality, "jpg/webp quality 1-100 (default 95; webp at 100 is lossless)")->check(CLI::Range(1, 100));
    c->add_option("-s,--outscale", a.outscale, "final size = input size x this, by a Lanczos resize after the model's own scale (default: the model's scale)")
        ->check(CLI::Range(0.01, 64.0));
    c->add_option("--alpha", a.alpha,
                  "a transparent picture's alpha plane: lanczos (resized on its own, the default) or model (run through the model as a "
                  "grey picture, as Real-ESRGAN's script does; a second model pass)")
        ->check(CLI::IsMember({"lanczos", "model"}));
    c->add_option("--shard", a.shard, "I/N: run only the I-th of N interleaved shares of the sorted picture list (one per machine)");
    c->add_option("--threads", a.threads, "CPU threads (0 = all cores)")->check(CLI::Range(0, 1024));
    c->add_option("--backend", a.backend, "cpu, cuda or vulkan: where the model runs (decoding, blending and encoding stay on the CPU)")
        ->check(CLI::IsMember({"cpu", "cuda", "vulkan"}));
    c->add_option("--device", a.device, "Vulkan: the physical device's index (vulkaninfo's order)")->check(CLI::Range(0, 255));
    c->add_option("--precision", a.precision, kPrecisionHelp)->check(CLI::IsMember({"fp32", "tf32", "fp16"}));
    c->add_option("--tile", a.tile, "tile side in input pixels (0 = the whole image; rounded down to the model's stride)")->check(CLI::Range(0, 1 << 20));
    c->add_option("--overlap", a.overlap, "input pixels shared by neighbouring tiles, blended")->check(CLI::Range(0, 1 << 16));
    c->add_option("--tile-stats", a.tile_stats,
                  "tiles of a model with instance/group norms or squeeze-and-excitation: exact (their statistics gathered over the whole "
                  "image in extra passes, so tiles equal the untiled run; the default on the cpu backend) or approx (each tile its own: one "
                  "pass, differs everywhere; the default elsewhere)")
        ->check(CLI::IsMember({"exact", "approx"}));
    c->add_option("--batch", a.batch, "tiles run through the model together: a video's frames, or a tiled picture's tiles (default 1)")
        ->check(CLI::Range(1, 1024));
    c->add_option("--memory-limit", a.memory_limit,
                  "peak memory (RSS) for the run, e.g. 256M: the largest tile that fits it. With --backend cuda it bounds the session's device "
                  "memory (arena, weights) and the host's buffers together, not the CUDA runtime's own (its context)");
    auto* range = c->add_option("--input-range", a.input_range, "the model's input values for pixels 0 and 255, e.g. -1,1 (default: as converted)");
    auto* mean = c->add_option("--mean", a.mean, "per-channel mean of pixel/255 (with --std)");
    auto* stdv = c->add_option("--std", a.std, "per-channel std of pixel/255 (with --mean)");
    c->add_option("--output-range", a.output_range, "the model's output values for pixels 0 and 255 (default: as converted)");
    range->excludes(mean)->excludes(stdv);
    mean->needs(stdv);
    stdv->needs(mean);
    c->add_flag("-q,--quiet", a.quiet, "no progress and no summary");
    c->add_option("--codec", a.codec, "video output: the FFmpeg encoder (default libx264 where the container takes it; ffv1 for lossless .mkv)");
    c->add_option("--crf", a.crf, "video output: the encoder's constant-rate-factor quality (x264: 0-51, lower is better)")->check(CLI::Range(0, 63));
    return c;
  };
  auto* translate = add_image_command("translate", "image-to-image (CycleGAN, pix2pix, style transfer, AnimeGAN): PNG/JPEG/WebP in and out, or a video", translate_args);
  auto* upscale = add_image_command("upscale", "super-resolution: PNG/JPEG/WebP in and out, or a video; tiled to fit --memory-limit", upscale_args);
  const char* image_exit_codes = "exit codes: 0 every picture written; 1 some pictures failed (the others were written); 2 nothing run (bad arguments, list, --shard, output or model); a video: 0 written, 1 not\n";
  translate->footer(image_exit_codes);
  upscale->footer(image_exit_codes);

  std::vector<std::string> verify_models;
  auto* ver = app.add_subcommand("verify", "check models' checksums and structure without running them");
  ver->add_option("models", verify_models, ".egan models")->required()->check(CLI::ExistingFile);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // translate/upscale document their codes: an argument error is "nothing run" (2).
    // The command is the first word that is not an option (the parse stopped early).
    std::string command;
    for (int i = 1; i < argc && command.empty(); ++i)
      if (argv[i][0] != '-') command = argv[i];
    return code != 0 && (command == "translate" || command == "upscale") ? edgegan_cli::kExitNothingRun : code;
  }
  edgegan_cli::set_verify_checksums(!no_verify);
  try {
    if (*ver) {
      if (no_verify) throw edgegan::Error("verify takes no --no-verify");
      return edgegan_cli::verify(verify_models);
    }
    if (*gen) return generate(model, count, seed, label, threads, algo, backend, columns, scale, out, npy_out);
    if (*runc) return run(run_model, inputs, run_out, nhwc, run_threads, run_algo, run_backend);
    if (*insp) return inspect(inspect_model);
    if (*fin) return edgegan_cli::finetune(ft);
    if (*bch) {
      if (!bench_input_size.empty()) std::tie(bn.input_height, bn.input_width) = parse_input_size(bench_input_size);
      return edgegan_cli::bench(bn);
    }
    if (*rep && training) {
      if (!chart.empty() || report_backend != "cpu" || !report_input_size.empty())
        throw edgegan::Error("--training takes neither --chart, --backend nor --input-size");
      if (!precision.empty() && precision != "fp32") throw edgegan::Error("--training: fine-tuning runs on the cpu backend, in fp32 only");
      return training_report(report_model, report_batch, report_optimizer, json);
    }
    if (*rep) return report(report_model, report_batch, report_threads, report_backend, report_algo, json, chart, report_input_size);
    if (*translate) return edgegan_cli::run_image_command(translate_args);
    if (*upscale) return edgegan_cli::run_image_command(upscale_args);
  } catch (const std::exception& e) {
    std::cerr << "edgegan: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

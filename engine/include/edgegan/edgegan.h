// edgegan public C++ API.
//
//   auto model = edgegan::Model::load("dcgan.egan");        // mmap + verify + checks
//   edgegan::Session session(model, {.batch = 16});          // plans one arena
//   std::vector<float> z = edgegan::normal_noise(16 * model->noise_size(), /*seed=*/1);
//   edgegan::Tensor images = session.generate(z);            // NHWC floats
//
// Every failure (bad file, wrong shapes, bad labels) throws edgegan::Error with a
// message naming the problem. A Model is immutable and may be shared by several
// Sessions on different threads; a Session is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgegan/version.h"

namespace edgegan {

// The version of the library linked in, "MAJOR.MINOR.PATCH" (EDGEGAN_VERSION_STRING is
// the headers' version; with a shared library the two can differ).
const char* version();
// The .egan schema version this library reads and its converter writes
// (Model::schema_version() of every file it accepts; docs/file-format.md).
uint32_t file_format_version();

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DType { kFloat32, kInt64 };
enum class Layout { kRowMajor, kNHWC };  // rank-4 activations are NHWC; the rest row-major
enum class Backend { kCpu, kCuda, kVulkan };
// Whether a backend can run here (built in, and for CUDA and Vulkan a usable device;
// `device`: the Vulkan physical device's index); otherwise `why` (if given) says what
// is missing, as a session would.
bool backend_available(Backend backend, std::string* why = nullptr, int device = 0);
const char* to_string(Backend backend);              // "cpu", "cuda", "vulkan"
Backend backend_from_string(const std::string& name);  // the reverse; Error naming the choices otherwise
// How transposed convolutions run. kSplit is the product; the others are baselines.
enum class ConvTranspose2DAlgo { kSplit, kZeroInsert, kCol2im };

const char* to_string(ConvTranspose2DAlgo algo);
ConvTranspose2DAlgo conv_transpose2d_algo_from_string(const std::string& name);  // "split" | "zero-insert" | "col2im"

// The arithmetic a session runs in. kFp32: FP32 throughout (the CPU's 1e-4 tolerances).
// kTf32 (CUDA): GEMM operands rounded to TF32 on the tensor cores, FP32 accumulation
// and activations, about 1e-3 relative error. kFp16 (Vulkan; CUDA's is not built yet):
// half-precision activations between layers and half weights, FP32 arithmetic and
// accumulation, within 2e-2 of FP32. The CPU backend runs kFp32 only and refuses the
// others.
enum class Precision { kFp32, kTf32, kFp16 };
const char* to_string(Precision precision);             // "fp32" | "tf32" | "fp16"
Precision precision_from_string(const std::string& name);  // throws Error naming the choices
// Whether this build's `backend` runs sessions in `precision` (whether the machine can
// run the backend at all is backend_available's question); otherwise `why` says why not.
bool backend_runs_precision(Backend backend, Precision precision, std::string* why = nullptr);
// The precision the CLI and Python choose when none is named: fp16 on Vulkan where
// device `device` has 16-bit storage buffers, else fp32 (SessionOptions' own default
// stays fp32). `why`, if given, says why a Vulkan device falls back to fp32 ("" else).
Precision default_precision(Backend backend, int device = 0, std::string* why = nullptr);
// How a backend of this build chooses its convolutions, in one line: on CUDA, the
// project's kernels alone, or timed against cuDNN's (EDGEGAN_CUDNN=1), and when cuDNN is
// asked for and cannot be loaded, why not. "" for the CPU; "not in this build" without CUDA.
std::string backend_convolution_tactics(Backend backend);

// The CPU kernel family this process runs: "avx512", "avx2" or "scalar" on x86-64
// (chosen from CPUID), "neon" on AArch64, unless the environment variable
// EDGEGAN_ISA forces one. Throws Error
// if EDGEGAN_ISA names a family that is unknown or this CPU cannot run.
std::string cpu_kernel_family();
// The GEMM micro-kernel of that family, e.g. "gemm_ukernel_8x32__avx512".
std::string cpu_gemm_ukernel();

// A host tensor in the engine's storage layout. For rank 4 and kNHWC, shape is
// [N, H, W, C]. Exactly one of f32 / i64 holds data, as dtype says.
struct Tensor {
  std::string name;
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kRowMajor;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int64_t> i64;
  int64_t elements() const;
};

enum class InputRole { kOther, kNoise, kLabel, kImage };
enum class OutputRole { kOther, kImage, kScore };

struct InputInfo {
  std::string name;
  InputRole role = InputRole::kOther;
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kRowMajor;
  std::vector<int64_t> dims;     // storage order, dims[0] = -1 (batch)
  int64_t noise_size = 0;        // kNoise: values per sample
  int64_t label_count = 0;       // kLabel: valid labels are 0 .. label_count-1
};

struct OutputInfo {
  std::string name;
  OutputRole role = OutputRole::kOther;
  Layout layout = Layout::kRowMajor;
  std::vector<int64_t> dims;     // storage order, dims[0] = -1 (batch)
  float value_min = 0, value_max = 0;  // both NaN when the range is unbounded
};

struct PhaseInfo {
  int phase_h = 0, phase_w = 0;
  int taps_h = 0, taps_w = 0;
};

// One op of the model, for `edgegan inspect` and reports.
struct OpInfo {
  std::string kind;              // "ConvTranspose2D", "Conv2D", "Dense", ...
  std::string name;              // source ONNX node(s)
  std::vector<std::string> inputs, outputs;
  std::vector<std::vector<int64_t>> input_dims, output_dims;
  std::string attributes;        // "k4x4 s2x2 pads 1,1,1,1 relu", ...
  std::vector<PhaseInfo> phases; // ConvTranspose2D only: stored phases
  uint64_t weight_bytes = 0;
  bool fp16_weights = false;     // ConvTranspose2D sub-kernels stored in half precision
  int weight_panel_columns = 0;  // ConvTranspose2D: each tap's weights in column panels this wide (0: one panel, plain [Cin][Cout])
  // Bytes per sample of an intermediate the composed form of the op would write and this
  // op never does (SlidingChannelConv: the gathered channel stack [H][W][Cout*window]); 0: none.
  uint64_t unmaterialised_bytes_per_sample = 0;
};

// Wall time of one op in one profiled run (Session::run_profiled).
struct OpTiming {
  std::string name;    // the op's source ONNX node(s)
  std::string kernel;  // the kernel that ran, e.g. "conv_transpose2d_split"
  uint64_t macs = 0;   // multiply-accumulates it executed
  double seconds = 0;
};

struct LoadOptions {
  // Check the file's checksums (XXH3-64 of the graph and of the weights) before
  // anything else. This reads every weight page once; off, a mapped model's
  // weights are read only when a session first uses them, and damaged weights
  // go unnoticed. The structure is checked either way.
  bool verify_checksums = true;
};

// What the load proved about the file's bytes.
enum class Integrity {
  kVerified,     // both checksums matched
  kNotVerified,  // the file has checksums; LoadOptions::verify_checksums was off
  kNoChecksum,   // written before checksums existed (schema version 1): damage cannot be detected
};
const char* to_string(Integrity integrity);

class Model {
 public:
  // Maps the file read-only, verifies its checksums and validates it (flatbuffers
  // Verifier + semantic checks). A damaged file throws Error naming the damaged part.
  static std::shared_ptr<const Model> load(const std::string& path, const LoadOptions& options = {});
  // Validates and copies an in-memory file image (tests, fuzzing, embedded use).
  static std::shared_ptr<const Model> from_bytes(std::span<const uint8_t> bytes, const LoadOptions& options = {});
  // The same model with its image input (every NHWC graph input but a noise vector) at height x width:
  // each op's output shape derived again from its inputs, the weights shared with
  // `model` (nothing is copied). Fully convolutional generators (image-to-image,
  // super-resolution) run at any size; an op whose shape the file fixes (a Dense
  // layer, a Reshape, a global pool, a crop of a spatial axis, a Resize to a fixed
  // size) makes it throw Error naming that op. At the file's own size: `model` itself.
  static std::shared_ptr<const Model> at_input_size(std::shared_ptr<const Model> model, int64_t height, int64_t width);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  uint32_t schema_version() const;
  Integrity integrity() const;
  // Said once per load for a user to see, e.g. that the file carries no checksum.
  const std::vector<std::string>& warnings() const;
  const std::string& producer() const;
  const std::string& source_sha256() const;
  const std::vector<std::pair<std::string, std::string>>& metadata() const;
  const std::vector<InputInfo>& inputs() const;
  const std::vector<OutputInfo>& outputs() const;
  std::vector<OpInfo> ops() const;
  uint64_t weight_bytes() const;   // bytes of the data section (mapped, not copied)
  uint64_t file_bytes() const;

  // Convenience for generators: the noise input's size per sample (0 if none),
  // the label input's class count (0 if none).
  int64_t noise_size() const;
  int64_t label_count() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  static std::shared_ptr<const Model> load_checked(const std::string& path, const LoadOptions& options);
  static std::shared_ptr<const Model> from_bytes_checked(std::span<const uint8_t> bytes, const LoadOptions& options);
  std::unique_ptr<Impl> impl_;
};

struct SessionOptions {
  Backend backend = Backend::kCpu;
  int device = 0;        // Vulkan: the physical device's index (vulkaninfo's order); the others ignore it
  int threads = 0;       // 0: OpenMP's default (all cores)
  int batch = 1;
  ConvTranspose2DAlgo conv_transpose2d_algo = ConvTranspose2DAlgo::kSplit;
  // FP32 (the default), TF32 or fp16 (see Precision). TF32 lets the tensor cores round
  // GEMM operands to 10-bit mantissas, as PyTorch does by default for cuDNN
  // convolutions. A backend that cannot run the precision refuses the session.
  Precision precision = Precision::kFp32;
  // A session whose model would hold more than this (arena + weight copies + the
  // mapped weights, MemoryReport::total_bytes) is refused before anything is
  // allocated: a hostile or mistaken model cannot make an edge device swap or be
  // OOM-killed.
  uint64_t memory_limit_bytes = uint64_t{2} << 30;
  // A session whose run would execute more multiply-accumulates than this is refused:
  // a model file cannot stall the device for hours. 10^12 is ~70 000 DCGAN-64 images.
  uint64_t compute_limit_macs = 1'000'000'000'000;
  // Told, in one line, what the session changed on its own while running (today: an
  // fp16 layer whose output passed the half range, kept as fp32 from then on). Empty:
  // the line goes to stderr, prefixed "edgegan: ".
  std::function<void(const std::string&)> on_notice = nullptr;
};

class Session {
 public:
  Session(std::shared_ptr<const Model> model, const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the graph. `inputs` must hold every graph input by name, shaped
  // [batch, ...] in storage layout. Returns the graph outputs in storage layout.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  // run(), timing each op: `timings` gets one entry per op, in execution order.
  // The clock is read between ops only, so kernels run exactly as in run().
  std::vector<Tensor> run_profiled(const std::vector<Tensor>& inputs, std::vector<OpTiming>& timings);

  // Generator convenience: noise holds batch*noise_size values, labels holds
  // batch class ids when the model has a label input. Returns the first output.
  Tensor generate(std::span<const float> noise, std::span<const int64_t> labels = {});

  int batch() const;
  int threads() const;
  const SessionOptions& options() const;
  // The kernel each op runs, in op order (e.g. "conv_transpose2d_split_winograd").
  std::vector<std::string> kernel_names() const;
  const Model& model() const;
  uint64_t arena_bytes() const;           // activations + workspace, planned
  uint64_t session_weight_bytes() const;  // weight copies the session made (CPU: baselines only; CUDA: weights on the device)
  // Bytes this session has allocated for the model, counted at each allocation
  // (arena + weight copies): host memory on the CPU backend, device memory on CUDA.
  // Equals MemoryReport::session_bytes of memory_report() with the same options.
  uint64_t measured_allocation_bytes() const;
  // Where the kernels read the weights: "the model file, in place" (CPU), "copied to
  // the device" or "mapped from the model file" (CUDA on integrated-memory GPUs).
  std::string weight_placement() const;

 private:
  std::vector<Tensor> run_checked(const std::vector<Tensor>& inputs, std::vector<OpTiming>* timings);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Deterministic standard-normal noise (Box-Muller on a 64-bit Mersenne Twister),
// identical on every platform for the same seed.
std::vector<float> normal_noise(size_t count, uint64_t seed);

// A model's inputs for one batch, in its storage layouts: the float input (noise for a
// generator, the image for a discriminator) gets `values`, the label input (if any)
// `labels`. Throws edgegan::Error for a model with other inputs or labels it cannot take.
std::vector<Tensor> batch_inputs(const Model& model, int batch, std::vector<float> values, std::vector<int64_t> labels = {});

// Storage <-> ONNX logical layout (rank 4: NHWC <-> NCHW). Other ranks pass through.
Tensor to_nchw(const Tensor& nhwc);
Tensor to_nhwc(const Tensor& nchw);

}  // namespace edgegan

// Session: runs a model at a fixed batch on one backend; generate() and run() take and
// return NumPy arrays (arrays.h says how layouts and copies work).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "edgegan/report.h"

namespace edgegan_python {
namespace {

// Python's Session. The lock keeps two Python threads from running it at once while
// the GIL is released (a Session is used by one thread at a time).
struct PySession {
  PySession(std::shared_ptr<const edgegan::Model> m, std::unique_ptr<edgegan::Session> s) : model(std::move(m)), session(std::move(s)) {}
  std::shared_ptr<const edgegan::Model> model;
  std::unique_ptr<edgegan::Session> session;
  std::mutex busy;
};

edgegan::SessionOptions session_options(int threads, int batch, const std::string& backend, int device, const std::string& algo,
                                        const std::optional<std::string>& precision,
                                        std::optional<uint64_t> memory_limit_bytes, std::optional<uint64_t> compute_limit_macs) {
  if (threads < 0) throw nb::value_error(("threads must be 0 (all cores) or more, got " + std::to_string(threads)).c_str());
  if (batch < 1) throw nb::value_error(("batch must be at least 1, got " + std::to_string(batch)).c_str());
  edgegan::SessionOptions o;
  o.threads = threads;
  o.batch = batch;
  if (backend != "cpu" && backend != "cuda" && backend != "vulkan")
    throw nb::value_error(("backend must be 'cpu', 'cuda' or 'vulkan', got '" + backend + "'").c_str());
  o.backend = edgegan::backend_from_string(backend);
  if (device < 0) throw nb::value_error(("device must be 0 or more, got " + std::to_string(device)).c_str());
  o.device = device;
  try {
    o.conv_transpose2d_algo = edgegan::conv_transpose2d_algo_from_string(algo);  // the engine's one list of names
  } catch (const edgegan::Error& e) {
    throw nb::value_error((std::string("algo must be a known algorithm: ") + e.what()).c_str());
  }
  try {
    // None: the backend's default (fp16 on Vulkan where the device has 16-bit storage).
    o.precision = precision ? edgegan::precision_from_string(*precision) : edgegan::default_precision(o.backend, device);
  } catch (const edgegan::Error& e) {
    throw nb::value_error(e.what());
  }
  if (memory_limit_bytes) o.memory_limit_bytes = *memory_limit_bytes;
  if (compute_limit_macs) o.compute_limit_macs = *compute_limit_macs;
  return o;
}

std::vector<TensorSpec> input_specs(const edgegan::Model& m) {
  std::vector<TensorSpec> specs;
  for (const auto& in : m.inputs()) specs.push_back(spec_of(in));
  return specs;
}

nb::object generate(PySession& s, nb::handle z, nb::handle labels, const std::string& layout_name) {
  const ArrayLayout layout = parse_layout(layout_name);
  const edgegan::Model& m = *s.model;
  const int64_t batch = s.session->batch(), noise_size = m.noise_size();
  if (noise_size == 0) throw nb::value_error("generate: the model has no noise input; use run()");
  edgegan::Tensor noise = to_flat_tensor(as_array(z, "'z'"), "z", edgegan::DType::kFloat32);
  if (noise.shape[0] != batch || noise.elements() != batch * noise_size)
    throw nb::value_error(("generate: 'z' has shape " + shape_text(noise.shape) + "; this session makes " + std::to_string(batch) + " samples of " +
                           std::to_string(noise_size) + " noise values: give shape " + shape_text({batch, noise_size}))
                              .c_str());
  edgegan::Tensor classes;
  if (m.label_count() > 0) {
    if (labels.is_none())
      throw nb::value_error(("generate: the model is conditional (" + std::to_string(m.label_count()) + " classes): give labels, one per sample").c_str());
    classes = to_flat_tensor(as_array(labels, "'labels'"), "labels", edgegan::DType::kInt64);
    if (classes.shape != std::vector<int64_t>{batch})
      throw nb::value_error(("generate: 'labels' has shape " + shape_text(classes.shape) + ", give one per sample: " + shape_text({batch})).c_str());
  } else if (!labels.is_none()) {
    throw nb::value_error("generate: the model takes no labels");
  }
  edgegan::Tensor images;
  {
    nb::gil_scoped_release unlocked;
    std::lock_guard lock(s.busy);
    images = s.session->generate(noise.f32, classes.i64);
  }
  return to_numpy(std::move(images), layout);
}

nb::dict run(PySession& s, const nb::dict& inputs, const std::string& layout_name) {
  const ArrayLayout layout = parse_layout(layout_name);
  const std::vector<edgegan::Tensor> tensors = to_tensors(inputs, input_specs(*s.model), s.session->batch(), layout, "input");
  std::vector<edgegan::Tensor> outputs;
  {
    nb::gil_scoped_release unlocked;
    std::lock_guard lock(s.busy);
    outputs = s.session->run(tensors);
  }
  nb::dict result;
  for (edgegan::Tensor& t : outputs) {
    const std::string name = t.name;
    result[name.c_str()] = to_numpy(std::move(t), layout);
  }
  return result;
}

nb::object memory_report(PySession& s) {
  std::string json;
  {
    nb::gil_scoped_release unlocked;
    json = edgegan::memory_report(s.model, s.session->options()).to_json();
  }
  return nb::module_::import_("json").attr("loads")(json);
}

}  // namespace

void bind_session(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PySession>(m, "Session",
                        "Runs a model at a fixed batch size. Plans one memory arena when made; generate() and run() then "
                        "allocate only their result arrays. One thread at a time runs a session (others wait).")
      .def(
          "__init__",
          [](PySession* self, const PyModel& model, int threads, int batch, const std::string& backend, int device, const std::string& algo,
             const std::optional<std::string>& precision, std::optional<uint64_t> memory_limit_bytes, std::optional<uint64_t> compute_limit_macs) {
            const edgegan::SessionOptions options =
                session_options(threads, batch, backend, device, algo, precision, memory_limit_bytes, compute_limit_macs);
            std::unique_ptr<edgegan::Session> session;
            {
              nb::gil_scoped_release unlocked;
              session = std::make_unique<edgegan::Session>(model.model, options);
            }
            new (self) PySession(model.model, std::move(session));
          },
          "model"_a, nb::kw_only(), "threads"_a = 0, "batch"_a = 1, "backend"_a = "cpu", "device"_a = 0, "algo"_a = "split", "precision"_a = nb::none(),
          "memory_limit_bytes"_a = nb::none(), "compute_limit_macs"_a = nb::none(),
          "threads: CPU threads (0: all cores). batch: samples per call. backend: 'cpu', 'cuda' or 'vulkan' (device: the Vulkan physical device's index). algo: transposed-convolution "
          "algorithm ('split'; 'zero-insert' and 'col2im' are baselines). precision: 'fp32', 'tf32' on CUDA (TF32 tensor-core products) or 'fp16' on Vulkan (half storage, FP32 arithmetic); the cpu backend refuses all but fp32 with edgegan.Error; None: fp16 on Vulkan where the device has 16-bit storage, else fp32. memory_limit_bytes "
          "(default 2 GiB) and compute_limit_macs (default 1e12): a session that would exceed them is refused with edgegan.Error.")
      .def("generate", &generate, "z"_a.none(), "labels"_a.none() = nb::none(), nb::kw_only(), "layout"_a = "nchw",
           "Generates `batch` samples from noise z (float32, shape (batch, noise_size) or any shape with `batch` rows and "
           "batch * noise_size values) and, for a conditional model, labels (one integer class per sample). Returns the "
           "images as float32, (N, C, H, W) by default or (N, H, W, C) with layout='nhwc' (no copy).")
      .def("run", &run, "inputs"_a, nb::kw_only(), "layout"_a = "nchw",
           "Runs the graph on {input name: array} (every input, `batch` rows each; image inputs NCHW unless layout='nhwc'; "
           "integer inputs int64 or int32) and returns {output name: float32 array}, the same values `edgegan run` writes.")
      .def("memory_report", &memory_report,
           "What this session's plan holds, as a dict (the JSON of `edgegan report --json`: per-layer rows, totals, each "
           "transposed-convolution algorithm side by side). CPU sessions only.")
      .def_prop_ro("batch", [](PySession& s) { return s.session->batch(); })
      .def_prop_ro("threads", [](PySession& s) { return s.session->threads(); })
      .def_prop_ro("backend", [](PySession& s) { return edgegan::to_string(s.session->options().backend); })
      .def_prop_ro("precision", [](PySession& s) { return std::string(edgegan::to_string(s.session->options().precision)); })
      .def_prop_ro("algo", [](PySession& s) { return edgegan::to_string(s.session->options().conv_transpose2d_algo); })
      .def_prop_ro("model", [](PySession& s) { return PyModel{s.model}; })
      .def_prop_ro("kernel_names", [](PySession& s) { return s.session->kernel_names(); }, "The kernel each op runs, in op order.")
      .def_prop_ro("arena_bytes", [](PySession& s) { return s.session->arena_bytes(); }, "Activations and workspace, planned.")
      .def_prop_ro("measured_allocation_bytes", [](PySession& s) { return s.session->measured_allocation_bytes(); },
                   "Bytes this session allocated for the model (arena + weight copies).")
      .def_prop_ro("weight_placement", [](PySession& s) { return s.session->weight_placement(); })
      .def("__repr__", [](PySession& s) {
        return "<edgegan.Session batch " + std::to_string(s.session->batch()) + ", " + std::to_string(s.session->threads()) + " threads, " +
               edgegan::to_string(s.session->options().backend) + ">";
      });
}

}  // namespace edgegan_python

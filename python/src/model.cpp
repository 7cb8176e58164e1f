// Model: Model.load(path), Model.from_bytes(data), and what the model holds.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <span>

#include "arrays.h"
#include "bindings.h"

namespace edgegan_python {
namespace {

const char* role_name(edgegan::InputRole role) {
  switch (role) {
    case edgegan::InputRole::kNoise: return "noise";
    case edgegan::InputRole::kLabel: return "label";
    case edgegan::InputRole::kImage: return "image";
    case edgegan::InputRole::kOther: return "other";
  }
  return "other";
}

const char* role_name(edgegan::OutputRole role) {
  switch (role) {
    case edgegan::OutputRole::kImage: return "image";
    case edgegan::OutputRole::kScore: return "score";
    case edgegan::OutputRole::kOther: return "other";
  }
  return "other";
}

nb::tuple as_tuple(const std::vector<int64_t>& values) {
  nb::list list;
  for (int64_t v : values) list.append(v);
  return nb::tuple(list);
}

// Shapes as a caller passes them (NCHW for images, the batch as -1) and as stored.
void describe_shape(nb::dict& d, const TensorSpec& spec) {
  d["shape"] = as_tuple(caller_shape(spec, -1, ArrayLayout::kNchw));
  d["storage_shape"] = as_tuple(caller_shape(spec, -1, ArrayLayout::kNhwc));
  d["layout"] = spec.layout == edgegan::Layout::kNHWC ? "nhwc" : "row-major";
}

nb::list inputs_of(const edgegan::Model& m) {
  nb::list list;
  for (const edgegan::InputInfo& in : m.inputs()) {
    nb::dict d;
    d["name"] = in.name;
    d["role"] = role_name(in.role);
    d["dtype"] = in.dtype == edgegan::DType::kInt64 ? "int64" : "float32";
    describe_shape(d, spec_of(in));
    d["noise_size"] = in.noise_size;
    d["label_count"] = in.label_count;
    list.append(d);
  }
  return list;
}

nb::list outputs_of(const edgegan::Model& m) {
  nb::list list;
  for (const edgegan::OutputInfo& out : m.outputs()) {
    nb::dict d;
    d["name"] = out.name;
    d["role"] = role_name(out.role);
    d["dtype"] = "float32";
    describe_shape(d, spec_of(out));
    d["value_range"] = std::isnan(out.value_min) ? nb::none() : nb::object(nb::make_tuple(out.value_min, out.value_max));
    list.append(d);
  }
  return list;
}

nb::list ops_of(const edgegan::Model& m) {
  nb::list list;
  for (const edgegan::OpInfo& op : m.ops()) {
    nb::dict d;
    d["kind"] = op.kind;
    d["name"] = op.name;
    d["inputs"] = op.inputs;
    d["outputs"] = op.outputs;
    d["attributes"] = op.attributes;
    d["weight_bytes"] = op.weight_bytes;
    d["fp16_weights"] = op.fp16_weights;
    d["phases"] = op.phases.size();
    list.append(d);
  }
  return list;
}

// The load's warnings as Python UserWarnings, so a script sees them as the CLI's user does.
void warn_about(const edgegan::Model& model, const std::string& where) {
  for (const std::string& w : model.warnings()) {
    const std::string text = "'" + where + "': " + w;
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 2) != 0) throw nb::python_error();
  }
}

}  // namespace

void bind_model(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PyModel>(m, "Model",
                      "A loaded .egan model: memory-mapped, verified, immutable. Make one with Model.load(path) or "
                      "Model.from_bytes(data); any number of Sessions and Trainers may share it.")
      .def_static(
          "load",
          [](const std::filesystem::path& path, bool verify_checksums) {
            std::shared_ptr<const edgegan::Model> model;
            {
              nb::gil_scoped_release unlocked;
              model = edgegan::Model::load(path.string(), {.verify_checksums = verify_checksums});
            }
            warn_about(*model, path.string());
            return PyModel{model};
          },
          "path"_a, "verify_checksums"_a = true,
          "Maps a .egan file, verifies its checksums (unless verify_checksums=False) and its structure. Raises "
          "edgegan.Error naming the defect of a missing, truncated or damaged file; warns (UserWarning) when the file "
          "predates checksums.")
      .def_static(
          "from_bytes",
          [](nb::bytes data, bool verify_checksums) {
            // The bytes object is immutable and referenced by `data`: safe to read unlocked.
            const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data.data()), data.size());
            std::shared_ptr<const edgegan::Model> model;
            {
              nb::gil_scoped_release unlocked;
              model = edgegan::Model::from_bytes(bytes, {.verify_checksums = verify_checksums});
            }
            warn_about(*model, "<bytes>");
            return PyModel{model};
          },
          "data"_a, "verify_checksums"_a = true, "Verifies and copies an in-memory .egan file image.")
      .def_prop_ro("integrity", [](const PyModel& p) { return std::string(edgegan::to_string(p.model->integrity())); },
                   "What the load proved about the bytes: 'verified' (both checksums matched), 'not verified' "
                   "(verify_checksums=False) or 'no checksum' (written before checksums, schema version 1).")
      .def_prop_ro("warnings", [](const PyModel& p) { return p.model->warnings(); },
                   "The load's warnings, e.g. that the file carries no checksum.")
      .def_prop_ro("schema_version", [](const PyModel& p) { return p.model->schema_version(); }, "The file's .egan schema version.")
      .def_prop_ro("producer", [](const PyModel& p) { return p.model->producer(); }, "What wrote the file, e.g. 'edgegan-convert 0.1.0'.")
      .def_prop_ro("source_sha256", [](const PyModel& p) { return p.model->source_sha256(); }, "SHA-256 of the source ONNX file.")
      .def_prop_ro(
          "metadata",
          [](const PyModel& p) {
            nb::dict d;
            for (const auto& [key, value] : p.model->metadata()) d[key.c_str()] = value;
            return d;
          },
          "The file's metadata strings (source file, ONNX opset, weight precision, ...).")
      .def_prop_ro("inputs", [](const PyModel& p) { return inputs_of(*p.model); },
                   "One dict per graph input: name, role ('noise', 'label', 'image', 'other'), dtype, shape (as passed in "
                   "NCHW layout, -1 for the batch), storage_shape (NHWC for images), layout, noise_size, label_count.")
      .def_prop_ro("outputs", [](const PyModel& p) { return outputs_of(*p.model); },
                   "One dict per graph output: name, role, dtype, shape, storage_shape, layout, value_range ((min, max) or None).")
      .def_prop_ro("ops", [](const PyModel& p) { return ops_of(*p.model); },
                   "One dict per op, in the order `edgegan inspect` numbers them (Trainer's `freeze` indices).")
      .def_prop_ro("noise_size", [](const PyModel& p) { return p.model->noise_size(); }, "Noise values per sample (0: not a generator).")
      .def_prop_ro("label_count", [](const PyModel& p) { return p.model->label_count(); }, "Classes of a conditional model (0: none).")
      .def_prop_ro("weight_bytes", [](const PyModel& p) { return p.model->weight_bytes(); }, "Bytes of weights (mapped, not copied).")
      .def_prop_ro("file_bytes", [](const PyModel& p) { return p.model->file_bytes(); }, "Size of the model file.")
      .def("__repr__", [](const PyModel& p) {
        std::string inputs, outputs;
        for (const auto& in : p.model->inputs()) inputs += (inputs.empty() ? "'" : ", '") + in.name + "'";
        for (const auto& out : p.model->outputs()) outputs += (outputs.empty() ? "'" : ", '") + out.name + "'";
        return "<edgegan.Model by '" + p.model->producer() + "', inputs " + inputs + ", outputs " + outputs + ">";
      });
}

}  // namespace edgegan_python

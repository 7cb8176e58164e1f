// The _edgegan extension module; python/edgegan/__init__.py re-exports it as `edgegan`.
#include <nanobind/nanobind.h>

#include "bindings.h"

NB_MODULE(_edgegan, m) {
  namespace nb = nanobind;
  m.doc() = "edgegan: run, convert and fine-tune GAN generators (.egan models) with NumPy arrays in and out.";
  m.attr("__version__") = edgegan::version();
  m.attr("FILE_FORMAT_VERSION") = edgegan::file_format_version();
  // Every failure the engine or the converter reports: a bad or corrupt file, a model
  // it cannot run, a label outside the table, a session over its memory limit.
  nb::exception<edgegan::Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__doc__") = "An error reported by the edgegan engine or converter; the message names the file, op, tensor or input at fault.";
  edgegan_python::bind_model(m);
  edgegan_python::bind_session(m);
  edgegan_python::bind_trainer(m);
  edgegan_python::bind_functions(m);
  edgegan_python::bind_image(m);
}

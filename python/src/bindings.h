// The pieces of the _edgegan extension module, one file each (module.cpp calls them).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <mutex>

#include "edgegan/edgegan.h"
#include "edgegan/trainer.h"

namespace edgegan_python {

namespace nb = nanobind;

// Python's Model: a loaded, immutable model, shared by the sessions and trainers made from it.
struct PyModel {
  std::shared_ptr<const edgegan::Model> model;
};

// Python's Trainer. The lock keeps two Python threads from running it at once while
// the GIL is released (a Trainer, like a Session, is used by one thread at a time).
struct PyTrainer {
  PyTrainer(std::shared_ptr<const edgegan::Model> m, std::unique_ptr<edgegan::Trainer> t) : model(std::move(m)), trainer(std::move(t)) {}
  std::shared_ptr<const edgegan::Model> model;
  std::unique_ptr<edgegan::Trainer> trainer;
  std::mutex busy;
};

void bind_model(nb::module_& m);      // model.cpp: Model
void bind_session(nb::module_& m);    // session.cpp: Session
void bind_trainer(nb::module_& m);    // trainer.cpp: Trainer, finetune
void bind_functions(nb::module_& m);  // functions.cpp: convert, normal_noise, write_png_grid
void bind_image(nb::module_& m);      // image.cpp: read_image, write_image, ImageToImage

}  // namespace edgegan_python

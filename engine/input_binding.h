// Matches the tensors a caller passes to run()/forward() with the model's graph
// inputs: every input exactly once, the right dtype and shape for the batch.
// Throws Error naming the input and what is wrong.
#pragma once

#include <vector>

#include "engine/model_impl.h"

namespace edgegan {

// For each graph input (in model order), the caller's tensor for it.
std::vector<const Tensor*> bind_inputs(const Model::Impl& model, int64_t batch, const std::vector<Tensor>& inputs,
                                       const char* caller);
// The same into `bound` (resized to the model's input count: no allocation once it has been).
void bind_inputs(const Model::Impl& model, int64_t batch, const std::vector<Tensor>& inputs, const char* caller,
                 std::vector<const Tensor*>& bound);

std::string shape_text(const std::vector<int64_t>& dims);

}  // namespace edgegan

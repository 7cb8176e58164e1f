// Resize of NHWC maps along H and W on the CPU (ONNX Resize: nearest, linear, cubic).
// The modes, coordinate transforms, taps and their tables are kernels_common/resize_shape.h.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_common/resize_shape.h"

namespace edgegan::cpu {

// Plain loops: every output element as the sum over both axes' taps.
void resize_reference(const ResizeShape& s, const float* x, float* y);

// Scratch of resize(): one blended input row per thread (none for nearest); halves
// (resize_halves): a widened input row and a float output row per thread too.
int64_t resize_workspace(const ResizeShape& s, int threads, bool halves = false);

// Per output row: the H taps blend whole input rows into one (contiguous, vectorised),
// then each output pixel blends its W taps of that row over the channels; nearest
// copies C floats per pixel. Parallel over batch x output rows; workspace: at least
// resize_workspace() floats (nullptr: allocates its own).
void resize(const ResizeShape& s, const ResizeTables& t, const float* x, float* y, float* workspace, int threads);
// An fp16 session's route: x and y halves. Each input row is widened before it is
// blended and each output row blended in floats as above and narrowed (ties to even);
// nearest moves the halves. workspace: resize_workspace(s, threads, true) floats.
// Returns whether a finite value became infinite (past the half range).
bool resize_halves(const ResizeShape& s, const ResizeTables& t, const uint16_t* x, uint16_t* y, float* workspace, int threads);

// dx from dy: each input row of dx is owned by one thread and gathers the output rows
// that read it (t.h_readers_*) in a fixed order, scattering each along W in ascending
// output order: deterministic for any thread count, no scratch. accumulate: add to dx.
void resize_backward(const ResizeShape& s, const ResizeTables& t, const float* dy, float* dx, bool accumulate, int threads);

}  // namespace edgegan::cpu

// IR pass: a reflect, edge or wrap Pad, and a nearest Resize by integer factors, whose
// only reader is a Conv2D fold into that convolution's input map (IrOp::input_upsample,
// input_pads, input_pad_mode; the schema's Conv2D.input_*): the upsampled or padded map
// is never stored and never written; the convolution reads the original through index
// tables the engine builds for the input's size.
#pragma once

#include "converter/egan_ir.h"

namespace edgegan::converter {

// Folds every such producer, the chain nearest Resize -> Pad -> Conv included (as
// style-transfer upsampling layers are written), then drops the ops and tensors that
// no longer have readers. Returns the number of ops folded.
int fuse_conv_input_maps(IrModel& model);

// Drops the ops of kind NONE and every tensor nothing reads, writes or exposes,
// renumbering the rest (after a pass that folded ops into others).
void drop_dead(IrModel& model);

}  // namespace edgegan::converter

// IR pass: a Pad (reflect, edge, wrap) or a nearest Resize whose only reader is a
// Conv2D folds into that convolution's input map (IrOp::input_rows/input_cols, the
// schema's Conv2D.input_rows/input_cols): the padded or upsampled map is never stored
// and never written; the convolution reads the original through index tables.
#pragma once

#include "converter/egan_ir.h"

namespace edgegan::converter {

// Folds every such producer, chains included (nearest Resize -> reflect Pad -> Conv,
// as style-transfer upsampling layers are written), then drops the ops and tensors
// that no longer have readers. Returns the number of ops folded.
int fuse_conv_input_maps(IrModel& model);

}  // namespace edgegan::converter

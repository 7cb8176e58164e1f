// The CPU kernels' names for the shared half <-> float conversions.
#pragma once

#include "kernels_common/half.h"

namespace edgegan::cpu {

using kernels::float_to_half;
using kernels::half_to_float;

}  // namespace edgegan::cpu

#!/usr/bin/env bash
# The source tree's layering, which the compiler alone would not keep:
#   - kernels_common/ (what both backends share) includes neither backend nor the engine;
#   - kernels_cuda/ and the engine's CUDA backend include nothing from kernels_cpu/;
#   - kernels_cpu/ includes nothing from kernels_cuda/, and the Vulkan side nothing from either;
#   - kernels_vulkan/ and the engine's Vulkan backend include nothing from kernels_cpu/
#     or kernels_cuda/;
#   - the runtime (engine/, the kernels) includes no picture codec and nothing of the
#     codec library (image_io/), so libedgegan links none;
#   - cudnn-frontend's large headers are included by one file only (conv_graph.cpp);
#   - the converter's fusion passes ask each op kind what its epilogue takes
#     (OpLowering::epilogue_fusions) instead of listing kinds by hand.
# Usage: layering_test.sh SOURCE_DIR. Prints each breach and exits 1 if there is any.
set -uo pipefail
src=${1:?source dir}
cd "$src" || exit 2
failed=0
breach() {  # description, then grep's output (file:line: text)
  if [ -n "$2" ]; then
    echo "layering: $1:"; echo "$2"; failed=1
  fi
}
breach "kernels_common/ includes a backend or the engine" \
  "$(grep -rnE '#include "(kernels_cpu|kernels_cuda|engine|converter)/' kernels_common)"
breach "the CUDA side includes kernels_cpu/" \
  "$(grep -rnE '#include "kernels_cpu/' kernels_cuda engine/backend/cuda)"
breach "kernels_cpu/ includes kernels_cuda/" "$(grep -rnE '#include "kernels_cuda/' kernels_cpu)"
breach "the Vulkan side includes kernels_cpu/ or kernels_cuda/" \
  "$(grep -rnE '#include "kernels_(cpu|cuda)/' kernels_vulkan engine/backend/vulkan)"
breach "the runtime includes a picture codec or the codec library" \
  "$(grep -rnE '#include ([<"](png|turbojpeg|jpeglib|webp/[a-z_]+|stb/[a-z_]+)\.h[>"]|"image_io/|[<"]edgegan/image_io\.h[>"])' engine kernels_common kernels_cpu kernels_cuda kernels_vulkan)"
# A list of kinds in braces where the converter looks for a producer to fuse into.
breach "a converter pass lists op kinds by hand" "$(grep -rnE '(fusable_producer|producer_of_kind)\([^)]*\{' converter)"
breach "a file besides engine/backend/cuda/cudnn/conv_graph.cpp includes cudnn-frontend" \
  "$(grep -rnE '#include [<"]cudnn_frontend' --include='*.cpp' --include='*.h' --include='*.cu' . | grep -v '^\./build' | grep -v '^\./engine/backend/cuda/cudnn/conv_graph\.cpp:')"
[ "$failed" = 0 ] && echo "layering: 7 passed, 0 failed" || exit 1

#!/usr/bin/env bash
# Installs the Debian packages edgegan needs to build and test, and where nvcc is found
# the pinned cudnn-frontend headers (scripts/fetch_cudnn_frontend.sh, from PyPI).
# Idempotent: does nothing when everything is present. Needs root (or sudo) only to install.
set -euo pipefail

packages=(
  cmake g++ make pkg-config ccache          # ccache: scripts/test.sh's builds share identical compiles
  libflatbuffers-dev flatbuffers-compiler   # model file schema + flatc
  libonnx-dev libprotobuf-dev                # the converter's ONNX parser
  libssl-dev                                 # SHA-256 of the source model
  zlib1g-dev                                 # deflated entries of zip checkpoints
  libcli11-dev libstb-dev                    # CLI parsing, the chart's text (stb_easy_font)
  libpng-dev libturbojpeg0-dev libwebp-dev   # picture codecs: PNG, JPEG (libjpeg-turbo), WebP
  nlohmann-json3-dev                         # report JSON
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev  # videos in and out (FFmpeg's libraries)
  ffmpeg                                     # the video tests make and probe their clips with it
  libxxhash-dev                              # model file checksums (header-only use)
  libgtest-dev libgmock-dev libbenchmark-dev # tests and benchmarks
  clang libclang-rt-14-dev libomp-14-dev     # sanitizer and fuzz builds (libFuzzer, libomp + Archer for TSan)
  python3-venv python3-dev ninja-build       # the Python module's wheel (scikit-build-core, nanobind from PyPI)
  python3-numpy python3-pytest               # its tests
  libvulkan-dev libvulkan-volk-dev glslc spirv-tools  # the Vulkan backend: headers, volk (the loader opened at run time), shader compiler and validator
  mesa-vulkan-drivers vulkan-tools vulkan-validationlayers  # its tests: lavapipe (Vulkan on the CPU), vulkaninfo, the Khronos validation layer
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA backend's cuDNN graphs: cudnn-frontend's headers from PyPI (pinned), where
# nvcc is there to build the backend at all (python3 and its venv come from the list above).
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  # Not fatal: without PyPI the CUDA backend builds without cuDNN graphs (CMake says so).
  "$(dirname "$0")/fetch_cudnn_frontend.sh" ||
    echo "install_deps: cudnn-frontend not fetched (no PyPI?); the CUDA backend builds without cuDNN graphs" >&2
fi

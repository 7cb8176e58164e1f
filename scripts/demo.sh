#!/usr/bin/env bash
# The main job (README): installs what it needs, builds, converts the shipped
# DCGAN and conditional GAN from ONNX, and writes sample grids to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh -DEDGEGAN_BUILD_TESTS=OFF -DEDGEGAN_BUILD_BENCHMARKS=OFF
bin=${BUILD_DIR:-build}
mkdir -p out
export OMP_WAIT_POLICY=passive

"$bin/converter/edgegan-convert" models/dcgan_digits/generator.onnx -o out/dcgan_digits.egan
"$bin/converter/edgegan-convert" models/cgan_digits/generator.onnx -o out/cgan_digits.egan
echo
"$bin/cli/edgegan" generate out/dcgan_digits.egan -n 64 --seed 1 -o out/dcgan_grid.png
"$bin/cli/edgegan" generate out/cgan_digits.egan -n 100 --seed 1 --columns 10 -o out/cgan_grid.png   # column = class 0..9
"$bin/cli/edgegan" generate out/cgan_digits.egan -n 16 --seed 2 --label 7 -o out/cgan_label7.png
echo
echo "open out/dcgan_grid.png, out/cgan_grid.png (each column one digit 0-9) and out/cgan_label7.png (sevens)"

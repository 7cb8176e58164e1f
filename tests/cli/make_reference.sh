#!/usr/bin/env bash
# Rewrites tests/cli/reference: what the x86-64 `edgegan generate` makes from the
# shipped models with fixed seeds. The cli test compares every build with it
# (the AArch64 one under qemu included). Run after a shipped model changes.
# usage: tests/cli/make_reference.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
edgegan=${1:-build}/cli/edgegan
[ "$(uname -m)" = x86_64 ] || { echo "make the reference on x86-64" >&2; exit 1; }
out=tests/cli/reference
"$edgegan" generate models/dcgan_digits/generator.egan -n 8 --seed 7 --npy $out/dcgan_digits_seed7.npy -o $out/dcgan_digits_seed7.png
"$edgegan" generate models/cgan_digits/generator.egan -n 8 --seed 7 --label 3 --npy $out/cgan_digits_seed7_label3.npy -o $out/cgan_digits_seed7_label3.png

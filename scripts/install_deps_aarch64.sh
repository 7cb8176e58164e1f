#!/usr/bin/env bash
# Installs what the AArch64 cross build needs, beside the host's packages:
# Debian's cross compiler, qemu-user (runs the cross-built tests), and the arm64
# multiarch -dev packages of edgegan's dependencies. Idempotent.
#
# libonnx-dev:arm64 cannot be co-installed with the amd64 one (both ship
# /usr/lib/libonnxifi.so), so its three arm64 packages are fetched with
# `apt-get download` and unpacked under $1 (default build-aarch64/deps) instead,
# where the toolchain file finds them (the converter then cross-builds too).
# usage: scripts/install_deps_aarch64.sh [DEPS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
deps_dir=$(realpath -m "${1:-build-aarch64/deps}")

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "adding the arm64 architecture to dpkg"
  $sudo dpkg --add-architecture arm64
  $sudo apt-get update -qq
fi

packages=(
  g++-aarch64-linux-gnu qemu-user
  libflatbuffers-dev:arm64 libprotobuf-dev:arm64 libssl-dev:arm64 zlib1g-dev:arm64 libstb-dev:arm64
  libpng-dev:arm64 libturbojpeg0-dev:arm64 libwebp-dev:arm64
  libgtest-dev:arm64 libgmock-dev:arm64 libgomp1:arm64
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX for arm64, unpacked (not installed). The version must match the host's
# libonnx-dev, whose generated protobuf headers both builds include.
version=$(dpkg-query -W -f='${Version}' libonnx-dev)
stamp="$deps_dir/.onnx-$version"
if [ ! -e "$stamp" ]; then
  rm -rf "$deps_dir" && mkdir -p "$deps_dir/debs"
  (cd "$deps_dir/debs" && apt-get download -q "libonnx1:arm64=$version" "libonnx-dev:arm64=$version" "libonnxifi:arm64=$version")
  for deb in "$deps_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$deps_dir/root"; done
  touch "$stamp"
fi
echo "arm64 ONNX unpacked in $deps_dir/root"

#!/usr/bin/env bash
# Fetches NVIDIA's header-only cudnn-frontend (the CUDA backend's convolutions as cuDNN
# graphs) from PyPI, pinned, and unpacks its include/ into the cache folder CMake looks
# in: ${EDGEGAN_DEPS_CACHE:-$HOME/.cache/edgegan}/cudnn-frontend-<version>/include.
# Only the headers are used; cuDNN itself is loaded at run time. Idempotent.
set -euo pipefail
version=1.32.0
cache=${EDGEGAN_DEPS_CACHE:-$HOME/.cache/edgegan}
dest="$cache/cudnn-frontend-$version"
[ -f "$dest/include/cudnn_frontend.h" ] && exit 0
mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
# pip from the system, or from a virtual environment where Debian has none.
pip=(python3 -m pip)
if ! python3 -m pip --version >/dev/null 2>&1; then
  python3 -m venv "$work/venv"
  pip=("$work/venv/bin/python" -m pip)
fi
"${pip[@]}" download --quiet --no-deps --dest "$work" "nvidia-cudnn-frontend==$version"
wheel=$(ls "$work"/nvidia_cudnn_frontend-"$version"-*.whl)
# The wheel is a zip; its include/ is the same on every platform.
python3 - "$wheel" "$work/unpacked" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    members = [m for m in z.namelist() if m.startswith("include/")]
    if not any(m == "include/cudnn_frontend.h" for m in members):
        sys.exit("fetch_cudnn_frontend: the wheel has no include/cudnn_frontend.h")
    z.extractall(sys.argv[2], members)
PY
mkdir -p "$dest"
rm -rf "$dest/include"
mv "$work/unpacked/include" "$dest/include"
echo "cudnn-frontend $version headers in $dest/include"

#!/usr/bin/env bash
# libedgegan and the CLI load cuDNN at run time: neither links it (a machine without
# cuDNN runs them, on the CPU or on the CUDA backend's own kernels).
# Usage: not_linked_test.sh BINARY...
set -uo pipefail
failed=0
for bin in "$@"; do
  libs=$(ldd "$bin") || { echo "cudnn_not_linked: ldd $bin failed"; failed=1; continue; }
  if grep -q "libcudnn" <<<"$libs"; then
    echo "cudnn_not_linked: $bin links cuDNN:"; grep libcudnn <<<"$libs"; failed=1
  fi
done
[ "$failed" = 0 ] && echo "cudnn_not_linked: $# passed, 0 failed" || exit 1

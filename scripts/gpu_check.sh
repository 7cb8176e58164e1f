#!/bin/bash
# The CUDA backend's evidence in one run on a machine with an NVIDIA GPU: the CUDA
# kernel tests, every engine test that runs on CUDA (the backend suite and the PyTorch
# goldens), `edgegan upscale --backend cuda` against the CPU's picture, and the GPU
# benchmarks (layers, DCGAN-family generators, image-to-image and
# super-resolution generators) beside PyTorch on the same GPU; and the precisions and
# cuDNN tactics: the CUDA suites again with EDGEGAN_CUDNN=1 (cuDNN's graphs timed against
# the project's kernels, cuDNN taken from the machine's PyTorch), every model's cuDNN
# graphs validated, and fp32/tf32/fp16 outputs against PyTorch's FP32 and fp16
# (scripts/gpu_precision_check.py).
#
#   scripts/gpu_check.sh BIN_DIR OUT_DIR [tests|bench|all]
#
# BIN_DIR holds engine_test, cuda_kernels_test, cudnn_graph_test, make_test_models, edgegan,
# edgegan-convert and cuda_layers_bench from a build with CUDA (they look for the
# sources where they were built: run from that checkout). The GPU machine needs
# PyTorch with CUDA for the benchmarks. Results go to OUT_DIR (raw JSON lines, test
# logs, and the tables as markdown). EDGEGAN_TEST_MODELS_DIR: the test models' folder
# the binaries were built with (default build/tests/test_models). COMPILE=0 leaves out
# torch.compile (minutes of compiling on a short GPU lease).
set -u
bin=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
what=${3:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

# cuDNN for the cuDNN tactics: the one inside the machine's PyTorch (its nvidia-cudnn
# wheel, or torch/lib), unless EDGEGAN_CUDNN_LIBRARY names one.
if [ -z "${EDGEGAN_CUDNN_LIBRARY:-}" ]; then
  EDGEGAN_CUDNN_LIBRARY=$(python3 - <<'PY' 2>/dev/null
import glob, os
import torch
roots = [os.path.dirname(torch.__file__)] + [os.path.join(p, "nvidia", "cudnn") for p in __import__("site").getsitepackages()]
for r in roots:
    hits = sorted(glob.glob(os.path.join(r, "**", "libcudnn.so.9"), recursive=True))
    if hits:
        print(hits[0]); break
PY
)
  export EDGEGAN_CUDNN_LIBRARY
fi
echo "cuDNN library: ${EDGEGAN_CUDNN_LIBRARY:-none found}" | tee -a "$out/gpu.txt"

# Where engine_test looks for the converted test models (its build's
# tests/test_models; CMake prints it as EDGEGAN_TEST_MODELS_DIR).
models=${EDGEGAN_TEST_MODELS_DIR:-$root/build/tests/test_models}

if [ "$what" != bench ]; then
  mkdir -p "$models"
  "$bin/make_test_models" "$models" > "$out/make_test_models.txt" 2>&1 || { echo "make_test_models failed"; cat "$out/make_test_models.txt"; exit 1; }
  "$bin/cuda_kernels_test" > "$out/cuda_kernels_test.txt" 2>&1 || status=1
  "$bin/engine_test" --gtest_filter='*cuda*:*Cuda*' > "$out/engine_test_cuda.txt" 2>&1 || status=1
  # The same suites with cuDNN's graphs timed against the project's kernels per layer
  # (bench shows each layer's tactic), and every model's graphs validated.
  EDGEGAN_CUDNN=1 "$bin/engine_test" --gtest_filter='*cuda*:*Cuda*' > "$out/engine_test_cuda_cudnn.txt" 2>&1 || status=1
  EDGEGAN_TEST_MODELS_DIR="$models" "$bin/cudnn_graph_test" > "$out/cudnn_graph_test.txt" 2>&1 || status=1
  for m in "$models/built/dcgan64_generator.egan" models/dcgan_digits/generator.egan; do
    EDGEGAN_CUDNN=1 "$bin/edgegan" bench "$m" --backend cuda --batch 64 --repeat 20 >> "$out/cudnn_tactics.txt" 2>&1 || status=1
  done
  # fp32 / tf32 / fp16 against PyTorch (fp16: within 2x PyTorch's own fp16 error).
  precision_work=$(mktemp -d)
  EDGEGAN_CUDNN=1 python3 scripts/gpu_precision_check.py --edgegan "$bin/edgegan" --convert "$bin/edgegan-convert" --work "$precision_work" \
    > "$out/precision.jsonl" 2> "$out/precision.err" || status=1
  rm -rf "$precision_work"
  echo "== precision"; cat "$out/precision.jsonl"; tail -3 "$out/precision.err"
  echo "== cuDNN tactics"; grep -E "convolutions:|cudnn:" "$out/cudnn_tactics.txt" | head -20
  for f in cuda_kernels_test engine_test_cuda engine_test_cuda_cudnn cudnn_graph_test; do
    echo "== $f"
    grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$f.txt"
    grep -E '^\[  FAILED  \] ' "$out/$f.txt" | head -40
  done
  # upscale --backend cuda against the CPU's picture (the judged form: a 960x540 picture
  # to 3840x2160), every byte within one level (FP32 on both); the CPU at 2 threads, the
  # issue's baseline. Each command prints its seconds, decode and encode included. The 4K
  # pictures stay in a scratch folder (tens of MB); the logs go to OUT_DIR.
  # The model: Real-ESRGAN's compact network as the issue judges it (64 features, 16
  # convolutions) where PyTorch can export it, else the golden case's small one.
  pictures=$(mktemp -d)
  python3 scripts/picture_check.py make "$pictures/in.png" 960 540
  sr_onnx=tests/golden/cases/zoo_realesrgan_compact/model.onnx
  python3 bench/make_image_models.py "$pictures" > /dev/null 2>&1 && sr_onnx=$pictures/realesr_compact_x4.onnx
  echo "== model $sr_onnx" > "$out/upscale.txt"
  "$bin/edgegan-convert" -q "$sr_onnx" -o "$pictures/sr.egan" --input-range 0,1 >> "$out/upscale.txt" 2>&1 || status=1
  for backend in cpu cuda; do
    echo "== upscale --backend $backend" >> "$out/upscale.txt"
    "$bin/edgegan" upscale "$pictures/sr.egan" "$pictures/in.png" -o "$pictures/$backend.png" --backend $backend --threads 2 \
      >> "$out/upscale.txt" 2>&1 || status=1
  done
  python3 scripts/picture_check.py compare "$pictures/cuda.png" "$pictures/cpu.png" 1 >> "$out/upscale.txt" 2>&1 || status=1
  echo "== upscale"
  cat "$out/upscale.txt"
  rm -rf "$pictures"
  # What the skipped cases were skipped for (a model with an op the backend refuses).
  grep -A1 'Skipped$' "$out/engine_test_cuda.txt" | grep -v -E 'Skipped$|^--' | sort | uniq -c | sort -rn > "$out/skip_reasons.txt"
  head -20 "$out/skip_reasons.txt"
fi

if [ "$what" != tests ]; then
  work=$(mktemp -d)
  compile=--compile no_compile=
  [ "${COMPILE:-1}" = 0 ] && compile= no_compile=--no-compile
  python3 bench/cuda_image_models.py --edgegan "$bin/edgegan" --convert "$bin/edgegan-convert" --work "$work" $compile \
    --table "$out/image_models_table.md" > "$out/image_models.jsonl" 2> "$out/image_models.err" || status=1
  cat "$out/image_models_table.md" 2>/dev/null
  tail -5 "$out/image_models.err"
  "$bin/cuda_layers_bench" --repeat 50 --kinds > "$out/edgegan_layers.jsonl" 2> "$out/cuda_layers_bench.err" || status=1
  { python3 bench/cuda_peers.py --repeat 50 --no-compile --only layers
    python3 bench/cuda_peers.py --repeat 50 --no-compile --only conv3x3; } > "$out/torch_layers.jsonl" 2> "$out/cuda_peers_layers.err" || status=1
  python3 bench/cuda_peers.py --repeat 50 $no_compile --only generators > "$out/torch_generators.jsonl" 2> "$out/cuda_peers_generators.err" || status=1
  : > "$out/edgegan_generators.jsonl"
  for m in "$models/built/dcgan64_generator.egan" "$models/built/huge2_dcgan.egan" "$models/built/huge2_cgan.egan" \
           models/dcgan_digits/generator.egan models/cgan_digits/generator.egan; do
    for b in 1 64; do
      "$bin/edgegan" bench "$m" --backend cuda --batch $b --repeat 50 --json >> "$out/edgegan_generators.jsonl" || status=1
      "$bin/edgegan" bench "$m" --backend cuda --batch $b --repeat 50 --json --precision tf32 >> "$out/edgegan_generators.jsonl" || status=1
      EDGEGAN_CUDNN=1 "$bin/edgegan" bench "$m" --backend cuda --batch $b --repeat 50 --json --precision tf32 >> "$out/edgegan_generators_cudnn.jsonl" || status=1
      "$bin/edgegan" bench "$m" --backend cuda --batch $b --repeat 50 --json --algo zero-insert >> "$out/edgegan_generators.jsonl" || status=1
    done
  done
  python3 bench/cuda_table.py "$out" > "$out/dcgan_tables.md" 2>&1 || status=1
  rm -rf "$work"
fi
exit $status

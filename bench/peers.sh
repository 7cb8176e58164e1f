#!/usr/bin/env bash
# edgegan against its peers (PyTorch, ONNX Runtime, ncnn, XNNPACK) on single stride-2
# transposed convolutions of GAN generators and on the whole DCGAN-64 generator, batch 1,
# 1 and 2 threads, fp32. Builds what it needs, prints the machine, then ONE markdown table
# (medians); raw results stay in BUILD_DIR/bench/peers/.
#
# Every engine is measured ROUNDS times, one engine after another within a round, and
# each figure is the median of its rounds' medians: on a shared machine a disturbance of
# a few seconds then costs one round of one engine, not the whole figure (the table's
# last column shows how far the rounds were apart).
#
#   bench/peers.sh [BUILD_DIR]          # default: build (configured, benchmarks on)
#   env: JOBS (build jobs, 1), REPEAT (timed runs per measurement, every engine alike, 30),
#        ROUNDS (rounds of measurements, 3; about 3 minutes each),
#        LAYERS (regex on the layer names, default all;
#        dcgan64_generator is the whole generator), PYTHON (/usr/bin/python3, with torch + onnx),
#        WAIT_IDLE_S (before each measurement, wait up to this long for idle CPUs; 60)
#
# The peers run in a venv at BUILD_DIR/bench/peers_venv (created with --system-site-packages
# so the system torch and onnx stay visible; onnxruntime and ncnn from PyPI); a peer that is
# missing is shown as n/a. XNNPACK is Debian's libxnnpack-dev (apt-get install libxnnpack-dev).
# Every engine, edgegan included, runs with its default thread pool waiting (libgomp's
# bounded spin for edgegan, ncnn and PyTorch; ORT's and XNNPACK's spinning pools) and, at
# 2 threads, with passive waiting too; the table keeps the faster and marks passive wins.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
JOBS=${JOBS:-1}
REPEAT=${REPEAT:-30}
ROUNDS=${ROUNDS:-3}
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "peers.sh: REPEAT='$REPEAT' is not a positive whole number" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "peers.sh: ROUNDS='$ROUNDS' is not a positive whole number" >&2; exit 2; }
LAYERS=${LAYERS:-.}
"$PYTHON" -c 'import re, sys; re.compile(sys.argv[1])' "$LAYERS" 2>/dev/null ||
  { echo "peers.sh: LAYERS='$LAYERS' is not a valid regular expression" >&2; exit 2; }
all_names="$("$PYTHON" "$ROOT/bench/peer_layers.py" --list | cut -d' ' -f1) dcgan64_generator"
if ! tr ' ' '\n' <<<"$all_names" | awk -v re="$LAYERS" 'NF && $1 ~ re { found = 1 } END { exit !found }'; then
  echo "peers.sh: LAYERS='$LAYERS' matches no layer; the names are:" $all_names >&2
  exit 2
fi
OUT=$BUILD/bench/peers
VENV=$BUILD/bench/peers_venv
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.jsonl "$OUT"/layers.txt "$OUT"/*.log

# ---- the machine ------------------------------------------------------------------------
read -r load _ </proc/loadavg
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') (CPU family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')), $(nproc) cores, load average $load (before building)"
awk -v l="$load" 'BEGIN { if (l > 0.5) print "WARNING: the machine is busy (load " l "): the timings, 2-thread ones above all, will be off" }'
echo "edgegan build: $(grep -E '^CMAKE_BUILD_TYPE:' "$BUILD/CMakeCache.txt" | cut -d= -f2), ISA ${EDGEGAN_ISA:-auto}; REPEAT=$REPEAT, ROUNDS=$ROUNDS"

# ---- build ----------------------------------------------------------------------------
echo "building ..." >&2
cmake --build "$BUILD" -j"$JOBS" --target edgegan_layers_bench edgegan_cli >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log" >&2; exit 1; }
g++ -O3 -march=native -fopenmp "$ROOT/bench/machine_limits.cpp" -o "$OUT/machine_limits"
xnnpack_na() { echo "{\"peer\": \"xnnpack\", \"layer\": \"*\", \"threads\": 0, \"status\": \"n/a\", \"why\": \"$1\"}" >"$OUT/xnnpack.jsonl"; }
if [[ ! -f /usr/include/xnnpack.h ]]; then
  xnnpack_na "no /usr/include/xnnpack.h (apt-get install libxnnpack-dev)"
elif ! g++ -O2 "$ROOT/bench/xnnpack_conv_transpose2d_bench.cpp" -lXNNPACK -lpthreadpool -o "$OUT/xnnpack_conv_transpose2d_bench" 2>"$OUT/xnnpack_build.log"; then
  xnnpack_na "xnnpack_conv_transpose2d_bench did not build against the installed XNNPACK (see $OUT/xnnpack_build.log)"
fi

if [[ ! -x $VENV/bin/python ]]; then
  echo "creating $VENV (onnxruntime, ncnn from PyPI) ..." >&2
  "$PYTHON" -m venv --system-site-packages "$VENV"
  "$VENV/bin/pip" install -q onnxruntime ncnn >&2 || echo "WARNING: pip install failed: those peers will show n/a" >&2
fi

DCGAN64=$BUILD/bench/dcgan64
if [[ ! -f $DCGAN64/generator.onnx || ! -f $DCGAN64/generator.egan ]]; then
  cmake --build "$BUILD" -j"$JOBS" --target dcgan64_models >"$OUT/dcgan64_models.log" 2>&1 ||
    echo "WARNING: no DCGAN-64 models (the dcgan64_models target needs the converter; see $OUT/dcgan64_models.log)" >&2
fi

source "$ROOT/bench/wait_for_idle.sh"

# ---- measure ----------------------------------------------------------------------------
"$PYTHON" "$ROOT/bench/peer_layers.py" --list | awk -v re="$LAYERS" '$1 ~ re' >"$OUT/layers.txt"

for round in $(seq 1 "$ROUNDS"); do
  wait_for_idle
  echo "round $round/$ROUNDS: measuring the machine's limits ..." >&2
  "$OUT/machine_limits" >"$OUT/machine_r$round.json"

  if [[ -s $OUT/layers.txt ]]; then
    # Timed as the peers are: warm-up, then the median of REPEAT single calls
    # (bench/edgegan_layers_bench.cpp); split and zero insertion on the same micro-kernels.
    for t in 1 2; do
      wait_for_idle
      echo "round $round/$ROUNDS: measuring edgegan per layer, $t thread(s) (split, zero-insert) ..." >&2
      OMP_WAIT_POLICY=passive "$BUILD/bench/edgegan_layers_bench" --threads "$t" --repeat "$REPEAT" <"$OUT/layers.txt" >>"$OUT/edgegan.jsonl"
    done
    # 2 threads again with libgomp's default waiting (a bounded spin, then sleep), as the
    # peers get theirs: waking a sleeping thread costs 20-40 us here, a head layer's whole run.
    wait_for_idle
    echo "round $round/$ROUNDS: measuring edgegan per layer at 2 threads (default waiting) ..." >&2
    env -u OMP_WAIT_POLICY "$BUILD/bench/edgegan_layers_bench" --threads 2 --repeat "$REPEAT" --split-only <"$OUT/layers.txt" >>"$OUT/edgegan.jsonl"
  fi

  # The whole generator through the CLI, once it has `bench` (200 untimed runs first: about
  # the 0.2 s of warm-up every peer gets).
  if [[ dcgan64_generator =~ $LAYERS ]] && "$BUILD/cli/edgegan" bench --help >/dev/null 2>&1; then
    for t in 1 2; do
      wait_for_idle
      echo "round $round/$ROUNDS: measuring edgegan on the DCGAN-64 generator, $t thread(s) ..." >&2
      OMP_WAIT_POLICY=passive "$BUILD/cli/edgegan" bench "$DCGAN64/generator.egan" --batch 1 --threads "$t" --algo split \
        --warmup 200 --repeat "$REPEAT" --json >"$OUT/edgegan_generator_${t}_r$round.json" ||
        echo "WARNING: edgegan bench failed at $t thread(s); see $OUT/edgegan_generator_${t}_r$round.json" >&2
    done
    wait_for_idle
    echo "round $round/$ROUNDS: measuring edgegan on the DCGAN-64 generator, 2 threads (default waiting) ..." >&2
    env -u OMP_WAIT_POLICY "$BUILD/cli/edgegan" bench "$DCGAN64/generator.egan" --batch 1 --threads 2 --algo split \
      --warmup 200 --repeat "$REPEAT" --json >"$OUT/edgegan_generator_2_default_wait_r$round.json" ||
      echo "WARNING: edgegan bench failed at 2 threads (default waiting)" >&2
  fi

  # Each peer with its default (spinning) thread pool, then at 2 threads with passive waiting
  # too: spinning wins on an idle machine, passive when something else runs; the table keeps
  # the faster of the two.
  for peer in pytorch onnxruntime ncnn; do
    for mode in default passive; do
      wait_for_idle
      echo "round $round/$ROUNDS: measuring $peer ($mode waiting) ..." >&2
      if [[ $mode == passive ]]; then args=(--threads 2 --passive); else args=(--threads 1 2); fi
      env -u OMP_WAIT_POLICY "$VENV/bin/python" "$ROOT/bench/peer_layers.py" --peer "$peer" "${args[@]}" --repeat "$REPEAT" --layers "$LAYERS" \
        --generator-onnx "$DCGAN64/generator.onnx" --out "$OUT/$peer.jsonl" 2> >(grep -v -i warning >&2)
    done
  done

  if [[ -x $OUT/xnnpack_conv_transpose2d_bench && -s $OUT/layers.txt ]]; then
    for args in "--threads 1" "--threads 2" "--threads 2 --passive"; do
      wait_for_idle
      echo "round $round/$ROUNDS: measuring XNNPACK ($args) ..." >&2
      # shellcheck disable=SC2086  # $args is a list of options
      "$OUT/xnnpack_conv_transpose2d_bench" $args --repeat "$REPEAT" <"$OUT/layers.txt" >>"$OUT/xnnpack.jsonl"
    done
  fi
done

read -r load _ </proc/loadavg
echo "load average $load at the end"
echo
LAYERS="$LAYERS" "$PYTHON" "$ROOT/bench/peers_table.py" "$OUT"

#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for
# ${FUZZ_SECONDS:-60} s from the committed seed corpus. Any crash, leak,
# sanitizer report or timeout (10 s per input) fails; the input that did it is
# written to $artifacts for a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The AddressSanitizer build (scripts/configure_sanitized.sh): the fuzz targets are
# built there beside the suites; run on its own, this builds the targets only.
build=${BUILD_DIR:-build}-address
seconds=${FUZZ_SECONDS:-60}
scripts/configure_sanitized.sh address
# One thread per input: the targets' sessions ask for one, and OpenMP's pool is not wanted.
export OMP_NUM_THREADS=1
targets=(egan:egan_model_fuzzer onnx:onnx_converter_fuzzer checkpoint:checkpoint_reader_fuzzer npy:npy_reader_fuzzer image:image_reader_fuzzer tactics:tactic_cache_fuzzer)
# The video reader where the CLI is built with FFmpeg's libraries (scripts/install_deps.sh installs them).
grep -q "^EDGEGAN_VIDEO_BUILT:INTERNAL=ON" "$build/CMakeCache.txt" && targets+=(video:video_reader_fuzzer)
cmake --build "$build" -j"$(nproc)" --target "${targets[@]##*:}"

work=$(mktemp -d)
artifacts=${FUZZ_ARTIFACTS:-$work/artifacts}
mkdir -p "$artifacts"
failed=0
for pair in "${targets[@]}"; do
  corpus=${pair%%:*} target=${pair##*:}
  mkdir -p "$work/$corpus"  # new inputs go here; the committed seeds are only read
  if "$build/fuzz/$target" "$work/$corpus" "fuzz/corpus/$corpus" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$work/$target.log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=$((failed + 1))
    tail -n 40 "$work/$target.log"
  fi
  execs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$work/$target.log" | grep -o "[0-9]*$" || echo "?")
  seeds=$(ls "fuzz/corpus/$corpus" | wc -l)
  found=$(ls "$work/$corpus" | wc -l)
  echo "fuzz $target: $status, $execs executions in ${seconds}s, $seeds seeds + $found new corpus inputs"
done
[ $failed -eq 0 ] || { echo "fuzzing failed; inputs in $artifacts"; exit 1; }
rm -rf "$work"

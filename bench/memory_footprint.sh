#!/usr/bin/env bash
# Report vs measurement for every shipped model and the HUGE² benchmark
# generators, batch 1 and 16, each algorithm, each in a fresh process:
# the session's counted allocations against the report, and the process's peak
# RSS growth against the report's total (+ the output copies run() returns).
#   bench/memory_footprint.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=passive

"$build/bench/write_benchmark_models" "$work"
"$build/converter/edgegan-convert" -q "$work/huge2_dcgan.onnx" -o "$work/huge2_dcgan.egan"
"$build/converter/edgegan-convert" -q "$work/huge2_cgan.onnx" -o "$work/huge2_cgan.egan"

printf "%-28s %5s %-12s %14s %14s %14s %7s\n" model batch algorithm "report total" "allocs==plan" "RSS growth" ratio
for model in models/dcgan_digits/generator.egan models/cgan_digits/generator.egan "$work/huge2_dcgan.egan" "$work/huge2_cgan.egan"; do
  for batch in 1 16; do
    for algo in split zero-insert col2im; do
      out=$("$build/samples/memory_report" "$model" "$batch" "$algo")
      alloc=$(grep "session allocations" <<<"$out" | grep -o "(equal)\|(DIFFERENT)")
      line=$(grep "peak RSS growth" <<<"$out")
      growth=$(sed -E 's/peak RSS growth: ([0-9]+) bytes.*/\1/' <<<"$line")
      total=$(sed -E 's/.*= ([0-9]+) bytes.*/\1/' <<<"$line")
      ratio=$(sed -E 's/.*ratio ([0-9.]+).*/\1/' <<<"$line")
      printf "%-28s %5s %-12s %14s %14s %14s %7s\n" "$(basename "$(dirname "$model")")/$(basename "$model")" "$batch" "$algo" "$total" "$alloc" "$growth" "$ratio"
    done
  done
done

#!/usr/bin/env bash
# 2 threads against 1 on a busy machine: the whole DCGAN-64 generator (batch 1) at 1 and
# 2 threads, with libgomp's default waiting (a bounded spin, then sleep) and with passive
# waiting (OMP_WAIT_POLICY=passive: idle threads sleep at once), while 0, 1 and 2 other
# processes keep the CPUs busy (plain busy loops at the same priority, like other work
# on a board). Prints one markdown table: the median and the mean of REPEAT runs. The
# median is what an uninterrupted run takes; the mean counts every run the other work
# interrupted, i.e. the throughput a caller gets.
#
#   bench/threads_under_load.sh [BUILD_DIR]   # default: build (configured, benchmarks on)
#   env: REPEAT (timed runs per cell, 500), LOADS (busy processes per row, "0 1 2")
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
REPEAT=${REPEAT:-500}
LOADS=${LOADS:-0 1 2}
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || { echo "threads_under_load.sh: REPEAT='$REPEAT' is not a positive integer" >&2; exit 2; }
[[ "$LOADS" =~ ^[0-9\ ]+$ ]] || { echo "threads_under_load.sh: LOADS='$LOADS' is not a list of counts" >&2; exit 2; }
EDGEGAN=$BUILD/cli/edgegan
MODEL=$BUILD/bench/dcgan64/generator.egan
for f in "$EDGEGAN" "$MODEL"; do
  [[ -e "$f" ]] || { echo "threads_under_load.sh: $f is missing; build with benchmarks on (scripts/build.sh)" >&2; exit 2; }
done

hogs=()
stop_hogs() { ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; hogs=(); }
trap stop_hogs EXIT

# One cell: "median mean", in ms.
measure() {  # threads policy
  local env_args=(-u OMP_WAIT_POLICY)
  [[ $2 == passive ]] && env_args=(OMP_WAIT_POLICY=passive)
  env "${env_args[@]}" "$EDGEGAN" bench "$MODEL" --threads "$1" --repeat "$REPEAT" --warmup 200 --json |
    /usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); print("%.3f %.3f" % (j["total_ms"], j["total_mean_ms"]))'
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| busy processes | wait | threads | median ms | mean ms | 1 thread / 2 threads (median) | 1 thread / 2 threads (mean) |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for load in $LOADS; do
  for ((i = 0; i < load; ++i)); do
    bash -c 'while :; do :; done' &
    hogs+=($!)
  done
  sleep 1
  for policy in default passive; do
    read -r med1 mean1 < <(measure 1 "$policy")
    read -r med2 mean2 < <(measure 2 "$policy")
    awk -v l="$load" -v p="$policy" -v m1="$med1" -v a1="$mean1" -v m2="$med2" -v a2="$mean2" 'BEGIN {
      printf "| %d | %s | 1 | %.3f | %.3f | | |\n", l, p, m1, a1
      printf "| %d | %s | 2 | %.3f | %.3f | %.2fx | %.2fx |\n", l, p, m2, a2, m1 / m2, a1 / a2 }'
  done
  stop_hogs
done
echo
echo "Whole DCGAN-64 generator, batch 1, fp32, $REPEAT timed runs per cell after 200 untimed (\`edgegan bench --json\`: total_ms, total_mean_ms)."
echo "Busy processes: bash busy loops at the same priority, started before the row and stopped after it. Above 1x: 2 threads faster."

#!/usr/bin/env bash
# Pictures per second of one folder job, run four ways on this machine: the CLI on 1 and
# 2 threads, the CLI as two `--shard` processes of 1 thread (what a scheduler without
# Python runs), and samples/ray_image_to_image.py with 1 worker x 1 thread, 1 x 2 and
# 2 x 1 on a local Ray of 2 CPUs. Each run waits for idle CPUs first (wait_for_idle.sh);
# REPEAT rounds (default 2), every configuration once per round.
#
#   PYTHON=venv/bin/python bench/ray_throughput.sh MODEL.egan IN_FOLDER
#
# PYTHON: an interpreter with edgegan and ray[data] installed; EDGEGAN: the CLI
# (default build/cli/edgegan). The Ray figure is the sample's own (the pipeline: actors
# started, model loaded, every picture read, run and written); "wall" adds starting Ray.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/wait_for_idle.sh
model=$1 input=$2
python=${PYTHON:-python3}
edgegan=${EDGEGAN:-build/cli/edgegan}
export OMP_WAIT_POLICY=passive RAY_USAGE_STATS_ENABLED=0
count=$(find "$input" -type f \( -iname '*.png' -o -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.webp' \) | wc -l)
out=$(mktemp -d "${TMPDIR:-/tmp}/ray-throughput.XXXXXX")
trap 'rm -rf "$out"' EXIT
echo "$count pictures in $input; $(lscpu | sed -n 's/^Model name: *//p'), family $(lscpu | sed -n 's/^CPU family: *//p') model $(lscpu | sed -n 's/^Model: *//p'), $(nproc) CPUs"

timed() {  # label, command...: pictures/s over the whole command
  local label=$1 start end
  shift
  wait_for_idle 60
  rm -rf "$out/o"
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  awk -v l="$label" -v n="$count" -v s="$start" -v e="$end" 'BEGIN { printf "%-36s %6.2f s  %5.2f pictures/s (wall)\n", l, e - s, n / (e - s) }'
}

ray_run() {  # workers, threads
  local line
  line=$("$python" samples/ray_image_to_image.py "$model" "$input" "$out/o" --workers "$1" --threads-per-worker "$2" --num-cpus 2 -q 2>/dev/null)
  echo "  ray $1 x $2: ${line#wrote }"
}

for round in $(seq "${REPEAT:-2}"); do
  echo "-- round $round"
  timed "cli --threads 1" "$edgegan" upscale "$model" "$input" -o "$out/o" -q --threads 1
  timed "cli --threads 2" "$edgegan" upscale "$model" "$input" -o "$out/o" -q --threads 2
  timed "cli --shard 1/2 + 2/2, 1 thread each" bash -c "
    '$edgegan' upscale '$model' '$input' -o '$out/o' -q --threads 1 --shard 1/2 & a=\$!
    '$edgegan' upscale '$model' '$input' -o '$out/o' -q --threads 1 --shard 2/2 & b=\$!
    wait \$a && wait \$b"
  timed "ray 1 worker x 1 thread" ray_run 1 1
  timed "ray 1 worker x 2 threads" ray_run 1 2
  timed "ray 2 workers x 1 thread" ray_run 2 1
done

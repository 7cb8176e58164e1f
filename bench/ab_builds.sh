#!/usr/bin/env bash
# A/B of two builds of edgegan (e.g. before and after a change), interleaved in rounds
# (old, new, old, new ...) so a change in the machine's load hits both: whole-model
# inference (edgegan bench) and one GAN training step (training_step_bench), medians of
# the rounds' medians. MODELS_DIR holds dcgan64/{generator,discriminator}.egan,
# huge2_dcgan.egan, dcgan_digits/generator.egan and cgan_digits/generator.egan
# (build/tests/test_models/built/ and models/ have them).
#   bench/ab_builds.sh OLD_BUILD NEW_BUILD MODELS_DIR OUT_DIR     env: ROUNDS (5)
set -euo pipefail
OLD=$1; NEW=$2; MODELS=$3; OUT=$4
ROUNDS=${ROUNDS:-5}
mkdir -p "$OUT"
export OMP_WAIT_POLICY=passive
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' '), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
  for which in old new; do
    B=$OLD; [ $which = new ] && B=$NEW
    for m in dcgan64/generator huge2_dcgan dcgan_digits/generator cgan_digits/generator; do
      for t in 1 2; do
        for batch in 1 16; do
          "$B/cli/edgegan" bench "$MODELS/$m.egan" --batch $batch --threads $t --repeat 20 --warmup 3 --json \
            | python3 -c "import json,sys; d=json.load(sys.stdin); print('$which $r infer $m b$batch t$t', d['total_ms'])"
        done
      done
    done
    for t in 1 2; do
      "$B/bench/training_step_bench" --dcgan64_dir="$MODELS/dcgan64" --benchmark_filter="^gan_step/(dcgan64|dcgan_digits)/split/threads:$t/" \
        --benchmark_out="$OUT/train_$which.json" --benchmark_out_format=json >/dev/null 2>&1
      python3 -c "
import json,sys
d=json.load(open('$OUT/train_$which.json'))
for b in d['benchmarks']:
    if b.get('aggregate_name')=='median': print('$which $r train', b['run_name'].split('/')[1], 't$t', b['real_time'])"
    done
  done
done | tee "$OUT/ab_raw.txt"
python3 - "$OUT/ab_raw.txt" <<'PY'
import sys, statistics, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) < 5: continue
    v[(p[0], " ".join(p[2:-1]))].append(float(p[-1]))
keys = sorted({k for (_, k) in v})
print("| measurement | old median ms | new median ms | new/old |")
print("|---|---:|---:|---:|")
for k in keys:
    o, n = statistics.median(v[("old", k)]), statistics.median(v[("new", k)])
    print(f"| {k} | {o:.3f} | {n:.3f} | {n/o:.3f} |")
PY

#!/usr/bin/env bash
# End-to-end checks of edgegan-convert and edgegan: happy paths, and every
# argument or file error exits non-zero with one clear line on stderr.
# usage: cli_test.sh EDGEGAN EDGEGAN_CONVERT SOURCE_DIR WORK_DIR [WRITE_BENCHMARK_MODELS]
set -u
edgegan=$1 convert=$2 src=$3 work=$4 write_models=${5:-}
rm -rf "$work" && mkdir -p "$work"
# A cross build runs its binaries through an emulator (qemu-aarch64): wrap them.
if [ -n "${EDGEGAN_TEST_EMULATOR:-}" ]; then
  mkdir -p "$work/bin"
  for name in edgegan convert write_models; do
    target=${!name}
    [ -n "$target" ] || continue
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$EDGEGAN_TEST_EMULATOR" "$target" >"$work/bin/$name"
    chmod +x "$work/bin/$name"
    printf -v "$name" '%s' "$work/bin/$name"
  done
fi
source "$src/tests/cli/test_helpers.sh"

dcgan_onnx="$src/models/dcgan_digits/generator.onnx"
cgan_onnx="$src/models/cgan_digits/generator.onnx"
disc_onnx="$src/models/dcgan_digits/discriminator.onnx"

# --- converter
expect_ok "convert dcgan" "$convert" "$dcgan_onnx" -o "$work/dcgan.egan"
expect_ok "convert cgan" "$convert" "$cgan_onnx" -o "$work/cgan.egan"
expect_ok "convert discriminator" "$convert" -q "$disc_onnx" -o "$work/disc.egan"
expect_error "convert missing file" "does not exist|not exist" "$convert" "$work/nope.onnx" -o "$work/x.egan"
printf 'garbage' >"$work/garbage.onnx"
expect_error "convert garbage" "not a valid ONNX model" "$convert" "$work/garbage.onnx" -o "$work/x.egan"
[ -e "$work/x.egan" ] && bad "a failed conversion left an output file" || ok
expect_error "convert without -o" "output.*required|required" "$convert" "$dcgan_onnx"
expect_error "convert into missing dir" "cannot write" "$convert" "$dcgan_onnx" -o "$work/no/such/dir/x.egan"

# --- inspect
expect_ok "inspect dcgan" "$edgegan" inspect "$work/dcgan.egan"
grep -q "stored as 4 phases" "$work/out.txt" && ok || bad "inspect does not show the stored phases"
expect_error "inspect an onnx file" "not an .egan file" "$edgegan" inspect "$dcgan_onnx"
head -c 1000 "$work/dcgan.egan" >"$work/truncated.egan"
expect_error "inspect truncated" "invalid model" "$edgegan" inspect "$work/truncated.egan"

# --- verify: checksums
expect_ok "verify converted models" "$edgegan" verify "$work/dcgan.egan" "$work/cgan.egan"
[ "$(grep -c ': ok (graph and' "$work/out.txt")" -eq 2 ] && ok || bad "verify does not report both files intact: $(cat "$work/out.txt")"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[len(b)//2]^=1; open(sys.argv[2],'wb').write(b)" "$work/dcgan.egan" "$work/weights_flipped.egan"
"$edgegan" verify "$work/dcgan.egan" "$work/weights_flipped.egan" >"$work/out.txt" 2>&1
[ $? -eq 1 ] && ok || bad "verify of a damaged file did not exit 1"
grep -q "weights_flipped.egan: DAMAGED: corrupt model: the weights" "$work/out.txt" && ok || bad "verify does not name the damaged weights: $(cat "$work/out.txt")"
expect_error "generate from damaged weights" "corrupt model: the weights .* fail their checksum" "$edgegan" generate "$work/weights_flipped.egan" -o "$work/x.png"
[ -e "$work/x.png" ] && bad "a damaged model wrote an image" || ok
expect_ok "--no-verify skips the checksums" "$edgegan" generate "$work/weights_flipped.egan" -n 1 --no-verify -o "$work/unverified.png"
expect_error "verify with --no-verify" "verify takes no --no-verify" "$edgegan" verify "$work/dcgan.egan" --no-verify
legacy="$src/tests/fixtures/schema_v1/cgan_digits_generator.egan"
expect_ok "verify a schema-1 file" "$edgegan" verify "$legacy"
grep -q "no checksum (schema version 1" "$work/out.txt" && ok || bad "verify does not say the old file has no checksum"
expect_ok "inspect a schema-1 file" "$edgegan" inspect "$legacy"
grep -q "warning: .*carries no checksum" "$work/err.txt" && ok || bad "loading an old file gives no warning: $(cat "$work/err.txt")"
grep -q "checksums no checksum" "$work/out.txt" && ok || bad "inspect does not show the missing checksum"

# --- generate
expect_ok "generate dcgan" "$edgegan" generate "$work/dcgan.egan" -n 9 --seed 3 -o "$work/d.png"
[ -s "$work/d.png" ] && ok || bad "no PNG written"
expect_ok "generate again, same seed" "$edgegan" generate "$work/dcgan.egan" -n 9 --seed 3 -o "$work/d2.png"
cmp -s "$work/d.png" "$work/d2.png" && ok || bad "same seed gave a different PNG"
expect_ok "generate cgan label 7" "$edgegan" generate "$work/cgan.egan" -n 4 --label 7 -o "$work/c7.png"
expect_ok "generate split vs zero-insert" "$edgegan" generate "$work/dcgan.egan" -n 4 --algo zero-insert --threads 1 -o "$work/z.png"
expect_error "generate -n 0" "count" "$edgegan" generate "$work/dcgan.egan" -n 0 -o "$work/x.png"
expect_error "generate bad algo" "algo" "$edgegan" generate "$work/dcgan.egan" --algo fast -o "$work/x.png"
expect_error "generate label on unconditional" "not a conditional model" "$edgegan" generate "$work/dcgan.egan" --label 3 -o "$work/x.png"
expect_error "generate label out of range" "outside 0..9" "$edgegan" generate "$work/cgan.egan" --label 12 -o "$work/x.png"
expect_error "generate negative label" "label" "$edgegan" generate "$work/cgan.egan" --label -1 -o "$work/x.png"
expect_error "generate on a discriminator" "no noise input" "$edgegan" generate "$work/disc.egan" -o "$work/x.png"
expect_error "generate missing model" "does not exist|not exist" "$edgegan" generate "$work/none.egan"
expect_error "generate bad seed" "seed" "$edgegan" generate "$work/dcgan.egan" --seed abc
expect_error "generate unknown EDGEGAN_ISA" "EDGEGAN_ISA.*unknown instruction set 'sse9'" env EDGEGAN_ISA=sse9 "$edgegan" generate "$work/dcgan.egan" -o "$work/x.png"
expect_ok "generate on the scalar kernels" env EDGEGAN_ISA=scalar "$edgegan" generate "$work/dcgan.egan" -n 4 -o "$work/scalar.png"
# The same pictures on every machine: the shipped models, fixed seeds, against
# what an x86-64 build wrote (tests/cli/reference, made by tests/cli/make_reference.sh).
# On a cross build this is the AArch64 CLI under qemu, NEON kernels and all.
ref="$src/tests/cli/reference"
for case in "dcgan_digits_seed7|dcgan_digits|" "cgan_digits_seed7_label3|cgan_digits|--label 3"; do
  IFS='|' read -r name model extra <<<"$case"
  # shellcheck disable=SC2086  # $extra is empty or one option and its value
  expect_ok "generate $name" "$edgegan" generate "$src/models/$model/generator.egan" -n 8 --seed 7 $extra --npy "$work/$name.npy" -o "$work/$name.png"
  expect_ok "$name matches the x86-64 reference" python3 "$src/tests/cli/compare_generated.py" \
    "$work/$name.npy" "$ref/$name.npy" "$work/$name.png" "$ref/$name.png"
done
# Under an emulator (a second or two per command) the CLI's job on that architecture is
# shown above: models converted there, the kernels' pictures equal to x86-64's. What
# follows (options, refusals, backends, file errors) is the same C++ everywhere and is
# left to the native run.
if [ -n "${EDGEGAN_TEST_EMULATOR:-}" ]; then
  echo "cli: $passed passed, $failed failed (under $EDGEGAN_TEST_EMULATOR: conversions and the reference pictures only)"
  [ $failed -eq 0 ]
  exit
fi
expect_ok_or_cuda_error "generate cuda backend" "$edgegan" generate "$work/dcgan.egan" --backend cuda -o "$work/x_cuda.png"
expect_ok_or_vulkan_error "generate vulkan backend" env LP_NUM_THREADS=2 "$edgegan" generate "$work/dcgan.egan" --backend vulkan -o "$work/x_vulkan.png"
expect_error "generate vulkan, no such device" "Vulkan backend (has no usable device|is not available)" "$edgegan" generate "$work/dcgan.egan" --backend vulkan --device 99 -o "$work/x_vulkan.png"
expect_error "no subcommand" "subcommand" "$edgegan"
expect_error "unknown subcommand" "" "$edgegan" paint

# --- precision: fp32 and fp16 (half storage) on the cpu; tf32 is CUDA's, and the CPU
# backend refuses it in one line naming itself
expect_ok "generate --precision fp32" "$edgegan" generate "$work/dcgan.egan" -n 2 --precision fp32 -o "$work/p32.png"
expect_ok "generate --precision fp16 on the cpu" "$edgegan" generate "$work/dcgan.egan" -n 2 --precision fp16 -o "$work/p16.png"
[ -s "$work/p16.png" ] && ok || bad "generate --precision fp16 wrote no picture"
expect_ok "run --precision fp16 on the cpu" "$edgegan" run "$work/dcgan.egan" -i "z=$src/tests/golden/cases/dcgan_digits_generator/inputs/z.npy" --precision fp16 -o "$work/p16.npy"
expect_ok "bench --precision fp16 on the cpu" "$edgegan" bench "$work/dcgan.egan" --repeat 1 --warmup 0 --precision fp16 --json
grep -q '"precision": "fp16"' "$work/out.txt" && ok || bad "bench --precision fp16 --json lacks the precision: $(cat "$work/out.txt")"
expect_ok "report --precision fp16 on the cpu" "$edgegan" report "$work/dcgan.egan" --precision fp16
head -1 "$work/out.txt" | grep -q ", cpu, fp16, algorithm split" && ok || bad "report's heading lacks fp16: $(head -1 "$work/out.txt")"
p=tf32
expect_error "generate --precision $p on the cpu" "^edgegan: error: session: the cpu backend runs fp32 and fp16, not $p" "$edgegan" generate "$work/dcgan.egan" -n 2 --precision $p -o "$work/x.png"
expect_error "run --precision $p on the cpu" "the cpu backend runs fp32 and fp16, not $p" "$edgegan" run "$work/dcgan.egan" -i "z=$src/tests/golden/cases/dcgan_digits_generator/inputs/z.npy" --precision $p -o "$work/x.npy"
expect_error "bench --precision $p on the cpu" "the cpu backend runs fp32 and fp16, not $p" "$edgegan" bench "$work/dcgan.egan" --repeat 1 --precision $p
expect_error "report --precision $p on the cpu" "^edgegan: error: report: the cpu backend runs fp32 and fp16, not $p" "$edgegan" report "$work/dcgan.egan" --precision $p
one_line_error=$(wc -l <"$work/err.txt"); [ "$one_line_error" -eq 1 ] && ok || bad "the --precision $p refusal is not one line"
[ -e "$work/x.png" ] && bad "a refused precision left an output file" || ok
expect_error "generate --precision fp8" "precision" "$edgegan" generate "$work/dcgan.egan" --precision fp8 -o "$work/x.png"
expect_ok "report json says the precision" "$edgegan" report "$work/dcgan.egan" --json
grep -q '"precision": "fp32"' "$work/out.txt" && ok || bad "report --json lacks the precision"
expect_ok "report table says the precision" "$edgegan" report "$work/dcgan.egan"
head -1 "$work/out.txt" | grep -q ", cpu, fp32, algorithm split" && ok || bad "report's heading lacks the precision: $(head -1 "$work/out.txt")"
expect_ok "bench json says the precision" "$edgegan" bench "$work/dcgan.egan" --repeat 1 --warmup 0 --json
grep -q '"precision": "fp32"' "$work/out.txt" && ok || bad "bench --json lacks the precision"
# bench fills every input by name: two float inputs (BigGAN's latent and class vector
# alike), and a label beside the latent.
expect_ok "convert a two-input model" "$convert" -q "$src/tests/golden/cases/binary_residual_block/model.onnx" -o "$work/two_inputs.egan"
expect_ok "bench a model with two float inputs" "$edgegan" bench "$work/two_inputs.egan" --repeat 1 --warmup 0
expect_ok "bench a conditional model" "$edgegan" bench "$work/cgan.egan" --repeat 1 --warmup 0 --batch 3
expect_ok "inspect says the precisions" "$edgegan" inspect "$work/dcgan.egan"
grep -Eq "^precision: cpu fp32 fp16;" "$work/out.txt" && ok || bad "inspect lacks the precision line: $(grep precision "$work/out.txt")"
grep -Eq "^cuda convolutions: (the project's kernels|not in this build)" "$work/out.txt" && ok || bad "inspect lacks the cuda convolutions line"
# cuDNN asked for and missing: one line naming it, and the project's kernels run.
expect_ok "inspect with cuDNN missing" env EDGEGAN_CUDNN=1 EDGEGAN_CUDNN_LIBRARY=/nonexistent/libcudnn.so.9 "$edgegan" inspect "$work/dcgan.egan"
[ "$(grep -c "^cuda convolutions:" "$work/out.txt")" -eq 1 ] &&
  grep -Eq "^cuda convolutions: (the project's kernels; cuDNN not used: cuDNN 9 \(libcudnn.so.9\) could not be loaded: /nonexistent/libcudnn.so.9|the project's kernels \(built without cuDNN graphs\)|not in this build)" "$work/out.txt" &&
  ok || bad "inspect does not name the missing cuDNN: $(grep "cuda convolutions" "$work/out.txt")"
# fp16 on CUDA plans a half-size arena (where a GPU can run the report at all)
if "$edgegan" report "$work/dcgan.egan" --backend cuda --batch 8 --json >"$work/r32.json" 2>/dev/null &&
  "$edgegan" report "$work/dcgan.egan" --backend cuda --batch 8 --precision fp16 --json >"$work/r16.json" 2>/dev/null; then
  python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['totals']['arena_bytes']; b=json.load(open(sys.argv[2]))['totals']['arena_bytes']; sys.exit(0 if 0 < b < a and b <= a // 2 + 4096 else 1)" \
    "$work/r32.json" "$work/r16.json" && ok || bad "report --precision fp16 on cuda does not plan about half the fp32 arena"
fi
# Vulkan: fp16 storage by default where the device has 16-bit storage (lavapipe has),
# planning half the fp32 arena; bench says which it ran (where a device is usable).
if LP_NUM_THREADS=2 "$edgegan" report "$work/dcgan.egan" --backend vulkan --batch 8 --precision fp32 --json >"$work/v32.json" 2>/dev/null &&
  LP_NUM_THREADS=2 "$edgegan" report "$work/dcgan.egan" --backend vulkan --batch 8 --precision fp16 --json >"$work/v16.json" 2>/dev/null; then
  python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['totals']['arena_bytes']; b=json.load(open(sys.argv[2]))['totals']['arena_bytes']; sys.exit(0 if 0 < b < a and b <= a // 2 + 4096 else 1)" \
    "$work/v32.json" "$work/v16.json" && ok || bad "report --precision fp16 on vulkan does not plan about half the fp32 arena"
  expect_ok "bench vulkan, default precision" env LP_NUM_THREADS=2 "$edgegan" bench "$work/dcgan.egan" --backend vulkan --repeat 1 --warmup 0
  grep -Eq "batch 1, (fp16|fp32 \(by default: .*16-bit storage.*\)), split, Vulkan device 0" "$work/out.txt" && ok || bad "bench on vulkan does not say its precision: $(head -1 "$work/out.txt")"
  # A device without 16-bit storage (simulated): fp32 by default, saying why; an
  # explicit fp16 refused in one line.
  expect_ok "bench vulkan without 16-bit storage" env LP_NUM_THREADS=2 EDGEGAN_VULKAN_NO_16BIT_STORAGE=1 "$edgegan" bench "$work/dcgan.egan" --backend vulkan --repeat 1 --warmup 0
  grep -Eq "batch 1, fp32 \(by default: fp16 needs 16-bit storage buffers \(storageBuffer16BitAccess\), which Vulkan device 0 \(.*\) lacks \(fp32 runs\)\), split" "$work/out.txt" &&
    ok || bad "bench does not say why vulkan fell back to fp32: $(head -1 "$work/out.txt")"
  expect_error "generate --precision fp16 on vulkan without 16-bit storage" "^edgegan: error: session: fp16 needs 16-bit storage buffers \(storageBuffer16BitAccess\), which Vulkan device 0 \(.*\) lacks \(fp32 runs\)$" \
    env LP_NUM_THREADS=2 EDGEGAN_VULKAN_NO_16BIT_STORAGE=1 "$edgegan" generate "$work/dcgan.egan" -n 2 --backend vulkan --precision fp16 -o "$work/x16.png"
  [ "$(wc -l <"$work/err.txt")" -eq 1 ] && ok || bad "the fp16 refusal on vulkan is not one line"
fi

# --- run
z="$src/tests/golden/cases/dcgan_digits_generator/inputs/z.npy"
expect_ok "run dcgan" "$edgegan" run "$work/dcgan.egan" -i "z=$z" -o "$work/out.npy"
[ -s "$work/out.npy" ] && ok || bad "run wrote no .npy"
expect_error "run wrong input name" "no input named 'q'" "$edgegan" run "$work/dcgan.egan" -i "q=$z" -o "$work/o.npy"
expect_error "run malformed spec" "NAME=FILE" "$edgegan" run "$work/dcgan.egan" -i "$z" -o "$work/o.npy"
expect_error "run missing npy" "cannot open" "$edgegan" run "$work/dcgan.egan" -i "z=$work/none.npy" -o "$work/o.npy"
expect_error "run garbage npy" "not a .npy file" "$edgegan" run "$work/dcgan.egan" -i "z=$work/garbage.onnx" -o "$work/o.npy"
img="$src/tests/golden/cases/dcgan_digits_discriminator/inputs/image.npy"
expect_error "run wrong shape" "shape" "$edgegan" run "$work/dcgan.egan" -i "z=$img" -o "$work/o.npy"
expect_error "run cgan missing label" "'label' is missing" "$edgegan" run "$work/cgan.egan" -i "z=$src/tests/golden/cases/cgan_digits_generator/inputs/z.npy" -o "$work/o.npy"

# --- report
expect_ok "report" "$edgegan" report "$work/dcgan.egan" --batch 4
grep -q "activation arena, planned (peak)" "$work/out.txt" && ok || bad "report table lacks the arena row"
# --- bench
expect_ok "bench cgan json" "$edgegan" bench "$work/cgan.egan" --batch 2 --threads 1 --repeat 3 --json
python3 - "$work/out.txt" <<'PY' && ok || bad "bench --json: not the documented object"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["batch"] == 2 and j["threads"] == 1 and j["repeat"] == 3 and j["algo"] == "split", j
assert j["total_ms"] > 0 and j["total_mean_ms"] > 0 and j["isa"] in ("scalar", "avx2", "avx512", "neon", "neonfp16arith") and j["microkernel"].endswith(j["isa"])
assert len(j["layers"]) > 3 and all(l["ms"] >= 0 and l["macs"] >= 0 and l["kernel"] and l["name"] for l in j["layers"])
assert any(l["kernel"] == "conv_transpose2d_split" and l["macs"] > 0 for l in j["layers"])
PY
expect_ok "bench table, zero-insert on scalar" env EDGEGAN_ISA=scalar "$edgegan" bench "$work/dcgan.egan" --algo zero-insert --repeat 2
grep -q "gemm_ukernel_4x16__scalar" "$work/out.txt" && grep -q "conv_transpose2d_zero_insert" "$work/out.txt" && grep -q "whole model" "$work/out.txt" && ok || bad "bench table: $(cat "$work/out.txt")"
expect_error "bench repeat 0" "repeat" "$edgegan" bench "$work/dcgan.egan" --repeat 0
expect_error "bench bad algo" "algo" "$edgegan" bench "$work/dcgan.egan" --algo winograd
expect_error "bench garbage model" "not a valid|egan|model" "$edgegan" bench "$work/garbage.onnx"

expect_ok "report json" "$edgegan" report "$work/dcgan.egan" --json
grep -q '"session_bytes"' "$work/out.txt" && [ "$(head -c 1 "$work/out.txt")" = "{" ] && ok || bad "report --json is not an object"
expect_ok "report all json" "$edgegan" report "$work/cgan.egan" --algo all --json
[ "$(head -c 1 "$work/out.txt")" = "[" ] && ok || bad "report --algo all --json is not an array"
expect_ok "report chart" "$edgegan" report "$work/dcgan.egan" --chart "$work/chart.svg"
grep -q "<svg" "$work/chart.svg" && ok || bad "no SVG chart written"
expect_ok_or_cuda_error "report cuda" "$edgegan" report "$work/dcgan.egan" --backend cuda
expect_ok_or_vulkan_error "report vulkan" env LP_NUM_THREADS=2 "$edgegan" report "$work/dcgan.egan" --backend vulkan
expect_error "report batch 0" "batch" "$edgegan" report "$work/dcgan.egan" --batch 0
expect_ok "report threads" "$edgegan" report "$work/dcgan.egan" --threads 3 --json
grep -q '"threads": 3' "$work/out.txt" && ok || bad "report --threads 3 --json does not say threads 3"
expect_error "report threads -1" "threads" "$edgegan" report "$work/dcgan.egan" --threads -1
expect_error "report bad chart" "must end in .svg or .png" "$edgegan" report "$work/dcgan.egan" --chart "$work/chart.gif"
expect_error "report bad algo" "algo" "$edgegan" report "$work/dcgan.egan" --algo fastest

# --- outputs never replace inputs, and are never left partial
cp "$dcgan_onnx" "$work/g.onnx"
sum_before=$(sha256sum <"$work/g.onnx")
expect_error "convert onto its input" "refusing to write" "$convert" "$work/g.onnx" -o "$work/g.onnx"
ln -f "$work/g.onnx" "$work/g_link.onnx"
expect_error "convert onto a hard link of its input" "refusing to write" "$convert" "$work/g.onnx" -o "$work/g_link.onnx"
[ "$(sha256sum <"$work/g.onnx")" = "$sum_before" ] && ok || bad "the converter's input changed"
cp "$work/dcgan.egan" "$work/model_copy.egan"
expect_error "generate onto the model" "refusing to write" "$edgegan" generate "$work/model_copy.egan" -o "$work/model_copy.egan"
cmp -s "$work/dcgan.egan" "$work/model_copy.egan" && ok || bad "generate changed its model"
cp "$z" "$work/z.npy"
expect_error "run onto an input" "refusing to write" "$edgegan" run "$work/dcgan.egan" -i "z=$work/z.npy" -o "$work/z.npy"
cmp -s "$z" "$work/z.npy" && ok || bad "run changed its input"
if [ -n "$write_models" ]; then
  # Kill the converter (SIGKILL: no cleanup) at several points while it replaces an
  # existing model: the target is the old file or a complete new one, never partial.
  "$write_models" "$work"
  for delay in 0.1 0.3 0.5 0.6 0.65 0.7 0.75 0.8 0.85 0.9 1.0; do  # the write happens in the last ~0.3 s
    cp "$work/dcgan.egan" "$work/target.egan"
    timeout -s KILL "$delay" "$convert" -q "$work/huge2_dcgan.onnx" -o "$work/target.egan" >/dev/null 2>&1
    if cmp -s "$work/dcgan.egan" "$work/target.egan" || "$edgegan" inspect "$work/target.egan" >/dev/null 2>&1; then ok
    else bad "killed after ${delay}s: the target is neither the old model nor a complete new one"; fi
  done
  "$convert" -q "$work/huge2_dcgan.onnx" -o "$work/target.egan" && "$edgegan" inspect "$work/target.egan" >/dev/null && ok || bad "the big conversion failed"
fi

# --- fp16 weights: half the file, the same pictures within 1e-2, and a tuned fp16
# model stays fp16 and loads.
expect_ok "convert --weights fp16" "$convert" -q --weights fp16 "$dcgan_onnx" -o "$work/dcgan16.egan"
size32=$(wc -c <"$work/dcgan.egan") size16=$(wc -c <"$work/dcgan16.egan")
[ $((size16 * 100)) -le $((size32 * 52)) ] && ok || bad "fp16 file is $size16 bytes, fp32 $size32: not about half"
expect_ok "inspect fp16" "$edgegan" inspect "$work/dcgan16.egan"
grep -q "sub-kernels fp16" "$work/out.txt" && ok || bad "inspect does not show the fp16 weights"
grep -q "conv_transpose2d_weights: fp16" "$work/out.txt" && ok || bad "inspect does not show the fp16 weights' metadata"
# The shipped models were converted when that key was still "deconv_weights".
expect_ok "inspect a file with the old metadata key" "$edgegan" inspect "$src/models/dcgan_digits/generator.egan"
grep -q "conv_transpose2d_weights: fp32" "$work/out.txt" && ok || bad "the old metadata key is not read under its new name"
grep -q "deconv_weights" "$work/out.txt" && bad "inspect still shows the old metadata key" || ok
expect_ok "generate fp16" "$edgegan" generate "$work/dcgan16.egan" -n 8 --seed 7 --npy "$work/d16.npy" -o "$work/d16.png"
expect_ok "fp16 pictures match the fp32 reference within 1e-2" python3 "$src/tests/cli/compare_generated.py" \
  "$work/d16.npy" "$ref/dcgan_digits_seed7.npy" "$work/d16.png" "$ref/dcgan_digits_seed7.png" 1e-2
expect_error "convert --weights fp8" "weights" "$convert" --weights fp8 "$dcgan_onnx" -o "$work/x.egan"

# --- finetune
sevens="$src/models/few_shot/sevens_32.npy" sevens16="$src/models/few_shot/sevens_16.npy" sevens_labels="$src/models/few_shot/sevens_labels.npy"
"$convert" -q "$src/models/cgan_digits/discriminator.onnx" -o "$work/cgan_disc.egan" >/dev/null 2>&1 || bad "convert the cgan discriminator"
# Reconstruction (no discriminator): the loss must fall, the tuned model must load and generate.
expect_ok "finetune reconstruction" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" --steps 30 --batch 8 --lr 1e-3 --threads 2 -o "$work/tuned.egan"
read -r first last < <(sed -n 's/.*mse loss \([0-9.]*\) -> \([0-9.]*\).*/\1 \2/p' "$work/out.txt")
awk -v a="${first:-0}" -v b="${last:-1}" 'BEGIN { exit !(b < a / 2) }' && ok || bad "finetune did not halve its loss: ${first:-?} -> ${last:-?}"
grep -q "step 30/30" "$work/err.txt" && ok || bad "no progress line for the last step: $(cat "$work/err.txt")"
expect_ok "generate from the tuned model" "$edgegan" generate "$work/tuned.egan" -n 4 -o "$work/tuned.png"
# The DW+SCC generator (SlidingChannelConv from torch's channel-stack export): its loss halves too.
"$convert" -q "$src/tests/golden/cases/scc_dw_generator/model.onnx" -o "$work/scc.egan" >/dev/null 2>&1 || bad "convert the DW+SCC generator"
python3 - "$work/scc_data.npy" <<'PY'
import math, struct, sys
from array import array
n, c, h, w = 16, 3, 16, 16
vals = array("f", (0.8 * math.sin(0.4 * x + 0.3 * y + k + ch) for k in range(n) for ch in range(c) for y in range(h) for x in range(w)))
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d, %d), }" % (n, c, h, w)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + vals.tobytes())
PY
expect_ok "finetune the DW+SCC generator" "$edgegan" finetune "$work/scc.egan" --data "$work/scc_data.npy" --steps 60 --batch 8 --lr 3e-3 --threads 2 -o "$work/scc_tuned.egan"
read -r first last < <(sed -n 's/.*mse loss \([0-9.]*\) -> \([0-9.]*\).*/\1 \2/p' "$work/out.txt")
awk -v a="${first:-0}" -v b="${last:-1}" 'BEGIN { exit !(b < a / 2) }' && ok || bad "finetune did not halve the DW+SCC generator's loss: ${first:-?} -> ${last:-?}"
expect_ok "finetune an fp16 model" "$edgegan" finetune "$work/dcgan16.egan" --data "$sevens" --steps 3 --batch 4 -q -o "$work/tuned16.egan"
expect_ok "inspect the tuned fp16 model" "$edgegan" inspect "$work/tuned16.egan"
grep -q "sub-kernels fp16" "$work/out.txt" && ok || bad "the tuned fp16 model is no longer fp16"
cmp -s "$work/dcgan.egan" "$work/tuned.egan" && bad "fine-tuning changed no weight" || ok
expect_ok "finetune adversarial" "$edgegan" finetune "$work/dcgan.egan" --discriminator "$work/disc.egan" --data "$sevens" --steps 3 --batch 4 -q \
  -o "$work/tuned_g.egan" --discriminator-output "$work/tuned_d.egan"
grep -q "D loss" "$work/out.txt" && ok || bad "the adversarial summary has no D loss: $(cat "$work/out.txt")"
expect_ok "inspect the tuned discriminator" "$edgegan" inspect "$work/tuned_d.egan"
expect_ok "finetune conditional" "$edgegan" finetune "$work/cgan.egan" --discriminator "$work/cgan_disc.egan" --data "$sevens16" --labels "$sevens_labels" \
  --steps 2 --batch 4 -q -o "$work/tuned_cgan.egan"
expect_ok "generate from the tuned cgan" "$edgegan" generate "$work/tuned_cgan.egan" -n 4 --label 7 -o "$work/tuned_cgan.png"
expect_error "finetune cgan without labels" "conditional.*--labels" "$edgegan" finetune "$work/cgan.egan" --data "$sevens16" -o "$work/x.egan"
expect_error "finetune labels for dcgan" "not conditional" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" --labels "$sevens_labels" -o "$work/x.egan"
expect_error "finetune wrong image size" "1x16x16.*makes 1x32x32" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens16" -o "$work/x.egan"
expect_error "finetune over its input" "refusing to write" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" -o "$work/dcgan.egan"
expect_error "finetune over its data" "refusing to write" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" -o "$sevens"
expect_error "finetune batch too big" "larger than the 32 images" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" --batch 64 -o "$work/x.egan"
expect_error "finetune D output without D" "needs --discriminator" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" --discriminator-output "$work/d.egan" -o "$work/x.egan"
expect_error "finetune mismatched D" "discriminator takes labels but the generator does not" "$edgegan" finetune "$work/dcgan.egan" --discriminator "$work/cgan_disc.egan" --data "$sevens" -o "$work/x.egan"
expect_error "finetune freeze out of range" "frozen op 9 is outside 0\\.\\.[0-9]" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" --freeze 1,9 -o "$work/x.egan"
expect_error "finetune d-lr without D" "needs --discriminator" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" --d-lr 1e-4 -o "$work/x.egan"
expect_ok "finetune first layer only" "$edgegan" finetune "$work/dcgan.egan" --discriminator "$work/disc.egan" --data "$sevens" --freeze 1,2,3 --lr 4e-3 --d-lr 5e-5 \
  --steps 2 --batch 4 -q -o "$work/tuned_first.egan"
expect_ok "report --training" "$edgegan" report "$work/cgan.egan" --training --batch 16 --optimizer sgd-momentum
grep -q "optimizer state" "$work/out.txt" && grep -q "activations kept for backward" "$work/out.txt" && ok || bad "report --training lacks rows: $(cat "$work/out.txt")"
expect_ok "report --training --json" "$edgegan" report "$work/cgan.egan" --training --json
grep -q '"optimizer_state_bytes": [1-9]' "$work/out.txt" && ok || bad "report --training --json: $(cat "$work/out.txt")"
# The total is the arena (activations, gradients and scratch sharing it) plus what lies outside it.
field() { grep -o "\"$1_bytes\": [0-9]*" "$work/out.txt" | grep -o '[0-9]*$'; }
[ "$(field total)" = "$(( $(field arena) + $(field parameters) + $(field parameter_gradients) + $(field optimizer_state) + $(field weight_copies) + $(field mapped_weights) ))" ] &&
  [ "$(field arena)" -gt 0 ] && [ "$(field arena)" -le "$(( $(field activations) + $(field activation_gradients) + $(field labels) + $(field scratch) ))" ] &&
  ok || bad "report --training --json: the rows do not add up to the total: $(cat "$work/out.txt")"
expect_error "report --training --precision tf32" "fp32 only" "$edgegan" report "$work/cgan.egan" --training --precision tf32
expect_error "report --training --chart" "neither --chart" "$edgegan" report "$work/cgan.egan" --training --chart "$work/c.svg"
expect_error "finetune bad lr" "lr" "$edgegan" finetune "$work/dcgan.egan" --data "$sevens" --lr -1 -o "$work/x.egan"
# A 1x1x32x32 float32 .npy of 255s: pixel values never scaled to the model's [-1, 1].
{
  header="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 32, 32), }"
  while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
  printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#header} + 1) % 256 )))\\x$(printf %02x $(( (${#header} + 1) / 256 )))"
  printf '%s\n' "$header"
  for _ in $(seq 1024); do printf '\x00\x00\x7f\x43'; done
} >"$work/bytes255.npy"
expect_error "finetune on 0..255 data" "values span \\[255, 255\\].*rescale" "$edgegan" finetune "$work/dcgan.egan" --data "$work/bytes255.npy" -o "$work/x.egan"
expect_error "finetune on garbage data" "not a .npy file" "$edgegan" finetune "$work/dcgan.egan" --data "$work/garbage.onnx" -o "$work/x.egan"
[ -e "$work/x.egan" ] && bad "a failed finetune left an output file" || ok

# Paired fine-tuning of an image-to-image generator (pix2pix's U-Net): --data inputs, --targets outputs.
unet_case="$src/tests/golden/cases/zoo_pix2pix_unet"
expect_ok "convert a U-Net" "$convert" -q "$unet_case/model.onnx" -o "$work/unet.egan"
expect_ok "finetune paired" "$edgegan" finetune "$work/unet.egan" --data "$unet_case/inputs/image.npy" --targets "$unet_case/inputs/image.npy" \
  --steps 20 --batch 2 --lr 1e-3 --loss l1 --threads 2 -q -o "$work/unet_tuned.egan"
read -r first last < <(sed -n 's/.*l1 loss \([0-9.]*\) -> \([0-9.]*\).*/\1 \2/p' "$work/out.txt")
awk -v a="${first:-0}" -v b="${last:-1}" 'BEGIN { exit !(b < a) }' && ok || bad "paired finetune did not lower its loss: ${first:-?} -> ${last:-?}"
expect_ok "the paired-tuned model runs" "$edgegan" run "$work/unet_tuned.egan" -i "image=$unet_case/inputs/image.npy" -o "$work/unet_out.npy"
expect_error "finetune paired, wrong targets" "targets .*32x1x32x32.*outputs are 3x32x32" "$edgegan" finetune "$work/unet.egan" --data "$unet_case/inputs/image.npy" \
  --targets "$sevens" -o "$work/x.egan"
expect_error "finetune paired with D" "targets and --discriminator" "$edgegan" finetune "$work/unet.egan" --data "$unet_case/inputs/image.npy" \
  --targets "$unet_case/inputs/image.npy" --discriminator "$work/disc.egan" -o "$work/x.egan"
expect_error "finetune paired, batch too big" "larger than the 2 pairs" "$edgegan" finetune "$work/unet.egan" --data "$unet_case/inputs/image.npy" \
  --targets "$unet_case/inputs/image.npy" --batch 4 -o "$work/x.egan"
[ -e "$work/x.egan" ] && bad "a failed paired finetune left an output file" || ok

# --- translate and upscale
images="$src/tests/data/images"
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ print ($3 * 256 + $4) "x" ($7 * 256 + $8) }'; }
expect_ok "convert an SR model with its input range" "$convert" -q "$src/tests/golden/cases/zoo_realesrgan_compact/model.onnx" -o "$work/sr.egan" --input-range 0,1
expect_ok "convert CycleGAN with mean and std" "$convert" -q "$src/tests/golden/cases/zoo_cyclegan_resnet/model.onnx" -o "$work/cyc.egan" --mean 0.5 --std 0.5
"$edgegan" inspect "$work/cyc.egan" | grep -q "input_std: 0.5,0.5,0.5" && ok || bad "the converter did not record --std"
expect_error "convert with --input-range and --mean" "excludes" "$convert" "$src/tests/golden/cases/zoo_cyclegan_resnet/model.onnx" -o "$work/x.egan" --input-range -1,1 --mean 0.5 --std 0.5
expect_error "convert with a bad range" "value range '3' must be LO,HI" "$convert" "$src/tests/golden/cases/zoo_cyclegan_resnet/model.onnx" -o "$work/x.egan" --input-range 3
# PyTorch checkpoints (tests/checkpoint): no flags to convert, none to upscale.
ckpt="$src/tests/checkpoint"
expect_ok "convert a .pth" "$convert" -q "$ckpt/cases/compact_x4_params_zip/model.pth" -o "$work/pth.egan"
"$edgegan" inspect "$work/pth.egan" | grep -q "architecture: SRVGGNetCompact: in 3, out 3, features 8, convs 3, scale 4" && ok || bad "inspect does not name the checkpoint's architecture"
expect_ok "upscale with a converted .pth, no flags" "$edgegan" upscale "$work/pth.egan" "$images/rgb.png" -o "$work/pth_up.png"
[ "$(png_size "$work/pth_up.png")" = "164x120" ] && grep -q "model metadata" "$work/out.txt" && ok || bad "upscale of the .pth model: $(cat "$work/out.txt")"
rm -f /tmp/edgegan_checkpoint_pwned
expect_error "convert a pickle calling os.system" "^edgegan-convert: error: 'os_system.pth': .*refers to 'posix.system'.*nothing was run" "$convert" "$ckpt/hostile/os_system.pth" -o "$work/x.egan"
[ ! -e "$work/x.egan" ] && [ ! -e /tmp/edgegan_checkpoint_pwned ] && [ "$(wc -l < "$work/err.txt")" = 1 ] && ok || bad "the hostile pickle left a file or more than one line"
expect_ok "blend two checkpoints" "$convert" -q "$ckpt/blend/a.pth" --blend "$ckpt/blend/b.pth:0.3" -o "$work/blend.egan"
expect_error "blend other architectures" "tensor 'body.0.weight' is \\[8, 3, 3, 3\\] in one and \\[4, 3, 3, 3\\]" "$convert" "$ckpt/blend/a.pth" --blend "$ckpt/blend/other.pth:0.5" -o "$work/x.egan"
expect_error "blend without a weight" "is not PATH:T" "$convert" "$ckpt/blend/a.pth" --blend "$ckpt/blend/b.pth" -o "$work/x.egan"
expect_error "blend an ONNX model" "--blend takes checkpoints" "$convert" "$dcgan_onnx" --blend "$ckpt/blend/b.pth:0.5" -o "$work/x.egan"
expect_ok "upscale a PNG" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/up.png"
[ "$(png_size "$work/up.png")" = "164x120" ] && ok || bad "upscale wrote $(png_size "$work/up.png"), not 164x120"
grep -q "1 tile of 41x30" "$work/out.txt" && ok || bad "upscale did not say its tiles: $(cat "$work/out.txt")"
expect_ok "upscale in tiles" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/up_tiled.png" --tile 16 --overlap 4 --threads 2
grep -q "12 tiles of 16x16" "$work/out.txt" && ok || bad "tiled upscale: $(cat "$work/out.txt")"
# 64M holds under the sanitizers too, whose shadow memory counts in the RSS (TSan's: some
# 20 MiB here): FFmpeg's libraries are not loaded for a picture (cli/video/video_module.h).
expect_ok "upscale under a memory limit" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/up_limit.png" --memory-limit 64M
mkdir -p "$work/folder_in" && cp "$images/rgb.png" "$work/folder_in/a.png" && cp "$images/photo.jpg" "$work/folder_in/b.jpg"
expect_ok "upscale a JPEG and a folder into a folder" "$edgegan" upscale "$work/sr.egan" "$images/opaque_rgba.png" "$work/folder_in" -o "$work/up_dir" -q
[ -f "$work/up_dir/opaque_rgba.png" ] && [ -f "$work/up_dir/a.png" ] && [ -f "$work/up_dir/b.png" ] && ok || bad "the folder run missed an output: $(ls "$work/up_dir")"
expect_ok "translate" "$edgegan" translate "$work/cyc.egan" "$images/photo.jpg" -o "$work/t.png"
[ "$(png_size "$work/t.png")" = "41x30" ] && ok || bad "translate wrote $(png_size "$work/t.png"), not 41x30"
grep -q "model metadata" "$work/out.txt" && ok || bad "translate did not use the recorded normalisation: $(cat "$work/out.txt")"
# Tiles of a model with instance norms: their statistics gathered over the whole picture
# (no warning, the passes said), or per tile with --tile-stats approx (the warning).
expect_ok "translate in tiles, whole-picture statistics" "$edgegan" translate "$work/cyc.egan" "$images/photo.jpg" -o "$work/t_tiled.png" --tile 24 --overlap 8
grep -q "passes for whole-image statistics" "$work/out.txt" && ! grep -q "warning" "$work/err.txt" && ok || bad "exact tiles: $(cat "$work/out.txt" "$work/err.txt")"
expect_ok "translate in tiles, --tile-stats approx" "$edgegan" translate "$work/cyc.egan" "$images/photo.jpg" -o "$work/t_tiled.png" --tile 24 --overlap 8 --tile-stats approx
grep -q "warning: GroupNorm .*takes statistics of the whole image" "$work/err.txt" && ok || bad "approx tiles gave no warning: $(cat "$work/err.txt")"
expect_error "--tile-stats exact off the cpu" "cpu backend only|CUDA" "$edgegan" translate "$work/cyc.egan" "$images/photo.jpg" -o "$work/x.png" --tile-stats exact --backend cuda
expect_error "--tile-stats nonsense" "tile-stats" "$edgegan" translate "$work/cyc.egan" "$images/photo.jpg" -o "$work/x.png" --tile-stats sometimes
# Formats, alpha, --outscale, folders, --list, --shard.
png_colour_type() { od -An -tu1 -j25 -N1 "$1" | tr -d ' '; }
magic() { head -c 12 "$1" | od -An -c | tr -d ' \n'; }
expect_ok "upscale RGBA" "$edgegan" upscale "$work/sr.egan" "$images/transparent_rgba.png" -o "$work/rgba.png"
[ "$(png_colour_type "$work/rgba.png")" = 6 ] && [ "$(png_size "$work/rgba.png")" = "164x120" ] && ok || bad "RGBA in did not give a 164x120 RGBA PNG (colour type $(png_colour_type "$work/rgba.png"))"
expect_ok "upscale x4 model with -s 2" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/half.png" -s 2
[ "$(png_size "$work/half.png")" = "82x60" ] && ok || bad "-s 2 on a x4 model wrote $(png_size "$work/half.png"), not 82x60"
grep -q "wrote .*half.png (82x60)" "$work/out.txt" && ok || bad "-s 2 summary: $(cat "$work/out.txt")"
expect_ok "upscale to JPEG by extension" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/up.jpg" --quality 80
[ "$(head -c 3 "$work/up.jpg" | od -An -tx1 | tr -d ' ')" = "ffd8ff" ] && ok || bad "up.jpg is not a JPEG"
expect_ok "upscale RGBA to lossless WebP" "$edgegan" upscale "$work/sr.egan" "$images/transparent_rgba.png" -o "$work/rgba.webp" --quality 100
[ "$(magic "$work/rgba.webp" | cut -c1-4)" = RIFF ] && ok || bad "rgba.webp is not a RIFF file: $(magic "$work/rgba.webp")"
expect_ok "a WebP picture in, a PNG out" "$edgegan" upscale "$work/sr.egan" "$work/rgba.webp" -o "$work/from_webp.png" -s 1
[ "$(png_colour_type "$work/from_webp.png")" = 6 ] && [ "$(png_size "$work/from_webp.png")" = "164x120" ] && ok || bad "WebP in: $(png_size "$work/from_webp.png")"
mkdir -p "$work/tree/a/b" "$work/tree/c"
cp "$images/rgb.png" "$work/tree/top.png"; cp "$images/photo.jpg" "$work/tree/a/b/deep.jpg"; cp "$work/rgba.webp" "$work/tree/c/small.webp"
echo "not a picture" >"$work/tree/c/notes.txt"
expect_ok "a folder tree, -f webp" "$edgegan" translate "$work/cyc.egan" "$work/tree" -o "$work/tree_out" -f webp -q
[ "$(cd "$work/tree_out" && find . -type f | sort | tr '\n' ' ')" = "./a/b/deep.webp ./c/small.webp ./top.webp " ] && ok || bad "subfolders not kept: $(cd "$work/tree_out" && find . -type f)"
printf '%s\n' "$images/rgb.png" "" "$work/tree/a" "  $images/photo.jpg  " >"$work/list.txt"
expect_ok "--list" "$edgegan" translate "$work/cyc.egan" --list "$work/list.txt" -o "$work/list_out" -q
[ "$(cd "$work/list_out" && find . -type f | sort | tr '\n' ' ')" = "./b/deep.png ./photo.png ./rgb.png " ] && ok || bad "--list outputs: $(cd "$work/list_out" && find . -type f)"
# Three shards of seven pictures: together every output once, each shard its own.
mkdir -p "$work/many"
for n in 1 2 3 4 5 6 7; do cp "$images/rgb.png" "$work/many/p$n.png"; done
for i in 1 2 3; do
  expect_ok "--shard $i/3" "$edgegan" translate "$work/cyc.egan" "$work/many" -o "$work/shard$i" --shard "$i/3"
  grep -q "shard $i/3: [23] of 7 pictures" "$work/out.txt" && ok || bad "--shard $i/3 summary: $(cat "$work/out.txt")"
done
all=$(cd "$work" && ls shard1 shard2 shard3 | grep png | sort | tr '\n' ' ')
[ "$all" = "p1.png p2.png p3.png p4.png p5.png p6.png p7.png " ] && ok || bad "the shards did not cover the list exactly once: $all"
[ "$(ls "$work/shard1" | tr '\n' ' ')" = "p1.png p4.png p7.png " ] && ok || bad "shard 1/3 is not every third from the first: $(ls "$work/shard1")"
# Exit codes: 2 when nothing ran (arguments), 1 when a picture failed.
"$edgegan" translate "$work/cyc.egan" "$work/many" -o "$work/x_dir" --shard 4/3 2>"$work/err.txt"
[ $? -eq 2 ] && grep -q "shard '4/3' is not I/N with 1 <= I <= N" "$work/err.txt" && [ ! -e "$work/x_dir" ] && ok || bad "--shard 4/3: $(cat "$work/err.txt")"
for shard in 0/3 1/0 x 1/ 2/3/4 -1/3; do
  "$edgegan" translate "$work/cyc.egan" "$work/many" -o "$work/x_dir" --shard "$shard" >/dev/null 2>"$work/err.txt"
  [ $? -eq 2 ] && [ "$(wc -l <"$work/err.txt")" -eq 1 ] && grep -q "is not I/N" "$work/err.txt" && ok || bad "--shard $shard: $(cat "$work/err.txt")"
done
"$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/x.png" -s 0 >/dev/null 2>"$work/err.txt"
[ $? -eq 2 ] && ok || bad "-s 0 did not exit 2: $(cat "$work/err.txt")"
expect_error "-f and -o disagree" "-f jpg and -o .*x.png disagree" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/x.png" -f jpg
expect_error "--quality with png" "--quality applies to jpg and webp" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/x.png" --quality 50
expect_error "an unknown -f" "image format 'gif' is not png, jpg or webp" "$edgegan" translate "$work/cyc.egan" "$work/many" -o "$work/x_dir" -f gif
echo "$work/nope.png" >"$work/bad_list.txt"
expect_error "a missing --list entry" "'$work/nope.png' does not exist" "$edgegan" translate "$work/cyc.egan" --list "$work/bad_list.txt" -o "$work/x_dir"
expect_error "no pictures at all" "no pictures" "$edgegan" translate "$work/cyc.egan" -o "$work/x_dir"
[ -e "$work/x_dir" ] && bad "a refused run created its output folder" || ok
# Damaged pictures in each format: one line naming the file, exit 1, nothing written.
head -c 200 "$work/rgba.webp" >"$work/cut.webp"
head -c 60 "$work/rgba.png" >"$work/cut.png"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[len(b)//2]^=0xff; b[len(b)//2+1]^=0x55; open(sys.argv[2],'wb').write(b)" "$work/rgba.png" "$work/flipped.png"
printf 'RIFF\x16\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0\xff\x3f\0\xff\x3f\0' >"$work/huge.webp"
for f in cut.webp cut.png flipped.png huge.webp; do
  "$edgegan" upscale "$work/sr.egan" "$work/$f" -o "$work/bad_out.png" >/dev/null 2>"$work/err.txt"
  rc=$?
  [ $rc -eq 1 ] && [ "$(wc -l <"$work/err.txt")" -eq 1 ] && grep -q "'$work/$f'" "$work/err.txt" && [ ! -e "$work/bad_out.png" ] && ok || bad "$f: exit $rc, $(cat "$work/err.txt")"
done
grep -q "huge.webp' is 16384x16384 pixels, more than edgegan reads" "$work/err.txt" && ok || bad "huge.webp: $(cat "$work/err.txt")"
"$edgegan" upscale "$work/sr.egan" --colour "$images/rgb.png" -o "$work/x.png" 2>/dev/null
[ $? -eq 2 ] && ok || bad "an unknown option of upscale did not exit 2"

# The refusals below are the same C++ on every architecture: under an emulator (where
# each command costs a second or two) they are left to the native run.
if [ -z "${EDGEGAN_TEST_EMULATOR:-}" ]; then
expect_error "translate with an SR model" "enlarges images 4x; use 'edgegan upscale'" "$edgegan" translate "$work/sr.egan" "$images/rgb.png" -o "$work/x.png"
expect_error "upscale with a translation model" "keeps the image's size; use 'edgegan translate'" "$edgegan" upscale "$work/cyc.egan" "$images/rgb.png" -o "$work/x.png"
expect_error "upscale with a noise generator" "not image-to-image" "$edgegan" upscale "$work/dcgan.egan" "$images/rgb.png" -o "$work/x.png"
expect_error "a transparent picture to JPEG" "transparent_rgba.png' has transparent pixels and JPEG has no alpha; write png or webp" "$edgegan" upscale "$work/sr.egan" "$images/transparent_rgba.png" -o "$work/x.jpg"
[ ! -e "$work/x.jpg" ] && ok || bad "a refused JPEG was written"
head -c 300 "$images/photo.jpg" >"$work/cut.jpg"
expect_error "upscale a truncated JPEG" "cut.jpg'(: the JPEG data is damaged or truncated| is not a readable JPEG)" "$edgegan" upscale "$work/sr.egan" "$work/cut.jpg" -o "$work/x.png"
expect_error "upscale a text file" "is not a PNG, JPEG or WebP image" "$edgegan" upscale "$work/sr.egan" "$work/garbage.onnx" -o "$work/x.png"
printf '\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\x01\x86\xa0\0\x01\x86\xa0\x08\x02\0\0\0\0\0\0\0' >"$work/huge.png"
expect_error "upscale a huge image" "huge.png' is 100000x100000 pixels, more than edgegan reads" "$edgegan" upscale "$work/sr.egan" "$work/huge.png" -o "$work/x.png"
[ -e "$work/x.png" ] && bad "a refused image left an output file" || ok
expect_error "upscale, one bad image of two" "1 of 2 images failed" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" "$work/huge.png" -o "$work/mixed" -q
[ -f "$work/mixed/rgb.png" ] && [ ! -e "$work/mixed/huge.png" ] && ok || bad "the good image of a mixed run was not written, or the bad one was"
# --backend cuda where CUDA cannot run (no usable GPU, or a build without CUDA): refused
# before any picture, in one line with the reason (CUDA's own text), exit 2, nothing
# written. With a GPU it runs (scripts/gpu_check.sh compares it with the CPU's picture).
for cmd in "upscale|$work/sr.egan" "translate|$work/cyc.egan"; do
  IFS='|' read -r name model <<<"$cmd"
  rm -f "$work/cuda_out.png"
  "$edgegan" "$name" "$model" "$images/rgb.png" -o "$work/cuda_out.png" --backend cuda >/dev/null 2>"$work/err.txt"
  rc=$?
  if [ $rc -eq 0 ] && [ -f "$work/cuda_out.png" ]; then ok
  elif [ $rc -eq 2 ] && [ "$(wc -l <"$work/err.txt")" -eq 1 ] && [ ! -e "$work/cuda_out.png" ] &&
    grep -Eq "^edgegan: error: image-to-image: the CUDA backend (has no usable device: .+|is not available in this build)" "$work/err.txt"; then ok
  else bad "$name --backend cuda: exit $rc, $(cat "$work/err.txt")"; fi
done
rm -f "$work/p_out.png"
"$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/p_out.png" --precision tf32 >/dev/null 2>"$work/err.txt"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$work/err.txt")" -eq 1 ] && [ ! -e "$work/p_out.png" ] &&
  grep -q "^edgegan: error: image-to-image: the cpu backend runs fp32 and fp16, not tf32" "$work/err.txt" && ok || bad "upscale --precision tf32 on the cpu: exit $rc, $(cat "$work/err.txt")"
for cmd in "upscale|$work/sr.egan" "translate|$work/cyc.egan"; do
  IFS='|' read -r name model <<<"$cmd"
  expect_ok "$name --precision fp16 on the cpu" "$edgegan" "$name" "$model" "$images/rgb.png" -o "$work/p16_out.png" --precision fp16
done
expect_error "upscale, memory limit too small" "memory-limit 64K is below what the process already holds" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/x.png" --memory-limit 64K
expect_error "upscale, a memory limit that is not a size" "'lots' is not a size" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/x.png" --memory-limit lots
expect_error "upscale to a .gif" "must name a .png, .jpg, .jpeg or .webp file" "$edgegan" upscale "$work/sr.egan" "$images/rgb.png" -o "$work/x.gif"
expect_error "upscale onto its input" "it is the input file" "$edgegan" upscale "$work/sr.egan" "$work/up.png" -o "$work/up.png"
expect_ok "report at a tile's size" "$edgegan" report "$work/sr.egan" --input-size 64x48
grep -q " 1x64x48x8 " "$work/out.txt" && ok || bad "report --input-size did not plan 64x48: $(head -5 "$work/out.txt")"
expect_error "report a generator at an input size" "no image input" "$edgegan" report "$work/dcgan.egan" --input-size 64x64
expect_error "report at a malformed size" "is not HEIGHTxWIDTH" "$edgegan" report "$work/sr.egan" --input-size 64
fi

# Every error, from the engine or from argument parsing, is one line.
one_line() {
  local name=$1; shift
  "$@" >/dev/null 2>"$work/err.txt"
  [ "$(wc -l <"$work/err.txt")" -eq 1 ] && ok || bad "$name: the error is not one line: $(cat "$work/err.txt")"
}
one_line "engine error" "$edgegan" generate "$work/cgan.egan" --label 12 -o "$work/x.png"
one_line "range error" "$edgegan" generate "$work/dcgan.egan" -n 0
one_line "missing subcommand" "$edgegan"
one_line "unknown subcommand" "$edgegan" paint
one_line "unknown option" "$edgegan" inspect "$work/dcgan.egan" --colour
one_line "converter missing argument" "$convert"
one_line "converter error" "$convert" "$work/garbage.onnx" -o "$work/x.egan"
[ -z "${EDGEGAN_TEST_EMULATOR:-}" ] && one_line "bad image" "$edgegan" upscale "$work/sr.egan" "$work/huge.png" -o "$work/x.png"

echo "cli: $passed passed, $failed failed"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# Rebuilds the committed seed corpus from the golden cases: small valid files
# plus near misses (truncated, a flipped header byte). Seeds named regression_*
# (inputs that once found a bug) are kept.  fuzz/make_corpus.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
c=fuzz/corpus
mkdir -p "$c/egan" "$c/onnx" "$c/npy" "$c/image" "$c/checkpoint"
# tactics/ (the tactic cache fuzzer's seeds: TacticCache::serialize() of its key, empty,
# with two entries, cut, flipped and another device's) is kept as committed.
find "$c" -path "$c/tactics" -prune -o -type f ! -name 'regression_*' -print0 | xargs -0 -r rm -f
for case in cgan_embed_concat_small g_k3s2_outpad_nonsquare d_conv_dilated_flatten conv_transpose2d_asym_pads conv_transpose2d_output_shape d_examples_squeeze_opset17 cgan_mlp_label_first inverted_residual_depthwise conv_grouped_depthwise_mult2 conv_transpose2d_grouped hifigan_1d_chain melgan_block_conv_transpose1d_s4 melgan_d_pool1d patchgan_pool patchgan_gap_head avgpool_ceil_count_include_pad split_slice_crop \
    norm_instance_transformer norm_group_norm_torch norm_opset18_group_normalization norm_opset21_group_normalization \
    binary_residual_block binary_esrgan_head prelu_block activations_after_conv \
    pad_reflect_zero_edge pad1d_reflect_conv1d srgan_pixel_shuffle pixel_unshuffle_dcr resize_nearest_upsample_conv resize_bilinear resize_bicubic grid_sample_bilinear \
    scc_gather scc_slices scc_gather_not_sliding scc_dw_generator zoo_srgan \
    family_progan family_realcugan_2x family_sagan family_stylegan2_fused family_stylegan2_upfirdn2d family_swinir_2x; do
  onnx=tests/golden/cases/$case/model.onnx
  cp "$onnx" "$c/onnx/$case.onnx"
  "$build/converter/edgegan-convert" -q "$onnx" -o "$c/egan/$case.egan"
done
# A converted Real-CUGAN: Pads whose far sides follow the planned size (align, size_of).
"$build/converter/edgegan-convert" -q tests/checkpoint/cases/realcugan_x2_zip/model.pth -o "$c/egan/realcugan_x2_checkpoint.egan"
# Near misses: truncated in the middle, and a byte flipped near the start.
for f in "$c"/egan/cgan_embed_concat_small.egan "$c"/onnx/cgan_embed_concat_small.onnx; do
  ext=${f##*.}
  head -c $(( $(stat -c %s "$f") / 2 )) "$f" > "${f%.*}_truncated.$ext"
  python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[9]^=0x40; open(sys.argv[2],'wb').write(b)" "$f" "${f%.*}_flipped.$ext"
done
for f in tests/golden/cases/cgan_embed_concat_small/inputs/*.npy tests/golden/cases/g_k3s2_outpad_nonsquare/inputs/*.npy; do
  cp "$f" "$c/npy/$(basename "$(dirname "$(dirname "$f")")")_$(basename "$f")"
done
head -c 100 tests/golden/cases/g_k3s2_outpad_nonsquare/inputs/z.npy > "$c/npy/truncated.npy"
printf '\x93NUMPY\x01\x00\x20\x00{"descr": "<f8", "shape": (-1,)}' > "$c/npy/bad_header.npy"
# Checkpoints (tests/checkpoint/make_checkpoints.py): one of each format and architecture
# under the fuzzers' 64 KiB, hostile pickles, a truncated zip, deflated entries (one a bomb).
for f in compact_x2_legacy/model.pth compact_x4_fp16_zip/model.pth compact_x4_bf16_safetensors/model.safetensors \
    rrdb_x2_fp16_safetensors/model.safetensors span_x2_fp16_safetensors/model.safetensors realcugan_x3_fp16_zip/model.pth \
    realplksr_x2_no_attention_safetensors/model.safetensors realplksr_dysample_x3_no_scope_safetensors/model.safetensors cyclegan_unet_instance_fp16_legacy/model.pth; do
  cp "tests/checkpoint/cases/$f" "$c/checkpoint/$(dirname "$f").${f##*.}"
done
for f in os_system.pth eval_legacy.pth offset_past_end.pth overlap.safetensors whole_module.pth deflate_bomb.pth; do
  cp "tests/checkpoint/hostile/$f" "$c/checkpoint/hostile_$f"
done
cp tests/checkpoint/deflated/model.pth "$c/checkpoint/compact_x4_deflated.pth"
head -c 9000 tests/checkpoint/cases/compact_x4_fp16_zip/model.pth > "$c/checkpoint/compact_x4_fp16_zip_truncated.pth"
# Pictures: Pillow's files from tests/data/images, and edgegan's own PNG (grey, RGB,
# RGBA), JPEG (4:2:0 and 4:4:4) and WebP (lossy, lossless, with alpha) made small with
# -s; then truncated and byte-flipped copies of one of each format.
cp tests/data/images/*.png tests/data/images/*.jpg "$c/image/"
"$build/cli/edgegan" generate models/dcgan_digits/generator.egan -n 1 --seed 1 --scale 1 -o "$c/image/generated_grey.png" >/dev/null
sr=$(mktemp -d)
"$build/converter/edgegan-convert" -q tests/golden/cases/zoo_realesrgan_compact/model.onnx -o "$sr/sr.egan" --input-range 0,1
up() { "$build/cli/edgegan" upscale "$sr/sr.egan" -q "$@"; }
up tests/data/images/rgb.png -s 0.5 -o "$c/image/small_rgb.png"
up tests/data/images/transparent_rgba.png -s 0.5 -o "$c/image/small_rgba.png"
up tests/data/images/rgb.png -s 0.5 -o "$c/image/q75_420.jpg" --quality 75
up tests/data/images/rgb.png -s 0.5 -o "$c/image/q95_444.jpg" --quality 95
up tests/data/images/rgb.png -s 0.5 -o "$c/image/lossy.webp" --quality 80
up tests/data/images/rgb.png -s 0.5 -o "$c/image/lossless.webp" --quality 100
up tests/data/images/transparent_rgba.png -s 0.5 -o "$c/image/alpha_lossy.webp" --quality 80
up tests/data/images/transparent_rgba.png -s 0.5 -o "$c/image/alpha_lossless.webp" --quality 100
rm -rf "$sr"
for f in "$c"/image/small_rgb.png "$c"/image/q75_420.jpg "$c"/image/lossy.webp "$c"/image/alpha_lossless.webp; do
  name=${f%.*} ext=${f##*.}
  head -c $(( $(stat -c %s "$f") / 2 )) "$f" > "${name}_truncated.$ext"
  python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[len(b)//2]^=0x40; open(sys.argv[2],'wb').write(b)" "$f" "${name}_flipped.$ext"
done
du -sh "$c"/*

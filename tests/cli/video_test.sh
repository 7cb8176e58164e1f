#!/usr/bin/env bash
# `edgegan translate` / `upscale` on videos, end to end: clips made here with the
# ffmpeg tool (H.264 + AAC in MP4, FFV1 + FLAC in Matroska), frame count, size, rate and
# audio kept; a lossless FFV1 frame equal to `upscale` of the same frame as a PNG; --batch
# giving the same frames;
# truncated, damaged or interrupted runs refused with one line and nothing written.
# usage: video_test.sh EDGEGAN EDGEGAN_CONVERT SOURCE_DIR WORK_DIR
set -u
edgegan=$1 convert=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
source "$src/tests/cli/test_helpers.sh"
# expect_error, and that line is all of stderr
expect_error_line() {
  local before=$failed
  expect_error "$@"
  [ $failed -eq $before ] && [ "$(wc -l <"$work/err.txt")" -ne 1 ] && bad "$1: more than one line on stderr: $(cat "$work/err.txt")"
  return 0
}
# probe FILE ENTRIES: ffprobe's values, e.g. "h264,256,192,10/1"
probe() { ffprobe -v error -select_streams "$2" -count_frames -show_entries "stream=$3" -of csv=p=0 "$1"; }
nothing_left() {  # no output and no temporary in the work folder
  local name=$1 out=$2
  [ -e "$out" ] && bad "$name: $out was written" || ok
  ls -a "$work" | grep -q '^\.edgegan-tmp-' && bad "$name: a temporary file was left: $(ls -a "$work")" || ok
}

cd "$work" || exit 1
ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=10 -f lavfi -i sine=frequency=440:sample_rate=44100 -t 2 \
  -c:v libx264 -pix_fmt yuv420p -c:a aac -shortest -movflags +faststart clip.mp4 || { echo "cannot make the test clips"; exit 1; }
ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=10 -f lavfi -i sine=frequency=440 -t 2 -c:v ffv1 -c:a flac -shortest clip.mkv
"$convert" -q "$src/tests/golden/cases/zoo_realesrgan_compact/model.onnx" -o sr.egan --input-range 0,1
"$convert" -q "$src/tests/golden/cases/zoo_cyclegan_resnet/model.onnx" -o cyc.egan --mean 0.5 --std 0.5

# --- H.264 + AAC in MP4, upscaled x4 with the default encoder (libx264)
expect_ok "upscale an MP4" "$edgegan" upscale sr.egan clip.mp4 -o up.mp4 --threads 2
[ "$(probe up.mp4 v codec_name,width,height,r_frame_rate,nb_read_frames)" = "h264,256,192,10/1,20" ] && ok \
  || bad "upscale.mp4: $(probe up.mp4 v codec_name,width,height,r_frame_rate,nb_read_frames)"
[ "$(probe up.mp4 a codec_name)" = "aac" ] && ok || bad "the audio track was not copied: $(probe up.mp4 a codec_name)"
[ "$(probe up.mp4 a nb_read_frames)" = "$(probe clip.mp4 a nb_read_frames)" ] && ok || bad "the audio track lost packets"
grep -q "wrote up.mp4: 20 frames of 256x192" out.txt && ok || bad "no summary: $(cat out.txt)"
# -s/--outscale resizes every frame as it does a picture: the x4 model's output to x2.
expect_ok "upscale an MP4 with -s 2" "$edgegan" upscale sr.egan clip.mp4 -o half.mp4 -s 2 -q
[ "$(probe half.mp4 v width,height,nb_read_frames)" = "128,96,20" ] && ok || bad "-s 2: $(probe half.mp4 v width,height,nb_read_frames)"
expect_error_line "--quality on a video" "-f and --quality are for pictures" "$edgegan" upscale sr.egan clip.mp4 -o x.mp4 --quality 80
nothing_left "--quality on a video" x.mp4

# --- FFV1 + FLAC in Matroska: translated, and upscaled losslessly
expect_ok "translate an MKV" "$edgegan" translate cyc.egan clip.mkv -o tr.mkv --codec ffv1 -q
[ "$(probe tr.mkv v codec_name,width,height,r_frame_rate,nb_read_frames)" = "ffv1,64,48,10/1,20" ] && ok \
  || bad "translate.mkv: $(probe tr.mkv v codec_name,width,height,r_frame_rate,nb_read_frames)"
[ "$(probe tr.mkv a codec_name)" = "flac" ] && ok || bad "the FLAC track was not copied"
expect_ok "upscale an MKV to FFV1" "$edgegan" upscale sr.egan clip.mkv -o up.mkv --codec ffv1 -q
# Frame 7 of the video against `upscale` of frame 7 saved as a PNG (both as raw RGB).
ffmpeg -v error -i clip.mkv -vf "select=eq(n\,7)" -frames:v 1 f7.png
expect_ok "upscale one frame as a PNG" "$edgegan" upscale sr.egan f7.png -o f7_up.png -q
ffmpeg -v error -i up.mkv -vf "select=eq(n\,7)" -frames:v 1 -f rawvideo -pix_fmt rgb24 video7.rgb
ffmpeg -v error -i f7_up.png -f rawvideo -pix_fmt rgb24 png7.rgb
psnr=$(python3 - <<'PY'
import math
a, b = open("video7.rgb", "rb").read(), open("png7.rgb", "rb").read()
if len(a) != len(b) or not a: print("size"); raise SystemExit
mse = sum((x - y) ** 2 for x, y in zip(a, b)) / len(a)
print("inf" if mse == 0 else f"{10 * math.log10(255 ** 2 / mse):.1f}")
PY
)
case "$psnr" in inf) ok ;; size) bad "frame 7: sizes differ" ;; *) awk -v p="$psnr" 'BEGIN { exit !(p >= 45) }' && ok || bad "frame 7 PSNR $psnr dB < 45" ;; esac
# --batch 3: frames through the model three at a time (20 frames: a short last run),
# the audio packets held meanwhile; the same frames, rate and audio as one at a time.
expect_ok "upscale an MKV with --batch 3" "$edgegan" upscale sr.egan clip.mkv -o up3.mkv --codec ffv1 --batch 3 --threads 2
grep -q "3 frames per model run" out.txt && ok || bad "--batch 3 not in the summary: $(cat out.txt)"
[ "$(probe up3.mkv v width,height,r_frame_rate,nb_read_frames)" = "256,192,10/1,20" ] && ok || bad "--batch 3: $(probe up3.mkv v width,height,r_frame_rate,nb_read_frames)"
[ "$(probe up3.mkv a nb_read_frames)" = "$(probe up.mkv a nb_read_frames)" ] && ok || bad "--batch 3 lost audio packets"
cmp -s <(ffmpeg -v error -i up.mkv -f rawvideo -pix_fmt rgb24 -) <(ffmpeg -v error -i up3.mkv -f rawvideo -pix_fmt rgb24 -) && ok \
  || bad "--batch 3 changed the frames"
expect_ok "--crf on x264" "$edgegan" upscale sr.egan clip.mkv -o crf.mp4 --crf 30 -q
[ "$(probe crf.mp4 v nb_read_frames)" = "20" ] && ok || bad "--crf 30: $(probe crf.mp4 v nb_read_frames) frames"

# --- damaged, truncated and refused
head -c 15000 clip.mp4 >cut.mp4
expect_error_line "truncated MP4" "cut.mp4' is truncated: [0-9]+ of the 20 frames" "$edgegan" upscale sr.egan cut.mp4 -o x.mp4
nothing_left "truncated MP4" x.mp4
head -c 25000 clip.mkv >cut.mkv
expect_error_line "truncated MKV" "cut.mkv' is truncated: its frames end at" "$edgegan" upscale sr.egan cut.mkv -o x.mkv
nothing_left "truncated MKV" x.mkv
head -c 3000 /dev/urandom >noise.mp4
expect_error_line "not a video" "noise.mp4' is not a video FFmpeg can read" "$edgegan" upscale sr.egan noise.mp4 -o x.mp4
nothing_left "not a video" x.mp4
expect_error_line "video to a PNG" "-o must name a video file" "$edgegan" upscale sr.egan clip.mp4 -o x.png
expect_error_line "unknown encoder" "--codec nosuch: this FFmpeg has no such encoder" "$edgegan" upscale sr.egan clip.mp4 -o x.mp4 --codec nosuch
expect_error_line "audio encoder" "--codec aac is not a video encoder" "$edgegan" upscale sr.egan clip.mp4 -o x.mp4 --codec aac
expect_error_line "FFV1 in MP4" "--codec ffv1 cannot go into a mp4 file" "$edgegan" upscale sr.egan clip.mp4 -o x.mp4 --codec ffv1
expect_error_line "--crf on FFV1" "the ffv1 encoder has no crf setting" "$edgegan" upscale sr.egan clip.mkv -o x.mkv --codec ffv1 --crf 20
expect_error_line "--codec for a picture" "--codec and --crf are for a video output" "$edgegan" upscale sr.egan f7.png -o x.png --codec ffv1
expect_error_line "translate with an SR model" "enlarges images 4x; use 'edgegan upscale'" "$edgegan" translate sr.egan clip.mp4 -o x.mp4
expect_error_line "a video onto itself" "it is the input file" "$edgegan" upscale sr.egan clip.mp4 -o clip.mp4
nothing_left "refused arguments" x.mp4

# --- the video module (cli/video/video_module.h): a picture never loads FFmpeg; the
# program without its module refuses a video by name and still does pictures.
grep -qE "libav(codec|format)" <(ldd "$edgegan") && bad "the CLI links FFmpeg's libraries itself" || ok
mkdir -p alone && cp "$edgegan" alone/edgegan
expect_error_line "a video without the module" "video module is missing .*edgegan_video.so" alone/edgegan upscale sr.egan clip.mp4 -o x.mp4
nothing_left "a video without the module" x.mp4
expect_ok "a picture without the video module" alone/edgegan upscale sr.egan f7.png -o alone/f7.png -q

# --- interrupted: SIGINT mid-run stops at the next frame, removes the temporary, writes nothing
# (500 frames of 320x240 to 1280x960: many seconds of work, so the signal lands mid-run;
# it is sent once the temporary output exists, i.e. once frames are being written.)
ffmpeg -v error -f lavfi -i testsrc=size=320x240:rate=25 -t 20 -c:v libx264 -pix_fmt yuv420p long.mp4
"$edgegan" upscale sr.egan long.mp4 -o long_up.mp4 --threads 1 -q 2>err_int.txt &
pid=$!
for _ in $(seq 100); do
  ls -a | grep -q '^\.edgegan-tmp-' && break
  sleep 0.1
done
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] && ok || bad "interrupted run exited $rc"
grep -q "interrupted; nothing was written" err_int.txt && ok || bad "interrupted run said: $(cat err_int.txt)"
nothing_left "interrupted" long_up.mp4

echo "video: $passed passed, $failed failed"
[ $failed -eq 0 ]

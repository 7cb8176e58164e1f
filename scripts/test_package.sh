#!/usr/bin/env bash
# The packaging stage of scripts/test.sh: what a user of edgegan from another project
# does, checked from outside the source tree.
#   1. cmake --install of the stage-1 build into a temporary prefix;
#   2. samples/consumer, a separate CMake project, found the package with
#      find_package(edgegan CONFIG) and built against the shared and the static
#      library, run on the shipped models; the same file compiled with pkg-config;
#   3. the Python wheel built once (pip wheel, scikit-build-core + nanobind from PyPI),
#      installed into a fresh venv, a grid generated from outside the tree and compared
#      with the CLI's, and the pytest suite (python/tests) run against that install, with
#      ray[data] from PyPI for the Ray sample's test (samples/ray_image_to_image.py);
#   4. the module's argument checking fuzzed for ${FUZZ_SECONDS:-60} s (atheris from PyPI,
#      fuzz/python_arguments_fuzzer.py) against that install.
# Needs the stage-1 build in ${BUILD_DIR:-build} (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
build=$repo/${BUILD_DIR:-build}
python=/usr/bin/python3   # Debian's, whatever python3 comes first on PATH
start=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/edgegan-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
dcgan=$repo/models/dcgan_digits/generator.egan
cgan=$repo/models/cgan_digits/generator.egan

echo "-- cmake --install into a temporary prefix"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/edgegan/edgegan.h include/edgegan/version.h lib/libedgegan.a lib/libedgegan.so lib/cmake/edgegan/edgegan-config.cmake \
         lib/cmake/edgegan/edgegan-config-version.cmake lib/pkgconfig/edgegan.pc bin/edgegan bin/edgegan-convert; do
  [ -e "$prefix/$f" ] || { echo "missing from the install: $f"; exit 1; }
done
version=$("$prefix/bin/edgegan" --version)
echo "$version; $("$prefix/bin/edgegan-convert" --version)"
# The installed CLI finds its video module (lib/edgegan/edgegan_video.so) from bin/.
if grep -q "^EDGEGAN_VIDEO_BUILT:INTERNAL=ON" "$build/CMakeCache.txt"; then
  [ -e "$prefix/lib/edgegan/edgegan_video.so" ] || { echo "missing from the install: lib/edgegan/edgegan_video.so"; exit 1; }
  ffmpeg -v error -f lavfi -i testsrc=size=32x24:rate=5 -t 1 -c:v ffv1 "$work/clip.mkv"
  "$prefix/bin/edgegan-convert" -q "$repo/tests/golden/cases/zoo_realesrgan_compact/model.onnx" -o "$work/sr.egan" --input-range 0,1
  "$prefix/bin/edgegan" upscale "$work/sr.egan" "$work/clip.mkv" -o "$work/up.mkv" -q
  [ -s "$work/up.mkv" ] || { echo "the installed CLI wrote no video"; exit 1; }
  echo "the installed CLI upscaled a video through lib/edgegan/edgegan_video.so"
fi

echo "-- samples/consumer with find_package, shared and static"
for kind in shared static; do
  static=OFF
  [ $kind = static ] && static=ON
  cmake -S samples/consumer -B "$work/consumer-$kind" -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_STATIC=$static >/dev/null
  cmake --build "$work/consumer-$kind" >/dev/null
  "$work/consumer-$kind/edgegan_consumer" "$cgan" "$work/consumer-$kind.png"
done
# ldd's output taken whole first: piped into `grep -q`, which stops reading at the first
# match, ldd could die of SIGPIPE and pipefail made that a failure (seen once, on a busy machine).
consumer_libs=$(ldd "$work/consumer-shared/edgegan_consumer")
grep -q "$prefix/lib/libedgegan.so" <<<"$consumer_libs" || { echo "the shared consumer does not load the installed library"; exit 1; }
# The runtime needs no picture codec: those are libedgegan_image's.
engine_libs=$(ldd "$prefix/lib/libedgegan.so")
if grep -E "libpng|libturbojpeg|libjpeg|libwebp" <<<"$engine_libs"; then echo "libedgegan.so links a picture codec"; exit 1; fi
image_libs=$(ldd "$prefix/lib/libedgegan_image.so")
grep -q "libpng" <<<"$image_libs" || { echo "libedgegan_image.so does not link libpng"; exit 1; }
echo "libedgegan.so links no picture codec; libedgegan_image.so does"

echo "-- samples/consumer/main.cpp with pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046  # pkg-config prints several flags
g++ -std=c++20 -O1 samples/consumer/main.cpp $(pkg-config --cflags --libs edgegan edgegan-image) -Wl,-rpath,"$(pkg-config --variable=libdir edgegan)" \
    -o "$work/pkg_config_consumer"
"$work/pkg_config_consumer" "$dcgan"
[ "$(pkg-config --modversion edgegan)" = "$(echo "$version" | cut -d' ' -f2)" ] || { echo "edgegan.pc has another version"; exit 1; }

echo "-- Python wheel"
wheel_start=$SECONDS
"$python" -m venv "$work/build-venv"
"$work/build-venv/bin/pip" install -q --disable-pip-version-check "scikit-build-core==1.1.2" "nanobind==3.1.0"
# A build directory of its own, emptied first: every run configures and compiles anew. It
# sits beside build/ in the checkout, so that under scripts/test.sh's ccache (paths made
# relative to the checkout) the sources compiled with stage 1's flags are cache hits.
wheel_build=$repo/build-wheel
rm -rf "$wheel_build"
# Make and stage 1's compilers: ccache's relative paths then match, and so does the
# compiler's name, which ccache hashes (pip's build otherwise picks x86_64-linux-gnu-g++
# where stage 1 has c++: every object a miss).
stage1_cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
stage1_cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
CC=${stage1_cc:-cc} CXX=${stage1_cxx:-c++} CMAKE_GENERATOR="Unix Makefiles" "$work/build-venv/bin/pip" wheel -q --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=build-dir="$wheel_build" . -w "$work/dist"
rm -rf "$wheel_build"
wheel=$(ls "$work"/dist/edgegan-*.whl)
echo "built $(basename "$wheel") in $((SECONDS - wheel_start)) s"

echo "-- the wheel in a fresh venv (NumPy and pytest from Debian's packages)"
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
(cd "$work" && "$work/venv/bin/python" -c "
import edgegan
m = edgegan.Model.load('$dcgan')
images = edgegan.Session(m, batch=64, threads=2).generate(edgegan.normal_noise((64, m.noise_size), seed=1))
edgegan.write_png_grid('python_grid.png', images, value_range=m.outputs[0]['value_range'])
print('edgegan', edgegan.__version__, 'from', edgegan.__file__, '->', images.shape)
")
"$prefix/bin/edgegan" generate "$dcgan" -n 64 --seed 1 -o "$work/cli_grid.png" >/dev/null
cmp "$work/python_grid.png" "$work/cli_grid.png" || { echo "the module's grid differs from the CLI's"; exit 1; }
# Ray Data for python/tests/test_ray_pipeline.py (samples/ray_image_to_image.py). Pinned,
# with NumPy held at Debian's: unconstrained, pip brings NumPy 2 (pyarrow 26 refuses
# NumPy 1.24) and every other test would run on another NumPy. pyarrow 21 and pandas 2.3
# take NumPy 1.24.
ray_start=$SECONDS
"$python" -c "import numpy; print('numpy==' + numpy.__version__)" >"$work/numpy-constraint.txt"
"$work/venv/bin/pip" install -q --disable-pip-version-check -c "$work/numpy-constraint.txt" "ray[data]==2.60.0" "pyarrow==21.0.0" "pandas==2.3.3"
echo "installed ray[data] 2.60.0 in $((SECONDS - ray_start)) s"
EDGEGAN_CLI=$prefix/bin/edgegan EDGEGAN_CONVERT=$prefix/bin/edgegan-convert \
  "$work/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
echo "-- fuzzing the module's argument checking for ${FUZZ_SECONDS:-60} s"
"$work/venv/bin/pip" install -q --disable-pip-version-check "atheris==3.0.0"
mkdir -p "$work/fuzz-corpus"
if ! (cd "$work" && "$work/venv/bin/python" "$repo/fuzz/python_arguments_fuzzer.py" "$work/fuzz-corpus" \
        -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 >"$work/fuzz.log" 2>&1); then
  grep -v "leaked" "$work/fuzz.log" | tail -n 40
  mkdir -p "${FUZZ_ARTIFACTS:-$repo/fuzz-artifacts}" && cp "$work"/crash-* "$work"/oom-* "$work"/timeout-* "${FUZZ_ARTIFACTS:-$repo/fuzz-artifacts}/" 2>/dev/null || true
  echo "fuzz python_arguments_fuzzer: FAILED (inputs in ${FUZZ_ARTIFACTS:-$repo/fuzz-artifacts})"
  exit 1
fi
echo "fuzz python_arguments_fuzzer: ok, $(grep -o "number_of_executed_units: *[0-9]*" "$work/fuzz.log" | grep -o "[0-9]*$") executions"
echo "package stage: $((SECONDS - start)) s"

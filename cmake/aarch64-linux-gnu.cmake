# Cross build for 64-bit ARM Linux (Jetson, Raspberry Pi 4/5, other AArch64
# boards) with Debian's g++-aarch64-linux-gnu. Target libraries come from Debian's
# arm64 multiarch packages (/usr/lib/aarch64-linux-gnu), installed beside the
# host's by scripts/install_deps_aarch64.sh; ctest runs the cross-built tests
# under qemu-aarch64 (user-mode emulation).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Test binaries (and gtest's test discovery) run through user-mode qemu, which
# finds the arm64 loader and libraries where multiarch put them.
find_program(EDGEGAN_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${EDGEGAN_QEMU_AARCH64})

# Libraries and headers: the target's multiarch directories (and any extra root
# the caller adds to CMAKE_FIND_ROOT_PATH, e.g. unpacked arm64 packages that
# cannot be co-installed). Programs (flatc, protoc): the host's.
list(APPEND CMAKE_FIND_ROOT_PATH /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config (FindOpenSSL asks it first) must describe the target's libraries.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

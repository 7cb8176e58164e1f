# What `cmake --install` puts under the prefix (docs/install.md):
#   include/edgegan/*.h                      public headers (version.h generated)
#   lib/libedgegan.so*, lib/libedgegan.a     the engine, shared and static, kernels included
#   lib/libedgegan_image.so*, .a             picture files and charts (the codecs), over the engine
#   bin/edgegan, bin/edgegan-convert         the command-line tools
#   lib/edgegan/edgegan_video.so             the CLI's video module (FFmpeg), loaded for videos only
#   lib/cmake/edgegan/                       find_package(edgegan CONFIG): edgegan::edgegan (shared),
#                                            edgegan::edgegan_static, edgegan::edgegan_image(_static)
#   lib/pkgconfig/edgegan.pc, edgegan-image.pc  pkg-config --cflags --libs edgegan [edgegan-image] (shared)
# Components: runtime (shared library, tools), devel (headers, static library, package
# files). The Python module installs only its own component, python (python/).
include(CMakePackageConfigHelpers)
set(EDGEGAN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/edgegan)

install(TARGETS edgegan edgegan_shared edgegan_image edgegan_image_shared EXPORT edgegan-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT devel)
install(DIRECTORY engine/include/edgegan image_io/include/edgegan DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel)
install(FILES ${EDGEGAN_GENERATED_INCLUDE_DIR}/edgegan/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/edgegan COMPONENT devel)
set(edgegan_tools edgegan_cli)
if(TARGET edgegan-convert)
  list(APPEND edgegan_tools edgegan-convert)
endif()
install(TARGETS ${edgegan_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
if(TARGET edgegan_video)  # the CLI's video module (cli/video/video_module.h), found relative to bin/edgegan
  install(TARGETS edgegan_video LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/edgegan COMPONENT runtime)
endif()

# The CMake package. Its config finds what the exported targets name (OpenMP, and the
# CUDA runtime in builds with the CUDA backend) before loading them.
set(EDGEGAN_PACKAGE_NEEDS_OPENMP ${EDGEGAN_WITH_OPENMP})
set(EDGEGAN_PACKAGE_NEEDS_CUDA OFF)
if(TARGET edgegan_kernels_cuda)
  set(EDGEGAN_PACKAGE_NEEDS_CUDA ON)
endif()
install(EXPORT edgegan-targets NAMESPACE edgegan:: DESTINATION ${EDGEGAN_CMAKE_DIR} COMPONENT devel)
configure_package_config_file(cmake/edgegan-config.cmake.in ${PROJECT_BINARY_DIR}/edgegan-config.cmake
  INSTALL_DESTINATION ${EDGEGAN_CMAKE_DIR})
# Before 1.0 a minor release may break the API: find_package(edgegan 0.1) accepts 0.1.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/edgegan-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/edgegan-config.cmake ${PROJECT_BINARY_DIR}/edgegan-config-version.cmake
  DESTINATION ${EDGEGAN_CMAKE_DIR} COMPONENT devel)

# pkg-config. The prefix is found from the .pc file's own place (pcfiledir), so the
# file stays right when `cmake --install --prefix` picks another prefix than configure did.
file(RELATIVE_PATH EDGEGAN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" EDGEGAN_PC_TO_PREFIX "${EDGEGAN_PC_TO_PREFIX}")
set(EDGEGAN_PC_LIBS_PRIVATE "")
if(EDGEGAN_WITH_OPENMP)
  string(APPEND EDGEGAN_PC_LIBS_PRIVATE " ${OpenMP_CXX_FLAGS}")
endif()
if(EDGEGAN_PACKAGE_NEEDS_CUDA)
  find_package(CUDAToolkit REQUIRED)
  string(APPEND EDGEGAN_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt -lpthread")
endif()
configure_file(cmake/edgegan.pc.in ${PROJECT_BINARY_DIR}/edgegan.pc @ONLY)
configure_file(cmake/edgegan-image.pc.in ${PROJECT_BINARY_DIR}/edgegan-image.pc @ONLY)  # the codecs: image_io/CMakeLists.txt
install(FILES ${PROJECT_BINARY_DIR}/edgegan.pc ${PROJECT_BINARY_DIR}/edgegan-image.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT devel)

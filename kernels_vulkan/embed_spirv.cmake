# Writes the SPIR-V file SPV as a C++ array NAME_spv (32-bit words) into OUT.
file(READ ${SPV} bytes HEX)
string(LENGTH "${bytes}" length)
math(EXPR words "${length} / 8")
set(body "")
set(i 0)
while(i LESS length)
  # SPIR-V is little-endian words: bytes b0 b1 b2 b3 make 0xb3b2b1b0.
  string(SUBSTRING "${bytes}" ${i} 8 word)
  string(SUBSTRING "${word}" 0 2 b0)
  string(SUBSTRING "${word}" 2 2 b1)
  string(SUBSTRING "${word}" 4 2 b2)
  string(SUBSTRING "${word}" 6 2 b3)
  string(APPEND body "0x${b3}${b2}${b1}${b0}u,")
  math(EXPR i "${i} + 8")
  math(EXPR column "${i} % 96")
  if(column EQUAL 0)
    string(APPEND body "\n")
  endif()
endwhile()
file(WRITE ${OUT} "// Generated from ${NAME}.comp by glslc (kernels_vulkan/CMakeLists.txt).
#include <cstddef>
#include <cstdint>
namespace edgegan::vulkan {
extern const uint32_t ${NAME}_spv[] = {
${body}
};
extern const size_t ${NAME}_spv_words = ${words};
}  // namespace edgegan::vulkan
")

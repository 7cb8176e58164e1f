// The one translation unit that compiles stb_image, for PNG and JPEG only: the
// fewer decoders, the less code a hostile file can reach.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

#include "edgegan/edgegan.h"
#include "engine/format/egan_format.h"

namespace edgegan {

const char* version() { return EDGEGAN_VERSION_STRING; }

uint32_t file_format_version() { return kSchemaVersion; }

}  // namespace edgegan

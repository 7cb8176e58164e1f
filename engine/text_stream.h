// std::ostringstream swallows exceptions by default: an allocation failure while
// formatting sets badbit and the text is silently cut short. Streams made here
// rethrow instead, so out-of-memory reaches the caller as an error.
#pragma once

#include <sstream>

namespace edgegan {

inline std::ostringstream text_stream() {
  std::ostringstream os;
  os.exceptions(std::ios::badbit | std::ios::failbit);
  return os;
}

}  // namespace edgegan

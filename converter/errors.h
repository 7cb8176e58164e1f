#pragma once

#include <stdexcept>
#include <string>

namespace edgegan::converter {

// Every conversion failure: the message names the node, the op and the problem.
class ConvertError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace edgegan::converter

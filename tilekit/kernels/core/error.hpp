// The exception tilekit's public entry points throw for invalid input.
#pragma once

#include <stdexcept>

namespace tilekit {

/// Thrown by public entry points for invalid input; what() says what is wrong and what is allowed.
struct InvalidArgument : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

}  // namespace tilekit

// Shared by every kernel family: the exception public entry points throw, and the backend's name.
#pragma once

#include <stdexcept>
#include <string>

namespace tilekit {

/// Thrown by public entry points for invalid input; what() says what is wrong and what is allowed.
struct InvalidArgument : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// "serial", "openmp", "cuda" or "hip": the backend of Kokkos::DefaultExecutionSpace.
std::string backend_name();

}  // namespace tilekit

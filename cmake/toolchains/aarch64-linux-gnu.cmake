# Cross-compiling for aarch64 Linux with Debian's cross compiler (g++-aarch64-linux-gnu); ctest runs
# the target's binaries under qemu-user (qemu-aarch64), with the cross C library as their root.
# Used by the openmp-aarch64 preset and by scripts/deps.sh openmp-aarch64 (Kokkos, GoogleTest).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)

# Libraries only from the target's folders (the cross C library and the deps cache), never the
# build machine's; headers and CMake package files from both: the header-only packages the
# project uses (fmt in its header-only mode, CLI11, nlohmann-json) are the build machine's Debian
# packages, and the cross compiler searches /usr/include after its own folder.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Debian keeps fmt's package files in the build machine's multiarch folder (its library is
# arch-specific; tilekit takes only its header-only target).
if(NOT fmt_DIR AND EXISTS /usr/lib/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu/cmake/fmt)
  set(fmt_DIR /usr/lib/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu/cmake/fmt CACHE PATH "fmt's CMake package (header-only use)")
endif()

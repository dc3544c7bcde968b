# Cross compiling for 64-bit ARM Linux with clang 22 and Debian's cross sysroot
# (libstdc++-12-dev-arm64-cross): cmake -DCMAKE_TOOLCHAIN_FILE=<this file>.
# tgc's own build uses it for its runtime for aarch64-linux-gnu; installed as
# <prefix>/lib/cmake/tgc/toolchains/aarch64-linux-gnu.cmake for projects that
# compile models for the target (docs/deploy.md). See clang-cross.cmake.
set(TGC_CROSS_TRIPLE aarch64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/clang-cross.cmake)

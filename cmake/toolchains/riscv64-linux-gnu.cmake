# Cross compiling for 64-bit RISC-V (rv64gc) Linux with clang 22 and Debian's cross sysroot
# (libstdc++-12-dev-riscv64-cross): cmake -DCMAKE_TOOLCHAIN_FILE=<this file>.
# tgc's own build uses it for its runtime for riscv64-linux-gnu; installed as
# <prefix>/lib/cmake/tgc/toolchains/riscv64-linux-gnu.cmake for projects that
# compile models for the target (docs/deploy.md). See clang-cross.cmake.
set(TGC_CROSS_TRIPLE riscv64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/clang-cross.cmake)

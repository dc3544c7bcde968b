# The body of tgc's cross toolchain files (aarch64-linux-gnu.cmake, ...), which
# set TGC_CROSS_TRIPLE and include this: clang 22 compiling for that triple,
# lld linking against Debian's cross sysroot (/usr/<triple>, found by clang
# itself; on Debian: libstdc++-12-dev-<arch>-cross). Executables are static,
# as `tgc compile --emit=exe` links them for a cross target: one file that runs
# on any Linux of that architecture, and under qemu-user without a sysroot.
# Where qemu-<arch> is installed it is the CMAKE_CROSSCOMPILING_EMULATOR, so
# ctest runs the project's tests (GEN_TEST) under it.
if(NOT TGC_CROSS_TRIPLE)
  message(FATAL_ERROR "clang-cross.cmake: include one of the per-target files beside it (aarch64-linux-gnu.cmake, ...)")
endif()
string(REGEX MATCH "^[^-]+" _tgc_arch "${TGC_CROSS_TRIPLE}")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${_tgc_arch})

find_program(TGC_CROSS_CLANG NAMES clang-22 clang HINTS /usr/lib/llvm-22/bin REQUIRED)
find_program(TGC_CROSS_CLANGXX NAMES clang++-22 clang++ HINTS /usr/lib/llvm-22/bin REQUIRED)
set(CMAKE_C_COMPILER ${TGC_CROSS_CLANG})
set(CMAKE_CXX_COMPILER ${TGC_CROSS_CLANGXX})
set(CMAKE_C_COMPILER_TARGET ${TGC_CROSS_TRIPLE})
set(CMAKE_CXX_COMPILER_TARGET ${TGC_CROSS_TRIPLE})
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld -static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-fuse-ld=lld")

# Libraries and headers from the target's sysroot only; programs (and CMake
# packages such as tgc's, whose compiler runs here) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${TGC_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

find_program(TGC_CROSS_EMULATOR NAMES qemu-${_tgc_arch} qemu-${_tgc_arch}-static)
if(TGC_CROSS_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TGC_CROSS_EMULATOR})
endif()

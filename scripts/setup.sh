#!/usr/bin/env bash
# Installs tgc's dependencies from Debian's packages (when missing), then
# configures ./build and builds what the main job needs: the tgc driver, the
# runtime and the launcher library (`tgc run`, `tgc compile --emit=exe`).
# scripts/test.sh builds the rest (tests, benchmarks, cross runtimes) before
# it tests, so a newcomer's first result does not wait for them.
# TGC_BUILD_TARGETS overrides the targets ("all": everything).
# Idempotent: a second run only rebuilds what changed.
# Usage: bash scripts/setup.sh [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

# libclang-rt-22-dev: the sanitizer and libFuzzer runtimes (TGC_SANITIZE, TGC_FUZZ).
# libmimalloc-dev: the allocator linked into tgc and perf_bench (TGC_MIMALLOC).
# python3-numpy: the live tests against tinygrad (test/tinygrad/) compare arrays with it.
# mlir-22-tools: MLIR's CMake package names its tools (mlir-linalg-ods-yaml-gen) and fails without them.
# libzstd-dev zlib1g-dev: LLVM's static libraries (TGC_STATIC_LLVM) link them.
# libstdc++-12-dev-{arm64,riscv64}-cross: the targets' C/C++ libraries, which clang-22 builds tgc's runtime for
# those targets against (TGC_CROSS_RUNTIMES, docs/deploy.md); qemu-user runs their programs in the tests.
cross_targets="aarch64-linux-gnu;riscv64-linux-gnu"
packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22 libclang-rt-22-dev libcli11-dev nlohmann-json3-dev
          doctest-dev libzstd-dev zlib1g-dev libmimalloc-dev cmake ninja-build python3-numpy
          libstdc++-12-dev-arm64-cross libstdc++-12-dev-riscv64-cross qemu-user)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=${TGC_BUILD_DIR:-build}
# ccache, where the machine has it, makes rebuilds in other trees (worktrees, build-asan) cheap.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# clang-22 + lld build about 1.5x faster than g++ here (see docs/building.md).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DTGC_CROSS_RUNTIMES="$cross_targets" "${launcher[@]}" "$@"
read -ra targets <<<"${TGC_BUILD_TARGETS:-tgc tgc_runtime tgc_launcher}"
ninja -C "$build" -j"$(nproc)" "${targets[@]}"

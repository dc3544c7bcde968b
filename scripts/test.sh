#!/usr/bin/env bash
# Runs all of tgc's tests. First builds the rest of ./build (scripts/setup.sh
# made only the driver and the runtime; here the tests, benchmarks and cross
# runtimes), runs the unit, lit/FileCheck and corpus suites in it, then the
# unit and lit suites again in a second tree built with AddressSanitizer +
# UBSan and leak checking (build-asan; without the code generator, to fit
# CI's time budget, see docs/building.md). TGC_CI_SANITIZE=0 skips that
# second stage. Exits non-zero if anything fails; the last lines are the main
# run's ctest summary.
set -uo pipefail
cd "$(dirname "$0")/.."

echo "test: building the tests, benchmarks and cross runtimes (build)"
ninja -C build -j"$(nproc)" || { echo "test: the build failed"; exit 1; }

main_log=$(mktemp)
ctest --test-dir build -j2 --output-on-failure 2>&1 | tee "$main_log"
main_status=${PIPESTATUS[0]}

asan_status=0
if [[ ${TGC_CI_SANITIZE:-1} != 0 ]]; then
  echo "test: sanitizer stage (build-asan)"
  start=$SECONDS
  if TGC_BUILD_DIR=build-asan TGC_BUILD_TARGETS=all bash scripts/setup.sh -DTGC_SANITIZE=ON -DTGC_ENABLE_CODEGEN=OFF; then
    # Leak checking on; a finding aborts, so `not` in a lit test can't mistake it for an expected failure.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
      ctest --test-dir build-asan -j2 --output-on-failure
    asan_status=$?
  else
    asan_status=1
  fi
  echo "test: sanitizer stage $([[ $asan_status == 0 ]] && echo passed || echo FAILED) in $((SECONDS - start)) s"
fi

# The main run's summary (ctest's closing lines, from "N% tests passed") closes the log.
echo "test: main run summary"
sed -n '/tests passed, .* tests failed out of/,$p' "$main_log"
rm -f "$main_log"
[[ $main_status == 0 && $asan_status == 0 ]]

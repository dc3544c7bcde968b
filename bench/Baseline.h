//===- Baseline.h - tinygrad's kernels compiled and run locally --*- C++ -*-===//
#pragma once

#include "BenchCommon.h"

namespace tgc::bench {

struct BaselineResult {
  bool ok = false;
  double execMs = 0;    ///< median warm run of every call, in tinygrad's order
  double compileMs = 0; ///< clang on every source (all cores)
  std::string error;
};

/// tinygrad's rendered C kernels of the corpus case in `dir` (programs.json),
/// compiled with clang as tinygrad compiles them, run over tinygrad's memory
/// plan (linear.json) on the case's inputs, timed as modelMedianMs times tgc's
/// run. `workRoot` holds the temporary files.
BaselineResult tinygradCBaseline(const std::filesystem::path &dir, int reps, double minSampleMs, const std::string &workRoot);

} // namespace tgc::bench

//===- OptimizeKernel.h - every kernel optimization, in order, and its decisions -*- C++ -*-===//
//
// The kernel-optimization stage of the pipeline: one kernel body through the
// rewrites of this folder in the order codegen applies them, and the choices
// that were made on the way recorded as data (KernelDecisions) — tinygrad
// records a kernel's opts the same way, as a list its renderer reads. Lowering
// (Lower/LowerKernels.cpp, KernelToMLIR) reads the decisions and decides
// nothing again; `tgc opt --passes=optimize-kernels --print-after-all` prints
// them with each kernel, and `--stats` counts them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/TransposedCopy.h"
#include "IR/UOp.h"

#include <string>

namespace tgc::codegen {

/// What the kernel optimizations need to know of the target machine.
struct TargetTraits {
  bool x86 = true; ///< x86's function attributes (prefer-vector-width, prefer-no-gather) apply
};

/// One kernel's optimization choices.
struct KernelDecisions {
  /// The register tile (MatmulTiling.h); `tiled` false: none.
  bool tiled = false;
  MatmulTile tile;
  /// The loop work the threads decision is made on (threadsWork: the
  /// kernel's before the rewrites that repeat loops), and the loop that runs
  /// on the thread pool (a RANGE of the optimized body), or null: serial.
  int64_t threadWork = 0;
  const UOp *threadedLoop = nullptr;
  /// LLVM's prefer-vector-width for the kernel's functions, 0: the target's default.
  int64_t vectorWidth = 0;
  /// x86 target features that make gathers and scatters unattractive to the
  /// vectorizers (the kernel's loads run contiguously along its vectors).
  bool preferNoGather = false, preferNoScatter = false;
  /// Loops that contain another loop are not vectorized (SLP takes the unrolled inner row).
  bool scalarOuterLoops = false;
  /// The innermost loops are not unrolled (a short contiguous reduction stays a vector loop).
  bool keepReductionLoop = false;
  /// Transcendentals are libm calls in this kernel, polynomials otherwise (when enabled at all).
  bool libmTranscendentals = false;
  /// Copy nests lowered as transposed blocks of vector registers (TransposedCopy.h).
  std::vector<TransposedCopy> transposedCopies;

  /// One line, `key=value` per decision made (what `--print-after` shows).
  std::string str() const;
};

struct OptimizedKernel {
  const UOp *body = nullptr; ///< the rewritten kernel SINK
  KernelDecisions decisions;
};

/// Runs every kernel optimization enabled in `opts` on the kernel SINK `sink`.
OptimizedKernel optimizeKernel(const UOp *sink, const KernelOptions &opts, const TargetTraits &target);

} // namespace tgc::codegen

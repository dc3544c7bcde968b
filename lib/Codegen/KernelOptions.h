//===- KernelOptions.h - which kernel optimizations codegen applies -*- C++ -*-===//
//
// The knobs of lib/Codegen's optimizations (docs/performance.md). Defaults are
// the optimized build; `strictFP` keeps tinygrad's serial reduction order and
// `none()` is the plain lowering of docs/codegen.md (libm transcendentals).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace tgc::codegen {

struct KernelOptions {
  /// Run the outer parallel loop of a big kernel through tgc_parallel_for.
  bool threads = true;
  /// Smallest kernel (product of its loop trip counts) that is threaded.
  int64_t threadMinWork = int64_t(1) << 17;
  /// Keep tinygrad's serial order in float reductions: no reassociation, so
  /// no vectorized or multi-accumulator reductions.
  bool strictFP = false;
  /// Register tiling of matmul-like kernels (MatmulTiling.cpp).
  bool tileMatmul = true;
  /// EXP2/LOG2/SIN (and POW) as branch-free polynomials that vectorize
  /// (Transcendental.h); off, they are libm calls, one per element.
  bool polyTranscendentals = true;
  /// Emit a reduction whose loads are gated (padding) also without the gates,
  /// under a condition that they all hold (GateVersioning.h).
  bool versionGates = true;
  /// Pack a matmul's column panel into a kernel-local buffer (MatmulTiling.cpp).
  bool packMatmulPanel = true;
  /// Pack several column tiles per panel and run each row tile over all of
  /// them, so its rows of the left operand are read from L1 after the first
  /// tile (MatmulTiling.cpp); needs packMatmulPanel.
  bool widePanels = true;

  static KernelOptions none() { return KernelOptions{false, int64_t(1) << 17, true, false, false, false, false, false}; }
};

} // namespace tgc::codegen

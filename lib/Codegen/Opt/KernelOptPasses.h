//===- KernelOptPasses.h - the kernel optimizations as tgc opt passes ----*- C++ -*-===//
//
// `tile-matmul` rewrites every kernel body (the SINK of a CALL) with
// tileMatmul (MatmulTiling.h); `parallel-loop` is an analysis printing, per
// kernel, its loop work and the loop that runs on threads (ParallelLoop.h).
// Both use the default KernelOptions. The codegen applies the same functions
// when it compiles a LINEAR; these passes make them printable and testable.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tgc {

void registerCodegenPasses();

} // namespace tgc

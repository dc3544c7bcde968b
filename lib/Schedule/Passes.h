//===- Passes.h - the scheduling passes -------------------------*- C++ -*-===//
//
// Registers the scheduling passes: `callify`, the steps of get_kernel_graph
// (`rangeify-early`, `copy-to-store`, `rangeify`, `rangeify-cleanup`,
// `limit-bufs`, `add-buffers`, `split-kernels`), `access` (per-CALL reads and
// writes, printed with --print-after), `linearize` (kernel graph -> LINEAR of
// CALLs), and the pipeline aliases `kernel-graph` (the rangeify steps) and
// `schedule` (callify, kernel-graph, access, linearize).
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tgc {

/// Adds the scheduling passes to the PassRegistry; the driver calls it once.
void registerSchedulePasses();

} // namespace tgc

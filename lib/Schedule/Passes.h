//===- Passes.h - the scheduling passes -------------------------*- C++ -*-===//
//
// Registers the scheduling passes: `callify`, the steps of get_kernel_graph
// (`rangeify-early`, `copy-to-store`, `rangeify`, `rangeify-cleanup`,
// `limit-bufs`, `add-buffers`, `split-kernels`), `kernel-graph` (all of
// them) and `schedule` (callify, kernel-graph, then access analysis and
// linearization when those passes are registered).
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tgc {

/// Adds the scheduling passes to the PassRegistry; the driver calls it once.
void registerSchedulePasses();

} // namespace tgc

//===- Passes.h - the scheduling passes -------------------------*- C++ -*-===//
//
// Registers the scheduling passes: `callify`, the steps of get_kernel_graph
// (`rangeify-early`, `copy-to-store`, `rangeify`, `rangeify-cleanup`,
// `limit-bufs`, `add-buffers`, `split-kernels`), `access` (per-CALL reads and
// writes, printed with --print-after), `linearize` (kernel graph -> LINEAR of
// CALLs), `resolve-calls` (the LINEAR over the call's buffers), and the
// pipeline aliases `kernel-graph` (the rangeify steps) and `schedule`
// (callify, kernel-graph, linearize, access, resolve-calls), and `grad` (Grad.h:
// gradients added as outputs).
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tgc {

/// Adds the scheduling passes to the PassRegistry; the driver calls it once.
void registerSchedulePasses();

} // namespace tgc

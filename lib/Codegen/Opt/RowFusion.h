//===- RowFusion.h - consecutive kernels over the same rows as one kernel -*- C++ -*-===//
//
// tinygrad schedules softmax as three kernels over the rows of x (the max, the
// sum of exp(x - max), the normalized exps), layernorm as three, and each one
// streams the whole of x again. Where consecutive kernels step over the same
// rows, every buffer one of them writes and another touches is reached a row
// at a time (ParallelLoop.h's rowStride), so row i of a later kernel reads
// only what row i of the earlier ones wrote: the kernels can run row by row,
// one after another inside one loop over the rows,
//
//   for r in rows (threaded):  kernel 1's nest at r;  kernel 2's nest at r; ...
//
// and a row of x, read by the first, is still in L1 for the others. The
// fused kernel is a kernel like any other (one CALL of the plan, with the
// union of the calls' buffers), so the memory plan, the optimizations, the
// cache and the runtime see nothing new.
//
// Then, where a later nest computes again a costly value an earlier nest's
// reduction sums (softmax's exp(x - max), computed once for the sum and once
// for the output), the value is stored once into the later nest's output
// row and both read it back from there (shareReducedValues).
//
// Legality (fuseRowKernels):
//   - every kernel is one loop nest whose outermost loop runs the same number
//     of rows, with no variables;
//   - no two calls pass partly overlapping memory;
//   - a buffer stored by one of the kernels is stored by no other, read by
//     none before it (nor by itself), and every access to it is a row of one
//     stride (rowStride), so no row reads another's elements;
//   - each kernel's work per row is at most a few of its rows' elements (a
//     streaming kernel: a matmul's row, which reads all of W, is not fused,
//     and keeps its register tiling);
//   - each kernel shares a buffer with those before it, and the fused kernel
//     still runs on threads (ParallelLoop.h);
//   - the buffers two of them touch hold at least opts.fuseRowsMinBytes (1 MiB):
//     less stays in L2 between the kernels anyway.
// The result is the same bits: each row runs the same operations.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Lower/LinearPlan.h"
#include "Codegen/Opt/KernelOptions.h"

#include <vector>

namespace tgc::codegen {

/// What fuseRowKernels did with a run of calls (for tgc opt and tests).
struct RowFusionGroup {
  size_t firstCall = 0, calls = 0; ///< calls [firstCall, firstCall + calls) of the plan it was given
  int64_t rows = 0;
  size_t sharedValues = 0; ///< values stored once instead of computed twice (shareReducedValues)
};

/// `plan` with every run of consecutive kernel calls that may run row by row
/// (see the file comment) replaced by one call of a fused kernel; buffers and
/// variables are unchanged, kernels no call uses are dropped. Off unless
/// opts.fuseRows. `groups`, when given, receives what was fused.
SchedulePlan fuseRowKernels(const SchedulePlan &plan, const KernelOptions &opts,
                            std::vector<RowFusionGroup> *groups = nullptr);

/// In a fused kernel's loop nests (run one after another for each row):
/// where nest j stores END(STORE(INDEX(out, idx), value), ranges) to a
/// buffer nothing else touches, and a costly subexpression of value (one with
/// a transcendental) is, with ranges renamed, the operand of a reduction of an
/// earlier nest i, that subexpression is stored into out's row by a new nest
/// before nest i, and both nests read it back. Returns how many were shared.
size_t shareReducedValues(std::vector<const UOp *> &nests);

/// Registers the `fuse-rows` pass of `tgc opt` (a LINEAR root, rewritten).
void registerRowFusionPass();

} // namespace tgc::codegen

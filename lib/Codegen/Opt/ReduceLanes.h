//===- ReduceLanes.h - lane accumulators for short MAX reductions -*- C++ -*-===//
//
// LLVM fully unrolls a reduction loop of a few dozen iterations before it
// vectorizes, and its SLP vectorizer does not turn the unrolled chain of
// maxnum operations into a vector reduction (it would need no-NaN math): a
// MAX over 32 contiguous floats stays a serial chain of 32 dependent maxima.
// tinygrad's answer is UPCAST; this is its reduction form. The innermost range
// r (T iterations, T a multiple of the lane count W) of such a REDUCE becomes
// r = ro * W + l: W REDUCEs over ro, one per lane l, which the lowering fuses
// into one loop nest with W independent accumulators (SLP: one vector max per
// iteration), then a tree of MAX over the lanes. A maximum is the same in any
// order (only the sign of a zero maximum can differ), so this is off only
// under strict fp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

namespace tgc::codegen {

/// The lane count for `dt`: one 256-bit vector's worth of elements.
int64_t maxLaneCount(DType dt);

/// `sink` with every eligible MAX REDUCE split into lane accumulators (the
/// same node when none is): a float REDUCE(MAX) without REDUCEs inside, whose
/// innermost range has a literal trip count T with W <= T <= 128 and T % W == 0,
/// and whose every load steps by 0 or 1 element along that range (one by 1).
const UOp *splitMaxLanes(const UOp *sink, const KernelOptions &opts);

} // namespace tgc::codegen

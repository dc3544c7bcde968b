//===- HoistInvariant.h - costly reduction terms computed once ---*- C++ -*-===//
//
// A REDUCE evaluates its summand once per point of its own ranges and of the
// output loops around it. A costly part of the summand (a transcendental, a
// division) that depends on the reduction's ranges but not on every loop
// around it is the same value for every point of the loops it does not depend
// on (a transcendental): a weight gradient with a fused activation backward, dW[i, j] = sum_k
// gelu'(h[k, j]) * dY[k, i], evaluates gelu' once per (i, j, k) although it
// depends on (j, k) alone. Such a term is evaluated once per point of its own
// ranges into a kernel-local table, in a loop nest before the kernel's loops
// (per chunk when the kernel runs on threads), and the summand reads the table.
// tinygrad's heuristic has no counterpart: it recomputes the term (LLVM's
// loop-invariant code motion cannot move it out of the loops it sits in).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

namespace tgc::codegen {

/// A hoisted term is worth its table when the loops it does not depend on
/// repeat it at least this many times.
constexpr int64_t kMinHoistRepeats = 4;
/// The largest table (elements) a hoisted term gets: it lives on the stack of
/// the thread running the kernel and is filled once per call (per chunk).
constexpr int64_t kMaxHoistElements = 16384;

/// The kernel with every such term of its reductions computed into a table
/// first, or `sink` itself. Applies to a kernel of one loop nest (one END over
/// a STORE, the form tileMatmul leaves untiled); a term qualifies when it holds
/// a transcendental (EXP2, LOG2, SIN, POW), has no REDUCE inside, reads no
/// buffer the kernel writes, and every load in it is gated or provably in
/// bounds over all the points of its ranges (the table evaluates it at each).
const UOp *hoistInvariant(const UOp *sink, const KernelOptions &opts);

/// The same for a register tile (tileMatmul's SINK(END(GROUP(STOREs), loops))):
/// a transcendental term of its reductions' summands (attention's softmax(S) @ V:
/// exp2 of a score per tile row and step) is scalar code per row and step in
/// the tile (a libm call, LowerKernels.cpp), and in a tile of dot products
/// (an activation recomputed in a backward pass) every column tile repeats
/// it. A cast rounding to a narrower float (x.half() of a half-precision
/// matrix-vector product, which every row tile converts there and back)
/// qualifies too; a table holds one element type. Terms that do not move with the innermost loops are evaluated into a
/// kernel-local table over the reduction's range k, filled once per iteration
/// of the outer loops they depend on; failing that, terms that do not move
/// with some loop into one table over the loops they depend on and k, filled
/// before the tile. The fill loops run along k, which vectorizes; the tile
/// reads the table. `tiled` itself unless every REDUCE of the tile is over the
/// same single range and the table holds at most kMaxHoistElements.
const UOp *hoistTileTerms(const UOp *tiled, const KernelOptions &opts);

} // namespace tgc::codegen

//===- RangeifyMovement.h - movement ops as index arithmetic ----*- C++ -*-===//
//
// tinygrad's apply_movement_op (tinygrad/schedule/indexing.py): given the
// index expressions of a movement op's output axes, the index expressions of
// its input axes (pipeline-schedule.md §3.5). RESHAPE's div/mod expressions
// are simplified with symbolic + pm_simplify_valid + pm_drop_and_clauses over
// PLACEHOLDER copies of the ranges, as tinygrad does, so they come out in
// tinygrad's canonical form.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Schedule/Sugar.h"

#include <map>

namespace tgc::rangeify {

/// The input-axis index expressions of movement op `mop` (RESHAPE, PERMUTE,
/// EXPAND, PAD, SHRINK, FLIP) whose output axes are indexed by `rngs`.
std::vector<const UOp *> applyMovementOp(const UOp *mop, const std::vector<const UOp *> &rngs);
/// The same for an explicit op, input shape and marg (RESHAPE: the output
/// shape; PAD/SHRINK: (offset, size) pairs flattened as off0,size0,off1,...;
/// PERMUTE/FLIP: the ints of the arg).
std::vector<const UOp *> applyMovement(Context &ctx, Op op, const IShape &inShape, const IShape &marg,
                                       const std::vector<const UOp *> &rngs);

/// UOp.simplify(): the node rewritten to a fixed point with tinygrad's symbolic.
const UOp *symSimplify(const UOp *u);
/// graph_rewrite(u, symbolic + pm_simplify_valid [+ pm_drop_and_clauses]).
const UOp *simplifyValid(const UOp *u, bool dropAndClauses);
/// Builds the rule tables of symSimplify and simplifyValid (PassInfo::prepare).
void prepareMovementRules();

} // namespace tgc::rangeify

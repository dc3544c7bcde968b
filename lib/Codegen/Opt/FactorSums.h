//===- FactorSums.h - a sum's constant factors multiplied once, after it -*- C++ -*-===//
//
// A reduction sum_k a_k * c whose factor c does not move with the reduction's
// ranges multiplies by c at every step. A matrix-vector product whose int8
// weights carry a per-row scale, written as tinygrad users write it
// (x @ (w8.float() * scale).T), sums x[k] * (float(w8[j, k]) * scale[j]): per
// 16 weights a widening, a conversion, a multiply and an FMA, and its loop is
// bound by those vector ops, not by the bytes it reads. By distributivity the
// sum is (sum_k a_k) * c: one multiply per output instead of one per step.
// Like the reassociated sums the vectorized reductions already keep, the
// result differs from tinygrad's serial one only in rounding (exactly
// representable arithmetic stays exact); under strict fp the sum keeps its
// factors. tinygrad's symbolic rules do not factor float sums.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

namespace tgc::codegen {

/// The kernel with every float ADD REDUCE whose summand is a product (a tree
/// of MULs of its dtype) with factors that depend on none of its ranges
/// rewritten as MUL(REDUCE(product of the other factors), product of those);
/// `sink` itself when none qualifies, under strict fp, or with
/// KernelOptions::factorSums off.
const UOp *factorSums(const UOp *sink, const KernelOptions &opts);

/// Whether `u` is a float ADD REDUCE (a sum that reassociation may reorder).
bool isFloatSum(const UOp *u);

} // namespace tgc::codegen

//===- SymbolicUtil.h - tinygrad's symbolic helper methods ------*- C++ -*-===//
//
// The UOp methods tinygrad's symbolic rules are written with: split_uop,
// const_factor, divides, pop_const, gcd, divide_exact, tuplize ordering,
// backward-slice queries, and Python's sum() over UOps. Shared by the rule
// files of the simplifier (Symbolic*.cpp, DivAndMod.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOpBuilder.h"

#include <optional>
#include <span>
#include <vector>

namespace tgc::sym {

/// u.split_uop(sep): the operands of a nested chain of `sep`, left to right.
std::vector<UOpRef> splitUOp(const UOp *u, Op sep);
/// u.const_factor(): a known int that divides u (tinygrad's definition, sign included).
int64_t constFactor(const UOp *u);
/// u.divides(v): u / v if tinygrad can prove v divides u, else null.
UOpRef divides(const UOp *u, int64_t v);
/// u.pop_const(op): (x, c) for `x op CONST c`, else (u, identity of op).
std::pair<UOpRef, int64_t> popConst(const UOp *u, Op op = Op::ADD);
/// UOp.gcd(*uops): the common factors of the terms, times the gcd of their const factors.
UOpRef gcd(std::span<const UOpRef> uops);
/// u.divide_exact(v): u / v for a symbolic divisor v, or null.
UOpRef divideExact(const UOp *u, const UOp *v);
/// Python's sum(uops): 0 + u0 + u1 + ... (the leading 0 is a weakint CONST).
UOpRef pySum(Context &ctx, std::span<const UOpRef> uops);
/// UOp.usum(u0, u1, ...): u0 + u1 + ... (| for bool).
UOpRef usum(std::span<const UOpRef> uops);
/// Compares a.tuplize with b.tuplize (op, arg, dtype, then the srcs' tuplize): <0, 0, >0.
int tuplizeCompare(const UOp *a, const UOp *b);
/// Python-style ordering of args (numbers by value, tuples lexicographically).
int pyCompare(const Value &a, const Value &b);
/// u.op_in_backward_slice_with_self(*ops)
bool opInBackwardSliceWithSelf(const UOp *u, OpSet ops);
/// Number of nodes strictly below u (len(u.backward_slice)).
size_t backwardSliceSize(const UOp *u);
/// Whether `x` is among u and the nodes below it.
bool inBackwardSliceWithSelf(const UOp *x, const UOp *u);
/// x in u.bool_slice: the bool-dtype nodes of u's backward slice (u included).
bool inBoolSlice(const UOp *x, const UOp *u);

/// u.ranges: the RANGEs u is inside (those of its srcs, minus the ones it or
/// an END/REDUCE/STAGE/CALL/... below it closes), in tinygrad's order.
std::vector<const UOp *> rangesOf(const UOp *u);

/// Python's math.gcd (non-negative) of a list of ints.
int64_t pyGcd(std::span<const int64_t> xs);
/// Checked int64 arithmetic: nullopt where Python's exact result leaves int64.
std::optional<int64_t> checkedAdd(int64_t a, int64_t b);
std::optional<int64_t> checkedMul(int64_t a, int64_t b);
/// Whether the CONST u holds an int (or bool) value that fits int64.
bool isIntConst(const UOp *u);

} // namespace tgc::sym

//===- SInt.h - tinygrad's sint: arithmetic on shape sizes ------*- C++ -*-===//
//
// A shape size is a Dim: an int, or a symbolic weakint UOp over Variables
// (tinygrad's sint). Arithmetic folds when both sides are ints; otherwise it
// builds the weakint ALU node and simplifies it with tinygrad's symbolic
// rules, so equal sizes reached different ways are the same interned node
// (`bs*16` from a reshape and from a product compare equal).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <optional>

namespace tgc {

/// A shape operand's element as a size: an int CONST is static, anything else symbolic.
Dim dimOf(const UOp *u);
/// The size as a node: a weakint CONST, or the symbolic node.
const UOp *dimUOp(Context &ctx, const Dim &d);

Dim operator+(const Dim &a, const Dim &b);
Dim operator-(const Dim &a, const Dim &b);
Dim operator*(const Dim &a, const Dim &b);
Dim floorDiv(const Dim &a, const Dim &b);
/// The number of elements of a shape.
Dim dimProd(const Shape &s);

/// The largest value the size takes (the Variables at their maxima).
int64_t dimVmax(const Dim &d);
/// tinygrad's resolve(a == b): known when both are ints or the difference is
/// a constant over the Variables' ranges; nullopt when it depends on them.
std::optional<bool> dimsEqual(const Dim &a, const Dim &b);

/// "bs*16" for a symbolic size, the number for a static one.
std::string dimStr(const Dim &d);

} // namespace tgc

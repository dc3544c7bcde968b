//===- ExecAlu.h - evaluating an ALU op on constants ------------*- C++ -*-===//
//
// tinygrad's exec_alu (with Python's number semantics: unbounded ints, floor
// division, bools that are ints) and DType.const, the conversion of a Python
// value to the value a CONST of that dtype holds. Constant folding uses both.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Ops.h"
#include "IR/Value.h"

#include <optional>
#include <span>

namespace tgc {

/// tinygrad's dtype.const(v): Invalid stays Invalid, a float dtype gets a
/// float rounded to its precision, bool gets bool(v), an int dtype gets int(v)
/// (truncating a float, never wrapping). nullopt when tgc cannot represent the
/// result (an int beyond 64 bits, a NaN/inf converted to int, rounding to a
/// float format tgc does not model: bfloat16, fp8).
std::optional<Value> dtypeConst(DType dt, const Value &v);

/// tinygrad's truncate[dt](v): ints wrap to the dtype's width, floats round to
/// its precision, bool is bool(v); weak dtypes are unchanged.
std::optional<Value> truncateToDType(DType dt, const Value &v);

/// exec_alu(op, dt, operands, truncate_output=False) followed by dt.const(),
/// which is what constant folding stores. Operands are Bool/Int/UInt/Float
/// Values, Invalid, or tuples of those (a STACK of consts: evaluated
/// elementwise). nullopt where Python would raise or tgc cannot represent the
/// value (ops without a Python evaluation such as THREEFRY, shifts by a negative
/// count, ints beyond 64 bits).
std::optional<Value> execAlu(Op op, DType dt, std::span<const Value> operands);

/// Python's floor division and modulo on ints, and tinygrad's cdiv/cmod
/// (truncating); division by zero gives 0 as in tinygrad's helpers.
int64_t floorDiv(int64_t x, int64_t y);
int64_t floorMod(int64_t x, int64_t y);
int64_t truncDiv(int64_t x, int64_t y);
int64_t truncMod(int64_t x, int64_t y);

} // namespace tgc

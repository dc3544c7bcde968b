//===- Transcendental.h - branch-free EXP2/LOG2/SIN as arith ops -*- C++ -*-===//
//
// tinygrad's transcendentals (EXP2, LOG2, SIN) as straight-line arith/math
// ops: argument reduction by integer and bit manipulation, a polynomial, and
// selects for the special values. Unlike math.exp2/log2/sin, which LLVM turns
// into one libm call per element, this code has no calls and no branches, so
// the loop and SLP vectorizers turn it into vector code.
//
// The algorithms are the family tinygrad's CPU backends use (SLEEF-style,
// decomp/transcendental.py); the constants are derived independently by
// scripts/transcendental_constants.py. Accuracy, measured against long double
// libm by test/unit/TranscendentalTest.cpp: exp2 and log2 < 1 ULP (f32, f64);
// sin < 1 ULP for |x| < pi/4 and an absolute error <= 1.5e-7 (f32) / 1e-15
// (f64) for every finite x, large ones through a Payne-Hanek reduction.
// docs/codegen.md "Transcendentals" has the details.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Builders.h"

namespace tgc::codegen {

/// 2^x, log2(x) and sin(x) for an f32 or f64 `x`, emitted at the builder's
/// insertion point (sin adds a constant table to the enclosing module).
/// `ldexpScale`: exp2 scales its polynomial by llvm.ldexp instead of two
/// multiplies by powers of two built from bits (the same result; only for a
/// target with an ldexp instruction, e.g. x86 AVX-512's vscalef).
mlir::Value polyExp2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, bool ldexpScale = false);
mlir::Value polyLog2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
mlir::Value polySin(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

} // namespace tgc::codegen

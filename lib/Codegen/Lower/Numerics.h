//===- Numerics.h - tinygrad's scalar semantics on MLIR arith/math -*- C++ -*-===//
//
// How each tinygrad dtype is held in registers and in memory, and how every
// ALU op, CAST, BITCAST and literal behaves, emitted with arith/math ops at a
// builder's insertion point. Mirrors tinygrad's python_alu / dtype.const and
// what its CPU renderers do (MAX as compare+select, POW as xpow, bf16 computed
// in float and rounded at casts and stores).
//
// Register / memory representation:
//   bool     i1 / i8 (0 or 1)          weakint   i64 (index math) / -
//   intN     iN / iN                   weakfloat f64 / -
//   float16  f16 / f16                 bfloat16  f32 / i16 (upper half of the f32 bits)
//   float32  f32 / f32                 float64   f64 / f64
// fp8 dtypes are not supported yet (a diagnostic, never a miscompile).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/DType.h"
#include "IR/Ops.h"
#include "IR/Value.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace tgc::codegen {

/// The register type of `dt`, or a null type when the lowering does not support it.
mlir::Type regType(mlir::MLIRContext *ctx, DType dt);
/// The in-memory element type of `dt` (differs from regType for bool and the 16-bit floats).
mlir::Type memType(mlir::MLIRContext *ctx, DType dt);

/// Emits tinygrad's scalar semantics at the builder's insertion point. On an
/// unsupported combination a method returns a null value and sets `error`.
class Numerics {
public:
  Numerics(mlir::OpBuilder &b, mlir::Location loc) : b_(b), loc_(loc) {}

  std::string error;
  /// EXP2/LOG2/SIN (and POW) as the branch-free polynomials of
  /// Transcendental.h instead of libm calls (KernelOptions::polyTranscendentals).
  bool polyTranscendentals = false;
  /// EXP2's polynomial scaled by llvm.ldexp (KernelOptions::vectorLdexp).
  bool ldexpScale = false;

  /// A literal of dtype `dt` holding `v` (converted as tinygrad's dtype.const does).
  mlir::Value constant(const Value &v, DType dt);
  /// The identity element of a REDUCE with `op` (ADD, MUL or MAX) over `dt`.
  mlir::Value identity(Op op, DType dt);
  /// CAST: value conversion from `from` to `to`.
  mlir::Value cast(mlir::Value v, DType from, DType to);
  /// BITCAST: reinterpretation of the stored bits (equal item sizes).
  mlir::Value bitcast(mlir::Value v, DType from, DType to);
  /// Register value -> memory element, and back.
  mlir::Value toMem(mlir::Value v, DType dt);
  mlir::Value fromMem(mlir::Value v, DType dt);
  /// An ALU op (group::ALU) with result dtype `dt`; `opDt` is the dtype the
  /// operands are held in (differs from `dt` for comparisons only).
  mlir::Value alu(Op op, DType dt, DType opDt, llvm::ArrayRef<mlir::Value> xs);

private:
  mlir::Value fail(std::string msg);
  mlir::Value fconst(mlir::Type t, double v);
  mlir::Value iconst(mlir::Type t, int64_t v);
  mlir::Value aluInRegisters(Op op, DType opDt, llvm::ArrayRef<mlir::Value> xs);
  mlir::Value roundToBF16(mlir::Value f32);
  mlir::Value roundToF16(mlir::Value f32);
  /// f32 rounded to dt's precision when dt is a 16-bit float (held in f32).
  mlir::Value round16(mlir::Value f32, DType dt);
  mlir::Value floatUnary(Op op, mlir::Value x);
  mlir::Value exp2(mlir::Value x);
  mlir::Value log2(mlir::Value x);
  mlir::Value pow(mlir::Value base, mlir::Value exponent);
  mlir::Value intDivMod(Op op, DType dt, mlir::Value a, mlir::Value c);
  mlir::Value compare(Op op, DType opDt, mlir::Value a, mlir::Value c);
  mlir::Value threefry(mlir::Value x, mlir::Value key);

  mlir::OpBuilder &b_;
  mlir::Location loc_;
};

} // namespace tgc::codegen

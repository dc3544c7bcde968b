//===- KernelToMLIR.h - one tinygrad kernel AST -> an MLIR function -*- C++ -*-===//
//
// Lowers the body of a kernel CALL (a SINK[KernelInfo] of END/STORE/INDEX/
// REDUCE/ALU nodes over PARAMs, as in linear.json) into MLIR, the part of
// tinygrad's codegen that runs after its optimizer (pipeline-codegen.md §1):
//
//   func.func private @K(%p0: !llvm.ptr {llvm.noalias}, ..., %pN: !llvm.ptr, %v0: i64, ...)
//   func.func @K_entry(%args: !llvm.ptr)   // loads args[i], calls @K
//
// The i64 arguments after the buffers are the kernel's variables (tinygrad
// Variables: PARAMs in the ALU address space, a symbolic batch, offset or
// reduction length), in name order, as tinygrad's C renderer passes them
// after the buffers. A loop may run to a variable (RANGE(PARAM bs)).
//
// Buffers are plain `!llvm.ptr`s (PARAM slot k = argument k), elements are
// addressed with `llvm.getelementptr inbounds` and accessed with llvm.load/
// llvm.store; everything else is func/scf/arith/math:
//   RANGE ... END        scf.for over i64 (lower bound 0, step 1)
//   REDUCE(v, r...)      scf.for with the accumulator as iter_args, starting
//                        at the op's identity, acc = acc OP v (left operand acc)
//   INDEX(buf, WHERE(valid, idx, Invalid))
//                        load: select(valid, idx, 0), load, select(valid, x, 0);
//                        store: scf.if valid { store }
//   PARAM as a value / STORE(PARAM, v)   element 0 (an unindexed access)
//   ALU/CAST/BITCAST     Numerics.h
// Every value is placed in the innermost loop among the RANGEs it depends on,
// i.e. loop-invariant code is hoisted as tinygrad's linearizer does.
//
// The `_entry` wrapper gives every kernel the same C signature
// `void(void **args)`, so the runner calls kernels without per-arity thunks;
// args[numArgs + j] points at the int64_t value of variable j.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "Codegen/Opt/TransposedCopy.h"
#include "IR/Diagnostic.h"
#include "IR/UOp.h"

#include <string>
#include <vector>

namespace mlir {
class Builder;
class FunctionType;
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace tgc::codegen {

struct KernelSpec {
  std::string symbol;   ///< name of the kernel function; the wrapper is symbol + "_entry"
  unsigned numArgs = 0; ///< number of buffer arguments of the CALLs (>= every PARAM slot + 1)
  /// The variables the kernel takes after its buffers, in argument order
  /// (kernelVariables of the kernel as scheduled: an optimized body may read fewer).
  std::vector<std::string> vars;
  bool noalias = true;  ///< mark the buffer arguments noalias (C `restrict`, as tinygrad does)
  KernelOptions opts = {};
  /// The loop that runs on the thread pool (KernelDecisions::threadedLoop), null: serial.
  const UOp *threadedLoop = nullptr;
  /// A tile of dot products (MatmulTile::alongReduction): its fused
  /// reductions may be reassociated, so the loop vectorizer takes them along
  /// the reduction (never under strict fp).
  bool dotTile = false;
  /// Copy nests lowered as transposed blocks of vector registers (KernelDecisions::transposedCopies).
  std::vector<TransposedCopy> transposedCopies;
};

/// Whether `u` is a variable: a scalar PARAM in the ALU address space.
bool isVariable(const UOp *u);
/// A variable's name (ParamArg.name).
std::string variableName(const UOp *var);
/// The names of the variables a kernel body reads, sorted: its scalar arguments.
std::vector<std::string> kernelVariables(const UOp *sink);

/// A kernel function's type: `numArgs` pointers, then `numVars` i64 variables.
mlir::FunctionType kernelFunctionType(mlir::Builder &b, unsigned numArgs, size_t numVars);

/// Loads the dialects the lowering emits into `ctx`.
void loadKernelDialects(mlir::MLIRContext &ctx);

/// Appends the kernel `sink` and its `_entry` wrapper to `module`.
Status lowerKernelToMLIR(mlir::ModuleOp module, const UOp *sink, const KernelSpec &spec);

/// The `_entry` symbol of a kernel.
inline std::string entrySymbol(const std::string &symbol) { return symbol + "_entry"; }

} // namespace tgc::codegen

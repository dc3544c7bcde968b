//===- TransposedCopy.h - copies that transpose, as blocks of vector registers -*- C++ -*-===//
//
// A loop nest that copies a matrix into its transpose (dst[.. + j + i*S] =
// src[.. + i + j*T]) reads contiguously along one loop and writes
// contiguously along the other. LLVM vectorizes one of them and scatters or
// gathers along the other, element by element: the pack of a transposed
// matmul operand (x @ W.T, MatmulTiling.cpp) spent ~27 cycles per 16 floats in
// scatters, 16% of the transformer block's projections. The nest is instead
// lowered a square block of L x L elements at a time (L: the lanes of the
// kernel's vector width): L vector loads along the read loop, a transpose in
// registers (log2 L stages of two-input shuffles), L vector stores along the
// write loop (KernelToMLIR.cpp). This analysis picks the nests; the decision
// is data the lowering reads (KernelDecisions::transposedCopies).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

#include <vector>

namespace tgc::codegen {

/// A copy nest END(STORE(INDEX(dst, to), INDEX(src, from)), ..., a, b) whose
/// two innermost loops are `along` (the load steps by one element along it)
/// and `across` (the store steps by one along it), both divisible by `lanes`.
struct TransposedCopy {
  const UOp *end = nullptr;
  const UOp *along = nullptr, *across = nullptr;
  int64_t lanes = 0;
  /// Elements between the loads of consecutive `across` (from's coefficient
  /// of across) and between the stores of consecutive `along` (to's of along).
  int64_t loadStride = 0, storeStride = 0;
};

/// The transposing copy nests of the kernel `sink` to lower as blocks of
/// `vectorBits`-bit registers (none when vectorBits is 0 or the option is off).
/// `threaded`: the kernel's parallel loop, which stays a scalar loop.
std::vector<TransposedCopy> transposedCopies(const UOp *sink, int64_t vectorBits, const UOp *threaded,
                                             const KernelOptions &opts);

} // namespace tgc::codegen

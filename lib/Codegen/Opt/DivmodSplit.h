//===- DivmodSplit.h - an output loop split into quotient and remainder -*- C++ -*-===//
//
// A tensor laid out head-major (attention's [head][token][dim], read as
// x[(j // 16) * 256 + k * 16 + j % 16] for the j-th column of 4 heads of 16)
// is contiguous along j only within a head, so LLVM vectorizes the loop over
// j with a gather per load (k3's weight gradients of the attention
// projections). The innermost output loop j is split into j // c and j % c
// (c dividing its trip count), the index arithmetic simplified, and the new
// innermost loop walks each head's columns one element apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

#include <unordered_map>

namespace tgc::codegen {

/// The kernel with its innermost output loop j replaced by the loops j // c
/// and j % c, or `sink` itself. Applies to a kernel of one loop nest (one END
/// over a STORE) whose loads are not all affine in j, where c is a divisor
/// of j's trip count that the kernel divides j by (j // c or j % c), and only
/// when every load then steps by 0 or 1 element along j % c.
const UOp *splitDivmod(const UOp *sink, const KernelOptions &opts);

/// The kernel with its innermost output loop j (n steps) replaced by a loop
/// over m = j % c whose body stores the n / c outputs j = k * c + m (k
/// constant), each with its integer expressions simplified, or `sink` itself.
/// Applies to a kernel of one loop nest (one END over a STORE) that divides j
/// by c (j // c or j % c) with n / c at most 4, when the stored values share
/// work that depends on m worth at least 16 ALU ops (a THREEFRY counts as its
/// rounds, a transcendental as its polynomial): tinygrad's rand concatenates
/// the low and high 32 bits of one THREEFRY per counter, out[m] and
/// out[m + n/2], which one loop over j computes twice.
const UOp *unrollQuotient(const UOp *sink, const KernelOptions &opts);

/// The kernel with each single-range REDUCE over k that reads its operands at
/// k // c and k % c (attention's output projection reads the head-major
/// attention output as a[(k // 16) * 256 + t * 16 + k % 16]) reduced over
/// (k // c, k % c) instead, when every load then steps by 0 or 1 element
/// along k % c: the inner loop is contiguous, the order of the sum unchanged.
const UOp *splitReduceDivmod(const UOp *sink, const KernelOptions &opts);

/// The inverse, where it makes the loop longer: a REDUCE over (..., a, b)
/// whose summand reads memory one element apart along b and, with a and b
/// replaced by f // |b| and f % |b|, along a single range f of |a| |b| steps
/// with no division left (a sum over a whole contiguous tensor: its ranges
/// nest as rows of one array) reduces over (..., f) instead, repeatedly.
/// Vectorized along b, each step of a summed the vector's lanes once.
/// f runs (a, b) in their order: the same sums, under strict fp too.
const UOp *mergeReduceRanges(const UOp *sink, const KernelOptions &opts);

/// The two innermost output loops (a, b) of a kernel that stores one
/// contiguous run over them (out[..., a, b], a 56 x 56 image) merged into one
/// loop f of |a| |b| steps (a = f // |b|, b = f % |b|, the integer
/// expressions simplified), where a register tile (MatmulTiling.h) takes more
/// columns of |a| |b| than of |b| (32 of 56 x 56 where 8 of 56), and every access then steps by 0 or 1 element
/// along f (only gates, such as a convolution window's bounds, may still
/// divide f). A 3x3 convolution's input rows are then read as one contiguous
/// run too, and the tile takes full-width columns. Needs tileMatmul. Where the
/// tile of f is full width (32 columns) and not under strict fp, the ranges
/// the gates compare (a window's ky, kx) become the reduction's outer loops;
/// otherwise each output's sum is unchanged.
const UOp *mergeOutputRanges(const UOp *sink, const KernelOptions &opts);

/// `root` with `map` substituted, its integer and boolean expressions
/// (indices, gates) simplified where they meet the rest: the float arithmetic
/// keeps tinygrad's exact form. Null when the simplifier fails.
const UOp *substituteSimplified(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map);

} // namespace tgc::codegen

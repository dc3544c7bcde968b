//===- SplitVectorMatrix.h - x @ W for one row as parts of W's rows, then their sum -*- C++ -*-===//
//
// y[j] = sum_k x[k] * W[k, j] (a vector times a row-major matrix: tinygrad's
// x @ W for one row) is a kernel whose output loop j steps along W's rows and
// whose reduction k steps from row to row. As scheduled, or as a register
// tile of 256 columns, it reads W a short piece of a row at a time, a row
// (16 KiB for N = 4096) apart, which the hardware prefetchers do not follow:
// about half the bandwidth of reading W's rows whole. Split, it is two kernels:
//
//   partial[p, j] = 0
//   for k in part p, 4 at a time:                                    (threads over p)
//     partial[p, j] += x[k] W[k, j] + x[k+1] W[k+1, j] + x[k+2] W[k+2, j] + x[k+3] W[k+3, j]
//   y[j] = sum_p partial[p, j]
//
// Each part streams whole rows of W, adding four at a time into its row of
// partial sums (N floats, in L1: loaded and stored once per four rows). The
// sums are taken in another order: not under strict fp.
//
// It applies to a kernel SINK(END(STORE(y[j], REDUCE(summand, k)), j)) with
// one output and one reduction loop, an ADD over floats, whose summand reads
// every buffer that moves with j one element per step of j, and some buffer
// a row of N elements per step of k; with N floats at most 32 KiB (a part's
// row stays in L1), K a multiple of 32 split into 8 parts of at least 64
// rows, and the matrix at least 1 MiB.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Lower/LinearPlan.h"
#include "Codegen/Opt/KernelOptions.h"

namespace tgc::codegen {

/// `plan` with every call of a vector-matrix kernel (see the file comment)
/// replaced by the calls of its two kernels and a buffer for the partial sums
/// appended; the other buffers, calls and variables are unchanged. Off unless
/// opts.splitVectorMatrix and not opts.strictFP. `split`, when given, receives
/// the indices (in `plan`) of the calls split.
SchedulePlan splitVectorMatrix(const SchedulePlan &plan, const KernelOptions &opts, std::vector<size_t> *split = nullptr);

} // namespace tgc::codegen
